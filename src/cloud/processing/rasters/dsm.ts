// The digital surface model (DSM) of the dense cloud, and the cell size it is gridded at.
//
// Per cell, the height is the median of the cell's `topCount` (default 3) highest points, not the
// highest: a DSM is the top of the surface, but COLMAP's stereo fusion leaves stray points (a
// depth from a wrong match, fused from too few views) that float above it, and the highest point
// would turn each into a peak. With 3 points or more the value is the second highest (one stray
// point per cell is ignored); with 2 their mean; with 1 that point. Keeping the top points costs
// topCount floats per cell whatever the density, so time and memory stay linear in points and
// cells (ODM's DSM takes the maximum within a radius, after its own statistical outlier filter).
//
// Then lone spikes go (a cell more than `spikeHeight` above, or below, all of at least 3 valued
// neighbours is given their median: a stray cluster larger than a cell, a hole of a single cell),
// and gaps are filled within the cloud's footprint (gap-fill.ts: enclosed holes of any size, and
// the outline's concavities narrower than twice `closeDistance`, by pull-push and relaxation), so
// that the area outside the cloud stays nodata rather than extrapolated.
import { gridCovering, type Grid } from './grid.ts';
import { coverageMask, fillGaps } from './gap-fill.ts';

export interface CloudPoints {
  /** x, y, z (local east, north, up) of point i at [3i, 3i + 1, 3i + 2]. */
  positions: Float64Array;
  count: number;
}

export interface SurfaceOptions {
  /** Metres per unit of the output system (the local frame's unit); default 1. */
  unitFactor?: number;
  /** Points per cell the median is taken over (default 3). */
  topCount?: number;
  /** Area to grid, local frame; default: the points' extent without its extreme 0.05 % each side. */
  bounds?: { minEast: number; minNorth: number; maxEast: number; maxNorth: number };
  /** Height (metres) that makes a cell a lone spike; default 1 m. */
  spikeHeight?: number;
  /** Concavities of the outline narrower than twice this (metres) are filled; default 10 cells. */
  closeDistance?: number;
  /** Whether to fill gaps (default true). */
  fill?: boolean;
}

/** The DSM grid of the points at `cellSize` (local frame units). */
export function surfaceModel(points: CloudPoints, cellSize: number, options: SurfaceOptions = {}): Grid {
  if (!(cellSize > 0)) throw new RangeError('cell size must be positive');
  const unit = options.unitFactor ?? 1;
  const k = Math.min(255, Math.max(1, Math.floor(options.topCount ?? 3)));
  const b = options.bounds ?? robustBounds(points);
  const grid = gridCovering(b.minEast, b.minNorth, b.maxEast, b.maxNorth, cellSize);
  const cells = grid.width * grid.height;

  // The k highest heights of each cell, in descending order.
  const top = new Float32Array(cells * k);
  const counts = new Uint8Array(cells);
  const p = points.positions;
  const { originEast, originNorth, width, height } = grid;
  for (let i = 0; i < points.count; i++) {
    const z = p[3 * i + 2];
    const c = Math.floor((p[3 * i] - originEast) / cellSize);
    const r = Math.floor((originNorth - p[3 * i + 1]) / cellSize);
    if (c < 0 || r < 0 || c >= width || r >= height || !Number.isFinite(z)) continue;
    const cell = r * width + c;
    const base = cell * k;
    const n = counts[cell];
    if (n === k && z <= top[base + k - 1]) continue;
    let at = n < k ? n : k - 1; // the slot it goes into, then moved up past lower heights
    while (at > 0 && top[base + at - 1] < z) {
      top[base + at] = top[base + at - 1];
      at--;
    }
    top[base + at] = z;
    if (n < k) counts[cell] = n + 1;
  }
  const values = grid.values;
  for (let cell = 0; cell < cells; cell++) {
    const n = counts[cell];
    if (n === 0) continue;
    const base = cell * k;
    values[cell] = n % 2 === 1 ? top[base + (n - 1) / 2] : (top[base + n / 2 - 1] + top[base + n / 2]) / 2;
  }

  removeSpikes(grid, (options.spikeHeight ?? 1) / unit);
  if (options.fill !== false) {
    const closeCells = options.closeDistance !== undefined ? options.closeDistance / unit / cellSize : 10;
    fillGaps(values, width, height, coverageMask(values, width, height, closeCells));
  }
  return grid;
}

