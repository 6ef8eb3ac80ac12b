// The orthomosaic's cameras read from the dense stage's undistorted workspace
// (orthomosaic-workspace.ts): poses and intrinsics as the sparse model holds them, the photo's
// path, and each camera's depth map (geometric preferred, else photometric, else none).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { orthoCamerasFromWorkspace } from '../src/cloud/processing/rasters/orthomosaic-workspace.ts';
import { writeColmapMat } from '../src/cloud/processing/dense/depth-map-io.ts';
import { makeSyntheticScene, type SyntheticScene } from './helpers/synthetic-scene.ts';

let workspace: string;
let scene: SyntheticScene;

before(async () => {
  workspace = await fs.mkdtemp(path.join(os.tmpdir(), 'ortho-workspace-'));
  scene = await makeSyntheticScene(workspace, { views: 3, width: 80, height: 60 });
  const half = (depth: Float32Array) => Float32Array.from({ length: 40 * 30 }, (_, i) => depth[2 * Math.floor(i / 40) * 80 + 2 * (i % 40)]);
  const dir = path.join(workspace, 'stereo/depth_maps');
  await writeColmapMat(path.join(dir, 'view0.png.geometric.bin'), { width: 40, height: 30, channels: 1, data: half(scene.views[0].depth) });
  await writeColmapMat(path.join(dir, 'view0.png.photometric.bin'), { width: 40, height: 30, channels: 1, data: new Float32Array(40 * 30).fill(7) });
  await writeColmapMat(path.join(dir, 'view1.png.photometric.bin'), { width: 80, height: 60, channels: 1, data: scene.views[1].depth });
});
after(async () => {
  await fs.rm(workspace, { recursive: true, force: true });
});

describe('orthoCamerasFromWorkspace', () => {
  it('reads poses, intrinsics, photos and the best depth map of each image', async () => {
    const cameras = await orthoCamerasFromWorkspace(workspace);
    assert.deepEqual(cameras.map((c) => c.name), ['view0.png', 'view1.png', 'view2.png']);
    cameras.forEach((camera, k) => {
      const view = scene.views[k];
      assert.equal(camera.imagePath, path.join(workspace, 'images', view.name));
      assert.deepEqual([camera.width, camera.height, camera.fx, camera.fy, camera.cx, camera.cy], [80, 60, scene.fx, scene.fx, scene.cx, scene.cy]);
      camera.rotation.forEach((r, i) => assert.ok(Math.abs(r - view.R[i]) < 1e-9, `R[${i}] of ${view.name}`));
      camera.translation.forEach((t, i) => assert.ok(Math.abs(t - view.t[i]) < 1e-9, `t[${i}] of ${view.name}`));
    });
    assert.deepEqual([cameras[0].depthMap?.width, cameras[0].depthMap?.height], [40, 30], 'view0: the geometric map, at its own size');
    assert.equal(cameras[0].depthMap!.data[0], scene.views[0].depth[0]);
    assert.deepEqual(cameras[1].depthMap?.data, scene.views[1].depth, 'view1: the photometric map when there is no geometric one');
    assert.equal(cameras[2].depthMap, null, 'view2: no depth map');
  });
});
