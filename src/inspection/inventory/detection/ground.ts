// The ground under and around the tower: a terrain grid (per 1 m cell a low quantile of the heights,
// then a morphological opening that removes what stands on the ground and is narrower than ~7 m:
// cabinets, a shelter, the fence), so that every point has a height above the ground even on a
// slope; and the ground's height at the tower's foot, from a plane fitted to the cells around it,
// which sees past the concrete pad the tower stands on.
import type { LocalCloud } from './local-cloud.ts';
import { biweight, robustSigma } from './geometry.ts';

/** Terrain cell size (m): fine enough to follow a slope, coarse enough to hold ground points in a sparse cloud. */
const CELL = 1;
/** Objects narrower than twice this (m) are taken off the terrain by the opening. */
const OPENING_RADIUS = 3.5;
/** The low quantile of a cell's heights taken as its ground: below most of it, above outliers thrown under it. */
const CELL_QUANTILE = 0.03;
/** Height of the band above that quantile whose median is the ground: several noise deviations, under a kerb or a pad's edge. */
const GROUND_BAND = 0.2;

export interface TerrainGrid {
  cell: number;
  nx: number;
  ny: number;
  x0: number;
  y0: number;
  /** Per cell: the low quantile of its heights (NaN where empty), and the opened terrain (filled everywhere). */
  raw: Float32Array;
  terrain: Float32Array;
}

export function terrainGrid(cloud: LocalCloud): TerrainGrid {
  const { x, y, z, count } = cloud;
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (let i = 0; i < count; i++) {
    minX = Math.min(minX, x[i]);
    maxX = Math.max(maxX, x[i]);
    minY = Math.min(minY, y[i]);
    maxY = Math.max(maxY, y[i]);
  }
  const nx = Math.max(1, Math.ceil((maxX - minX) / CELL + 1e-9));
  const ny = Math.max(1, Math.ceil((maxY - minY) / CELL + 1e-9));
  const cells = nx * ny;
  const cellOf = new Int32Array(count);
  const start = new Uint32Array(cells + 1);
  for (let i = 0; i < count; i++) {
    const c = Math.min(ny - 1, Math.floor((y[i] - minY) / CELL)) * nx + Math.min(nx - 1, Math.floor((x[i] - minX) / CELL));
    cellOf[i] = c;
    start[c + 1]++;
  }
  for (let c = 0; c < cells; c++) start[c + 1] += start[c];
  const fill = start.slice(0, cells);
  const heights = new Float32Array(count);
  for (let i = 0; i < count; i++) heights[fill[cellOf[i]]++] = z[i];
  const raw = new Float32Array(cells).fill(NaN);
  for (let c = 0; c < cells; c++) {
    const a = start[c], b = start[c + 1];
    if (b - a < 3) continue;
    const sorted = heights.subarray(a, b).sort();
    // The low quantile is under the ground by about two noise deviations: the ground is the median
    // of the points in a band above it (thin enough to leave out what stands on the ground).
    const low = sorted[Math.floor(CELL_QUANTILE * (b - a))];
    let end = Math.floor(CELL_QUANTILE * (b - a));
    while (end < b - a && sorted[end] <= low + GROUND_BAND) end++;
    raw[c] = sorted[Math.floor((Math.floor(CELL_QUANTILE * (b - a)) + end - 1) / 2)];
  }
  const grid: TerrainGrid = { cell: CELL, nx, ny, x0: minX, y0: minY, raw, terrain: new Float32Array(cells) };
  grid.terrain = open(fillEmpty(raw, nx, ny), nx, ny, Math.round(OPENING_RADIUS / CELL));
  return grid;
}

/** Empty cells take the mean of their filled neighbours, ring by ring, until every cell has a value. */
function fillEmpty(values: Float32Array, nx: number, ny: number): Float32Array {
  let current = Float32Array.from(values);
  let anyFilled = false;
  for (const v of current) if (!Number.isNaN(v)) anyFilled = true;
  if (!anyFilled) return current.fill(0);
  for (let pass = 0; pass < nx + ny; pass++) {
    let empty = 0;
    const next = Float32Array.from(current);
    for (let j = 0; j < ny; j++) {
      for (let i = 0; i < nx; i++) {
        if (!Number.isNaN(current[j * nx + i])) continue;
        let sum = 0, n = 0;
        for (let dj = -1; dj <= 1; dj++) {
          for (let di = -1; di <= 1; di++) {
            const ii = i + di, jj = j + dj;
            if (ii < 0 || jj < 0 || ii >= nx || jj >= ny) continue;
            const v = current[jj * nx + ii];
            if (!Number.isNaN(v)) {
              sum += v;
              n++;
            }
          }
        }
        if (n) next[j * nx + i] = sum / n;
        else empty++;
      }
    }
    current = next;
    if (!empty) break;
  }
  return current;
}

