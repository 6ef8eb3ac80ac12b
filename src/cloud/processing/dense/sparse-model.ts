// The undistorted workspace's sparse model, read straight from COLMAP's binary files
// (sparse/cameras.bin, images.bin, points3D.bin, as `image_undistorter` writes them: PINHOLE
// cameras): what PatchMatch needs per image (intrinsics, pose) and per point (position, the images
// that see it). Read here rather than through colmap-model.ts's text reader so that no
// `model_converter` run is needed and the points' tracks (which images see each point, for view
// selection and the sparse depth seeds) come with them.
import fs from 'node:fs/promises';
import path from 'node:path';
import { normalizeQuaternion, quaternionToMatrix } from '../../../shared/geo/rotation.ts';

export interface SparseCamera {
  width: number;
  height: number;
  fx: number;
  fy: number;
  cx: number;
  cy: number;
}

export interface SparseImage {
  id: number;
  name: string;
  camera: SparseCamera;
  /** World-to-camera rotation, row-major 3x3, and translation: x_cam = R x_world + t. */
  R: Float64Array;
  t: Float64Array;
  /** Indices (into SparseModel.points) of the 3D points this image observes. */
  points: number[];
}

export interface SparseModel {
  images: SparseImage[];
  /** x, y, z of each point, interleaved. */
  points: Float64Array;
}

// COLMAP's camera model ids (src/base/camera_models.h) and their parameter counts.
const MODEL_PARAMS: Record<number, { name: string; params: number }> = {
  0: { name: 'SIMPLE_PINHOLE', params: 3 },
  1: { name: 'PINHOLE', params: 4 },
  2: { name: 'SIMPLE_RADIAL', params: 4 },
  3: { name: 'RADIAL', params: 5 },
  4: { name: 'OPENCV', params: 8 },
};

export async function readSparseModel(modelDir: string): Promise<SparseModel> {
  const cameras = new Map<number, SparseCamera>();
  {
    const b = await fs.readFile(path.join(modelDir, 'cameras.bin'));
    let at = 8;
    for (let i = 0, n = Number(b.readBigUInt64LE(0)); i < n; i++) {
      const id = b.readInt32LE(at);
      const modelId = b.readInt32LE(at + 4);
      const width = Number(b.readBigUInt64LE(at + 8));
      const height = Number(b.readBigUInt64LE(at + 16));
      at += 24;
      const model = MODEL_PARAMS[modelId];
      if (!model) throw new Error(`cameras.bin: camera model id ${modelId} is not supported`);
      const p: number[] = [];
      for (let k = 0; k < model.params; k++) p.push(b.readDoubleLE(at + 8 * k));
      at += 8 * model.params;
      // The undistorted workspace has PINHOLE cameras; a distortion term would be ignored here.
      if (model.name !== 'PINHOLE' && model.name !== 'SIMPLE_PINHOLE') throw new Error(`cameras.bin: camera ${id} is ${model.name}; PatchMatch needs the undistorted (PINHOLE) workspace`);
      cameras.set(id, model.params === 4 ? { width, height, fx: p[0], fy: p[1], cx: p[2], cy: p[3] } : { width, height, fx: p[0], fy: p[0], cx: p[1], cy: p[2] });
    }
  }

  let points: Float64Array;
  const tracks: number[][] = [];
  {
    const b = await fs.readFile(path.join(modelDir, 'points3D.bin'));
    const n = Number(b.readBigUInt64LE(0));
    points = new Float64Array(3 * n);
    let at = 8;
    for (let i = 0; i < n; i++) {
      points[3 * i] = b.readDoubleLE(at + 8);
      points[3 * i + 1] = b.readDoubleLE(at + 16);
      points[3 * i + 2] = b.readDoubleLE(at + 24);
      // id 8, xyz 24, rgb 3, error 8
      at += 43;
      const length = Number(b.readBigUInt64LE(at));
      at += 8;
      const track: number[] = [];
      for (let k = 0; k < length; k++) track.push(b.readInt32LE(at + 8 * k));
      at += 8 * length;
      tracks.push(track);
    }
  }

  const images: SparseImage[] = [];
  const byId = new Map<number, SparseImage>();
  {
    const b = await fs.readFile(path.join(modelDir, 'images.bin'));
    let at = 8;
    for (let i = 0, n = Number(b.readBigUInt64LE(0)); i < n; i++) {
      const id = b.readInt32LE(at);
      const q = [0, 1, 2, 3].map((k) => b.readDoubleLE(at + 4 + 8 * k));
      const t = Float64Array.from([0, 1, 2].map((k) => b.readDoubleLE(at + 36 + 8 * k)));
      const cameraId = b.readInt32LE(at + 60);
      at += 64;
      const end = b.indexOf(0, at);
      const name = b.toString('utf8', at, end);
      const count = Number(b.readBigUInt64LE(end + 1));
      at = end + 9 + 24 * count;
      const camera = cameras.get(cameraId);
      if (!camera) throw new Error(`images.bin: image ${name} has unknown camera ${cameraId}`);
      const image: SparseImage = { id, name, camera, R: Float64Array.from(quaternionToMatrix(normalizeQuaternion([q[0], q[1], q[2], q[3]])).flat()), t, points: [] };
      images.push(image);
      byId.set(id, image);
    }
  }
  tracks.forEach((track, index) => {
    for (const imageId of new Set(track)) byId.get(imageId)?.points.push(index);
  });
  return { images, points };
}

/** The camera centre in world coordinates: -R^T t. */
export function cameraCenter(image: SparseImage): [number, number, number] {
  const { R, t } = image;
  return [-(R[0] * t[0] + R[3] * t[1] + R[6] * t[2]), -(R[1] * t[0] + R[4] * t[1] + R[7] * t[2]), -(R[2] * t[0] + R[5] * t[1] + R[8] * t[2])];
}
