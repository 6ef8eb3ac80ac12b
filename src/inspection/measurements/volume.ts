// The volume above a measurement Polygon's plane, from the inspection's point cloud: a 2.5D
// volume, as Pix4D's cloud products measure one (a base surface, and the reconstructed surface
// over it).
// 1. Base: the plane through the centroid of the outer ring's vertices, perpendicular to the
//    ring's Newell normal, oriented up (normal z >= 0; a vertical polygon keeps Newell's side).
//    A vertex off that plane (a ring drawn on uneven ground) is not followed: the base is flat.
// 2. Every point is taken into the plane's frame (u, v in the plane, h along the normal); those
//    over the polygon's bounding box are binned into square cells. Cell side: twice the mean
//    spacing of those points (so a cell holds several points), at least the box's longer side /
//    MAX_CELLS_PER_SIDE.
// 3. A cell's height is the mean of its points' heights: the surface averaged over the cell (a
//    maximum would count a whole edge cell at the height of the object standing in part of it).
//    Cells of the polygon without any point take the mean of their neighbours' heights, outwards
//    from the cells that have points: a gap in the reconstruction is bridged, not counted as 0.
// 4. Cells whose centre lies inside the polygon (even-odd, so holes are out) share its exact area;
//    above = sum of area share x max(0, height), below = the same of max(0, -height).
// Cost: one pass over the cloud per polygon, plus the grid (at most 512 x 512 cells).
import type { PointCloud } from '../../shared/pointcloud/index.ts';
import { mm, newellNormal, polygonArea } from './quantities.ts';

type Point = [number, number, number];

export const MAX_CELLS_PER_SIDE = 512;
/** Cells per mean point spacing: 2 -> about 4 points per cell where the cloud is even. */
const SPACINGS_PER_CELL = 2;

export interface VolumeAbovePlane {
  /** Cubic metres between the polygon's plane and the surface above it. */
  above_m3: number;
  /** Cubic metres between the plane and the surface below it (a pit, or ground under a tilted base). */
  below_m3: number;
  /** The base surface: always the polygon's plane. */
  base: 'polygon_plane';
  /** Side of a grid cell, metres. */
  cell_size_m: number;
  /** Points of the cloud over the polygon's bounding box. */
  points: number;
  /** Share (0-1) of the polygon's cells that had points of their own; the rest were filled from neighbours. */
  coverage: number;
}

/**
 * The volume above the plane of `rings` (a validated Polygon, same coordinates as `cloud`);
 * null when the polygon is degenerate (no area) or no point of the cloud lies over it.
 */
