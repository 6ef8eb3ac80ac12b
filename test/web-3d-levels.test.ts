// The 3D tab's coarse-to-fine clouds (web/src/lib/ply.ts): a large cloud's points are stored so
// that each prefix of ceil(count / 2^k) points is every 2^k-th kept point, which is what the scene
// draws alone while the view moves on a slow device (viewer3d/scene.ts, adaptDetail). A prefix
// that were not an even thinning would show part of the scene in motion; small clouds keep the
// file's order. Node only, no browser.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPointCloud } from '../src/shared/pointcloud/point-cloud.ts';
import { writePly } from '../src/shared/pointcloud/ply.ts';
import { COARSE_TO_FINE_FROM, parsePly } from '../web/src/lib/ply.ts';

/** A cloud whose point i lies at x = i (y and z 0): a parsed point's x names its place in the file. */
function indexedCloud(count: number): ArrayBuffer {
  const positions = new Float64Array(count * 3);
  for (let i = 0; i < count; i++) positions[3 * i] = i;
  const file = writePly({ ...createPointCloud(count, false), positions });
  return file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer;
}

/** The file indices of the first `n` parsed points. */
function prefix(cloud: ReturnType<typeof parsePly>, n: number): number[] {
  return Array.from({ length: n }, (_, j) => Math.round(cloud.positions[3 * j] + cloud.centre[0]));
}

describe('web console: coarse-to-fine point clouds', () => {
  it('stores a large cloud so that each level prefix is every 2^k-th point, and every point once', () => {
    const count = 200_003;
    const cloud = parsePly(indexedCloud(count));
    assert.equal(cloud.count, count);
    assert.equal(cloud.levels, 6);
    for (let k = 0; k <= 6; k++) {
      const n = Math.ceil(count / 2 ** k);
      const indices = prefix(cloud, n).sort((a, b) => a - b);
      assert.deepEqual(indices, Array.from({ length: n }, (_, i) => i * 2 ** k), `level ${k}: every ${2 ** k}th point`);
    }
  });

  it('levels the points kept under a budget, and leaves a small cloud in file order', () => {
    const budgeted = parsePly(indexedCloud(2 * COARSE_TO_FINE_FROM), COARSE_TO_FINE_FROM);
    assert.equal(budgeted.count, COARSE_TO_FINE_FROM);
    assert.deepEqual(prefix(budgeted, 5), [0, 128, 256, 384, 512], 'every 64th kept point, of every 2nd in the file');
    const small = parsePly(indexedCloud(1000));
    assert.equal(small.levels, undefined);
    assert.deepEqual(prefix(small, 1000), Array.from({ length: 1000 }, (_, i) => i));
  });
});
