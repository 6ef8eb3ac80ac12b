// Which way an item faces, from its segment's points (box-fit.ts starts from it): two opinions
// that fail differently, each fitted in full by box-fit.ts, which keeps the one whose front and
// back faces hold the most points.
// - The densest layer: the direction along which the points stack up most (a face concentrates
//   its points in one thin layer only when looked at square on). A vertical mount pipe stacks up
//   alike in every horizontal direction and a horizontal frame pipe at every tilt, so neither
//   decides it. Fails on a narrow, deep panel whose sides rival its faces.
// - RANSAC (Schnabel et al. 2007: the second and third points drawn near the first, so a triple
//   often lies on one face), scored by the cells of the plane its points cover: any plane through
//   a pipe's axis holds the whole pipe, but only a face covers an area. Fails on a segment of
//   several items.
// Both look only within MAX_FACE_TURN of the way out from the tower and MAX_FACE_TILT of level.
import type { Vec3 } from './detection-types.ts';
import { cross, dot, normalise, scale } from './geometry.ts';

/** Equipment faces look at most this far (degrees) above or below the horizon: downtilts are under ~20°. */
const MAX_FACE_TILT = 35;
/** ... and at most this far from the direction from the tower to the segment (a panel at a sector's end is ~25° off it, and a segment holding two sectors' ends points between them). */
const MAX_FACE_TURN = 80;
/** Points the facing is searched on at most (a stride sample). */
const FACING_SAMPLE = 3000;
/** RANSAC's draws: enough for a face holding a tenth of a segment's points. */
const RANSAC_ROUNDS = 400;
/** Cell (m) the RANSAC's second and third points are drawn around the first from: about a panel's width. */
const RANSAC_REACH = 0.15;
/**
 * The facing direction: the direction along which the points stack up most, i.e. whose densest
 * layer (a window of about the noise) holds the most points. A face concentrates its points in
 * one layer only when looked at square on; a vertical mount pipe stacks up equally in every
 * horizontal direction and a horizontal frame pipe at every tilt, so neither decides it; the back
 * face (whole) and the front face (often holed) are parallel. Searched over azimuths within
 * MAX_FACE_TURN of the way out and tilts from -10° to +20° (downtilts are 0-15°), coarse then fine,
 * on at most FACING_SAMPLE points.
 */
export function densestLayerFacing(xs: Float64Array, ys: Float64Array, zs: Float64Array, outward: Vec3, noise: number): Vec3 | null {
  const n = xs.length;
  const m = Math.min(n, FACING_SAMPLE);
  const sample = Array.from({ length: m }, (_, k) => Math.floor((k * n) / m));
  const window = Math.max(1.5 * noise, 0.01);
  const bin = window / 2;
  const base = Math.atan2(outward[0], outward[1]);
  const t = new Float64Array(m);
  const score = (azimuth: number, tilt: number) => {
    const h = Math.cos(tilt);
    const nx = Math.sin(azimuth) * h, ny = Math.cos(azimuth) * h, nz = -Math.sin(tilt);
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < m; i++) {
      const k = sample[i];
      t[i] = xs[k] * nx + ys[k] * ny + zs[k] * nz;
      if (t[i] < lo) lo = t[i];
      if (t[i] > hi) hi = t[i];
    }
    const bins = Math.min(100000, Math.floor((hi - lo) / bin) + 2);
    const counts = new Uint32Array(bins);
    for (let i = 0; i < m; i++) counts[Math.min(bins - 1, Math.floor((t[i] - lo) / bin))]++;
    let best = 0;
    for (let i = 0; i + 1 < bins; i++) best = Math.max(best, counts[i] + counts[i + 1]);
    return best;
  };
  const DEG_ = Math.PI / 180;
  let bestAz = 0, bestTilt = 0, bestScore = -1;
  // Tilt steps of 2°: a 2 m face looked at 1° off spreads over 3.5 cm, about the window.
  for (let a = -MAX_FACE_TURN; a <= MAX_FACE_TURN; a += 2) {
    for (let tilt = -10; tilt <= 20; tilt += 2) {
      const sc = score(base + a * DEG_, tilt * DEG_);
      if (sc > bestScore) [bestScore, bestAz, bestTilt] = [sc, a, tilt];
    }
  }
  const coarseAz = bestAz, coarseTilt = bestTilt;
  for (let a = coarseAz - 2; a <= coarseAz + 2; a += 0.5) {
    for (let tilt = coarseTilt - 2; tilt <= coarseTilt + 2; tilt += 0.5) {
      const sc = score(base + a * DEG_, tilt * DEG_);
      if (sc > bestScore) [bestScore, bestAz, bestTilt] = [sc, a, tilt];
    }
  }
  if (bestScore <= 0) return null;
  const az = base + bestAz * DEG_, tl = bestTilt * DEG_;
  return [Math.sin(az) * Math.cos(tl), Math.cos(az) * Math.cos(tl), -Math.sin(tl)];
}

