// One item fitted in a segment's points (issue 36 §3): a box whose front face looks away from the
// tower (a panel antenna, an RRU/TMA), or a disc (a microwave dish).
// Box, in the spirit of PCL's SAC segmentation and Open3D's oriented box:
//   1. facing: two opinions (facing.ts), each fitted in full, and turned a quarter when the box
//      comes out narrower than deep (a side taken for the front); the fit whose front and back
//      faces hold the most points wins;
//   2. the front face: the mode of the outermost layer along the facing; the back face: the nearest
//      strong layer behind it (a mount pipe, the frame and an RRU lie further behind);
//   3. one normal for both faces (least squares over both, each about its own centroid, trimmed),
//      which a lost front (low-texture radomes lose most of theirs) or a pipe near the back cannot
//      turn much;
//   4. the long axis: first the vertical seen in the faces' plane, then the lean of the face's
//      sides (their edges slice by slice, a robust line each: holes do not tilt it);
//   5. extents (extent.ts): where the faces are by their coverage, then the edges from the outline
//      of the box's cross-sections; depth between the two planes. Rounds 2-3 repeat 2-5 within the
//      previous round's outline, so neighbours, frames and pipes drop out.
// A fit runs on at most MAX_FIT_POINTS points (a stride sample); its members are then taken from
// all. Past 350 lines: the rounds and their helpers share the segment's gathered coordinates and
// face sets, which split files would pass back and forth.
import type { Vec3 } from './detection-types.ts';
import { Moments3, biweight, cross, dot, eigenSymmetric3, median, normalise, quantile, scale, add } from './geometry.ts';
import { coverageExtent, outlineExtent } from './extent.ts';
import { densestLayerFacing, ransacFacing } from './facing.ts';
import type { LocalCloud } from './local-cloud.ts';
import { gather, pick, project } from './point-frame.ts';

export interface FittedShape {
  shape: 'box' | 'disc';
  centre: Vec3;
  /** Unit axes: front (outward normal), up (long axis, upwards), right = front x up. */
  front: Vec3;
  up: Vec3;
  right: Vec3;
  width: number;
  height: number;
  depth: number;
  /** Indices (into the segment's point list) of the points inside the fitted item. */
  members: number[];
  /** Points on the front and back faces, and the faces' spread about their planes (m). */
  facePoints: number;
  frontPoints: number;
  backPoints: number;
  faceSpread: number;
  /** Share of the item's outline in the faces' plane that holds points (0..1). */
  fill: number;
}

/** An item's long axis leans at most this far (degrees) from the vertical within its face (plumb). */
const MAX_LEAN = 12;
/** Longest hole (m) along a face that does not end it: shorter than the ~0.9 m+ between two levels' panels. */
const MAX_HOLE = 0.7;
/** Deepest box looked for (m): panels are 0.1-0.3 m deep, RRUs up to ~0.35 m. */
const MAX_DEPTH = 0.5;
/** Points a box is fitted on at most (a stride sample of the segment). */
const MAX_FIT_POINTS = 6000;

/**
 * Fits a box to a segment's points (module comment). `outward` is the horizontal direction from
 * the centre line to the segment; `noise` and `spacing` the surfaces' noise and point spacing (m). Null when the points hold no
 * face.
 */
