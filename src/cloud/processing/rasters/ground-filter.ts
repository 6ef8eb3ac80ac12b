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
// opened surface replaces the surface. Defaults follow ODM's SMRF ground classification
// (--smrf-window 18 m, --smrf-slope 0.15, --smrf-threshold 0.5 m), with dhMax 2.5 m. Windows
// and heights are given in metres and turned into the output system's units with `unitFactor`.
//
// Each erosion and dilation is separable (rows, then columns) and uses van Herk's and Gil and
// Werman's running minimum, 3 comparisons per cell whatever the window, so the filter is linear
// in cells times the number of windows (log2 of the largest window in cells). Cells outside the
// DSM's footprint (NaN) take no part.
//
// The non-ground cells are then emptied and filled from the ground around them (gap-fill.ts,
// pull-push then relaxation: a membrane under each building), within the DSM's footprint, and
// the DTM is kept at or below the DSM.
import type { Grid } from './grid.ts';
import { fillGaps } from './gap-fill.ts';

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

  const values = Float32Array.from(dsm.values);
  for (let i = 0; i < n; i++) if (!ground[i]) values[i] = NaN;
  fillGaps(values, width, height, inside);
  for (let i = 0; i < n; i++) if (values[i] > dsm.values[i]) values[i] = dsm.values[i];
  return { dtm: { ...dsm, values }, ground };
}

/**
 * Minimum or maximum over a square window of `size` (odd) cells centred on each cell, NaN cells
 * ignored (a window of NaN alone gives NaN); rows then columns, van Herk / Gil-Werman.
 */
export function filterSquare(source: Float32Array, target: Float32Array, width: number, height: number, size: number, kind: 'min' | 'max'): void {
  const temp = new Float32Array(width * height);
  const longest = Math.max(width, height);
  const scratch = { line: new Float32Array(longest), out: new Float32Array(longest), g: new Float32Array(longest + 2 * size), h: new Float32Array(longest + 2 * size) };
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) scratch.line[c] = source[r * width + c];
    runningExtreme(scratch, width, size, kind);
    for (let c = 0; c < width; c++) temp[r * width + c] = scratch.out[c];
  }
  for (let c = 0; c < width; c++) {
    for (let r = 0; r < height; r++) scratch.line[r] = temp[r * width + c];
    runningExtreme(scratch, height, size, kind);
    for (let r = 0; r < height; r++) target[r * width + c] = scratch.out[r];
  }
}

/** out[i] = extreme of line[i - half .. i + half] (clipped to the line), NaN ignored. */
function runningExtreme(s: { line: Float32Array; out: Float32Array; g: Float32Array; h: Float32Array }, length: number, size: number, kind: 'min' | 'max'): void {
  const half = (size - 1) / 2;
  const neutral = kind === 'min' ? Infinity : -Infinity;
  const pick = kind === 'min' ? Math.min : Math.max;
  // Padded line p[j] = line[j - half], neutral outside; g: running extreme from each block's
  // start (blocks of `size`), h: from each block's end; window [j, j + size - 1] = pick(h[j], g[j + size - 1]).
  const padded = length + 2 * half;
  const blocks = Math.ceil(padded / size) * size;
  const { g, h } = s;
  const value = (j: number) => {
    const i = j - half;
    if (i < 0 || i >= length) return neutral;
    const v = s.line[i];
    return Number.isNaN(v) ? neutral : v;
  };
  for (let j = 0; j < blocks; j++) g[j] = j % size === 0 ? value(j) : pick(g[j - 1], value(j));
  for (let j = blocks - 1; j >= 0; j--) h[j] = j % size === size - 1 || j === blocks - 1 ? value(j) : pick(h[j + 1], value(j));
  for (let i = 0; i < length; i++) {
    const e = pick(h[i], g[i + size - 1]);
    s.out[i] = e === neutral ? NaN : e;
  }
}
