// The console's inventory shapes (web/src/lib/inventory-shapes.ts): an item's outline on a photo
// from the API's photo_projection, and a detected item's box edges from computation.box_corners_3d
// in the order the detector writes them (detection/orientation.ts cornersOf).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boxCentre, boxEdges, outlinedPhotos, photoOutline } from '../web/src/lib/inventory-shapes.ts';
import { cornersOf } from '../src/inspection/inventory/detection/orientation.ts';

const face = [
  [0.2, 0.1],
  [0.3, 0.12],
  [0.31, 0.5],
  [0.21, 0.48],
];

test('photoOutline: the four corners on the photos the item is projected on, nothing elsewhere or when malformed', () => {
  const item = { photo_projection: { '12': face, '13': [[0.1, 0.1]], '14': [[0.1, 'x'], ...face.slice(1)] }, computation: null };
  assert.deepEqual(photoOutline(item, 12), face.map(([x, y]) => ({ x, y })));
  assert.equal(photoOutline(item, 11), null, 'not projected there');
  assert.equal(photoOutline(item, 13), null, 'three corners short');
  assert.equal(photoOutline(item, 14), null, 'a corner that is not a number');
  assert.deepEqual(outlinedPhotos(item), [12]);
  assert.deepEqual(outlinedPhotos({ photo_projection: {}, computation: null }), []);
});

test('boxEdges: the twelve edges of a box the detector wrote (corners differing in one index bit), its centre; none without eight corners', () => {
  const shape = { centre: [500000, 6100000, 30] as [number, number, number], front: [0.6, 0.8, 0] as [number, number, number], up: [0, 0, 1] as [number, number, number], right: [0.8, -0.6, 0] as [number, number, number], width: 0.3, height: 1.8, depth: 0.12 };
  const corners = cornersOf(shape, [0, 0, 0]).map(([x, y, z]) => ({ x, y, z }));
  const edges = boxEdges({ photo_projection: {}, computation: { box_corners_3d: corners } });
  assert.ok(edges);
  assert.equal(edges.length, 12);
  const lengths = edges.map(([a, b]) => Math.round(Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]) * 1000) / 1000).sort((a, b) => a - b);
  assert.deepEqual(lengths, [0.12, 0.12, 0.12, 0.12, 0.3, 0.3, 0.3, 0.3, 1.8, 1.8, 1.8, 1.8], 'each edge is a side of the box, none a diagonal');
  const centre = boxCentre({ photo_projection: {}, computation: { box_corners_3d: corners } })!;
  assert.ok(Math.hypot(centre[0] - 500000, centre[1] - 6100000, centre[2] - 30) < 1e-6, JSON.stringify(centre));
  assert.equal(boxEdges({ photo_projection: {}, computation: { box_corners_3d: corners.slice(0, 7) } }), null);
  assert.equal(boxEdges({ photo_projection: {}, computation: null }), null, 'an item entered by hand has no box');
  assert.equal(boxEdges({ photo_projection: {}, computation: { box_corners_3d: [...corners.slice(0, 7), { x: NaN, y: 0, z: 0 }] } }), null);
});
