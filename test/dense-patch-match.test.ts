// PatchMatch MVS (src/cloud/processing/dense/) on a synthetic scene with known depth: textured
// ground and tilted wall planes seen by four PINHOLE cameras (test/helpers/synthetic-scene.ts).
// The depth maps computed by computeDepthMaps (worker threads, photometric then geometric pass,
// filtered) are compared with the true depths and plane normals, and `colmap stereo_fusion` must
// fuse them into points that lie on the planes. Breaking the propagation or the matching cost
// makes the accuracy test fail (see the report of issue 28).
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import { readColmapMat } from '../src/cloud/processing/dense/depth-map-io.ts';
import { computeDepthMaps, type DepthMapSummary } from '../src/cloud/processing/dense/depth-maps.ts';
import { fusionProgress, runStereoFusion } from '../src/cloud/processing/dense/fusion.ts';
import { makeSyntheticScene, WALL, type SyntheticScene } from './helpers/synthetic-scene.ts';
import { requireTool } from './helpers/system-tools.ts';

let scene: SyntheticScene;
let summary: DepthMapSummary;
const progress: [number, number][] = [];

before(async () => {
  const workspace = await fs.mkdtemp(path.join(os.tmpdir(), 'dense-pm-'));
  scene = await makeSyntheticScene(workspace, { views: 4, width: 128, height: 96 });
  summary = await computeDepthMaps(workspace, { threads: 2, maxImageSize: 128 }, (done, total) => progress.push([done, total]), new AbortController().signal);
});
after(() => fs.rm(scene.workspace, { recursive: true, force: true }));

/** Which plane a world point lies on, and that plane's normal facing a camera above the ground in front of the wall. */
function planeOf(x: number, z: number): { normal: number[] } {
  if (Math.abs(z) < 1e-3) return { normal: [0, 0, 1] };
  const len = Math.hypot(1, WALL.slope);
  return { normal: [-1 / len, 0, WALL.slope / len] };
}

/** Share of pixels with a depth, share of those within 1 % of the truth, median normal error (degrees). */
async function accuracy(): Promise<{ validShare: number; accurateShare: number; medianNormalError: number }> {
  let truthPixels = 0;
  let valid = 0;
  let within1Percent = 0;
  const normalErrors: number[] = [];
  for (const view of scene.views) {
    const depth = await readColmapMat(path.join(scene.workspace, 'stereo/depth_maps', `${view.name}.geometric.bin`));
    const normal = await readColmapMat(path.join(scene.workspace, 'stereo/normal_maps', `${view.name}.geometric.bin`));
    assert.deepEqual([depth.width, depth.height, depth.channels, normal.channels], [scene.width, scene.height, 1, 3]);
    for (let y = 0; y < scene.height; y++) {
      for (let x = 0; x < scene.width; x++) {
        const p = y * scene.width + x;
        const truth = view.depth[p];
        if (!(truth > 0)) continue;
        truthPixels++;
        const d = depth.data[p];
        if (!(d > 0)) continue;
        valid++;
        if (Math.abs(d - truth) <= 0.01 * truth) within1Percent++;
        // the true plane's normal in this camera's frame
        const ray = [(x - scene.cx) / scene.fx, (y - scene.cy) / scene.fx, 1];
        const cam = ray.map((v) => v * truth);
        const world = [0, 1, 2].map((j) => view.R[j] * (cam[0] - view.t[0]) + view.R[3 + j] * (cam[1] - view.t[1]) + view.R[6 + j] * (cam[2] - view.t[2]));
        const nWorld = planeOf(world[0], world[2]).normal;
        const nCam = [0, 1, 2].map((i) => view.R[3 * i] * nWorld[0] + view.R[3 * i + 1] * nWorld[1] + view.R[3 * i + 2] * nWorld[2]);
        const n = [normal.data[3 * p], normal.data[3 * p + 1], normal.data[3 * p + 2]];
        assert.ok(n[0] * ray[0] + n[1] * ray[1] + n[2] * ray[2] < 0, 'COLMAP stores normals facing the camera');
        const cos = n[0] * nCam[0] + n[1] * nCam[1] + n[2] * nCam[2];
        normalErrors.push((Math.acos(Math.min(1, cos)) * 180) / Math.PI);
      }
    }
  }
  normalErrors.sort((a, b) => a - b);
  const result = { validShare: valid / truthPixels, accurateShare: within1Percent / valid, medianNormalError: normalErrors[normalErrors.length >> 1] };
  console.log(`# valid ${(100 * result.validShare).toFixed(1)} % of pixels, ${(100 * result.accurateShare).toFixed(1)} % of them within 1 % of the true depth, median normal error ${result.medianNormalError.toFixed(1)} deg`);
  return result;
}

