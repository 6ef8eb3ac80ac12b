// The cloud's DSM or DTM (one Float32 band, a nodata value; raster-layers.ts) opened from the object
// store for the heights the inspection needs: the ground at the asset (pipeline/ground-altitude.ts)
// and the surface over a measurement polygon (measurements/dsm-volume.ts). The file is opened by
// stored-cog.ts (kind `elevation`: its ranged reads, header checks and refusals), so a height costs
// the few blocks it touches.
// Positions are given in the inspection's output system (x, y as the point cloud and measurement
// geometries have them); the raster's model space is always (easting, northing) (GeoTIFF's
// "traditional GIS order", cloud rasters/cog-writer.ts), so for a system whose first axis is north
// x and y are swapped on the way in. The raster must be in that output system: its GeoKeys' EPSG code
// equal to the system's horizontal EPSG code (or, for a system without one, the raster's system
// placing the same WGS 84 point within a cell of where the output system does); anything else is a
// RasterRefused, and callers fall back to the point cloud rather than measure in the wrong frame.
// Heights are in the output system's vertical unit, as the point cloud's z (unit_factor applies).
// A nodata cell (GDAL_NODATA, or a value that is not finite) is NaN in what is read here.
import proj4 from 'proj4';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { projectorFrom } from '../../shared/geo/projection.ts';
import type { OutputCrs } from '../pipeline/reconstruction.ts';
import type { RasterLayer } from './raster-layers.ts';
import { openStoredCog, RasterRefused, type CogLevel, type StoredCog } from './stored-cog.ts';

/** The most cells one read decodes (2048 x 2048 Float32: 16 MiB); a larger window reads an overview. */
export const MAX_WINDOW_CELLS = 2048 * 2048;

/** A window of cells: columns [col0, col0 + width), rows [row0, row0 + height) of one level. */
export interface ElevationWindow {
  /** Level read (0: full resolution; else an overview, AVERAGE-resampled by the cloud's writer). */
  level: number;
  col0: number;
  row0: number;
  width: number;
  height: number;
  /** Heights row by row, NaN where there is no data. */
  values: Float32Array;
  /** Cell size of that level, output system units, across and down. */
  cellSize: [number, number];
}

export interface ElevationRaster {
  cog: StoredCog;
  layer: RasterLayer;
  /** Full-resolution raster size, cells. */
  width: number;
  height: number;
  /** Full-resolution pixel position (column, row; edges at integers) of an output-system position. */
  toPixel(x: number, y: number): [number, number];
  /** Output-system position of a full-resolution pixel position. */
  toOutput(column: number, row: number): [number, number];
}

/** Opens the layer's file and checks that it is an elevation raster in `crs` (RasterRefused, StorageError otherwise). */
export async function openElevationRaster(store: ObjectStore, layer: RasterLayer, crs: OutputCrs | null): Promise<ElevationRaster> {
  const cog = await openStoredCog(store, layer.bucket, layer.key, 'elevation');
  if (!crs || crs.type === 'arbitrary') throw new RasterRefused('raster_unsupported', 'the reconstruction has no georeferenced output system to read the raster in');
  if (cog.proj4 === null) throw new RasterRefused('raster_unsupported', 'the raster is in a geographic system (cells in degrees), not the output system');
  const swap = crs.axis_order?.[0] === 'north' || crs.axis_order?.[0] === 'south';
  const full = cog.levels[0];
  const raster: ElevationRaster = {
    cog,
    layer,
    width: full.width,
    height: full.height,
    toPixel: (x, y) => (swap ? cog.toPixel(y, x) : cog.toPixel(x, y)),
    toOutput: (column, row) => {
      const [e, n] = cog.toModel(column, row);
      return swap ? [n, e] : [e, n];
    },
  };
  const epsg = (crs as { horizontal_epsg?: number | null }).horizontal_epsg;
  if (typeof epsg === 'number') {
    if (epsg !== cog.epsg) throw new RasterRefused('raster_unsupported', `the raster is in EPSG:${cog.epsg}, the output system in EPSG:${epsg}`);
  } else if (!sameFrame(raster, cog.proj4, crs)) {
    throw new RasterRefused('raster_unsupported', `the raster's system (EPSG:${cog.epsg}) does not place positions where the output system does`);
  }
  return raster;
}