/**
 * A second opinion on the facing direction (RANSAC, in the spirit of Schnabel et al. 2007): among
 * planes through three nearby points (the second and third drawn within RANSAC_REACH of the
 * first, so a triple often lies on one face), facing outwards and near vertical, the one whose
 * points within `threshold` cover the most cells of `cell` in the plane (any plane through a
 * mount pipe's axis holds the whole pipe, but only a face covers an area). Seeded: the same
 * points give the same plane.
 */
export function ransacFacing(xs: Float64Array, ys: Float64Array, zs: Float64Array, outward: Vec3, threshold: number, cell: number): Vec3 | null {
  const n = xs.length;
  const m = Math.min(n, FACING_SAMPLE);
  const sample = Array.from({ length: m }, (_, k) => Math.floor((k * n) / m));
  let seed = (n * 2654435761) >>> 0;
  const random = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 4294967296;
  };
  const key = (i: number, j: number, k: number) => ((i + 1024) * 2048 + (j + 1024)) * 2048 + (k + 1024);
  const buckets = new Map<number, number[]>();
  for (const k of sample) {
    const id = key(Math.floor(xs[k] / RANSAC_REACH), Math.floor(ys[k] / RANSAC_REACH), Math.floor(zs[k] / RANSAC_REACH));
    const list = buckets.get(id);
    if (list) list.push(k);
    else buckets.set(id, [k]);
  }
  const near = (a: number) => {
    const i = Math.floor(xs[a] / RANSAC_REACH), j = Math.floor(ys[a] / RANSAC_REACH), k = Math.floor(zs[a] / RANSAC_REACH);
    const out: number[] = [];
    for (let di = -1; di <= 1; di++) for (let dj = -1; dj <= 1; dj++) for (let dk = -1; dk <= 1; dk++) out.push(...(buckets.get(key(i + di, j + dj, k + dk)) ?? []));
    return out;
  };
  const cosTurn = Math.cos(MAX_FACE_TURN * (Math.PI / 180)), sinTilt = Math.sin(MAX_FACE_TILT * (Math.PI / 180));
  let best: Vec3 | null = null, bestCells = 0;
  const cells = new Set<number>();
  for (let round = 0; round < RANSAC_ROUNDS; round++) {
    const a = sample[Math.floor(random() * m)];
    const around = near(a);
    if (around.length < 3) continue;
    const b = around[Math.floor(random() * around.length)], c = around[Math.floor(random() * around.length)];
    const cr = cross([xs[b] - xs[a], ys[b] - ys[a], zs[b] - zs[a]], [xs[c] - xs[a], ys[c] - ys[a], zs[c] - zs[a]]);
    const length = Math.hypot(cr[0], cr[1], cr[2]);
    if (length < 1e-6) continue;
    let normal = scale(cr, 1 / length);
    if (dot(normal, outward) < 0) normal = scale(normal, -1);
    if (Math.abs(normal[2]) > sinTilt || dot(normal, outward) < cosTurn) continue;
    const offset = normal[0] * xs[a] + normal[1] * ys[a] + normal[2] * zs[a];
    const across = normalise([normal[1], -normal[0], 0]);
    const within = cross(normal, across);
    cells.clear();
    for (const k of sample) {
      if (Math.abs(normal[0] * xs[k] + normal[1] * ys[k] + normal[2] * zs[k] - offset) >= threshold) continue;
      const i = Math.floor((across[0] * xs[k] + across[1] * ys[k]) / cell), j = Math.floor((within[0] * xs[k] + within[1] * ys[k] + within[2] * zs[k]) / cell);
      cells.add((i + 4096) * 8192 + (j + 4096));
    }
    if (cells.size > bestCells) [bestCells, best] = [cells.size, normal];
  }
  return best;
}
