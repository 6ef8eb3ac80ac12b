// From the colmap engine's local frame to a GeoTIFF's model space: a Grid (grid.ts: local east,
// north, up, minus `offset_3d_xyz`) becomes the RasterData and RasterGeoreference cog-writer.ts
// writes. The offset is added back to the corner and to the heights; GeoTIFF model space is
// always easting first (cog-writer.ts, head comment), so for an output system whose first axis is
// north (georeference.ts `swapped`) the offset, kept in the system's own axis order, is swapped
// back before it is added.
import type { Grid } from './grid.ts';
import type { RasterData, RasterGeoreference } from './cog-writer.ts';

/** What gridToOutput needs of the local frame (georeference.ts LocalFrame). */
export interface FrameOffset {
  /** `offset_3d_xyz`: [x, y, z] in the output system's axis order and unit. */
  offsetOutput: readonly [number, number, number];
  /** Whether the output system's x is north. */
  swapped: boolean;
}

/** What gridToOutput needs of the output system (crs.ts OutputCoordinateSystem). */
export interface OutputSystem {
  wkt: string;
  horizontal_epsg: number | null;
}

export const DEM_NODATA = -9999;

/** The grid as a one-band Float32 raster of output-system heights, and its georeferencing. */
export function gridToOutput(grid: Grid, frame: FrameOffset, crs: OutputSystem): { raster: RasterData; georef: RasterGeoreference } {
  const z = frame.offsetOutput[2];
  const data = new Float32Array(grid.values.length);
  for (let i = 0; i < data.length; i++) data[i] = grid.values[i] + z; // NaN stays NaN: nodata
  return {
    raster: { width: grid.width, height: grid.height, bands: 1, data, nodata: DEM_NODATA },
    georef: gridGeoreference(grid, frame, crs),
  };
}

/** The georeferencing of any raster laid on the grid (the orthomosaic's too). */
export function gridGeoreference(grid: Omit<Grid, 'values'>, frame: FrameOffset, crs: OutputSystem): RasterGeoreference {
  const [x, y] = frame.offsetOutput;
  const [offsetEast, offsetNorth] = frame.swapped ? [y, x] : [x, y];
  return { originX: grid.originEast + offsetEast, originY: grid.originNorth + offsetNorth, cellSize: grid.cellSize, wkt: crs.wkt, epsg: crs.horizontal_epsg };
}
