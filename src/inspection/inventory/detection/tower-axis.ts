// The tower and its centre line (issue 36 §3). A telecom tower is the tall, slender, near-vertical
// structure near the asset: the candidates are the groups of 0.5 m columns whose highest points
// stand at least MIN_TOWER_HEIGHT above the terrain (ground.ts, so a sloped site or a compound of
// cabinets changes nothing). Each candidate is followed in 0.5 m slabs:
//   1. coarse: from its top down, per slab the spatial median of the occupied 10 cm cells near the
//      current centre (it turns with the points: three legs give their centre), the search
//      widening with the cross-section (a lattice widens towards its foot); robust lines through
//      those centres and their spread give a coarse centre line and taper;
//   2. kind and fine centres (tower-sections.ts): a tube (monopole: per slab a robust circle
//      through the wall) or three or four legs (lattice: a robust line per leg, the centre the
//      legs' mean); robust lines through the slab centres are the centre line, its angle from the
//      vertical the verticality;
//   3. whether it is a tower at all, in words when not: most of its height must show such a
//      cross-section, a lattice's legs must be tubes, and it must be slender and near plumb (a
//      tree, a building's corner, a bridge pier are not);
//   4. the foot from the ground plane around it (ground.ts: past the concrete pad), the top from
//      where the density of the points on the centre line ends (half the density below, so noise
//      and stray points above do not lift it), and whether the top is closed (a cut-off cloud).
// The candidate with the best height, nearest the asset, is the tower. Past 350 lines: the steps
// share the candidate's state, and split they would carry the same half-dozen arguments.
import type { DetectedTower } from './detection-types.ts';
import { fitLine, formatM, median, quantile } from './geometry.ts';
import { groundHeightAt, terrainAt, type TerrainGrid } from './ground.ts';
import type { LocalCloud } from './local-cloud.ts';
import type { BinIndex } from './spatial-index.ts';
import { classifySections, legSections, ringSections, robustLine, type CoarseAxis, type LegLine, type SectionSlab } from './tower-sections.ts';

/** Shorter than this (m) is a lamp post, a flagpole or a tree, not a telecom tower (those stand 15-60 m+). */
export const MIN_TOWER_HEIGHT = 12;
/** Thinner than this radius (m) is a pole, not a telecom monopole (whose top is 0.25 m+ in radius). */
const MIN_RADIUS = 0.12;
/** A tower's base radius stays under this share of its height plus a metre (a 60 m lattice: ~5 m). */
const MAX_BASE_RADIUS_SHARE = 0.15;
/** Slab thickness (m): enough points in a sparse cloud, fine enough to follow a taper. */
export const SLAB = 0.5;
/** Cell of the coarse centre line's occupancy (m): a tenth of a small monopole's diameter. */
const COARSE_CELL = 0.1;
/** Share of the height that must show a tower's cross-section. */
const MIN_STRUCTURED_SHARE = 0.55;
/** The same for a lattice, whose legs the equipment of each level hides from the leg search (its legs must be tubes too: MIN_TUBE_SHARE). */
const MIN_STRUCTURED_SHARE_LATTICE = 0.4;
/** Share of a lattice's leg sections that must be tubes (the rest: bracing joints, equipment, holes). */
const MIN_TUBE_SHARE = 0.5;
/** Share of a monopole's ring sections that must be hollow (the rest: the top cap, clutter, equipment). */
const MIN_HOLLOW_SHARE = 0.8;
/** A tower leans less than this (degrees); more is a wall or clutter the fit wandered along. */
const MAX_LEAN_DEG = 8;

export interface TowerModel {
  type: DetectedTower['type'];
  /** Centre line: x = x0 + dx·z, y = y0 + dy·z (local frame). */
  x0: number;
  y0: number;
  dx: number;
  dy: number;
  baseZ: number;
  topZ: number;
  /** Radius of the shaft or of the legs' circle: r = r0 + dr·z, fitted robustly over the slabs. */
  r0: number;
  dr: number;
  /** Lattice only: the legs' centre lines, in order around the tower; empty otherwise. */
  legs: LegLine[];
  /** Radial spread of the structure about its circle (m): shaft noise, or the legs' thickness. */
  wall: number;
  slabs: SectionSlab[];
  verticalityDeg: number;
  /** Whether the top looks closed (a cap or top bracing) or open like a section through the tower: a cut-off cloud. */
  topClosed: boolean;
}

