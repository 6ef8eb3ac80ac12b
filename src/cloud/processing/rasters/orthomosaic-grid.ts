// The orthomosaic's own grid, finer than the DSM's: the DSM is gridded at two ground sampling
// distances (GSD) of the depth maps' images (dsm.ts demCellSize), which the dense stage scales
// down (800 px against 2000 px undistorted photos: brighton's DSM cell is 16.8 cm, its photos'
// GSD about 3.4 cm), so an orthomosaic on the DSM's cells would throw away most of the photos'
// detail. Each DSM cell is cut into k x k ortho cells (k an integer: the two grids share their
// edges, so the ortho's georeference is the DSM's with a smaller pixel), k about the DSM cell over
// the photos' GSD, and each ortho cell's height is read bilinearly from the DSM at its centre.
//
// Bounds on k, and why:
// - at most MAX_SUBDIVISION (8): the geometry (where a roof edge stands) is only known to a DSM
//   cell; past ~8 pixels per DSM cell the extra pixels show the photos' detail draped over a
//   blocky surface and cost memory (10 bytes per cell: height, label, RGBA) for no ground truth;
// - at most `maxCells` ortho cells (default 64 million, ~640 MB in the passes plus the 256 MB of
//   RGBA GDAL reads back): k is lowered until the grid fits, never below 1 (the DSM's own cells,
//   which dsm.ts already bounds at 50 million).
import { groundSampleDistance } from './dsm.ts';
import type { Grid } from './grid.ts';
import type { OrthoCamera } from './orthomosaic-camera.ts';
import { percentile } from './orthomosaic-feasibility.ts';

export const MAX_SUBDIVISION = 8;
export const DEFAULT_MAX_ORTHO_CELLS = 64_000_000;

export interface OrthoResolution {
  /** Ortho cells per DSM cell side. */
  subdivision: number;
  /** The photos' ground sampling distance (local units per pixel), or null when none could be measured. */
  gsd: number | null;
}

/**
 * k for these cameras over this DSM: round(DSM cell / GSD), the GSD the median over cameras of
 * (camera height above the DSM's median height) / focal length in pixels of the undistorted photo.
 */
export function orthoResolution(dsm: Grid, cameras: OrthoCamera[], options: { maxCells?: number; maxSubdivision?: number } = {}): OrthoResolution {
  const ground = percentile(dsm.values, 0.5);
  const gsd =
    ground === null
      ? null
      : groundSampleDistance(
          cameras.map((c) => {
            const [r, t] = [c.rotation, c.translation];
            const centre = [0, 1, 2].map((i) => -(r[i] * t[0] + r[3 + i] * t[1] + r[6 + i] * t[2])) as [number, number, number];
            return { centre, focalPx: (c.fx + c.fy) / 2 };
          }),
          ground,
        );
  const maxCells = options.maxCells ?? DEFAULT_MAX_ORTHO_CELLS;
  let k = gsd && gsd > 0 ? Math.round(dsm.cellSize / gsd) : 1;
  k = Math.max(1, Math.min(options.maxSubdivision ?? MAX_SUBDIVISION, k));
  while (k > 1 && dsm.width * k * dsm.height * k > maxCells) k--;
  return { subdivision: k, gsd };
}

/** The DSM's extent cut into k x k cells per DSM cell, heights read bilinearly (see bilinearHeight). */
export function subdividedSurface(dsm: Grid, k: number): Grid {
  if (!(Number.isInteger(k) && k >= 1)) throw new RangeError(`subdivision ${k}: a positive integer`);
  if (k === 1) return dsm;
  const width = dsm.width * k;
  const height = dsm.height * k;
  const cellSize = dsm.cellSize / k;
  const values = new Float32Array(width * height);
  for (let row = 0; row < height; row++) {
    // Fine cell centres in the DSM's cell coordinates (DSM cell centres at integers).
    const gy = (row + 0.5) / k - 0.5;
    for (let col = 0; col < width; col++) values[row * width + col] = bilinearHeight(dsm, (col + 0.5) / k - 0.5, gy);
  }
  return { width, height, originEast: dsm.originEast, originNorth: dsm.originNorth, cellSize, values };
}

/**
 * The DSM's height at (gx, gy) in cell coordinates (cell centres at integers): bilinear between
 * the four cell centres around it, over those with a value (weights renormalised, so that a roof
 * edge beside nodata keeps its height); NaN when the DSM cell holding the point has none (the
 * orthomosaic's outline stays the DSM's).
 */
export function bilinearHeight(dsm: Grid, gx: number, gy: number): number {
  const { width, height, values } = dsm;
  const own = values[Math.min(height - 1, Math.max(0, Math.round(gy))) * width + Math.min(width - 1, Math.max(0, Math.round(gx)))];
  if (own !== own) return NaN;
  const x0 = Math.floor(gx);
  const y0 = Math.floor(gy);
  const ax = gx - x0;
  const ay = gy - y0;
  let sum = 0;
  let weights = 0;
  for (let dy = 0; dy <= 1; dy++) {
    const y = Math.min(height - 1, Math.max(0, y0 + dy));
    const wy = dy ? ay : 1 - ay;
    for (let dx = 0; dx <= 1; dx++) {
      const x = Math.min(width - 1, Math.max(0, x0 + dx));
      const w = wy * (dx ? ax : 1 - ax);
      const v = values[y * width + x];
      if (w > 0 && v === v) {
        sum += w * v;
        weights += w;
      }
    }
  }
  return weights > 0 ? sum / weights : own;
}