/** Replaces lone spikes and pits (see the head comment) by the median of their valued neighbours, in place; returns how many. */
export function removeSpikes(grid: Grid, threshold: number): number {
  const { width, height, values } = grid;
  const original = Float32Array.from(values);
  const around = new Float32Array(8);
  let removed = 0;
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) {
      const v = original[r * width + c];
      if (Number.isNaN(v)) continue;
      let n = 0;
      let low = Infinity;
      let high = -Infinity;
      for (let dr = -1; dr <= 1; dr++) {
        const rr = r + dr;
        if (rr < 0 || rr >= height) continue;
        for (let dc = -1; dc <= 1; dc++) {
          const cc = c + dc;
          if ((dr === 0 && dc === 0) || cc < 0 || cc >= width) continue;
          const w = original[rr * width + cc];
          if (Number.isNaN(w)) continue;
          around[n++] = w;
          if (w < low) low = w;
          if (w > high) high = w;
        }
      }
      if (n < 3 || (v <= high + threshold && v >= low - threshold)) continue;
      // a spike (rare): the median of the neighbours, by insertion sort of at most 8 values
      for (let a = 1; a < n; a++) {
        const x = around[a];
        let b = a - 1;
        for (; b >= 0 && around[b] > x; b--) around[b + 1] = around[b];
        around[b + 1] = x;
      }
      values[r * width + c] = n % 2 === 1 ? around[(n - 1) / 2] : (around[n / 2 - 1] + around[n / 2]) / 2;
      removed++;
    }
  }
  return removed;
}

/**
 * The points' extent without the extreme 0.05 % of their eastings and northings on each side
 * (read off a sample of at most 200 000 points): a few stray points far from the survey must not
 * stretch the grid over empty land; the points left out are dropped from the DSM.
 */
export function robustBounds(points: CloudPoints): { minEast: number; minNorth: number; maxEast: number; maxNorth: number } {
  if (points.count === 0) throw new RangeError('no points to grid');
  const step = Math.max(1, Math.floor(points.count / 200_000));
  const size = Math.ceil(points.count / step);
  const east = new Float64Array(size);
  const north = new Float64Array(size);
  for (let i = 0, j = 0; j < size; i += step, j++) {
    east[j] = points.positions[3 * i];
    north[j] = points.positions[3 * i + 1];
  }
  east.sort();
  north.sort();
  const cut = Math.floor(size * 0.0005);
  return { minEast: east[cut], maxEast: east[size - 1 - cut], minNorth: north[cut], maxNorth: north[size - 1 - cut] };
}

export interface CameraForGsd {
  /** Local east, north, up of the projection centre. */
  centre: readonly [number, number, number];
  /** Focal length, pixels of the image the cloud was made from. */
  focalPx: number;
}

/**
 * Ground sample distance (output units per pixel): the median over cameras of (height above
 * the ground / focal length in pixels), a nadir camera's footprint of one pixel; null without a
 * camera above the ground. As ODM's opensfm_reconstruction_average_gsd (flight height above the
 * median height of the sparse points, over the focal length in pixels), with the median of the
 * cameras rather than their mean so that a camera far off the flight does not move it.
 */
export function groundSampleDistance(cameras: CameraForGsd[], groundHeight: number): number | null {
  const gsds = cameras.filter((c) => c.focalPx > 0 && c.centre[2] > groundHeight).map((c) => (c.centre[2] - groundHeight) / c.focalPx);
  if (gsds.length === 0) return null;
  gsds.sort((a, b) => a - b);
  const m = gsds.length >> 1;
  return gsds.length % 2 ? gsds[m] : (gsds[m - 1] + gsds[m]) / 2;
}

export interface CellSizeOptions {
  /** Metres per unit (default 1). */
  unitFactor?: number;
  /** Cell size in GSDs (default 2: the dense cloud is fused from images at half resolution or less). */
  gsdMultiple?: number;
  /** Smallest cell, metres (default 0.05: ODM's --dem-resolution default, 5 cm/px). */
  minCellMetres?: number;
  /** Most cells a grid may have (default 50 million). */
  maxCells?: number;
}

/**
 * The DEM cell size (units) for an area of `extentEast` x `extentNorth` units: a few GSDs, no
 * finer than 5 cm (ODM caps its DEM resolution at the GSD: gsd.py cap_resolution returns the
 * coarser of the requested 5 cm and the GSD), and coarsened until the grid fits `maxCells`.
 */
export function demCellSize(gsd: number | null, extentEast: number, extentNorth: number, options: CellSizeOptions = {}): number {
  const unit = options.unitFactor ?? 1;
  const floor = (options.minCellMetres ?? 0.05) / unit;
  let cell = Math.max(floor, gsd !== null && gsd > 0 ? gsd * (options.gsdMultiple ?? 2) : 0);
  const maxCells = options.maxCells ?? 50_000_000;
  const cellsAt = (size: number) => Math.max(1, Math.ceil(extentEast / size)) * Math.max(1, Math.ceil(extentNorth / size));
  if (cellsAt(cell) > maxCells) {
    cell = Math.sqrt((extentEast * extentNorth) / maxCells);
    while (cellsAt(cell) > maxCells) cell *= 1.01;
  }
  return cell;
}
