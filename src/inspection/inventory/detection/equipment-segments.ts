// The equipment's points, split into pieces (issue 36 §3): around the centre line, what is not the
// tower itself, grouped into segments of one item or a few.
// - Region: within EQUIPMENT_REACH of the structure (sector frames and platforms hold antennas,
//   RRUs and dishes within ~2 m of it), from the foot to a metre over the top.
// - Not the tower: a monopole's wall (with its cable ladder and flanges) is the ring of the fitted
//   radius; a lattice's legs and bracing lie inside the polygon of its legs.
// - The region unrolled around the centre line into an image (angle x radius across, height up;
//   cells of the spacing or the noise, 2-5 cm) of occupied cells. Panels, RRUs and dishes are
//   filled areas 25 cm+ across there; mount pipes, frames and arms are strips 6-7 cm wide (plus
//   the noise), which is what joins the items. An erosion that forgives sparse cells (a cell stays
//   where most of a square around it is occupied) removes the strips and keeps the items' cores;
//   the cores' components, grown back over the occupied cells, are the segments. (A voxel-wise
//   shape test cannot tell a 3 cm pipe from a panel's edge under 3 cm of noise; the image can.)
// - Pieces one above the other with a short gap (a hole cut an item) are joined; a segment that
//   reaches down to the ground stands on it (a cabinet, the shelter, the fence) and is left out.
import { median } from './geometry.ts';
import type { LocalCloud } from './local-cloud.ts';
import type { BinIndex } from './spatial-index.ts';
import { SLAB, axisAt, radiusAt, type TowerModel } from './tower-axis.ts';

/** How far beyond the structure equipment is looked for (m). */
export const EQUIPMENT_REACH = 2.5;
/** Share of the erosion's square a cell's neighbourhood must fill to stay (rankErode). */
const ERODE_SHARE = 0.6;
/** Pieces of an item further apart than this (m) stay apart (two levels' panels are 0.9 m+ apart). */
const PIECE_GAP = 0.7;
/** A segment reaching lower than this above the foot stands on the ground (m). */
const GROUND_CLEARANCE = 1;

export interface Scales {
  /** Point spacing on the surfaces (m). */
  spacing: number;
  /** Noise across the surfaces (m). */
  noise: number;
}

export interface Segment {
  points: Uint32Array;
}

/** Horizontal distance (m) of a point outside the tower's structure: > 0 outside, <= 0 on or inside it. */
export function outsideStructure(tower: TowerModel, x: number, y: number, z: number): number {
  const [ax, ay] = axisAt(tower, z);
  if (!tower.legs.length) return Math.hypot(x - ax, y - ay) - radiusAt(tower, z);
  // The legs at this height, in order around the centre; the distance outside their polygon.
  const legs = tower.legs.map((l) => [l.x0 + l.dx * z, l.y0 + l.dy * z] as [number, number]).sort((a, b) => Math.atan2(a[0] - ax, a[1] - ay) - Math.atan2(b[0] - ax, b[1] - ay));
  let outside = -Infinity;
  for (let k = 0; k < legs.length; k++) {
    const [px, py] = legs[k], [qx, qy] = legs[(k + 1) % legs.length];
    const ex = qx - px, ey = qy - py, length = Math.hypot(ex, ey) || 1;
    // Outward normal of the edge: away from the centre.
    let nx = ey / length, ny = -ex / length;
    if ((ax - px) * nx + (ay - py) * ny > 0) [nx, ny] = [-nx, -ny];
    outside = Math.max(outside, (x - px) * nx + (y - py) * ny);
  }
  return outside;
}

/** The region's points that are not the structure. */
function regionPoints(cloud: LocalCloud, bins: BinIndex, tower: TowerModel, tolerance: number): Uint32Array {
  const out: number[] = [];
  const { x, y, z } = cloud;
  for (let z0 = tower.baseZ; z0 < tower.topZ + 1; z0 += SLAB) {
    const [ax, ay] = axisAt(tower, z0 + SLAB / 2);
    const reach = radiusAt(tower, z0) + EQUIPMENT_REACH + 0.2;
    bins.forEachInCylinder(ax, ay, reach, z0, z0 + SLAB, (p) => {
      const outside = outsideStructure(tower, x[p], y[p], z[p]);
      if (outside > tolerance && outside < EQUIPMENT_REACH) out.push(p);
    });
  }
  return Uint32Array.from(out);
}

/**
 * The equipment segments (module comment). `scales` set the image's cell (the spacing or the
 * noise, 2-5 cm), the width of what the erosion removes, and the structure's tolerance.
 */