export function fitBox(cloud: LocalCloud, points: ArrayLike<number>, outward: Vec3, noise: number, spacing: number): FittedShape | null {
  // Candidate facings: the densest layer's direction and RANSAC's plane (they fail differently:
  // the first on a narrow deep panel whose sides rival its faces, the second on a segment of
  // several items), each also turned a quarter when it makes a box narrower than deep (a side
  // taken for the front). The fit whose members lie most on its two faces wins (its sharpness):
  // a box fitted askew has its points spread between its faces.
  const { xs, ys, zs, origin } = gather(cloud, points);
  const cell = Math.max(2 * spacing * Math.sqrt(Math.max(1, points.length / MAX_FIT_POINTS)), noise, 0.02);
  const candidates = [densestLayerFacing(xs, ys, zs, outward, noise), ransacFacing(xs, ys, zs, outward, Math.max(2 * noise, 0.01), cell)];
  const window = 1.5 * Math.max(noise, 0.005);
  const sharpness = (f: FittedShape) => {
    const tFront = dot(add(f.centre, origin, -1), f.front) + f.depth / 2;
    let near = 0;
    for (const k of f.members) {
      const t = xs[k] * f.front[0] + ys[k] * f.front[1] + zs[k] * f.front[2] - tFront;
      if (Math.abs(t) < window || Math.abs(t + f.depth) < window) near++;
    }
    return near / Math.max(1, f.members.length);
  };
  let best: FittedShape | null = null, bestRank = -Infinity;
  const better = (fit: FittedShape | null) => {
    if (!fit) return;
    const rank = (fit.width >= fit.depth ? 1 : 0) * 10 + sharpness(fit);
    if (rank > bestRank) [best, bestRank] = [fit, rank];
  };
  const tried: Vec3[] = [];
  for (const facing of candidates) {
    if (!facing || tried.some((f) => dot(f, facing) > Math.cos(2 * (Math.PI / 180)))) continue;
    tried.push(facing);
    const fit = fitBoxFacing(cloud, points, outward, noise, spacing, facing);
    better(fit);
    if (fit && fit.width < fit.depth) better(fitBoxFacing(cloud, points, outward, noise, spacing, dot(fit.right, outward) >= 0 ? fit.right : scale(fit.right, -1)));
  }
  return best;
}

