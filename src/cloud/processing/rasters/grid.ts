// A north-up raster grid in the colmap engine's local frame (georeference.ts: east, north, up in
// the output system's unit, minus offset_3d_xyz), which the DSM, DTM and orthomosaic share: the
// dense cloud, the cameras and the grid all live in that frame, and the output system's
// coordinates of a cell are its local ones plus the offset (GeoTIFF writing adds it).
//
// Cell (column c, row r) covers east [originEast + c * cellSize, + cellSize) and north
// (originNorth - (r + 1) * cellSize, originNorth - r * cellSize]: row 0 is the northern edge, as
// in a GeoTIFF. Values are row-major (index r * width + c); NaN marks a cell without a value.

export interface Grid {
  width: number;
  height: number;
  /** Local east of the western edge of column 0. */
  originEast: number;
  /** Local north of the northern edge of row 0. */
  originNorth: number;
  /** Side of a cell, in the output system's unit (square cells). */
  cellSize: number;
  /** One value per cell, row-major from the northern row; NaN: no data. */
  values: Float32Array;
}

/** An empty grid (all NaN) covering [minEast, maxEast] x [minNorth, maxNorth]. */
export function gridCovering(minEast: number, minNorth: number, maxEast: number, maxNorth: number, cellSize: number): Grid {
  const width = Math.max(1, Math.ceil((maxEast - minEast) / cellSize));
  const height = Math.max(1, Math.ceil((maxNorth - minNorth) / cellSize));
  return { width, height, originEast: minEast, originNorth: minNorth + height * cellSize, cellSize, values: new Float32Array(width * height).fill(NaN) };
}

/** The cell holding a local position, or -1 outside the grid. */
export function cellIndex(grid: Grid, east: number, north: number): number {
  const c = Math.floor((east - grid.originEast) / grid.cellSize);
  const r = Math.floor((grid.originNorth - north) / grid.cellSize);
  return c < 0 || r < 0 || c >= grid.width || r >= grid.height ? -1 : r * grid.width + c;
}

/** Local east and north of the centre of cell (column, row). */
export function cellCentre(grid: Grid, column: number, row: number): [number, number] {
  return [grid.originEast + (column + 0.5) * grid.cellSize, grid.originNorth - (row + 0.5) * grid.cellSize];
}