/** Separable min then max filter over a square of (2r + 1) cells: takes off narrow raised objects, keeps slopes. */
function open(values: Float32Array, nx: number, ny: number, r: number): Float32Array {
  const pass = (input: Float32Array, horizontal: boolean, pick: (a: number, b: number) => number) => {
    const out = new Float32Array(input.length);
    for (let j = 0; j < ny; j++) {
      for (let i = 0; i < nx; i++) {
        let v = input[j * nx + i];
        for (let d = -r; d <= r; d++) {
          const ii = horizontal ? i + d : i, jj = horizontal ? j : j + d;
          if (ii < 0 || jj < 0 || ii >= nx || jj >= ny) continue;
          v = pick(v, input[jj * nx + ii]);
        }
        out[j * nx + i] = v;
      }
    }
    return out;
  };
  const eroded = pass(pass(values, true, Math.min), false, Math.min);
  return pass(pass(eroded, true, Math.max), false, Math.max);
}

/** The terrain's height at a horizontal position (bilinear between cell centres). */
export function terrainAt(grid: TerrainGrid, px: number, py: number): number {
  const fx = Math.min(Math.max((px - grid.x0) / grid.cell - 0.5, 0), grid.nx - 1);
  const fy = Math.min(Math.max((py - grid.y0) / grid.cell - 0.5, 0), grid.ny - 1);
  const i = Math.min(Math.floor(fx), grid.nx - 2), j = Math.min(Math.floor(fy), grid.ny - 2);
  if (i < 0 || j < 0) return grid.terrain[Math.round(fy) * grid.nx + Math.round(fx)];
  const s = fx - i, t = fy - j;
  const v = (ii: number, jj: number) => grid.terrain[jj * grid.nx + ii];
  return (v(i, j) * (1 - s) + v(i + 1, j) * s) * (1 - t) + (v(i, j + 1) * (1 - s) + v(i + 1, j + 1) * s) * t;
}

/**
 * The ground's height at (cx, cy): a plane z = a + b x + c y through the cells' own ground heights
 * (not the opened terrain) in the ring [inner, outer] around it, by iteratively reweighted least
 * squares with Tukey's biweight, so cabinets, the shelter and a pad inside the ring carry no weight.
 */
export function groundHeightAt(grid: TerrainGrid, cx: number, cy: number, inner: number, outer: number): { height: number; cells: number } | null {
  const xs: number[] = [], ys: number[] = [], zs: number[] = [];
  for (let j = 0; j < grid.ny; j++) {
    for (let i = 0; i < grid.nx; i++) {
      const v = grid.raw[j * grid.nx + i];
      if (Number.isNaN(v)) continue;
      const px = grid.x0 + (i + 0.5) * grid.cell - cx, py = grid.y0 + (j + 0.5) * grid.cell - cy;
      const r = Math.hypot(px, py);
      if (r < inner || r > outer) continue;
      xs.push(px);
      ys.push(py);
      zs.push(v);
    }
  }
  if (zs.length < 6) return null;
  let a = zs.slice().sort((p, q) => p - q)[Math.floor(zs.length / 2)], b = 0, c = 0;
  for (let iteration = 0; iteration < 12; iteration++) {
    const residuals = zs.map((z, k) => z - (a + b * xs[k] + c * ys[k]));
    // Scale: the residuals' spread, at least 5 cm (a levelled pad is flat to that, and outliers are not).
    const s = Math.max(robustSigma(residuals), 0.05) * 4.685;
    const m = [0, 0, 0, 0, 0, 0], r = [0, 0, 0];
    for (let k = 0; k < zs.length; k++) {
      const w = biweight(residuals[k] / s);
      const row = [1, xs[k], ys[k]];
      m[0] += w; m[1] += w * row[1]; m[2] += w * row[2]; m[3] += w * row[1] * row[1]; m[4] += w * row[1] * row[2]; m[5] += w * row[2] * row[2];
      r[0] += w * zs[k]; r[1] += w * row[1] * zs[k]; r[2] += w * row[2] * zs[k];
    }
    const solved = solve3([m[0], m[1], m[2], m[1], m[3], m[4], m[2], m[4], m[5]], r);
    if (!solved) break;
    [a, b, c] = solved;
  }
  return { height: a, cells: zs.length };
}

/** Solves a 3 x 3 system (row-major) by Cramer's rule; null when singular. */
export function solve3(m: number[], r: number[]): [number, number, number] | null {
  const det = (q: number[]) => q[0] * (q[4] * q[8] - q[5] * q[7]) - q[1] * (q[3] * q[8] - q[5] * q[6]) + q[2] * (q[3] * q[7] - q[4] * q[6]);
  const d = det(m);
  if (!(Math.abs(d) > 1e-12)) return null;
  const column = (k: number) => m.map((v, i) => (i % 3 === k ? r[Math.floor(i / 3)] : v));
  return [det(column(0)) / d, det(column(1)) / d, det(column(2)) / d];
}
