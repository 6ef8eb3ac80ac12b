// Reading a COLMAP sparse model: the text format (cameras.txt, images.txt, points3D.txt, as
// `model_converter --output_type TXT` writes it) and, to pick the largest of the mapper's models
// without converting each, the count of registered images at the head of images.bin.
import fs from 'node:fs/promises';
import path from 'node:path';
import { quaternionToMatrix } from '../../../shared/geo/rotation.ts';

export interface ColmapCamera {
  id: number;
  model: string;
  width: number;
  height: number;
  params: number[];
}

export interface ColmapImage {
  id: number;
  /** World-to-camera rotation [w, x, y, z] and translation: x_cam = R(q) x_world + t. */
  qvec: [number, number, number, number];
  tvec: [number, number, number];
  cameraId: number;
  name: string;
  /** Ids of the 3D points this image observes (one per observation with a 3D point). */
  point3dIds: number[];
}

export interface ColmapModel {
  cameras: Map<number, ColmapCamera>;
  images: ColmapImage[];
  /** x, y, z interleaved. */
  positions: Float64Array;
  colors: Uint8Array;
  /** Mean reprojection error of each point (pixels) and its track length. */
  errors: Float64Array;
  trackLengths: Uint32Array;
  pointIds: Uint32Array;
}

/** A registered image's projection centre in the model's frame: -R(q)^T t. */
export function cameraCentre(image: Pick<ColmapImage, 'qvec' | 'tvec'>): [number, number, number] {
  const R = quaternionToMatrix(image.qvec);
  const t = image.tvec;
  return [0, 1, 2].map((a) => -(R[0][a] * t[0] + R[1][a] * t[1] + R[2][a] * t[2])) as [number, number, number];
}

/** Registered images of a binary model (the first 8 bytes of images.bin); 0 when unreadable. */
export async function registeredImageCount(modelDir: string): Promise<number> {
  try {
    const handle = await fs.open(path.join(modelDir, 'images.bin'), 'r');
    try {
      const buffer = Buffer.alloc(8);
      const { bytesRead } = await handle.read(buffer, 0, 8, 0);
      return bytesRead === 8 ? Number(buffer.readBigUInt64LE(0)) : 0;
    } finally {
      await handle.close();
    }
  } catch {
    return 0;
  }
}

/**
 * Names of the registered images of a binary model (images.bin: count, then per image its id,
 * qvec, tvec, camera id = 64 bytes, its name up to a NUL, its 2D point count and 24 bytes per
 * point); empty when unreadable. The matching fallback needs to know which images are missing.
 */
export async function registeredImageNames(modelDir: string): Promise<string[]> {
  let data: Buffer;
  try {
    data = await fs.readFile(path.join(modelDir, 'images.bin'));
  } catch {
    return [];
  }
  const names: string[] = [];
  if (data.length < 8) return names;
  const count = Number(data.readBigUInt64LE(0));
  let at = 8;
  for (let i = 0; i < count && at + 64 <= data.length; i++) {
    at += 64;
    const end = data.indexOf(0, at);
    if (end < 0 || end + 9 > data.length) break;
    names.push(data.toString('utf8', at, end));
    const points = Number(data.readBigUInt64LE(end + 1));
    at = end + 9 + 24 * points;
  }
  return names;
}

export async function readTextModel(dir: string): Promise<ColmapModel> {
  const cameras = new Map<number, ColmapCamera>();
  for (const line of dataLines(await fs.readFile(path.join(dir, 'cameras.txt'), 'utf8'))) {
    const f = line.split(/\s+/);
    cameras.set(Number(f[0]), { id: Number(f[0]), model: f[1], width: Number(f[2]), height: Number(f[3]), params: f.slice(4).map(Number) });
  }

  const images: ColmapImage[] = [];
  const imageLines = dataLines(await fs.readFile(path.join(dir, 'images.txt'), 'utf8'), true);
  for (let i = 0; i + 1 < imageLines.length; i += 2) {
    const head = imageLines[i];
    const f = head.split(/\s+/);
    // IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME (the name is the rest of the line)
    const name = head.replace(/^\s*(\S+\s+){9}/, '');
    const obs = imageLines[i + 1].trim() ? imageLines[i + 1].trim().split(/\s+/) : [];
    const point3dIds: number[] = [];
    for (let o = 2; o < obs.length; o += 3) {
      const id = Number(obs[o]);
      if (id >= 0) point3dIds.push(id);
    }
    images.push({
      id: Number(f[0]),
      qvec: [Number(f[1]), Number(f[2]), Number(f[3]), Number(f[4])],
      tvec: [Number(f[5]), Number(f[6]), Number(f[7])],
      cameraId: Number(f[8]),
      name,
      point3dIds,
    });
  }

  const pointLines = dataLines(await fs.readFile(path.join(dir, 'points3D.txt'), 'utf8'));
  const n = pointLines.length;
  const positions = new Float64Array(3 * n);
  const colors = new Uint8Array(3 * n);
  const errors = new Float64Array(n);
  const trackLengths = new Uint32Array(n);
  const pointIds = new Uint32Array(n);
  pointLines.forEach((line, i) => {
    // POINT3D_ID X Y Z R G B ERROR TRACK[] as (IMAGE_ID, POINT2D_IDX)
    const f = line.split(/\s+/);
    pointIds[i] = Number(f[0]);
    positions[3 * i] = Number(f[1]);
    positions[3 * i + 1] = Number(f[2]);
    positions[3 * i + 2] = Number(f[3]);
    colors[3 * i] = Number(f[4]);
    colors[3 * i + 1] = Number(f[5]);
    colors[3 * i + 2] = Number(f[6]);
    errors[i] = Number(f[7]);
    trackLengths[i] = Math.floor((f.length - 8) / 2);
  });
  return { cameras, images, positions, colors, errors, trackLengths, pointIds };
}

/** Lines that are not comments; `keepEmpty` keeps empty lines (an image without observations). */
function dataLines(text: string, keepEmpty = false): string[] {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  if (lines.at(-1) === '') lines.pop();
  return lines.filter((l) => !l.startsWith('#') && (keepEmpty || l.trim() !== ''));
}

/** Intrinsics of a COLMAP camera as fx, fy, cx, cy and OpenCV-style k1, k2, p1, p2. */
export function intrinsicsOf(camera: ColmapCamera): { fx: number; fy: number; cx: number; cy: number; k1: number; k2: number; p1: number; p2: number } {
  const p = camera.params;
  switch (camera.model) {
    case 'SIMPLE_PINHOLE':
      return { fx: p[0], fy: p[0], cx: p[1], cy: p[2], k1: 0, k2: 0, p1: 0, p2: 0 };
    case 'PINHOLE':
      return { fx: p[0], fy: p[1], cx: p[2], cy: p[3], k1: 0, k2: 0, p1: 0, p2: 0 };
    case 'SIMPLE_RADIAL':
      return { fx: p[0], fy: p[0], cx: p[1], cy: p[2], k1: p[3], k2: 0, p1: 0, p2: 0 };
    case 'RADIAL':
      return { fx: p[0], fy: p[0], cx: p[1], cy: p[2], k1: p[3], k2: p[4], p1: 0, p2: 0 };
    case 'OPENCV':
      return { fx: p[0], fy: p[1], cx: p[2], cy: p[3], k1: p[4], k2: p[5], p1: p[6], p2: p[7] };
    default:
      throw new Error(`COLMAP camera model ${camera.model} is not supported`);
  }
}
