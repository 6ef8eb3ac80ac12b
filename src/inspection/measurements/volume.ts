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
// The grid steps (inside cells, filling, sums) are surface-grid.ts, shared with the volume over
// the cloud's DSM (dsm-volume.ts), which the service prefers when there is one (measurement.service.ts).
import type { PointCloud } from '../../shared/pointcloud/index.ts';
import { mm, newellNormal, polygonArea } from './quantities.ts';
import { fillHeights, insideCells, sumInside } from './surface-grid.ts';

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
  /** The surface measured: the point cloud's points binned here, or the cloud's DSM (dsm-volume.ts). */
  surface: 'point_cloud' | 'dsm';
  /** Side of a grid cell, metres (the DSM's cell for `dsm`). */
  cell_size_m: number;
  /** Samples of the surface over the polygon's bounding box: points of the cloud, or DSM cells with a height. */
  points: number;
  /** Share (0-1) of the polygon's cells that had a value of their own (points, or DSM data); the rest were filled from neighbours. */
  coverage: number;
}

/**
 * The volume above the plane of `rings` (a validated Polygon, same coordinates as `cloud`);
 * null when the polygon is degenerate (no area) or no point of the cloud lies over it.
 */
export function volumeAbovePlane(cloud: PointCloud, rings: Point[][], unitFactor = 1): VolumeAbovePlane | null {
  const plane = basePlane(rings);
  if (!plane) return null;
  const { area, n, u, v, origin } = plane;
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
  const height = Float64Array.from(sum, (total, c) => (count[c] > 0 ? total / count[c] : NaN));
  fillHeights(height, nu, nv);
  const { cells, covered, above, below } = sumInside(height, inside, (c) => count[c] > 0);
  if (cells === 0 || covered === 0) return null;
  // Each inside cell stands for an equal share of the polygon's exact area.
  const share = (area / cells) * unitFactor * unitFactor * unitFactor;
  return { above_m3: mm(above * share), below_m3: mm(below * share), base: 'polygon_plane', surface: 'point_cloud', cell_size_m: mm(cell * unitFactor), points, coverage: Math.round((covered / cells) * 1000) / 1000 };
}

/** The base of step 1: the polygon's area, its plane's upward unit normal n, in-plane axes u and v, and origin; null for a degenerate polygon. */
export function basePlane(rings: Point[][]): { area: number; n: Point; u: Point; v: Point; origin: Point } | null {
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
  return { area, n, u, v, origin };
}

function normalise(a: Point): Point {
  const l = Math.hypot(a[0], a[1], a[2]);
  return [a[0] / l, a[1] / l, a[2] / l];
}