export function equipmentSegments(cloud: LocalCloud, bins: BinIndex, tower: TowerModel, scales: Scales): { segments: Segment[]; cell: number } {
  // The wall's own spread (noise, a ladder 6 cm out, flanges 4 cm) or the legs' radius.
  const tolerance = Math.max(tower.wall * 3, 3 * scales.noise, 0.05) + (tower.legs.length ? 0.1 : 0.08);
  const points = regionPoints(cloud, bins, tower, tolerance);
  const cell = Math.min(0.05, Math.max(0.02, 1.5 * scales.spacing, scales.noise));
  if (points.length < 20) return { segments: [], cell };
  const { x, y, z } = cloud;
  const n = points.length;

  // Unrolled around the centre line: s = angle from a seam where nothing is, times a typical radius.
  const angle = new Float64Array(n), radial = new Float64Array(n);
  const seamCounts = new Uint32Array(360);
  let zMin = Infinity, zMax = -Infinity;
  for (let k = 0; k < n; k++) {
    const p = points[k];
    const [ax, ay] = axisAt(tower, z[p]);
    angle[k] = Math.atan2(x[p] - ax, y[p] - ay) + Math.PI;
    radial[k] = Math.hypot(x[p] - ax, y[p] - ay);
    seamCounts[Math.min(359, Math.floor((angle[k] / (2 * Math.PI)) * 360))]++;
    zMin = Math.min(zMin, z[p]);
    zMax = Math.max(zMax, z[p]);
  }
  let seam = 0;
  for (let b = 1; b < 360; b++) if (seamCounts[b] < seamCounts[seam]) seam = b;
  const seamAngle = ((seam + 0.5) / 360) * 2 * Math.PI;
  const reference = median(radial);
  const ns = Math.ceil((2 * Math.PI * reference) / cell) + 1;
  const nz = Math.ceil((zMax - zMin) / cell) + 1;
  const cellOf = new Int32Array(n);
  const counts = new Uint16Array(ns * nz);
  for (let k = 0; k < n; k++) {
    const unrolled = (angle[k] - seamAngle + 2 * Math.PI) % (2 * Math.PI);
    const c = Math.floor((z[points[k]] - zMin) / cell) * ns + Math.min(ns - 1, Math.floor((unrolled * reference) / cell));
    cellOf[k] = c;
    if (counts[c] < 65535) counts[c]++;
  }

  // Occupied: a fair share of a typical cell's points (a stray point is not a surface).
  const filled: number[] = [];
  for (const c of counts) if (c > 0) filled.push(c);
  const threshold = Math.max(2, Math.round(0.25 * median(filled)));
  const occupied = new Uint8Array(ns * nz);
  for (let c = 0; c < counts.length; c++) occupied[c] = counts[c] >= threshold ? 1 : 0;
  // Erosion: what is narrower than the element in either direction (pipes, frames, arms, blurred by
  // the noise) goes; panels, boxes and dishes (25 cm+) stay.
  // The element: three times a mount pipe's 6-7 cm, plus the noise that blurs it (a pipe must
  // fill under ERODE_SHARE of it), at most 35 cm (a 30 cm panel still fills most of it).
  const element = Math.min(0.35, Math.max(0.2, 0.1 + 8 * scales.noise));
  const half = Math.max(1, Math.round(element / cell / 2));
  const cores = rankErode(occupied, ns, nz, half, ERODE_SHARE);

  // Components of the cores (what the erosion kept: the items, apart), then grown back over the
  // occupied cells, ring by ring, as far as the erosion took (the items' edges; a pipe between two
  // items is shared out between them, which the fits leave aside).
  const label = new Int32Array(ns * nz).fill(-1);
  const stack: number[] = [];
  let labels = 0;
  for (let c0 = 0; c0 < cores.length; c0++) {
    if (!cores[c0] || label[c0] >= 0) continue;
    label[c0] = labels;
    stack.push(c0);
    while (stack.length) {
      const c = stack.pop()!;
      const ci = c % ns, cj = Math.floor(c / ns);
      for (let dj = -1; dj <= 1; dj++) {
        for (let di = -1; di <= 1; di++) {
          const ii = ci + di, jj = cj + dj;
          if (ii < 0 || jj < 0 || ii >= ns || jj >= nz) continue;
          const d = jj * ns + ii;
          if (cores[d] && label[d] < 0) {
            label[d] = labels;
            stack.push(d);
          }
        }
      }
    }
    labels++;
  }
  let front: number[] = [];
  for (let c = 0; c < label.length; c++) if (label[c] >= 0) front.push(c);
  for (let ring = 0; ring <= half && front.length; ring++) {
    const next: number[] = [];
    for (const c of front) {
      const ci = c % ns, cj = Math.floor(c / ns);
      for (let d = 0; d < 4; d++) {
        const ii = ci + [1, -1, 0, 0][d], jj = cj + [0, 0, 1, -1][d];
        if (ii < 0 || jj < 0 || ii >= ns || jj >= nz) continue;
        const e = jj * ns + ii;
        if (occupied[e] && label[e] < 0) {
          label[e] = label[c];
          next.push(e);
        }
      }
    }
    front = next;
  }
  // Pieces of one item a hole cut apart: one above the other, mostly over the same stretch of
  // the unrolled image, less than PIECE_GAP apart. Joined (union-find), their fit decides.
  const box = Array.from({ length: labels }, () => ({ i0: Infinity, i1: -Infinity, j0: Infinity, j1: -Infinity }));
  for (let c = 0; c < label.length; c++) {
    if (label[c] < 0) continue;
    const b = box[label[c]], i = c % ns, j = Math.floor(c / ns);
    b.i0 = Math.min(b.i0, i);
    b.i1 = Math.max(b.i1, i);
    b.j0 = Math.min(b.j0, j);
    b.j1 = Math.max(b.j1, j);
  }
  const parent = Array.from({ length: labels }, (_, l) => l);
  const root = (l: number): number => (parent[l] === l ? l : (parent[l] = root(parent[l])));
  for (let a = 0; a < labels; a++) {
    for (let b = a + 1; b < labels; b++) {
      const A = box[a], B = box[b];
      const overlap = Math.min(A.i1, B.i1) - Math.max(A.i0, B.i0) + 1;
      const gap = (Math.max(A.j0, B.j0) - Math.min(A.j1, B.j1) - 1) * cell;
      if (overlap >= 0.6 * Math.min(A.i1 - A.i0 + 1, B.i1 - B.i0 + 1) && gap <= PIECE_GAP) parent[root(a)] = root(b);
    }
  }
  const minZ = new Array(labels).fill(Infinity);
  for (let c = 0; c < label.length; c++) {
    if (label[c] < 0) continue;
    label[c] = root(label[c]);
    minZ[label[c]] = Math.min(minZ[label[c]], zMin + Math.floor(c / ns) * cell);
  }
  const grown = label;
  const members: number[][] = Array.from({ length: labels }, () => []);
  for (let k = 0; k < n; k++) {
    const l = grown[cellOf[k]];
    if (l >= 0) members[l].push(points[k]);
  }
  const segments: Segment[] = [];
  for (let l = 0; l < labels; l++) {
    // Standing on the ground (a cabinet, the shelter, the fence): not the tower's equipment.
    if (minZ[l] < tower.baseZ + GROUND_CLEARANCE || members[l].length < 20) continue;
    segments.push({ points: Uint32Array.from(members[l]) });
  }
  return { segments, cell };
}