function fitBoxFacing(cloud: LocalCloud, points: ArrayLike<number>, outward: Vec3, noise: number, spacing: number, facing: Vec3): FittedShape | null {
  const n = points.length;
  if (n < 30) return null;
  const { xs, ys, zs, origin } = gather(cloud, points);
  // The fit runs on a stride sample of at most MAX_FIT_POINTS (thousands of points fix a plane to
  // a fraction of a degree); the members are then taken from all the points.
  const m = Math.min(n, MAX_FIT_POINTS);
  const all = Array.from({ length: m }, (_, k) => Math.floor((k * n) / m));
  const thinning = n / m;
  let up: Vec3 = [0, 0, 1];
  // Cells of about two point spacings of the sample (so a face fills them), at least the noise.
  const cellSize = Math.max(2 * spacing * Math.sqrt(thinning), noise, 0.02);
  let front: Vec3 = facing;
  const band = Math.max(2.5 * noise, 0.012);

  let frontSet: number[] = [], backSet: number[] = [];
  let depth = 0, tFront = 0;
  let right: Vec3 = cross(front, up);
  let along: { lo: number; hi: number } | null = null, across: { lo: number; hi: number } | null = null;
  // Three rounds: the later ones measure the faces within the previous round's outline only (no
  // pipe crossing the back plane below the panel, no frame or panel beside it).
  let candidates = all;
  // The normal comes from the faces' middle (`inner`, from the second round on): a noisy cloud's
  // face layers hold the sides too, which would turn it.
  let inner = all;
  for (let round = 0; round < 3; round++) {
    // The normal: as given in the first round (the candidates come from searches over the whole
    // segment); then sharpened on this item's inner points alone.
    if (round > 0) front = frontPlaneNormal(xs, ys, zs, inner, sharpenFacing(xs, ys, zs, inner, front, noise), noise);
    const layers = faceLayers(xs, ys, zs, candidates, front, noise, band);
    if (!layers) return null;
    ({ frontSet, backSet, depth, tFront } = layers);
    // The long axis within the faces' plane: first the vertical seen in it (equipment hangs near
    // plumb; a segment holding two panels or a panel and an RRU would turn a PCA axis), then, once
    // the candidates are this item's outline, the faces' own principal direction, unless that
    // strays far from the vertical (a short piece, a square face).
    const faces = [...frontSet, ...backSet];
    if (faces.length < 20) return null;
    const vertical = normalise(add([0, 0, 1], front, -front[2]));
    up = vertical;
    if (round > 0) {
      // The sides' lean: per slice along the face, its left and right edges; a line through each
      // (robust: a hole at an edge is an outlier, not a lean). A PCA of the faces would turn with
      // every hole; edges do not.
      const across0 = cross(front, vertical);
      const lean = edgeLean(project(xs, ys, zs, across0, faces), project(xs, ys, zs, vertical, faces), Math.max(cellSize, 0.08));
      if (lean !== null && Math.abs(Math.atan(lean)) < MAX_LEAN * (Math.PI / 180)) up = normalise(add(vertical, across0, lean));
    }
    right = cross(front, up);
    // Extents (extent.ts): the faces' coverage finds where each face is, leaving out pipes that
    // run past it (along the long axis a hole up to MAX_HOLE does not end a face; across it the
    // first thinly covered slice does: two panels of a sector may stand 25 cm apart, blurred into
    // 15 cm by the noise, and a hole through both faces over the whole height is rare); within
    // that, the outline of the box's cross-sections.
    const tr = project(xs, ys, zs, right, faces), tu = project(xs, ys, zs, up, faces);
    const supportU = coverageExtent(tu, tr, cellSize, cellSize, MAX_HOLE);
    const supportR = coverageExtent(tr, tu, cellSize, cellSize, 0);
    if (!supportU || !supportR) return null;
    // The cross-sections' outlines, over the points near the faces' extent (t: along the normal).
    const margin = 3 * noise + cellSize / 2;
    const tAll = project(xs, ys, zs, front), rAll = project(xs, ys, zs, right), uAll = project(xs, ys, zs, up);
    const back = tFront - depth;
    const near = candidates.filter((k) => tAll[k] <= tFront + 3 * noise + 0.01 && tAll[k] >= back - 3 * noise - 0.01);
    const sectionR = near.filter((k) => uAll[k] >= supportU.lo && uAll[k] <= supportU.hi && rAll[k] >= supportR.lo - margin && rAll[k] <= supportR.hi + margin);
    const sectionU = near.filter((k) => rAll[k] >= supportR.lo && rAll[k] <= supportR.hi && uAll[k] >= supportU.lo - margin && uAll[k] <= supportU.hi + margin);
    // The outlines are the costlier part: only in the last round; the earlier ones only restrict.
    if (round < 2 || sectionR.length < 20 || sectionU.length < 20 || !(depth > 0)) {
      along = supportU;
      across = supportR;
    } else {
      across = outlineExtent(pick(rAll, sectionR), pick(tAll, sectionR), tFront, back, noise, supportR);
      along = outlineExtent(pick(uAll, sectionU), pick(tAll, sectionU), tFront, back, noise, supportU);
    }
    if (!along || !across) return null;
    const r = project(xs, ys, zs, right), u = project(xs, ys, zs, up);
    const box = { along, across };
    candidates = all.filter((k) => r[k] >= box.across.lo - band && r[k] <= box.across.hi + band && u[k] >= box.along.lo - band && u[k] <= box.along.hi + band);
    if (candidates.length < 30) return null;
    const middleR = (box.across.lo + box.across.hi) / 2, halfR = (box.across.hi - box.across.lo) / 2;
    const sides = Math.min(0.7 * halfR, halfR - 2 * noise);
    const innerNext = candidates.filter((k) => Math.abs(r[k] - middleR) < sides);
    inner = innerNext.length >= 30 ? innerNext : candidates;
  }
  if (!along || !across) return null;
  const width = across.hi - across.lo, height = along.hi - along.lo;
  const hasBack = backSet.length >= 10;
  if (!hasBack) depth = Math.max(2 * noise, 0.02);
  const local = add(add(scale(right, (across.lo + across.hi) / 2), up, (along.lo + along.hi) / 2), front, tFront - depth / 2);
  // Members: inside the box grown by the noise band (the item's own points, not the pipe behind).
  const t = project(xs, ys, zs, front), r = project(xs, ys, zs, right), u = project(xs, ys, zs, up);
  const cr = dot(local, right), cu = dot(local, up), ct = dot(local, front);
  const members: number[] = [];
  for (let k = 0; k < n; k++) if (Math.abs(r[k] - cr) <= width / 2 + band && Math.abs(u[k] - cu) <= height / 2 + band && Math.abs(t[k] - ct) <= depth / 2 + band) members.push(k);
  // Fill: the share of the outline's cells holding a face point (a panel's faces fill it; a frame
  // of pipes, an H, does not).
  const faces = [...frontSet, ...backSet];
  const ni = Math.max(1, Math.round(width / cellSize)), nj = Math.max(1, Math.round(height / cellSize));
  const cells = new Set<number>();
  for (const k of faces) {
    const i = Math.floor(((r[k] - cr) / width + 0.5) * ni), j = Math.floor(((u[k] - cu) / height + 0.5) * nj);
    if (i >= 0 && i < ni && j >= 0 && j < nj) cells.add(j * ni + i);
  }
  const spread = Math.sqrt(Math.max(eigenSymmetric3(pooledCovariance(xs, ys, zs, frontSet, backSet)).values[2], 0));
  return {
    shape: 'box',
    centre: add(local, origin),
    front,
    up,
    right,
    width,
    height,
    depth,
    members,
    facePoints: Math.round(faces.length * thinning),
    frontPoints: Math.round(frontSet.length * thinning),
    backPoints: Math.round(backSet.length * thinning),
    faceSpread: spread,
    fill: cells.size / (ni * nj),
  };
}