export type TowerSearch = { tower: TowerModel } | { tower: null; reason: string };

export const axisAt = (t: TowerModel, z: number): [number, number] => [t.x0 + t.dx * z, t.y0 + t.dy * z];
export const radiusAt = (t: TowerModel, z: number): number => Math.max(t.r0 + t.dr * z, MIN_RADIUS);

interface Candidate {
  x: number;
  y: number;
  topZ: number;
  groundZ: number;
  distance: number;
}

/** The columns standing at least MIN_TOWER_HEIGHT above the terrain, grouped; per group its tallest part. */
export function candidates(bins: BinIndex, terrain: TerrainGrid): Candidate[] {
  const { nx, ny, nz } = bins;
  const cells = nx * ny;
  const top = new Float32Array(cells).fill(NaN);
  // Per column the highest bin holding at least 3 points: a stray point does not make a column tall.
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      for (let k = nz - 1; k >= 0; k--) {
        const b = (k * ny + j) * nx + i;
        if (bins.start[b + 1] - bins.start[b] < 3) continue;
        let zMax = -Infinity;
        for (let s = bins.start[b]; s < bins.start[b + 1]; s++) zMax = Math.max(zMax, bins.cloud.z[bins.order[s]]);
        const cx = bins.x0 + (i + 0.5) * bins.cellXY, cy = bins.y0 + (j + 0.5) * bins.cellXY;
        const height = zMax - terrainAt(terrain, cx, cy);
        if (height >= MIN_TOWER_HEIGHT) top[j * nx + i] = zMax;
        break;
      }
    }
  }
  const seen = new Uint8Array(cells);
  const out: Candidate[] = [];
  for (let c = 0; c < cells; c++) {
    if (seen[c] || Number.isNaN(top[c])) continue;
    // Flood the group (8-connected), keeping the columns within a metre of its highest.
    const group: number[] = [];
    const stack = [c];
    seen[c] = 1;
    while (stack.length) {
      const g = stack.pop()!;
      group.push(g);
      const gi = g % nx, gj = Math.floor(g / nx);
      for (let dj = -1; dj <= 1; dj++) {
        for (let di = -1; di <= 1; di++) {
          const ii = gi + di, jj = gj + dj;
          if (ii < 0 || jj < 0 || ii >= nx || jj >= ny) continue;
          const h = jj * nx + ii;
          if (!seen[h] && !Number.isNaN(top[h])) {
            seen[h] = 1;
            stack.push(h);
          }
        }
      }
    }
    const highest = Math.max(...group.map((g) => top[g]));
    let sx = 0, sy = 0, n = 0;
    for (const g of group) {
      if (top[g] < highest - 1) continue;
      sx += bins.x0 + ((g % nx) + 0.5) * bins.cellXY;
      sy += bins.y0 + (Math.floor(g / nx) + 0.5) * bins.cellXY;
      n++;
    }
    const x = sx / n, y = sy / n;
    out.push({ x, y, topZ: highest, groundZ: terrainAt(terrain, x, y), distance: Math.hypot(x, y) });
  }
  // Tallest first; the detector keeps the best tower, preferring the one nearest the asset.
  return out.sort((a, b) => b.topZ - b.groundZ - (a.topZ - a.groundZ)).slice(0, 6);
}

