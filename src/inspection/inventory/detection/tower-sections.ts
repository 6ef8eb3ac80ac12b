// The tower's cross-sections along its height, around a coarse centre line: what kind of structure
// it is, and the centre of each 0.5 m slab.
// - Kind: the structure's members that run the whole height (a monopole's wall, a lattice's legs)
//   fill the same directions around the centre line slab after slab, whereas bracing and
//   equipment cross a given direction in a few slabs only. So, per 3° direction, how full it is
//   on average over the slabs (against each slab's densest direction): all directions alike is a
//   tube (monopole), three or four narrow peaks are legs (lattice).
// - Monopole: per slab a robust circle (circle-fit.ts) through the wall, followed from the foot up
//   inside a ring around the previous slab's circle, so the equipment around the shaft (0.7 m+
//   out) never enters the fit; and whether the ring is hollow, as a shaft is (a tree is not).
// - Lattice: per leg and slab, the leg's centre (a small robust circle through the tube's points
//   near where the leg is expected); a robust 3D line per leg; the slab's centre is the mean of the
//   legs at its height (the centre of an equilateral three-legged tower, or of a square one), which
//   stays put where a circle through legs and bracing would not.
import { fitCircle } from './circle-fit.ts';
import { biweight, fitLine, median, robustSigma } from './geometry.ts';
import type { BinIndex } from './spatial-index.ts';

export interface CoarseAxis {
  x0: number;
  dx: number;
  y0: number;
  dy: number;
  r0: number;
  dr: number;
}

export interface SectionSlab {
  z: number;
  cx: number;
  cy: number;
  /** Radius of the wall or of the legs' circle. */
  r: number;
  /** Spread of the points about the fitted wall or legs (m). */
  spread: number;
  weight: number;
  ok: boolean;
}

export interface Sections {
  kind: 'monopole' | 'lattice' | 'unknown';
  legAngles: number[];
  slabs: SectionSlab[];
  /** Share of directions filled in most slabs (1 for a tube). */
  filledShare: number;
}

const DIRECTIONS = 120; // 3° each
/** A direction holding this share of a slab's densest direction's count is full (fill 1) in that slab. */
const FULL = 0.5;
/** A direction filled on average at least this much is filled along the structure. */
const PERSISTENT = 0.7;
/** Well inside a shaft: within this share of its radius. */
const HOLLOW = 0.5;
/** A hollow slab holds fewer points well inside than this share of those on its wall. */
const HOLLOW_SHARE = 0.1;
/** Radial bins of a leg's wedge (its reach / this: ~5 cm). */
const RADIAL_BINS = 100;
/** Points per fit (a stride sample). */
const FIT_POINTS = 2500;

const coarseCentre = (a: CoarseAxis, z: number): [number, number] => [a.x0 + a.dx * z, a.y0 + a.dy * z];
const coarseRadius = (a: CoarseAxis, z: number) => Math.max(a.r0 + a.dr * z, 0.1);

/**
 * Per direction its mean fill over the slabs (its count over the slab's densest direction's, at
 * most 1); the kind and the legs' directions (radians clockwise from +y).
 */
