// The volume above a measurement Polygon's plane over the cloud's DSM (issue 28): the same 2.5D
// volume as volume.ts computes from the point cloud, with the DSM's cells as the grid.
// - Base: the polygon's plane (volume.ts basePlane), unchanged.
// - Surface: the DSM cells whose centre lies inside the polygon's horizontal footprint (even-odd,
//   surface-grid.ts); a cell's height above the base is measured vertically (DSM height minus the
//   plane's height at the cell centre: a DSM is a height per horizontal position). Nodata cells take
//   their neighbours' mean, as cells without points do (surface-grid.ts fillHeights).
// - Each inside cell stands for an equal share of the footprint's exact area (the polygon's area
//   times its normal's z); above = sum of share x max(0, height), below the same of the depths.
// Vertical rather than along the normal: for a base that is not level the two prisms differ along
// the sides only, and the DSM cannot be resampled along a tilted normal without inventing heights.
// A plane steeper than 60 degrees (a wall: normal z < MIN_NORMAL_Z) has no useful footprint on a
// DSM: null, and the caller uses the point cloud. So does a polygon not wholly over the raster, or
// with data in less than MIN_COVERAGE of its cells. A polygon larger than MAX_WINDOW_CELLS
// full-resolution cells is measured on the finest overview that holds it (the writer's AVERAGE overviews: the mean height per coarser cell),
// and cell_size_m says so.
import type { ElevationRaster } from '../ortho/elevation-raster.ts';
import { readElevationWindow } from '../ortho/elevation-raster.ts';
import { mm } from './quantities.ts';
import { basePlane, type VolumeAbovePlane } from './volume.ts';
import { fillHeights, insideCells, sumInside } from './surface-grid.ts';

type Point = [number, number, number];

/** Share of the polygon's cells that must have DSM data; below it the heights would be mostly filled in (lund's DSM: 133 cells with data in a 20 x 20 m square) and the point cloud is used. */
export const MIN_COVERAGE = 0.5;
/** A base steeper than 60 degrees is measured on the point cloud. */
export const MIN_NORMAL_Z = 0.5;

/** The volume above the plane of `rings` (output system, as the DSM) over `dsm`; null when the DSM cannot measure it (see the head comment). */
export async function volumeOverDsm(dsm: ElevationRaster, rings: Point[][], unitFactor = 1): Promise<VolumeAbovePlane | null> {
  const plane = basePlane(rings);
  if (!plane || plane.n[2] < MIN_NORMAL_Z) return null;
  const { area, n, origin } = plane;
  const pixelRings = rings.map((ring) => ring.map((p) => dsm.toPixel(p[0], p[1])));
  const columns = pixelRings[0].map((p) => p[0]);
  const rows = pixelRings[0].map((p) => p[1]);
  const [c0, c1, r0, r1] = [Math.min(...columns), Math.max(...columns), Math.min(...rows), Math.max(...rows)];
  if (!(c0 >= 0 && r0 >= 0 && c1 <= dsm.width && r1 <= dsm.height)) return null;
  const window = await readElevationWindow(dsm, c0, r0, c1, r1);
  if (!window) return null;
  const { scaleX, scaleY } = dsm.cog.levels[window.level];
  const { width: nu, height: nv, values } = window;
  // The grid in the read level's pixels: one cell per pixel, from the window's corner.
  const levelRings = pixelRings.map((ring) => ring.map(([c, r]) => [c / scaleX, r / scaleY]));
  const inside = insideCells(levelRings, window.col0, window.row0, 1, nu, nv);
  const height = new Float64Array(nu * nv);
  let samples = 0;
  for (let j = 0; j < nv; j++) {
    for (let i = 0; i < nu; i++) {
      const value = values[j * nu + i];
      if (Number.isNaN(value)) {
        height[j * nu + i] = NaN;
        continue;
      }
      samples++;
      const [x, y] = dsm.toOutput((window.col0 + i + 0.5) * scaleX, (window.row0 + j + 0.5) * scaleY);
      const base = origin[2] - (n[0] * (x - origin[0]) + n[1] * (y - origin[1])) / n[2];
      height[j * nu + i] = value - base;
    }
  }
  const had = Uint8Array.from(height, (h) => (Number.isNaN(h) ? 0 : 1));
  fillHeights(height, nu, nv);
  const { cells, covered, above, below } = sumInside(height, inside, (c) => had[c] === 1);
  if (cells === 0 || covered < MIN_COVERAGE * cells) return null;
  const share = ((area * n[2]) / cells) * unitFactor * unitFactor * unitFactor;
  const cell = Math.sqrt(window.cellSize[0] * window.cellSize[1]);
  return { above_m3: mm(above * share), below_m3: mm(below * share), base: 'polygon_plane', surface: 'dsm', cell_size_m: mm(cell * unitFactor), points: samples, coverage: Math.round((covered / cells) * 1000) / 1000 };
}