/**
 * The slope d(across)/d(along) of a face's sides: per slice of `slice` along it, the 5 % and 95 %
 * quantiles across (its edges there); per side Siegel's repeated-median slope, which a hole at
 * one end of a side (a quarter of its slices or more) does not tilt as least squares would. The
 * side whose edges scatter less about their line decides; both, averaged, when they agree.
 */
function edgeLean(across: Float64Array, along: Float64Array, slice: number): number | null {
  const n = along.length;
  if (n < 40) return null;
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < n; i++) {
    lo = Math.min(lo, along[i]);
    hi = Math.max(hi, along[i]);
  }
  const slices = Math.floor((hi - lo) / slice);
  if (slices < 5) return null;
  const members: number[][] = Array.from({ length: slices }, () => []);
  for (let i = 0; i < n; i++) members[Math.min(slices - 1, Math.floor((along[i] - lo) / slice))].push(across[i]);
  const t: number[] = [], left: number[] = [], right: number[] = [];
  members.forEach((values, k) => {
    if (values.length < 8) return;
    t.push(lo + (k + 0.5) * slice);
    left.push(quantile(values, 0.05));
    right.push(quantile(values, 0.95));
  });
  if (t.length < 5) return null;
  const side = (v: number[]) => {
    const slope = median(t.map((ti, i) => median(t.flatMap((tj, j) => (j === i ? [] : [(v[j] - v[i]) / (tj - ti)])))));
    const intercept = median(v.map((vi, i) => vi - slope * t[i]));
    return { slope, scatter: median(v.map((vi, i) => Math.abs(vi - intercept - slope * t[i]))) };
  };
  const a = side(left), b = side(right);
  if (Math.abs(a.slope - b.slope) < 0.02) return (a.slope + b.slope) / 2;
  return a.scatter <= b.scatter ? a.slope : b.slope;
}

/**
 * The front face (the mode of the outermost layer along `front`) and the back face (the biggest
 * peak of the depth histogram behind it, beyond the noise) among the candidate points.
 */