export function classifySections(bins: BinIndex, axis: CoarseAxis, z0: number, z1: number, slab: number): { kind: Sections['kind']; legAngles: number[]; filledShare: number } {
  const { x, y } = bins.cloud;
  const fill = new Float64Array(DIRECTIONS);
  const counts = new Float64Array(DIRECTIONS);
  let slabs = 0;
  for (let z = z0; z + slab <= z1; z += slab) {
    counts.fill(0);
    const [cx, cy] = coarseCentre(axis, z + slab / 2);
    const r = coarseRadius(axis, z + slab / 2);
    let n = 0;
    bins.forEachInCylinder(cx, cy, 1.8 * r + 0.4, z, z + slab, (p) => {
      const dx = x[p] - cx, dy = y[p] - cy;
      if (dx * dx + dy * dy < (0.3 * r) ** 2) return;
      const a = Math.atan2(dx, dy);
      counts[Math.floor(((a / (2 * Math.PI) + 1) % 1) * DIRECTIONS) % DIRECTIONS]++;
      n++;
    });
    if (n < 10) continue;
    slabs++;
    let densest = 0;
    for (const c of counts) densest = Math.max(densest, c);
    for (let k = 0; k < DIRECTIONS; k++) {
      // A leg may straddle two directions: the larger neighbour counts too.
      const c = Math.max(counts[k], counts[(k + 1) % DIRECTIONS], counts[(k + DIRECTIONS - 1) % DIRECTIONS]);
      fill[k] += Math.min(1, c / (FULL * densest));
    }
  }
  if (slabs < 4) return { kind: 'unknown', legAngles: [], filledShare: 0 };
  const share = Array.from(fill, (f) => f / slabs);
  const typical = median(share);
  const filledShare = share.filter((v) => v >= PERSISTENT).length / DIRECTIONS;
  if (typical >= 0.5) return { kind: 'monopole', legAngles: [], filledShare };
  // Peaks: the strongest directions, well above the typical one, at least 40° apart.
  const order = [...share.keys()].sort((a, b) => share[b] - share[a]);
  const peaks: number[] = [];
  for (const k of order) {
    if (share[k] < Math.max(0.5, 2 * typical)) break;
    if (peaks.every((p) => Math.min(Math.abs(p - k), DIRECTIONS - Math.abs(p - k)) * (360 / DIRECTIONS) >= 40)) peaks.push(k);
  }
  // Each peak refined to the fill-weighted mean direction of its neighbourhood (±2 directions).
  const legAngles = peaks.map((k) => {
    let sx = 0, sy = 0;
    for (let d = -2; d <= 2; d++) {
      const kk = (k + d + DIRECTIONS) % DIRECTIONS, a = ((kk + 0.5) * 2 * Math.PI) / DIRECTIONS, w = Math.max(0, share[kk] - typical);
      sx += w * Math.sin(a);
      sy += w * Math.cos(a);
    }
    return Math.atan2(sx, sy);
  });
  const kind = peaks.length === 3 || peaks.length === 4 ? 'lattice' : 'unknown';
  return { kind, legAngles, filledShare };
}

/** Up to FIT_POINTS points of a slab near (cx, cy), a stride sample, into xs/ys; returns the count. */
function slabSample(bins: BinIndex, cx: number, cy: number, radius: number, z0: number, z1: number, xs: Float64Array, ys: Float64Array, keep?: (px: number, py: number) => boolean): number {
  const all: number[] = [];
  bins.forEachInCylinder(cx, cy, radius, z0, z1, (p) => {
    if (!keep || keep(bins.cloud.x[p], bins.cloud.y[p])) all.push(p);
  });
  const n = Math.min(all.length, xs.length);
  for (let k = 0; k < n; k++) {
    const p = all[Math.floor((k * all.length) / n)];
    xs[k] = bins.cloud.x[p];
    ys[k] = bins.cloud.y[p];
  }
  return n;
}

/** The shaft's circle per slab, from the foot up, each slab searched in a ring around the previous circle. */
export function ringSections(bins: BinIndex, axis: CoarseAxis, z0: number, z1: number, slab: number, noise: number): { slabs: SectionSlab[]; hollowShare: number } {
  const xs = new Float64Array(FIT_POINTS), ys = new Float64Array(FIT_POINTS);
  const out: SectionSlab[] = [];
  let fitted = 0, hollow = 0;
  const minScale = Math.max(4 * noise, 0.03);
  let previous: { cx: number; cy: number; r: number; z: number } | null = null;
  let taper = axis.dr;
  for (let z = z0; z + slab <= z1; z += slab) {
    const zm = z + slab / 2;
    let start: { cx: number; cy: number; r: number };
    let ring: number;
    if (previous && zm - previous.z < 4) {
      start = { cx: previous.cx, cy: previous.cy, r: previous.r + taper * (zm - previous.z) };
      ring = Math.max(0.2, 0.3 * start.r, 3 * minScale);
    } else {
      const [cx, cy] = coarseCentre(axis, zm);
      start = { cx, cy, r: coarseRadius(axis, zm) };
      ring = Math.max(0.4, 0.6 * start.r);
    }
    const n = slabSample(bins, start.cx, start.cy, start.r + ring, z, z + slab, xs, ys, (px, py) => Math.hypot(px - start.cx, py - start.cy) >= start.r - ring);
    const fit = fitCircle(xs, ys, n, start, Math.max(ring / 2, minScale), minScale);
    const ok = fit !== null && fit.inliers >= 8 && fit.inliers >= 0.4 * n && fit.coverage >= 0.4;
    if (fit && ok) {
      // A shaft seen from outside is a hollow ring: few points well inside it (a tree's crown, a
      // pole's clutter, fill it).
      let inside = 0;
      bins.forEachInCylinder(fit.cx, fit.cy, HOLLOW * fit.r, z, z + slab, () => inside++);
      fitted++;
      if (inside < HOLLOW_SHARE * fit.inliers * (n > 0 ? slabCount(bins, start, ring, z, slab) / n : 1)) hollow++;
      if (previous && zm - previous.z > 0) taper = 0.8 * taper + 0.2 * Math.max(-0.05, Math.min(0.05, (fit.r - previous.r) / (zm - previous.z)));
      previous = { cx: fit.cx, cy: fit.cy, r: fit.r, z: zm };
    }
    out.push({ z: zm, cx: fit?.cx ?? NaN, cy: fit?.cy ?? NaN, r: fit?.r ?? NaN, spread: fit ? fit.scale / 4.685 : NaN, weight: fit ? Math.sqrt(fit.inliers) : 0, ok });
  }
  return { slabs: out, hollowShare: hollow / Math.max(1, fitted) };
}

