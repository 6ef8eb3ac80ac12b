// The orthomosaic's cameras from the dense stage's undistorted workspace (`colmap
// image_undistorter --output_type COLMAP`: images/, sparse/ with PINHOLE cameras, and
// stereo/depth_maps/<image>.<kind>.bin written by dense/depth-maps.ts), so that the photos, poses
// and depth maps the orthomosaic reads are exactly those the dense cloud (and so the DSM) was made
// from. The workspace's model is the engine's placed model: its world is the local frame.
// Depth maps may be smaller than the images (the dense stage's maxImageSize); the occlusion test
// scales each projection to its map (orthomosaic-camera.ts). The geometric map is preferred
// (filtered by the other views' agreement), else the photometric one, else none: that camera's
// occlusion is then walked over the DSM.
import fs from 'node:fs/promises';
import path from 'node:path';
import { readColmapMat } from '../dense/depth-map-io.ts';
import { readSparseModel } from '../dense/sparse-model.ts';
import type { OrthoCamera } from './orthomosaic-camera.ts';

export async function orthoCamerasFromWorkspace(workspace: string): Promise<OrthoCamera[]> {
  const model = await readSparseModel(path.join(workspace, 'sparse'));
  const cameras: OrthoCamera[] = [];
  for (const image of model.images) {
    const { width, height, fx, fy, cx, cy } = image.camera;
    cameras.push({
      name: image.name,
      imagePath: path.join(workspace, 'images', image.name),
      width,
      height,
      fx,
      fy,
      cx,
      cy,
      rotation: [...image.R],
      translation: [image.t[0], image.t[1], image.t[2]],
      depthMap: await depthMapOf(workspace, image.name),
    });
  }
  return cameras;
}

async function depthMapOf(workspace: string, name: string): Promise<OrthoCamera['depthMap']> {
  for (const kind of ['geometric', 'photometric']) {
    const file = path.join(workspace, 'stereo', 'depth_maps', `${name}.${kind}.bin`);
    try {
      await fs.access(file);
    } catch {
      continue;
    }
    const mat = await readColmapMat(file);
    if (mat.channels !== 1) throw new Error(`${file}: a depth map has 1 channel, this one ${mat.channels}`);
    return { width: mat.width, height: mat.height, data: mat.data };
  }
  return null;
}