function assertAccurate(result: { validShare: number; accurateShare: number; medianNormalError: number }): void {
  assert.ok(result.validShare >= 0.6, `valid share ${result.validShare}`);
  assert.ok(result.accurateShare >= 0.8, `share within 1 % ${result.accurateShare}`);
  assert.ok(result.medianNormalError <= 10, `median normal error ${result.medianNormalError} deg`);
}

test('PatchMatch depth maps match the true depths of the synthetic planes, with normals facing the camera', async () => {
  assert.equal(summary.images, 4);
  assert.deepEqual(progress.at(-1), [8, 8], 'one progress step per map and pass');
  assertAccurate(await accuracy());
});

test('colmap stereo_fusion fuses the depth maps into points on the synthetic planes', async (t) => {
  if (!requireTool(t, '/usr/bin/colmap', 'colmap')) return;
  const lines: string[] = [];
  const fused = await runStereoFusion({ binary: '/usr/bin/colmap', workspace: scene.workspace, glogDir: scene.workspace, log: new PassThrough().resume(), threads: 2, signal: new AbortController().signal, onProgress: (done, total) => lines.push(`${done}/${total}`) });
  assert.equal(lines.at(-1), '4/4');
  const ply = await fs.readFile(fused);
  const headerEnd = ply.indexOf('end_header\n') + 'end_header\n'.length;
  const header = ply.toString('latin1', 0, headerEnd);
  assert.match(header, /format binary_little_endian 1\.0/);
  assert.match(header, /property float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n/);
  const count = Number(/element vertex (\d+)/.exec(header)?.[1]);
  assert.equal(ply.length, headerEnd + 27 * count);
  let onPlane = 0;
  for (let i = 0; i < count; i++) {
    const o = headerEnd + 27 * i;
    const x = ply.readFloatLE(o), z = ply.readFloatLE(o + 8);
    const toGround = Math.abs(z);
    const toWall = Math.abs(x - WALL.x0 - WALL.slope * z) / Math.hypot(1, WALL.slope);
    if (Math.min(toGround, toWall) <= 0.02) onPlane++;
  }
  console.log(`# fused ${count} points, ${(100 * onPlane / count).toFixed(1)} % within 2 cm of a plane`);
  assert.ok(count >= 0.3 * scene.width * scene.height, `only ${count} fused points`);
  assert.ok(onPlane / count >= 0.95, `${onPlane} of ${count} fused points on the planes`);
});

test('coarse to fine (the photometric pass started from half-size planes) keeps the accuracy', async () => {
  // after the fusion test: this overwrites the maps
  await computeDepthMaps(scene.workspace, { threads: 2, maxImageSize: 128, pyramidMinSize: 48 }, () => {}, new AbortController().signal);
  assertAccurate(await accuracy());
});

test('an abort stops computeDepthMaps with the abort reason', async () => {
  const controller = new AbortController();
  const reason = new Error('canceled by the test');
  const steps: number[] = [];
  await assert.rejects(
    computeDepthMaps(scene.workspace, { threads: 1, maxImageSize: 64 }, (done) => {
      steps.push(done);
      controller.abort(reason);
    }, controller.signal),
    (err) => err === reason,
  );
  assert.deepEqual(steps, [1], 'no map finishes after the abort');
});

test('fusionProgress reads COLMAP 3.8 stereo_fusion progress lines', () => {
  assert.deepEqual(fusionProgress('Fusing image [3/29] with index 7 in 0.120s (8059 points)'), { done: 3, total: 29 });
  assert.equal(fusionProgress('Number of fused points: 8444'), null);
});