/** How many points the ring search of a slab held (the fit saw a stride sample of them). */
function slabCount(bins: BinIndex, start: { cx: number; cy: number; r: number }, ring: number, z: number, slab: number): number {
  let n = 0;
  bins.forEachInCylinder(start.cx, start.cy, start.r + ring, z, z + slab, (p) => {
    if (Math.hypot(bins.cloud.x[p] - start.cx, bins.cloud.y[p] - start.cy) >= start.r - ring) n++;
  });
  return n;
}

/** A robust line v = a + b·t (biweight, scale at least minScale); inliers within 3 robust deviations. */
export function robustLine(t: number[], v: number[], weights: number[], minScale: number, start?: { a: number; b: number } | null): { a: number; b: number; inlier: boolean[] } | null {
  let line = start ?? fitLine(t, v, weights);
  if (!line) return null;
  for (let iteration = 0; iteration < 10; iteration++) {
    const current = line;
    const res = v.map((value, i) => value - (current.a + current.b * t[i]));
    const scale = Math.max(robustSigma(res), minScale) * 4.685;
    const next = fitLine(t, v, res.map((r, i) => weights[i] * biweight(r / scale)));
    if (!next) break;
    line = next;
  }
  const final = line;
  const res = v.map((value, i) => value - (final.a + final.b * t[i]));
  const scale = Math.max(robustSigma(res), minScale) * 3;
  return { ...final, inlier: res.map((r) => Math.abs(r) <= scale) };
}

/** Siegel's repeated-median line v = a + b·t (a stride sample of at most 60 values: O(n²)); null under 3. */
function repeatedMedianLine(t: number[], v: number[]): { a: number; b: number } | null {
  const n = t.length;
  if (n < 3) return null;
  const m = Math.min(n, 60);
  const idx = Array.from({ length: m }, (_, k) => Math.floor((k * n) / m));
  const slopes = idx.map((i) => median(idx.filter((j) => j !== i && t[j] !== t[i]).map((j) => (v[j] - v[i]) / (t[j] - t[i]))));
  const b = median(slopes.filter(Number.isFinite));
  if (!Number.isFinite(b)) return null;
  return { a: median(v.map((vi, i) => vi - b * t[i])), b };
}

/** A leg's centre line: x = x0 + dx·z, y = y0 + dy·z. */
export interface LegLine {
  x0: number;
  dx: number;
  y0: number;
  dy: number;
}

/**
 * Per leg a robust line through its centres slab by slab; per slab the mean of the legs. Also
 * the share of leg sections a small tube fitted (a wall or a tree's crown taken for legs fits none).
 */
