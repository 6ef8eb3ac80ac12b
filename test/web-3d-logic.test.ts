// The 3D view's rules: the PLY the colmap engine writes read back in the browser's parser (with
// absolute UTM coordinates kept to the millimetre), and measurement lengths and areas equal to
// what the service prints in the report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPointCloud } from '../src/shared/pointcloud/point-cloud.ts';
import { writePly } from '../src/shared/pointcloud/ply.ts';
import { measure } from '../src/inspection/measurements/quantities.ts';
import { parsePly, PlyFormatError } from '../web/src/lib/ply.ts';
import { closeRing, describe, pathLength, ringArea, type Point3 } from '../web/src/lib/measure-geometry.ts';

test('PLY: the service writes it, the console reads it back, centred, to the millimetre', () => {
  const positions = new Float64Array([370001.2345, 6170002.5, 40.125, 370003.2345, 6170000.5, 42.125, 370002.2345, 6170001.5, 41.125]);
  const colors = new Uint8Array([255, 0, 0, 0, 255, 0, 0, 0, 255]);
  const cloud = { ...createPointCloud(3, true), positions, colors };
  const file = writePly(cloud, ['coordinate system: WGS 84 / UTM zone 33N']);
  const parsed = parsePly(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer);
  assert.equal(parsed.count, 3);
  assert.deepEqual(parsed.comments, ['coordinate system: WGS 84 / UTM zone 33N']);
  for (let i = 0; i < 9; i++) assert.ok(Math.abs(parsed.positions[i] + parsed.centre[i % 3] - positions[i]) < 0.001, `coordinate ${i}`);
  assert.deepEqual(Array.from(parsed.colors!.slice(0, 3)), [1, 0, 0]);
  // A budget keeps every k-th point.
  assert.equal(parsePly(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer, 2).count, 2);
  assert.throws(() => parsePly(new TextEncoder().encode('not a ply').buffer as ArrayBuffer), PlyFormatError);
  const cut = file.subarray(0, file.length - 5);
  assert.throws(() => parsePly(cut.buffer.slice(cut.byteOffset, cut.byteOffset + cut.byteLength) as ArrayBuffer), /cut short/);
});

test('measurements: the console shows the lengths and areas the report prints', () => {
  const line: Point3[] = [[370000, 6170000, 40], [370003, 6170004, 40], [370003, 6170004, 52]];
  assert.equal(pathLength(line), measure({ type: 'LineString', coordinates: line } as never).length_m);
  assert.equal(pathLength(line), 17);
  // A vertical 4 m x 3 m wall face.
  const ring = closeRing([[0, 0, 0], [4, 0, 0], [4, 0, 3], [0, 0, 3]]);
  assert.equal(ring.length, 5);
  assert.equal(ringArea(ring), 12);
  assert.equal(ringArea(ring), measure({ type: 'Polygon', coordinates: [ring] } as never).area_m2);
  assert.equal(describe({ type: 'Polygon', coordinates: [ring] }), '12.00 m² · perimeter 14.00 m');
  assert.equal(describe({ type: 'LineString', coordinates: line }), '17.00 m');
  assert.deepEqual(closeRing(ring), ring, 'a closed ring stays as it is');
});
