// The digital terrain model (DTM): the DSM with what stands on the ground taken away.
//
// Ground cells are found by the progressive morphological filter of Zhang et al. (2003, "A
// progressive morphological filter for removing nonground measurements from airborne LIDAR
// data", IEEE TGRS 41(4)), run on the gap-filled DSM grid rather than on the points (the DSM
// already holds the top of each cell; one grid keeps it linear): the surface is opened (an
// erosion, the minimum over a square window, then a dilation, the maximum) with windows growing
// as 3, 5, 9, 17, ... cells (Zhang's exponential series, 2 * 2^k + 1) up to `maxWindow` metres,
// the size of the largest building to remove; at each step a cell that stands more than dh_k
// above the opened surface is not ground, with
//     dh_k = dh0                                          for the 3-cell window,
//     dh_k = min(dhMax, slope * (w_k - w_(k-1)) * cell + dh0)   after it,
// (Zhang's eq. 4: terrain of slope `slope` rises that much between two windows); then the
// opened surface replaces the surface. Defaults after ODM's SMRF ground classification
// (--smrf-slope 0.15, --smrf-threshold 0.5 m, --smrf-window 18 m), with dhMax 2.5 m; ODM's
// window is a radius, ours is the side of the largest window (objects up to 18 m across go):
// a wider one also shaves hilltops, by up to dhMax. Windows and heights are given in metres and
// turned into the output system's units with `unitFactor`.
//
// Each erosion and dilation is separable (rows, then columns) and uses van Herk's and Gil and
// Werman's running minimum, 3 comparisons per cell whatever the window, so the filter is linear
// in cells times the number of windows (log2 of the largest window in cells). Cells outside the
// DSM's footprint (NaN) take no part.
//
// Cells within `buffer` (0.5 m) of a non-ground cell are taken as non-ground too: the rim of an
// object (a car's flank, the eaves) slopes down through cells that stand less than the threshold
// above the ground and would otherwise stay as a ring in the DTM.
// The non-ground cells are then emptied and filled from the ground around them (gap-fill.ts,
// pull-push then relaxation: a membrane under each building), within the DSM's footprint, and
// the DTM is kept at or below the DSM.
import type { Grid } from './grid.ts';
import { fillGaps } from './gap-fill.ts';
import { squaredDistanceTo } from './distance-transform.ts';

export interface GroundFilterOptions {
  /** Metres per unit of the output system (default 1). */
  unitFactor?: number;
  /** Largest window, metres: the widest object to remove (default 18). */
  maxWindow?: number;
  /** Terrain slope the thresholds allow for (rise over run, default 0.15). */
  slope?: number;
  /** Height threshold at the smallest window, metres (default 0.5). */
  initialThreshold?: number;
  /** Largest height threshold, metres (default 2.5). */
  maxThreshold?: number;
  /** Cells this close (metres) to a removed object go too (default 0.5): its sloping rim. */
  buffer?: number;
}

export interface GroundModel {
  dtm: Grid;
  /** 1 for the cells the filter kept as ground. */
  ground: Uint8Array;
}

/** The DTM of a (gap-filled) DSM; the DSM is left as it is. */
export function groundModel(dsm: Grid, options: GroundFilterOptions = {}): GroundModel {
  const unit = options.unitFactor ?? 1;
  const { width, height, cellSize } = dsm;
  const n = width * height;
  const slope = options.slope ?? 0.15;
  const dh0 = (options.initialThreshold ?? 0.5) / unit;
  const dhMax = (options.maxThreshold ?? 2.5) / unit;
  const maxWindowCells = Math.max(3, 2 * Math.floor((options.maxWindow ?? 18) / unit / cellSize / 2) + 1);

  const inside = new Uint8Array(n);
  const ground = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (!Number.isNaN(dsm.values[i])) inside[i] = ground[i] = 1;

  const surface = Float32Array.from(dsm.values);
  const eroded = new Float32Array(n);
  const opened = new Float32Array(n);
  let previousWindow = 1;
  for (let k = 0; ; k++) {
    const window = Math.min(2 * 2 ** k + 1, maxWindowCells);
    const threshold = window <= 3 ? dh0 : Math.min(dhMax, slope * (window - previousWindow) * cellSize + dh0);
    filterSquare(surface, eroded, width, height, window, 'min');
    for (let i = 0; i < n; i++) if (!inside[i]) eroded[i] = NaN;
    filterSquare(eroded, opened, width, height, window, 'max');
    for (let i = 0; i < n; i++) {
      if (!inside[i]) {
        opened[i] = NaN;
        continue;
      }
      if (surface[i] - opened[i] > threshold) ground[i] = 0;
    }
    surface.set(opened);
    previousWindow = window;
    if (window >= maxWindowCells) break;
  }

  // The rim of an object (a car's, a roof's edge) slopes down through cells that stand less than
  // the threshold above the ground: they go with the object when within `buffer` of it.
  const buffer = (options.buffer ?? 0.5) / unit / cellSize;
  if (buffer > 0) {
    const objects = new Uint8Array(n);
    for (let i = 0; i < n; i++) objects[i] = inside[i] && !ground[i] ? 1 : 0;
    const toObject = squaredDistanceTo(objects, 1, width, height);
    for (let i = 0; i < n; i++) if (toObject[i] <= buffer * buffer) ground[i] = 0;
  }

  const values = Float32Array.from(dsm.values);
  for (let i = 0; i < n; i++) if (!ground[i]) values[i] = NaN;
  fillGaps(values, width, height, inside);
  for (let i = 0; i < n; i++) if (values[i] > dsm.values[i]) values[i] = dsm.values[i];
  return { dtm: { ...dsm, values }, ground };
}