export function legSections(bins: BinIndex, axis: CoarseAxis, legAngles: number[], z0: number, z1: number, slab: number, noise: number): { slabs: SectionSlab[]; legs: LegLine[]; tubeShare: number } {
  const xs = new Float64Array(FIT_POINTS), ys = new Float64Array(FIT_POINTS);
  const minScale = Math.max(4 * noise, 0.03);
  const heights: number[] = [];
  for (let z = z0; z + slab <= z1; z += slab) heights.push(z + slab / 2);
  let tubes = 0;
  const legs = legAngles.map((angle) => {
    const t: number[] = [], px: number[] = [], py: number[] = [], w: number[] = [];
    for (const zm of heights) {
      const [cx, cy] = coarseCentre(axis, zm);
      const r = coarseRadius(axis, zm);
      // The leg is the densest thing along its direction: the peak of the radial histogram of the
      // points in a narrow wedge (the coarse radius is only a hint: bracing pulls it inwards).
      const dirX = Math.sin(angle), dirY = Math.cos(angle);
      const wedge = Math.max(0.3, 0.15 * r);
      const histogram = new Float64Array(RADIAL_BINS);
      const reach = 2.5 * r + 0.5;
      bins.forEachInCylinder(cx, cy, reach, zm - slab / 2, zm + slab / 2, (p) => {
        const dx = bins.cloud.x[p] - cx, dy = bins.cloud.y[p] - cy;
        const along = dx * dirX + dy * dirY, across = dx * dirY - dy * dirX;
        if (along < 0.3 * r || Math.abs(across) > wedge) return;
        histogram[Math.min(RADIAL_BINS - 1, Math.floor((along / reach) * RADIAL_BINS))]++;
      });
      let peak = 0;
      for (let k = 1; k < RADIAL_BINS; k++) if (histogram[k] + (histogram[k - 1] + (histogram[k + 1] ?? 0)) / 2 > histogram[peak] + ((histogram[peak - 1] ?? 0) + (histogram[peak + 1] ?? 0)) / 2) peak = k;
      if (histogram[peak] < 4) continue;
      const radius = ((peak + 0.5) / RADIAL_BINS) * reach;
      const n = slabSample(bins, cx + dirX * radius, cy + dirY * radius, 0.3, zm - slab / 2, zm + slab / 2, xs, ys);
      if (n < 8) continue;
      const mx = median(xs, n), my = median(ys, n);
      const fit = fitCircle(xs, ys, n, { cx: mx, cy: my, r: 0.05 }, 0.1, minScale);
      const good = fit && fit.inliers >= 8 && fit.r < 0.3 && Math.hypot(fit.cx - mx, fit.cy - my) < 0.2;
      tubes += good ? 1 : 0;
      t.push(zm);
      px.push(good ? fit.cx : mx);
      py.push(good ? fit.cy : my);
      w.push(good ? Math.sqrt(fit.inliers) : 0.5);
    }
    // A leg's line starts from Siegel's repeated median: half its sections may be wrong (the leg
    // followed into the equipment over the top levels) and least squares would split the difference.
    const lx = robustLine(t, px, w, 0.01, repeatedMedianLine(t, px)), ly = robustLine(t, py, w, 0.01, repeatedMedianLine(t, py));
    return { t, px, py, lx, ly };
  });
  const slabs = heights.map((zm) => {
    let sx = 0, sy = 0, agree = 0, n = 0, spread = 0;
    const positions: [number, number][] = [];
    for (const leg of legs) {
      if (!leg.lx || !leg.ly) continue;
      const lx = leg.lx, ly = leg.ly;
      const ax = lx.a + lx.b * zm, ay = ly.a + ly.b * zm;
      positions.push([ax, ay]);
      sx += ax;
      sy += ay;
      n++;
      const k = leg.t.indexOf(zm);
      if (k >= 0 && lx.inlier[k] && ly.inlier[k]) agree++;
      if (k >= 0) spread += Math.hypot(leg.px[k] - ax, leg.py[k] - ay);
    }
    const cx = sx / n, cy = sy / n;
    const r = positions.reduce((s, [ax, ay]) => s + Math.hypot(ax - cx, ay - cy), 0) / Math.max(n, 1);
    return { z: zm, cx, cy, r, spread: spread / Math.max(n, 1), weight: agree, ok: n === legAngles.length && agree >= Math.max(2, legAngles.length - 1) };
  });
  const lines: LegLine[] = [];
  for (const leg of legs) if (leg.lx && leg.ly) lines.push({ x0: leg.lx.a, dx: leg.lx.b, y0: leg.ly.a, dy: leg.ly.b });
  return { slabs, legs: lines, tubeShare: tubes / Math.max(1, heights.length * legAngles.length) };
}