/**
 * Erosion that forgives holes: a cell stays when at least `share` of the square of (2 half + 1)
 * cells around it is occupied (a sparse cloud leaves random empty cells on a surface; a plain
 * erosion would take a panel apart). A pipe narrower than half the square fills under half of it.
 */
function rankErode(image: Uint8Array, nx: number, ny: number, half: number, share: number): Uint8Array {
  // Integral image of the occupancy.
  const sums = new Float64Array((nx + 1) * (ny + 1));
  for (let j = 0; j < ny; j++) {
    let row = 0;
    for (let i = 0; i < nx; i++) {
      row += image[j * nx + i];
      sums[(j + 1) * (nx + 1) + i + 1] = sums[j * (nx + 1) + i + 1] + row;
    }
  }
  const out = new Uint8Array(image.length);
  const need = share * (2 * half + 1) ** 2;
  for (let j = 0; j < ny; j++) {
    const j0 = Math.max(0, j - half), j1 = Math.min(ny, j + half + 1);
    for (let i = 0; i < nx; i++) {
      if (!image[j * nx + i]) continue;
      const i0 = Math.max(0, i - half), i1 = Math.min(nx, i + half + 1);
      const sum = sums[j1 * (nx + 1) + i1] - sums[j0 * (nx + 1) + i1] - sums[j1 * (nx + 1) + i0] + sums[j0 * (nx + 1) + i0];
      out[j * nx + i] = sum >= need ? 1 : 0;
    }
  }
  return out;
}