function faceLayers(xs: Float64Array, ys: Float64Array, zs: Float64Array, candidates: number[], front: Vec3, noise: number, band: number) {
  const t = new Float64Array(xs.length);
  for (const k of candidates) t[k] = xs[k] * front[0] + ys[k] * front[1] + zs[k] * front[2];
  const values = pick(t, candidates);
  const outer = quantile(values, 0.98);
  const near = candidates.filter((k) => t[k] > outer - 2 * band - 0.01);
  if (near.length < 10) return null;
  const tFront = quantile(pick(t, near), 0.5);
  const frontSet = candidates.filter((k) => Math.abs(t[k] - tFront) < band);
  const bin = Math.max(noise / 2, 0.005);
  const histogram = new Float64Array(Math.ceil(MAX_DEPTH / bin));
  for (const k of candidates) {
    const d = tFront - t[k];
    if (d > 0 && d < MAX_DEPTH) histogram[Math.floor(d / bin)]++;
  }
  // Smoothed over about a noise deviation each way (a face's points spread that much about it).
  const half = Math.max(1, Math.round(noise / bin));
  const smoothed = new Float64Array(histogram.length);
  for (let i = 0; i < histogram.length; i++) {
    for (let d = -half; d <= half; d++) smoothed[i] += histogram[i + d] ?? 0;
  }
  const first = Math.ceil((2 * band) / bin);
  let strongest = -1;
  for (let i = first; i < histogram.length; i++) if (strongest < 0 || smoothed[i] > smoothed[strongest]) strongest = i;
  // The back face is the nearest strong layer behind the front: the first local peak holding half
  // the strongest's points (the frame's pipes and an RRU lie further behind, and may hold more).
  let peak = strongest;
  for (let i = first; i < strongest; i++) {
    if (smoothed[i] >= 0.5 * smoothed[strongest] && smoothed[i] >= smoothed[i - 1] && smoothed[i] >= smoothed[i + 1]) {
      peak = i;
      break;
    }
  }
  // A back face holds a fair share of the front's points; a few stray points are no face.
  if (peak >= 0 && histogram[peak] + 0.5 * ((histogram[peak - 1] ?? 0) + (histogram[peak + 1] ?? 0)) < 0.05 * frontSet.length) peak = -1;
  const depth = peak < 0 ? 0 : (peak + 0.5) * bin;
  const backSet = peak < 0 ? [] : candidates.filter((k) => Math.abs(tFront - t[k] - depth) < band);
  return { frontSet, backSet, depth, tFront };
}

/**
 * The facing that makes the item's two faces sharpest: around `front`, the direction whose two
 * densest layers (windows of 1.5 noise deviations, at least 3 apart: the front and the back face)
 * hold the most points; within ±5° of azimuth and ±4° of tilt by 0.5°, then by 0.125° (wider, it
 * could reach an RRU's faces behind, or a neighbour's). A
 * least-squares plane through noisy face layers keeps the tilt of the band it was selected in;
 * counting points in thin layers does not, and a side face (at right angles) adds nothing.
 */