/**
 * Minimum or maximum over a square window of `size` (odd) cells centred on each cell, NaN cells
 * ignored (a window of NaN alone gives NaN): along the rows, then along the rows of the
 * transposed result (a column pass read down the columns would miss the cache at every cell).
 */
export function filterSquare(source: Float32Array, target: Float32Array, width: number, height: number, size: number, kind: 'min' | 'max'): void {
  const across = new Float32Array(width * height);
  const lines = new LineFilter(Math.max(width, height), size, kind);
  for (let r = 0; r < height; r++) lines.run(source.subarray(r * width, (r + 1) * width), across.subarray(r * width, (r + 1) * width));
  const transposed = transpose(across, width, height);
  for (let c = 0; c < width; c++) lines.run(transposed.subarray(c * height, (c + 1) * height), across.subarray(c * height, (c + 1) * height));
  target.set(transpose(across, height, width));
}

/** The running extreme of one line over a window of `size`, van Herk / Gil-Werman. */
class LineFilter {
  private readonly padded: Float32Array;
  private readonly g: Float32Array;
  private readonly h: Float32Array;
  private readonly neutral: number;

  constructor(
    longest: number,
    private readonly size: number,
    private readonly kind: 'min' | 'max',
  ) {
    const blocks = Math.ceil((longest + size - 1) / size) * size;
    this.padded = new Float32Array(blocks);
    this.g = new Float32Array(blocks);
    this.h = new Float32Array(blocks);
    this.neutral = kind === 'min' ? Infinity : -Infinity;
  }

  /** out[i] = extreme of line[i - half .. i + half] (clipped to the line). */
  run(line: Float32Array, out: Float32Array): void {
    const { size, neutral, padded: p, g, h } = this;
    const length = line.length;
    const half = (size - 1) / 2;
    // p[j] = line[j - half], the neutral value outside the line and for NaN
    const blocks = Math.ceil((length + size - 1) / size) * size;
    p.fill(neutral, 0, blocks);
    for (let i = 0; i < length; i++) {
      const v = line[i];
      if (v === v) p[half + i] = v; // not NaN
    }
    // g: extreme from each block's start; h: from each block's end; the window starting at j
    // (covering j .. j + size - 1, centred on line[j]) is the extreme of h[j] and g[j + size - 1].
    const min = this.kind === 'min';
    for (let b = 0; b < blocks; b += size) {
      g[b] = p[b];
      for (let j = b + 1; j < b + size; j++) g[j] = min ? (p[j] < g[j - 1] ? p[j] : g[j - 1]) : p[j] > g[j - 1] ? p[j] : g[j - 1];
      h[b + size - 1] = p[b + size - 1];
      for (let j = b + size - 2; j >= b; j--) h[j] = min ? (p[j] < h[j + 1] ? p[j] : h[j + 1]) : p[j] > h[j + 1] ? p[j] : h[j + 1];
    }
    for (let i = 0; i < length; i++) {
      const a = h[i];
      const b = g[i + size - 1];
      const e = min ? (a < b ? a : b) : a > b ? a : b;
      out[i] = e === neutral ? NaN : e;
    }
  }
}

/** The width x height row-major grid as height x width (its columns as rows), in 64-cell tiles. */
function transpose(source: Float32Array, width: number, height: number): Float32Array {
  const out = new Float32Array(width * height);
  const tile = 64;
  for (let r0 = 0; r0 < height; r0 += tile) {
    for (let c0 = 0; c0 < width; c0 += tile) {
      const r1 = Math.min(height, r0 + tile);
      const c1 = Math.min(width, c0 + tile);
      for (let r = r0; r < r1; r++) for (let c = c0; c < c1; c++) out[c * height + r] = source[r * width + c];
    }
  }
  return out;
}
