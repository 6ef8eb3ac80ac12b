// The part of the input cloud the detector works on: the points within the search radius of the
// asset, moved to a local origin (the asset's x and y, a median height) and stored as three
// Float32Arrays. Input coordinates may be UTM eastings of hundreds of kilometres: subtracting the
// origin in double precision first keeps millimetres in float32 over the few hundred metres left.
// Also the two scales every later threshold derives from: the point spacing and the noise.
import type { DetectionInput, Vec3 } from './detection-types.ts';
import { Moments3, eigenSymmetric3, median, quantile } from './geometry.ts';
import { VoxelHash } from './spatial-index.ts';

/** Area, in voxel faces, of the surfaces in the upper quartile of occupied voxels (surfaceSpacing). */
const SURFACE_SHARE = 1.15;

export interface LocalCloud {
  count: number;
  x: Float32Array;
  y: Float32Array;
  z: Float32Array;
  /** Input-frame coordinates of the local origin. */
  origin: Vec3;
  /** Index in the input of each point (to colour the input by segment when debugging). */
  source: Uint32Array;
}

/** Points of the input within `radius` (horizontally) of the asset, in the local frame; non-finite points are skipped. */
export function cropAroundAsset(input: DetectionInput, radius: number): LocalCloud {
  const { positions, assetXY } = input;
  const count = Math.min(input.count, Math.floor(positions.length / 3));
  const r2 = radius * radius;
  const inside = new Uint32Array(count);
  let n = 0;
  for (let i = 0; i < count; i++) {
    const dx = positions[3 * i] - assetXY[0], dy = positions[3 * i + 1] - assetXY[1], z = positions[3 * i + 2];
    if (dx * dx + dy * dy <= r2 && Number.isFinite(z)) inside[n++] = i;
  }
  const heights = new Float64Array(Math.min(n, 20000));
  for (let s = 0; s < heights.length; s++) heights[s] = positions[3 * inside[Math.floor((s * n) / heights.length)] + 2];
  const z0 = heights.length ? median(heights) : 0;
  const cloud: LocalCloud = { count: n, x: new Float32Array(n), y: new Float32Array(n), z: new Float32Array(n), origin: [assetXY[0], assetXY[1], z0], source: inside.slice(0, n) };
  for (let s = 0; s < n; s++) {
    const i = inside[s];
    cloud.x[s] = positions[3 * i] - assetXY[0];
    cloud.y[s] = positions[3 * i + 1] - assetXY[1];
    cloud.z[s] = positions[3 * i + 2] - z0;
  }
  return cloud;
}

/** A spread sample of at most `max` of the given points (every k-th). */
export function strideSample(points: Uint32Array, max: number): Uint32Array {
  if (points.length <= max) return points;
  const out = new Uint32Array(max);
  for (let s = 0; s < max; s++) out[s] = points[Math.floor((s * points.length) / max)];
  return out;
}

/**
 * Point spacing on the surfaces (m): 1 / sqrt(points per m²). The upper quartile of the occupied
 * voxels (side v) are those a broad surface crosses well, holding about 1.15 v² of it (measured on
 * sampled monopole and lattice scenes, clean to 3 cm of noise: 1.0-1.28, so the spacing is within
 * ±8 %); thin members (bracing, pipes) and corner cuts fill the lower quartiles. The voxel grows
 * when it holds too few points to count (a sparse cloud). `points`: the surfaces to measure.
 */
export function surfaceSpacing(cloud: LocalCloud, points: Uint32Array): number {
  if (points.length < 10) return NaN;
  for (const voxel of [0.15, 0.3, 0.6]) {
    const hash = new VoxelHash(cloud, points, voxel);
    const counts: number[] = [];
    for (let v = 0; v < hash.voxelCount; v++) if (hash.count(v) >= 2) counts.push(hash.count(v));
    if (counts.length < 5) continue;
    const typical = quantile(counts, 0.75);
    if (typical >= 8 || voxel === 0.6) return voxel * Math.sqrt(SURFACE_SHARE / typical);
  }
  return NaN;
}

/**
 * The noise of the surfaces (m, one standard deviation across them): in voxels of `patch` metres
 * holding enough points, the spread across the best-fitting plane; a low quantile of those, as
 * flat patches (ground, radomes, cabinets) show the noise alone while edges and tubes add their
 * curvature.
 */
export function surfaceNoise(cloud: LocalCloud, points: Uint32Array, patch: number): number {
  const { x, y, z } = cloud;
  const hash = new VoxelHash(cloud, strideSample(points, 600000), patch);
  const spreads: number[] = [];
  for (let v = 0; v < hash.voxelCount; v++) {
    if (hash.count(v) < 12) continue;
    const m = new Moments3();
    for (let s = hash.start[v]; s < hash.start[v + 1]; s++) {
      const p = hash.order[s];
      m.add(x[p], y[p], z[p]);
    }
    const { values } = eigenSymmetric3(m.covariance());
    // Only patches that are surfaces (two large spreads): not lines, not clutter.
    if (values[1] > 4 * values[2] && values[0] < 4 * values[1]) spreads.push(Math.sqrt(Math.max(values[2], 0)));
  }
  // A patch's points lie within the patch, so a plane's own spread is cut at the patch's size.
  return spreads.length >= 5 ? quantile(spreads, 0.25) : NaN;
}