function sharpenFacing(xs: Float64Array, ys: Float64Array, zs: Float64Array, points: number[], front: Vec3, noise: number): Vec3 {
  const window = Math.max(1.5 * noise, 0.006);
  const bin = window / 2;
  const gapBins = Math.ceil((3 * Math.max(noise, 0.004)) / bin);
  const m = points.length;
  const t = new Float64Array(m);
  const azimuth0 = Math.atan2(front[0], front[1]), tilt0 = Math.asin(Math.max(-1, Math.min(1, -front[2])));
  const direction = (az: number, tilt: number): Vec3 => [Math.sin(az) * Math.cos(tilt), Math.cos(az) * Math.cos(tilt), -Math.sin(tilt)];
  const score = (n: Vec3) => {
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < m; i++) {
      const k = points[i];
      t[i] = xs[k] * n[0] + ys[k] * n[1] + zs[k] * n[2];
      if (t[i] < lo) lo = t[i];
      if (t[i] > hi) hi = t[i];
    }
    const bins = Math.min(20000, Math.floor((hi - lo) / bin) + 2);
    const counts = new Uint32Array(bins);
    for (let i = 0; i < m; i++) counts[Math.min(bins - 1, Math.floor((t[i] - lo) / bin))]++;
    let first = 0, firstAt = 0;
    for (let i = 0; i + 1 < bins; i++) if (counts[i] + counts[i + 1] > first) [first, firstAt] = [counts[i] + counts[i + 1], i];
    let second = 0;
    for (let i = 0; i + 1 < bins; i++) if (Math.abs(i - firstAt) >= gapBins) second = Math.max(second, counts[i] + counts[i + 1]);
    return first + second;
  };
  let best = { az: azimuth0, tilt: tilt0, score: score(front) };
  const D = Math.PI / 180;
  const search = (az0: number, tilt0: number, reachAz: number, reachTilt: number, step: number) => {
    for (let da = -reachAz; da <= reachAz + 1e-9; da += step) {
      for (let dt = -reachTilt; dt <= reachTilt + 1e-9; dt += step) {
        const sc = score(direction(az0 + da * D, tilt0 + dt * D));
        if (sc > best.score) best = { az: az0 + da * D, tilt: tilt0 + dt * D, score: sc };
      }
    }
  };
  search(azimuth0, tilt0, 5, 4, 0.5);
  search(best.az, best.tilt, 0.5, 0.5, 0.125);
  return direction(best.az, best.tilt);
}

/**
 * The sharpened facing refined by least squares on the front face alone (nothing hangs in front
 * of a panel: no pipe, frame or RRU, which do bias a fit through the back): the points of the
 * outermost layer, weighted by Tukey's biweight of their distance to it (3 noise deviations);
 * kept only when it stays within 2° of the sharpened one (a front face too holed to fix it).
 */
function frontPlaneNormal(xs: Float64Array, ys: Float64Array, zs: Float64Array, points: number[], front: Vec3, noise: number): Vec3 {
  const sigma = Math.max(noise, 0.003);
  let tFront = -Infinity;
  const t = points.map((k) => xs[k] * front[0] + ys[k] * front[1] + zs[k] * front[2]);
  tFront = quantile(t, 0.98) - 2 * sigma;
  const layer = points.filter((_, i) => t[i] > tFront - 2 * sigma);
  if (layer.length < 30) return front;
  let normal = front;
  for (let iteration = 0; iteration < 5; iteration++) {
    const m = new Moments3();
    const offset = median(layer.map((k) => xs[k] * normal[0] + ys[k] * normal[1] + zs[k] * normal[2]));
    for (const k of layer) {
      const w = biweight((xs[k] * normal[0] + ys[k] * normal[1] + zs[k] * normal[2] - offset) / (3 * sigma));
      if (w > 0) m.add(xs[k], ys[k], zs[k], w);
    }
    if (m.w < 20) return front;
    let next = eigenSymmetric3(m.covariance()).vectors[2];
    if (dot(next, front) < 0) next = scale(next, -1);
    normal = next;
  }
  return dot(normal, front) > Math.cos(2 * (Math.PI / 180)) ? normal : front;
}

function pooledCovariance(xs: Float64Array, ys: Float64Array, zs: Float64Array, ...sets: number[][]): number[] {
  const pooled = new Moments3();
  for (const set of sets) {
    if (set.length < 3) continue;
    const m = new Moments3();
    for (const k of set) m.add(xs[k], ys[k], zs[k]);
    const c = m.mean();
    for (const k of set) pooled.add(xs[k] - c[0], ys[k] - c[1], zs[k] - c[2]);
  }
  return pooled.w > 0 ? pooled.covariance() : [0, 0, 0, 0, 0, 0];
}