export function volumeAbovePlane(cloud: PointCloud, rings: Point[][], unitFactor = 1): VolumeAbovePlane | null {
  const outer = rings[0];
  const area = polygonArea(rings);
  const normal = newellNormal(outer);
  const length = Math.hypot(...normal);
  if (!(area > 0) || !(length > 0)) return null;
  const up = normal[2] < 0 ? -1 : 1;
  const n: Point = [(up * normal[0]) / length, (up * normal[1]) / length, (up * normal[2]) / length];
  // u: the x axis (or y, for a plane facing x) made perpendicular to n; v = n x u.
  const seed: Point = Math.abs(n[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
  const dot = seed[0] * n[0] + seed[1] * n[1] + seed[2] * n[2];
  const u = normalise([seed[0] - dot * n[0], seed[1] - dot * n[1], seed[2] - dot * n[2]]);
  const v: Point = [n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0]];
  const vertices = outer.slice(0, -1);
  const origin: Point = [0, 1, 2].map((a) => vertices.reduce((sum, p) => sum + p[a], 0) / vertices.length) as Point;
  const toPlane = (x: number, y: number, z: number): Point => {
    const dx = x - origin[0];
    const dy = y - origin[1];
    const dz = z - origin[2];
    return [dx * u[0] + dy * u[1] + dz * u[2], dx * v[0] + dy * v[1] + dz * v[2], dx * n[0] + dy * n[1] + dz * n[2]];
  };
  const planeRings = rings.map((ring) => ring.map((p) => toPlane(p[0], p[1], p[2])));
  let minU = Infinity;
  let minV = Infinity;
  let maxU = -Infinity;
  let maxV = -Infinity;
  for (const [pu, pv] of planeRings[0]) {
    minU = Math.min(minU, pu);
    maxU = Math.max(maxU, pu);
    minV = Math.min(minV, pv);
    maxV = Math.max(maxV, pv);
  }

  // Points over the bounding box, in the plane's frame.
  const over: number[] = [];
  const p = cloud.positions;
  for (let i = 0; i < cloud.count; i++) {
    const [pu, pv, h] = toPlane(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
    if (pu >= minU && pu <= maxU && pv >= minV && pv <= maxV) over.push(pu, pv, h);
  }
  const points = over.length / 3;
  if (points === 0) return null;
  const spanU = maxU - minU;
  const spanV = maxV - minV;
  const spacing = Math.sqrt((spanU * spanV || area) / points);
  const cell = Math.max(SPACINGS_PER_CELL * spacing, Math.max(spanU, spanV) / MAX_CELLS_PER_SIDE);
  const nu = Math.max(1, Math.ceil(spanU / cell));
  const nv = Math.max(1, Math.ceil(spanV / cell));

  const sum = new Float64Array(nu * nv);
  const count = new Uint32Array(nu * nv);
  for (let k = 0; k < over.length; k += 3) {
    const i = Math.min(nu - 1, Math.floor((over[k] - minU) / cell));
    const j = Math.min(nv - 1, Math.floor((over[k + 1] - minV) / cell));
    sum[j * nu + i] += over[k + 2];
    count[j * nu + i]++;
  }
  const inside = insideCells(planeRings, minU, minV, cell, nu, nv);
  const height = fillHeights(sum, count, nu, nv);
  let cells = 0;
  let covered = 0;
  let above = 0;
  let below = 0;
  for (let c = 0; c < nu * nv; c++) {
    if (!inside[c]) continue;
    cells++;
    if (count[c] > 0) covered++;
    const h = height[c];
    if (Number.isNaN(h)) continue;
    if (h > 0) above += h;
    else below -= h;
  }
  if (cells === 0 || covered === 0) return null;
  // Each inside cell stands for an equal share of the polygon's exact area.
  const share = (area / cells) * unitFactor * unitFactor * unitFactor;
  return { above_m3: mm(above * share), below_m3: mm(below * share), base: 'polygon_plane', cell_size_m: mm(cell * unitFactor), points, coverage: Math.round((covered / cells) * 1000) / 1000 };
}

function normalise(a: Point): Point {
  const l = Math.hypot(a[0], a[1], a[2]);
  return [a[0] / l, a[1] / l, a[2] / l];
}

/** Cells whose centre is inside the rings (even-odd: holes out), one scanline per row of cells. */
function insideCells(rings: Point[][], minU: number, minV: number, cell: number, nu: number, nv: number): Uint8Array {
  const inside = new Uint8Array(nu * nv);
  for (let j = 0; j < nv; j++) {
    const vc = minV + (j + 0.5) * cell;
    const crossings: number[] = [];
    for (const ring of rings) {
      for (let k = 0; k < ring.length - 1; k++) {
        const [au, av] = ring[k];
        const [bu, bv] = ring[k + 1];
        if (av <= vc !== bv <= vc) crossings.push(au + ((vc - av) / (bv - av)) * (bu - au));
      }
    }
    crossings.sort((a, b) => a - b);
    for (let k = 0; k + 1 < crossings.length; k += 2) {
      const first = Math.max(0, Math.ceil((crossings[k] - minU) / cell - 0.5));
      const last = Math.min(nu - 1, Math.floor((crossings[k + 1] - minU) / cell - 0.5));
      for (let i = first; i <= last; i++) inside[j * nu + i] = 1;
    }
  }
  return inside;
}

/** Mean height per cell; cells without points take their filled neighbours' mean, breadth first (NaN if the grid has no point). */
function fillHeights(sum: Float64Array, count: Uint32Array, nu: number, nv: number): Float64Array {
  const height = new Float64Array(nu * nv).fill(NaN);
  let frontier: number[] = [];
  for (let c = 0; c < nu * nv; c++) {
    if (count[c] > 0) {
      height[c] = sum[c] / count[c];
      frontier.push(c);
    }
  }
  const queued = new Uint8Array(nu * nv);
  for (const c of frontier) queued[c] = 1;
  while (frontier.length > 0) {
    // The empty neighbours of this ring of filled cells are the next ring.
    const next: number[] = [];
    for (const c of frontier) {
      const i = c % nu;
      const j = (c - i) / nu;
      for (let dj = -1; dj <= 1; dj++) {
        for (let di = -1; di <= 1; di++) {
          const ni = i + di;
          const nj = j + dj;
          if (ni < 0 || nj < 0 || ni >= nu || nj >= nv) continue;
          const neighbour = nj * nu + ni;
          if (!queued[neighbour]) {
            queued[neighbour] = 1;
            next.push(neighbour);
          }
        }
      }
    }
    const values = next.map((c) => {
      const i = c % nu;
      const j = (c - i) / nu;
      let total = 0;
      let n = 0;
      for (let dj = -1; dj <= 1; dj++) {
        for (let di = -1; di <= 1; di++) {
          const ni = i + di;
          const nj = j + dj;
          if (ni < 0 || nj < 0 || ni >= nu || nj >= nv) continue;
          const h = height[nj * nu + ni];
          if (Number.isNaN(h)) continue;
          total += h;
          n++;
        }
      }
      return n > 0 ? total / n : NaN;
    });
    next.forEach((c, k) => (height[c] = values[k]));
    frontier = next;
  }
  return height;
}