/** Occupied cells (COARSE_CELL, at least 2 points: a stray point is no structure) of a slab within `radius` of (cx, cy): their centres. */
function occupiedCells(bins: BinIndex, cx: number, cy: number, radius: number, z0: number, z1: number): { xs: number[]; ys: number[] } {
  const counts = new Map<number, number>();
  const { x, y } = bins.cloud;
  bins.forEachInCylinder(cx, cy, radius, z0, z1, (p) => {
    const key = Math.floor((x[p] - cx) / COARSE_CELL + 512) * 1024 + Math.floor((y[p] - cy) / COARSE_CELL + 512);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  const xs: number[] = [], ys: number[] = [];
  for (const [key, n] of counts) {
    if (n < 2) continue;
    xs.push(cx + (Math.floor(key / 1024) - 512 + 0.5) * COARSE_CELL);
    ys.push(cy + ((key % 1024) - 512 + 0.5) * COARSE_CELL);
  }
  return { xs, ys };
}

/**
 * The geometric (spatial) median of points, by Weiszfeld's iterations: unlike the median of each
 * coordinate it turns with the points, so three legs at 120° give their centre; it resists a
 * one-sided cluster (equipment, a shelter) as a mean does not.
 */
function spatialMedian(xs: number[], ys: number[], start: [number, number]): [number, number] {
  let [mx, my] = start;
  for (let iteration = 0; iteration < 50; iteration++) {
    let sx = 0, sy = 0, sw = 0;
    for (let i = 0; i < xs.length; i++) {
      const w = 1 / Math.max(Math.hypot(xs[i] - mx, ys[i] - my), 1e-3);
      sx += w * xs[i];
      sy += w * ys[i];
      sw += w;
    }
    const nx = sx / sw, ny = sy / sw;
    const moved = Math.hypot(nx - mx, ny - my);
    mx = nx;
    my = ny;
    if (moved < 1e-4) break;
  }
  return [mx, my];
}

/**
 * Coarse centre line: from the top down, per slab the spatial median of the occupied cells near
 * the current centre, the search following the cross-section's width; robust lines through them.
 */
export function coarseAxis(bins: BinIndex, c: Candidate): CoarseAxis | null {
  const t: number[] = [], mx: number[] = [], my: number[] = [], mr: number[] = [];
  let cx = c.x, cy = c.y, search = 2.5;
  for (let z = c.topZ - SLAB; z > c.groundZ + 1; z -= SLAB) {
    const cells = occupiedCells(bins, cx, cy, search, z, z + SLAB);
    if (cells.xs.length < 4) continue;
    const [px, py] = spatialMedian(cells.xs, cells.ys, [cx, cy]);
    const spread = median(cells.xs.map((v, i) => Math.hypot(v - px, cells.ys[i] - py)));
    // Follow the centre slowly (a one-sided slab must not drag it), and let the search grow with the section.
    cx = 0.5 * cx + 0.5 * px;
    cy = 0.5 * cy + 0.5 * py;
    search = Math.min(Math.max(2.5, 1.8 * spread + 0.5), MAX_BASE_RADIUS_SHARE * (c.topZ - c.groundZ) + 2);
    t.push(z + SLAB / 2);
    mx.push(px);
    my.push(py);
    mr.push(spread);
  }
  if (t.length < 6) return null;
  const ones = t.map(() => 1);
  const lx = robustLine(t, mx, ones, 0.05), ly = robustLine(t, my, ones, 0.05), lr = robustLine(t, mr, ones, 0.05);
  if (!lx || !ly || !lr) return null;
  return { x0: lx.a, dx: lx.b, y0: ly.a, dy: ly.b, r0: lr.a, dr: lr.b };
}

/** Follows one candidate; the tower, or why it is not one. */
function followCandidate(cloud: LocalCloud, bins: BinIndex, terrain: TerrainGrid, c: Candidate, noise: number): TowerSearch {
  const coarse = coarseAxis(bins, c);
  const where = `the object ${formatM(c.topZ - c.groundZ)} high ${formatM(c.distance)} from the asset's position`;
  if (!coarse) return { tower: null, reason: `${where} is not a mast: below its top there is too little to follow down to the ground (a roof, a canopy, a crown?)` };
  // From 1 m above the ground (over a pad or footings) to the candidate's top.
  const z0 = c.groundZ + 1, z1 = c.topZ;
  const kind = classifySections(bins, coarse, z0 + 1, z1, SLAB);
  if (kind.kind === 'unknown') {
    return { tower: null, reason: `${where} is not a mast: neither a tube nor three or four legs run along its height (${Math.round(kind.filledShare * 100)} % of the directions around it are filled; a tree, a building or a pier?)` };
  }
  const lattice = kind.kind === 'lattice' ? legSections(bins, coarse, kind.legAngles, z0, z1, SLAB, noise) : null;
  if (lattice && lattice.tubeShare < MIN_TUBE_SHARE) {
    return { tower: null, reason: `${where} is not a lattice tower: what stands where its legs would be is not tubes (${Math.round(lattice.tubeShare * 100)} % of the sections; walls, a building's corner?)` };
  }
  const rings = lattice ? null : ringSections(bins, coarse, z0, z1, SLAB, noise);
  if (rings && rings.hollowShare < MIN_HOLLOW_SHARE) {
    return { tower: null, reason: `${where} is not a monopole: its cross-section is filled, not a hollow shaft, over ${Math.round((1 - rings.hollowShare) * 100)} % of its height (a tree?)` };
  }
  const slabs = lattice ? lattice.slabs : rings!.slabs;
  // The centre line and the taper through the slabs that agree, robustly (a slab at an antenna
  // level or over a hole may fit something else), then plainly through the agreeing ones.
  let good = slabs.filter((s) => s.ok);
  if (good.length < 6) return { tower: null, reason: `${where} shows no tube- or leg-like cross-section along most of its height` };
  const t = good.map((s) => s.z), w = good.map((s) => s.weight);
  const lx = robustLine(t, good.map((s) => s.cx), w, 0.005);
  const ly = robustLine(t, good.map((s) => s.cy), w, 0.005);
  const lr = robustLine(t, good.map((s) => s.r), w, 0.005);
  if (!lx || !ly || !lr) return { tower: null, reason: `${where} has no straight centre line` };
  good.forEach((s, i) => (s.ok = lx.inlier[i] && ly.inlier[i] && lr.inlier[i]));
  good = slabs.filter((s) => s.ok);
  const tk = good.map((s) => s.z), wk = good.map((s) => s.weight);
  const fx = fitLine(tk, good.map((s) => s.cx), wk), fy = fitLine(tk, good.map((s) => s.cy), wk), fr = fitLine(tk, good.map((s) => s.r), wk);
  if (!fx || !fy || !fr || good.length < 6) return { tower: null, reason: `${where} has no straight centre line` };

  const structured = (good.length * SLAB) / (z1 - z0);
  const lean = Math.atan(Math.hypot(fx.b, fy.b)) / (Math.PI / 180);
  const tower: TowerModel = {
    type: kind.kind,
    x0: fx.a,
    dx: fx.b,
    y0: fy.a,
    dy: fy.b,
    baseZ: c.groundZ,
    topZ: c.topZ,
    r0: fr.a,
    dr: fr.b,
    legs: lattice?.legs ?? [],
    wall: median(good.map((s) => s.spread)),
    slabs,
    verticalityDeg: lean,
    topClosed: true,
  };
  if (structured < (lattice ? MIN_STRUCTURED_SHARE_LATTICE : MIN_STRUCTURED_SHARE)) {
    return { tower: null, reason: `${where} is not a mast: only ${Math.round(structured * 100)} % of its height has the cross-section of a tube or of a tower's legs (a tree, a building or a pier?)` };
  }
  if (lean > MAX_LEAN_DEG) return { tower: null, reason: `${where} leans ${lean.toFixed(1)}° from the vertical: not a tower` };

  // The foot: the ground plane around the base, outside the structure and its pad.
  const [bx, by] = axisAt(tower, c.groundZ);
  const baseRadius = radiusAt(tower, c.groundZ);
  const ground = groundHeightAt(terrain, bx, by, baseRadius + 1.5, baseRadius + 7.5) ?? groundHeightAt(terrain, bx, by, baseRadius + 1.5, baseRadius + 15);
  tower.baseZ = ground ? ground.height : c.groundZ;
  if (baseRadius > MAX_BASE_RADIUS_SHARE * (c.topZ - tower.baseZ) + 1) {
    return { tower: null, reason: `${where} is too wide for a tower (${formatM(2 * baseRadius)} across at its foot)` };
  }
  if (radiusAt(tower, (c.topZ + tower.baseZ) / 2) < MIN_RADIUS * 1.01 && tower.type === 'monopole') {
    return { tower: null, reason: `${where} is a thin pole (under ${formatM(2 * MIN_RADIUS)} across), not a telecom tower` };
  }
  findTop(cloud, bins, tower, noise);
  if (tower.topZ - tower.baseZ < MIN_TOWER_HEIGHT) return { tower: null, reason: `${where} is under ${MIN_TOWER_HEIGHT} m high: not a telecom tower` };
  return { tower };
}

/**
 * The top: the heights of the points within the top radius of the centre line, in bins of about
 * half the noise, smoothed over one noise deviation; the reference is the density 0.3-1.5 m under
 * the candidate's top. Going down, the first bin reaching half the reference: the edge of an open
 * section; when a peak follows within a few deviations (a cap, the top bracing), its centre.
 * Also whether the top is closed: a cap or top bracing puts points inside the circle in the top
 * few centimetres, an open section (a cloud cut off there) does not.
 */
function findTop(cloud: LocalCloud, bins: BinIndex, tower: TowerModel, noise: number): void {
  const guess = tower.topZ;
  const [cx, cy] = axisAt(tower, guess);
  const r = radiusAt(tower, guess);
  const reach = r + Math.max(3 * noise, 0.08);
  const bin = Math.max(noise / 2, 0.005);
  const from = guess + 0.5;
  const count = Math.ceil(2.5 / bin);
  const histogram = new Float64Array(count);
  bins.forEachInCylinder(cx, cy, reach, from - count * bin, from, (p) => {
    const k = Math.floor((from - cloud.z[p]) / bin);
    if (k >= 0 && k < count) histogram[k]++;
  });
  const half = Math.max(1, Math.round(noise / bin));
  const smooth = histogram.map((_, k) => {
    let s = 0, n = 0;
    for (let d = -half; d <= half; d++) {
      if (k + d < 0 || k + d >= count) continue;
      s += histogram[k + d];
      n++;
    }
    return s / n;
  });
  const reference = median(Array.from(smooth.slice(Math.round(0.8 / bin), Math.round(2 / bin))));
  if (reference > 0) {
    let k = 0;
    while (k < count && smooth[k] < 0.5 * reference) k++;
    let peak = k;
    const window = Math.round((4 * Math.max(noise, 0.01)) / bin);
    for (let j = k; j < Math.min(count, k + window); j++) if (smooth[j] > smooth[peak]) peak = j;
    const edge = smooth[peak] > 2 * reference ? peak : k;
    if (k < count) tower.topZ = from - (edge + 0.5) * bin;
  }
  // Closed top: points well inside the circle near the top, compared with sections below it.
  const inner = (z0: number, z1: number) => {
    let n = 0;
    const [ax, ay] = axisAt(tower, z0);
    bins.forEachInCylinder(ax, ay, 0.6 * radiusAt(tower, z0), z0, z1, () => n++);
    return n;
  };
  const band = Math.max(2.5 * noise, 0.04);
  const atTop = inner(tower.topZ - band, tower.topZ + band);
  const lower = quantile([0.6, 0.9, 1.2].map((d) => inner(tower.topZ - d - band, tower.topZ - d + band)), 0.5);
  tower.topClosed = atTop > 2 * lower + 5;
}

/**
 * Finds the tower near the asset, or says why there is none. `noise` is the surfaces' noise
 * (local-cloud.ts), the scale of the fits' residuals.
 */
export function findTower(cloud: LocalCloud, bins: BinIndex, terrain: TerrainGrid, noise: number): TowerSearch {
  const list = candidates(bins, terrain);
  if (!list.length) return { tower: null, reason: `nothing within the search radius stands ${MIN_TOWER_HEIGHT} m or more above the ground: no tower in this cloud` };
  const found: { tower: TowerModel; score: number }[] = [];
  let firstReason = '';
  for (const c of list) {
    const result = followCandidate(cloud, bins, terrain, c, noise);
    if (result.tower) {
      const [x, y] = axisAt(result.tower, result.tower.baseZ);
      // Taller and nearer the asset is better; 2 m of distance weigh as 1 m of height.
      found.push({ tower: result.tower, score: result.tower.topZ - result.tower.baseZ - 0.5 * Math.hypot(x, y) });
    } else if (!firstReason) firstReason = result.reason;
  }
  if (!found.length) return { tower: null, reason: `no telecom tower within the search radius: ${list.length === 1 ? '' : `of ${list.length} tall objects, `}${firstReason}` };
  found.sort((a, b) => b.score - a.score);
  return { tower: found[0].tower };
}

/** The tower in the input frame. */
export function describeTower(tower: TowerModel, origin: [number, number, number]): DetectedTower {
  const [bx, by] = axisAt(tower, tower.baseZ);
  const [tx, ty] = axisAt(tower, tower.topZ);
  return {
    base: [bx + origin[0], by + origin[1], tower.baseZ + origin[2]],
    top: [tx + origin[0], ty + origin[1], tower.topZ + origin[2]],
    heightM: tower.topZ - tower.baseZ,
    verticalityDeg: tower.verticalityDeg,
    type: tower.type,
  };
}
