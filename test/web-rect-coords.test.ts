// Rectangles drawn on a photo ↔ coords_2d (spec: four points in 0..1, (0,0) upper left).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientToPhoto, coords2dToRect, isUsableRect, photoToClient, rectFromCorners, rectFromPixelCorners, rectInPixels, rectToCoords2d, viewBox, zoomAbout } from '../web/src/lib/rect-coords.ts';

test('a rectangle dragged in any direction gives the same coords_2d, clockwise from the upper left', () => {
  const expected = [
    [0.1, 0.2],
    [0.4, 0.2],
    [0.4, 0.6],
    [0.1, 0.6],
  ];
  for (const [a, b] of [
    [{ x: 0.1, y: 0.2 }, { x: 0.4, y: 0.6 }],
    [{ x: 0.4, y: 0.6 }, { x: 0.1, y: 0.2 }],
    [{ x: 0.4, y: 0.2 }, { x: 0.1, y: 0.6 }],
    [{ x: 0.1, y: 0.6 }, { x: 0.4, y: 0.2 }],
  ]) {
    assert.deepEqual(rectToCoords2d(rectFromCorners(a, b)), expected);
  }
});

test('drawing past the photo edge is clamped to 0..1; tiny boxes are refused', () => {
  const rect = rectFromCorners({ x: -0.3, y: 0.5 }, { x: 1.7, y: 1.2 });
  assert.deepEqual(rect, { x0: 0, y0: 0.5, x1: 1, y1: 1 });
  assert.ok(rectToCoords2d(rect).flat().every((v) => v >= 0 && v <= 1));
  assert.equal(isUsableRect(rectFromCorners({ x: 0.5, y: 0.5 }, { x: 0.5, y: 0.5 })), false);
  assert.equal(isUsableRect(rectFromCorners({ x: 0.5, y: 0.5 }, { x: 0.502, y: 0.7 })), false);
  assert.equal(isUsableRect(rectFromCorners({ x: 0.5, y: 0.5 }, { x: 0.51, y: 0.51 })), true);
});

test('coords_2d read back in any order; invalid ones are null', () => {
  const rect = { x0: 0.123457, y0: 0.2, x1: 0.5, y1: 0.75 };
  assert.deepEqual(coords2dToRect(rectToCoords2d(rect)), rect);
  assert.deepEqual(coords2dToRect([[0.5, 0.75], [0.1, 0.2], [0.5, 0.2], [0.1, 0.75]]), { x0: 0.1, y0: 0.2, x1: 0.5, y1: 0.75 });
  for (const bad of [null, [], [[0, 0]], [[0, 0], [1, 0], [1, 1], [0, 1.2]], [[0, 0], [1, 0], [1, 1], ['0', 1]], [[0, 0], [1, 0], [1, 1], [0]]]) {
    assert.equal(coords2dToRect(bad), null, JSON.stringify(bad));
  }
  // Rounded to 6 decimals.
  assert.deepEqual(rectToCoords2d({ x0: 1 / 3, y0: 0, x1: 2 / 3, y1: 1 })[0], [0.333333, 0]);
});

test('screen to photo fractions through zoom and pan', () => {
  // A 4000x2250 photo drawn at scale 0.25 with its corner at (100, 50): 1000x562.5 on screen.
  const box = { left: 100, top: 50, width: 1000, height: 562.5 };
  assert.deepEqual(clientToPhoto({ x: 100, y: 50 }, box), { x: 0, y: 0 });
  assert.deepEqual(clientToPhoto({ x: 600, y: 331.25 }, box), { x: 0.5, y: 0.5 });
  assert.deepEqual(clientToPhoto({ x: 1100, y: 612.5 }, box), { x: 1, y: 1 });
  assert.deepEqual(rectInPixels({ x0: 0.25, y0: 0.5, x1: 0.5, y1: 1 }, 4000, 2250), { left: 1000, top: 1125, width: 1000, height: 1125 });
  // Zooming keeps the point under the pointer where it was.
  const view = { scale: 0.25, x: 100, y: 50 };
  const anchor = { x: 600, y: 331.25 };
  const zoomed = zoomAbout(view, 2, anchor);
  assert.equal(zoomed.scale, 0.5);
  const before = clientToPhoto(anchor, { left: view.x, top: view.y, width: 4000 * view.scale, height: 2250 * view.scale });
  const after = clientToPhoto(anchor, { left: zoomed.x, top: zoomed.y, width: 4000 * zoomed.scale, height: 2250 * zoomed.scale });
  assert.deepEqual(after, before);
  assert.equal(zoomAbout(view, 1000, anchor).scale, 20);
});

test('a rectangle dragged in photo pixels, and a drag on a zoomed, panned view, give the same coords_2d', () => {
  // 1024x768 photo; a box from (819, 614) up-left to (256, 154) px, past nothing.
  const fromPixels = rectFromPixelCorners({ x: 819.2, y: 614.4 }, { x: 256, y: 153.6 }, 1024, 768);
  assert.deepEqual(rectToCoords2d(fromPixels), [
    [0.25, 0.2],
    [0.8, 0.2],
    [0.8, 0.8],
    [0.25, 0.8],
  ]);
  // The same photo zoomed to 2x and panned by (-300, -100) inside a frame at client (40, 120).
  const box = viewBox({ scale: 2, x: -300, y: -100 }, { width: 1024, height: 768 }, { x: 40, y: 120 });
  const a = photoToClient({ x: 0.8, y: 0.8 }, box);
  const b = photoToClient({ x: 0.25, y: 0.2 }, box);
  assert.deepEqual(a, { x: 40 - 300 + 0.8 * 2048, y: 120 - 100 + 0.8 * 1536 });
  const drawn = rectFromCorners(clientToPhoto(a, box), clientToPhoto(b, box));
  rectToCoords2d(drawn).flat().forEach((v, i) => assert.ok(Math.abs(v - rectToCoords2d(fromPixels).flat()[i]) < 1e-9));
  // Dragged past the frame's edge while zoomed: clamped to the photo, not to the view.
  const past = rectFromCorners(clientToPhoto({ x: -5000, y: -5000 }, box), clientToPhoto(b, box));
  assert.deepEqual([past.x0, past.y0], [0, 0]);
});
