// A synthetic COLMAP dense workspace with known geometry, for the PatchMatch tests: a textured
// ground plane (z = 0) and a tilted wall (x = 1.2 + 0.3 z), seen by a row of PINHOLE cameras.
// Each view is ray-cast (2x2 supersampled grey levels from a two-octave value noise painted on the
// planes), its true depth map kept; the sparse model (cameras.bin, images.bin, points3D.bin, in
// COLMAP's binary format, with the 2D observations) holds a few points on the planes. The layout
// is what `colmap image_undistorter --output_type COLMAP` writes, so `colmap stereo_fusion` reads it.
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';

export interface SyntheticView {
  name: string;
  center: [number, number, number];
  /** World-to-camera rotation (row-major) and translation. */
  R: number[];
  t: number[];
  /** True depth (camera z) per pixel, 0 where the ray meets nothing. */
  depth: Float32Array;
}

export interface SyntheticScene {
  workspace: string;
  width: number;
  height: number;
  fx: number;
  cx: number;
  cy: number;
  views: SyntheticView[];
}

export const WALL = { x0: 1.2, slope: 0.3 };

function hash(ix: number, iy: number, seed: number): number {
  let h = Math.imul(ix, 374761393) + Math.imul(iy, 668265263) + Math.imul(seed, 2147483647);
  h = Math.imul(h ^ (h >>> 13), 1274126177);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

function valueNoise(u: number, v: number, cell: number, seed: number): number {
  const x = u / cell, y = v / cell;
  const ix = Math.floor(x), iy = Math.floor(y);
  const fx = x - ix, fy = y - iy;
  const a = hash(ix, iy, seed), b = hash(ix + 1, iy, seed), c = hash(ix, iy + 1, seed), d = hash(ix + 1, iy + 1, seed);
  return a + (b - a) * fx + (c - a) * fy + (a - b - c + d) * fx * fy;
}

function texture(u: number, v: number, seed: number): number {
  return 0.15 + 0.45 * valueNoise(u, v, 0.16, seed) + 0.35 * valueNoise(u, v, 0.06, seed + 7);
}

/** The nearest surface along a world ray: distance and grey level, or null. */
function castRay(o: number[], d: number[]): { s: number; grey: number } | null {
  let best: { s: number; grey: number } | null = null;
  // ground z = 0
  if (d[2] < -1e-9) {
    const s = -o[2] / d[2];
    const x = o[0] + s * d[0];
    if (s > 0 && x <= WALL.x0) best = { s, grey: texture(x, o[1] + s * d[1], 1) };
  }
  // wall x - slope z = x0
  const denominator = d[0] - WALL.slope * d[2];
  if (Math.abs(denominator) > 1e-9) {
    const s = (WALL.x0 - o[0] + WALL.slope * o[2]) / denominator;
    const z = o[2] + s * d[2];
    if (s > 0 && z >= 0 && (!best || s < best.s)) best = { s, grey: texture(o[1] + s * d[1], z, 2) };
  }
  return best;
}

function lookAt(center: number[], target: number[]): { R: number[]; t: number[] } {
  const f = target.map((v, i) => v - center[i]);
  const fl = Math.hypot(...f);
  const fwd = f.map((v) => v / fl);
  const up = [0, 0, 1];
  // right = fwd x up, down = fwd x right
  let right = [fwd[1] * up[2] - fwd[2] * up[1], fwd[2] * up[0] - fwd[0] * up[2], fwd[0] * up[1] - fwd[1] * up[0]];
  const rl = Math.hypot(...right);
  right = right.map((v) => v / rl);
  const down = [fwd[1] * right[2] - fwd[2] * right[1], fwd[2] * right[0] - fwd[0] * right[2], fwd[0] * right[1] - fwd[1] * right[0]];
  const R = [...right, ...down, ...fwd];
  const t = [0, 1, 2].map((i) => -(R[3 * i] * center[0] + R[3 * i + 1] * center[1] + R[3 * i + 2] * center[2]));
  return { R, t };
}

/** Row-major rotation to COLMAP's [w, x, y, z]. */
function matrixToQuaternion(R: number[]): number[] {
  const trace = R[0] + R[4] + R[8];
  if (trace > 0) {
    const s = 0.5 / Math.sqrt(trace + 1);
    return [0.25 / s, (R[7] - R[5]) * s, (R[2] - R[6]) * s, (R[3] - R[1]) * s];
  }
  if (R[0] > R[4] && R[0] > R[8]) {
    const s = 2 * Math.sqrt(1 + R[0] - R[4] - R[8]);
    return [(R[7] - R[5]) / s, 0.25 * s, (R[1] + R[3]) / s, (R[2] + R[6]) / s];
  }
  if (R[4] > R[8]) {
    const s = 2 * Math.sqrt(1 + R[4] - R[0] - R[8]);
    return [(R[2] - R[6]) / s, (R[1] + R[3]) / s, 0.25 * s, (R[5] + R[7]) / s];
  }
  const s = 2 * Math.sqrt(1 + R[8] - R[0] - R[4]);
  return [(R[3] - R[1]) / s, (R[2] + R[6]) / s, (R[5] + R[7]) / s, 0.25 * s];
}

export async function makeSyntheticScene(workspace: string, options: { views?: number; width?: number; height?: number } = {}): Promise<SyntheticScene> {
  const width = options.width ?? 160;
  const height = options.height ?? 120;
  const fx = width * 0.95;
  const cx = width / 2;
  const cy = height / 2;
  const count = options.views ?? 4;
  for (const dir of ['images', 'sparse', 'stereo/depth_maps', 'stereo/normal_maps', 'stereo/consistency_graphs']) await fs.mkdir(path.join(workspace, dir), { recursive: true });
  const views: SyntheticView[] = [];
  for (let v = 0; v < count; v++) {
    const center: [number, number, number] = [-0.9 + (1.2 * v) / Math.max(1, count - 1), -3.2, 2.2];
    const { R, t } = lookAt(center, [0.6, 0.2, 0.3]);
    const depth = new Float32Array(width * height);
    const pixels = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        let grey = 0;
        for (const [sx, sy] of [[-0.25, -0.25], [0.25, -0.25], [-0.25, 0.25], [0.25, 0.25], [0, 0]]) {
          const ray = [(x + sx - cx) / fx, (y + sy - cy) / fx, 1];
          const d = [0, 1, 2].map((j) => R[j] * ray[0] + R[3 + j] * ray[1] + R[6 + j] * ray[2]);
          const hit = castRay(center, d);
          if (sx === 0 && sy === 0) depth[y * width + x] = hit ? hit.s : 0;
          else grey += (hit ? hit.grey : 0.5) / 4;
        }
        const g = Math.round(255 * Math.min(1, Math.max(0, grey)));
        pixels.fill(g, 3 * (y * width + x), 3 * (y * width + x) + 3);
      }
    }
    const name = `view${v}.png`;
    await sharp(pixels, { raw: { width, height, channels: 3 } }).png().toFile(path.join(workspace, 'images', name));
    views.push({ name, center, R, t, depth });
  }

  // Sparse points: a grid on the ground and on the wall, observed where they are visible.
  const points: { xyz: number[]; track: { view: number; index: number }[] }[] = [];
  const observations: { x: number; y: number; point: number }[][] = views.map(() => []);
  const candidates: number[][] = [];
  for (let i = 0; i < 6; i++) for (let j = 0; j < 4; j++) candidates.push([-0.8 + 0.35 * i, -0.3 + 0.35 * j, 0]);
  for (let i = 0; i < 4; i++) for (let j = 0; j < 3; j++) candidates.push([WALL.x0 + WALL.slope * (0.2 + 0.3 * j), -0.2 + 0.35 * i, 0.2 + 0.3 * j]);
  for (const xyz of candidates) {
    const track: { view: number; index: number }[] = [];
    views.forEach((view, v) => {
      const c = [0, 1, 2].map((i) => view.R[3 * i] * xyz[0] + view.R[3 * i + 1] * xyz[1] + view.R[3 * i + 2] * xyz[2] + view.t[i]);
      const x = (fx * c[0]) / c[2] + cx, y = (fx * c[1]) / c[2] + cy;
      const px = Math.round(x), py = Math.round(y);
      if (c[2] <= 0 || px < 0 || py < 0 || px >= width || py >= height) return;
      if (Math.abs(view.depth[py * width + px] - c[2]) > 0.05 * c[2]) return;
      track.push({ view: v, index: observations[v].length });
      observations[v].push({ x, y, point: points.length });
    });
    if (track.length >= 2) points.push({ xyz, track });
    else for (const o of track) observations[o.view].pop();
  }

  const cameras = Buffer.alloc(8 + 24 + 32);
  cameras.writeBigUInt64LE(1n, 0);
  cameras.writeInt32LE(1, 8);
  cameras.writeInt32LE(1, 12); // PINHOLE
  cameras.writeBigUInt64LE(BigInt(width), 16);
  cameras.writeBigUInt64LE(BigInt(height), 24);
  [fx, fx, cx, cy].forEach((p, i) => cameras.writeDoubleLE(p, 32 + 8 * i));

  const imageParts: Buffer[] = [u64(views.length)];
  views.forEach((view, v) => {
    const head = Buffer.alloc(64);
    head.writeInt32LE(v + 1, 0);
    [...matrixToQuaternion(view.R), ...view.t].forEach((value, i) => head.writeDoubleLE(value, 4 + 8 * i));
    head.writeInt32LE(1, 60);
    const obs = Buffer.alloc(24 * observations[v].length);
    observations[v].forEach((o, i) => {
      obs.writeDoubleLE(o.x + 0.5, 24 * i); // COLMAP's 2D points have the pixel centre at +0.5
      obs.writeDoubleLE(o.y + 0.5, 24 * i + 8);
      obs.writeBigInt64LE(BigInt(o.point + 1), 24 * i + 16);
    });
    imageParts.push(head, Buffer.from(`${view.name}\0`), u64(observations[v].length), obs);
  });

  const pointParts: Buffer[] = [u64(points.length)];
  points.forEach((point, i) => {
    const b = Buffer.alloc(51 + 8 * point.track.length);
    b.writeBigUInt64LE(BigInt(i + 1), 0);
    point.xyz.forEach((value, k) => b.writeDoubleLE(value, 8 + 8 * k));
    b.fill(128, 32, 35);
    b.writeDoubleLE(0.5, 35);
    b.writeBigUInt64LE(BigInt(point.track.length), 43);
    point.track.forEach((o, k) => {
      b.writeInt32LE(o.view + 1, 51 + 8 * k);
      b.writeInt32LE(o.index, 55 + 8 * k);
    });
    pointParts.push(b);
  });

  await fs.writeFile(path.join(workspace, 'sparse/cameras.bin'), cameras);
  await fs.writeFile(path.join(workspace, 'sparse/images.bin'), Buffer.concat(imageParts));
  await fs.writeFile(path.join(workspace, 'sparse/points3D.bin'), Buffer.concat(pointParts));
  const names = views.map((v) => v.name).join('\n') + '\n';
  await fs.writeFile(path.join(workspace, 'stereo/fusion.cfg'), names);
  await fs.writeFile(path.join(workspace, 'stereo/patch-match.cfg'), views.map((v) => `${v.name}\n__auto__, ${count - 1}\n`).join(''));
  return { workspace, width, height, fx, cx, cy, views };
}

function u64(value: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(value));
  return b;
}