/** The raster's centre, taken to WGS 84 by the raster's system and back by the output system, lands within a cell. */
function sameFrame(raster: ElevationRaster, rasterProj4: string, crs: OutputCrs): boolean {
  const project = projectorFrom(crs);
  if (!project) return false;
  const [x, y] = raster.toOutput(raster.width / 2, raster.height / 2);
  const [e, n] = raster.cog.toModel(raster.width / 2, raster.height / 2);
  try {
    const [longitude, latitude] = proj4(rasterProj4, 'EPSG:4326').forward([e, n]);
    const back = project(latitude, longitude);
    return back !== null && Math.hypot(back.x - x, back.y - y) <= Math.max(...raster.cog.pixelSize);
  } catch {
    return false;
  }
}

/**
 * The cells of the full-resolution window [col0, col1) x [row0, row1) (clipped to the raster), read
 * from the finest level that holds it in at most MAX_WINDOW_CELLS; null when the window misses the raster.
 */
export async function readElevationWindow(raster: ElevationRaster, col0: number, row0: number, col1: number, row1: number): Promise<ElevationWindow | null> {
  const c0 = Math.max(0, Math.floor(col0));
  const r0 = Math.max(0, Math.floor(row0));
  const c1 = Math.min(raster.width, Math.ceil(col1));
  const r1 = Math.min(raster.height, Math.ceil(row1));
  if (!(c1 > c0 && r1 > r0)) return null;
  const { levels } = raster.cog;
  const cellsOf = (l: CogLevel) => (Math.ceil(c1 / l.scaleX) - Math.floor(c0 / l.scaleX)) * (Math.ceil(r1 / l.scaleY) - Math.floor(r0 / l.scaleY));
  const index = levels.findIndex((l) => cellsOf(l) <= MAX_WINDOW_CELLS);
  if (index < 0) throw new RasterRefused('raster_too_large', `a window of ${c1 - c0} x ${r1 - r0} cells, and no overview holds it in ${MAX_WINDOW_CELLS} cells`);
  const level = levels[index];
  const window: [number, number, number, number] = [Math.floor(c0 / level.scaleX), Math.floor(r0 / level.scaleY), Math.min(level.width, Math.ceil(c1 / level.scaleX)), Math.min(level.height, Math.ceil(r1 / level.scaleY))];
  const values = await decode(level, window);
  const noData = raster.cog.noData;
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i]) || values[i] === noData) values[i] = NaN;
  const [px, py] = raster.cog.pixelSize;
  return { level: index, col0: window[0], row0: window[1], width: window[2] - window[0], height: window[3] - window[1], values, cellSize: [px * level.scaleX, py * level.scaleY] };
}

/** The height at an output-system position, bilinear between the 4 nearest cell centres, nodata cells left out (their weight shared by the others); null outside the raster or with no data around. */
export async function heightAt(raster: ElevationRaster, x: number, y: number): Promise<number | null> {
  const [column, row] = raster.toPixel(x, y);
  if (!(column >= 0 && row >= 0 && column <= raster.width && row <= raster.height)) return null;
  // Cell centres are at half-integers: the 4 around (column, row).
  const c = Math.floor(column - 0.5);
  const r = Math.floor(row - 0.5);
  const window = await readElevationWindow(raster, c, r, c + 2, r + 2);
  if (!window || window.level !== 0) return null;
  const fx = column - 0.5 - c;
  const fy = row - 0.5 - r;
  let total = 0;
  let weights = 0;
  for (const [dc, dr, w] of [[0, 0, (1 - fx) * (1 - fy)], [1, 0, fx * (1 - fy)], [0, 1, (1 - fx) * fy], [1, 1, fx * fy]]) {
    const cc = c + dc - window.col0;
    const rr = r + dr - window.row0;
    if (cc < 0 || rr < 0 || cc >= window.width || rr >= window.height) continue;
    const h = window.values[rr * window.width + cc];
    if (Number.isNaN(h) || !(w > 0)) continue;
    total += w * h;
    weights += w;
  }
  return weights > 0 ? total / weights : null;
}

/** The window's pixels as floats; whatever the decoder throws on a broken file is a refusal. */
async function decode(level: CogLevel, window: [number, number, number, number]): Promise<Float32Array> {
  try {
    const data = await level.image.readRasters({ window, samples: [0], interleave: true });
    return Float32Array.from(data as unknown as ArrayLike<number>);
  } catch (err) {
    if (err instanceof RasterRefused || err instanceof StorageError) throw err;
    throw new RasterRefused('raster_unreadable', `its cells cannot be decoded: ${err instanceof Error ? err.message : String(err)}`);
  }
}
