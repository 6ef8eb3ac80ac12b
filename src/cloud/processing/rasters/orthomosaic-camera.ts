// The geometry of one camera for the orthomosaic: projecting a DSM cell into the camera, how good
// the camera is for that cell (the score that picks the best camera), and whether the cell is
// occluded in it. Kept apart from the raster passes (orthomosaic.ts) so that each rule can be read
// and tuned on its own.
//
// Occlusion: a cell is hidden from a camera when something lies between them. With the camera's
// depth map (COLMAP: z along the optical axis, 0 = no estimate) the cell is visible when its own
// depth is not beyond the nearest depth the camera saw in the 3x3 pixels around its projection
// (the bilinear sample reads the neighbours: at an occluder's edge one of them is the occluder,
// whose colour must not bleed onto the ground beside it), within a tolerance (a share of the depth
// plus a few cells: the DSM is gridded from a cloud and smoothed, the depth map is noisy).
// Without a depth map, or where its 3x3 pixels are all holes, the ray from the cell to the camera
// is walked through the DSM's cells (`rayClearOfDsm`): hidden when a cell's column rises above
// the ray by more than the tolerance's cells. The depth map is preferred: it holds what the camera
// really saw, including what the 2.5D DSM cannot (overhangs, thin poles), and costs 9 lookups.
import type { Grid } from './grid.ts';

export interface OrthoCamera {
  name: string;
  /** Undistorted image (PINHOLE, as `colmap image_undistorter` writes it), read with sharp. */
  imagePath: string;
  width: number;
  height: number;
  fx: number;
  fy: number;
  cx: number;
  cy: number;
  /** World (local frame) -> camera: x_cam = R x + t; R row-major 3x3. */
  rotation: number[];
  translation: [number, number, number];
  /** The camera's depth map at its own size (COLMAP depth: z along the optical axis; 0 = none), or null. */
  depthMap: { width: number; height: number; data: Float32Array } | null;
}

export interface OcclusionTolerance {
  /** Share of the cell's depth by which it may lie beyond the depth map's value (default 0.02). */
  relative: number;
  /** Cells of the DSM by which it may lie beyond it (default 2); also the ray march's height margin. */
  cells: number;
}

export const DEFAULT_OCCLUSION_TOLERANCE: OcclusionTolerance = { relative: 0.02, cells: 2 };

/** A camera with its centre and matrix unpacked for the per-cell loops. */
export interface PreparedCamera {
  index: number;
  source: OrthoCamera;
  r: Float64Array;
  t: Float64Array;
  /** Centre in the local frame: -R^T t. */
  centre: Float64Array;
  /** Pixels over which the score falls off towards the image border. */
  borderRamp: number;
}

export function prepareCamera(source: OrthoCamera, index: number): PreparedCamera {
  const r = Float64Array.from(source.rotation);
  if (r.length !== 9 || !r.every(Number.isFinite)) throw new Error(`camera ${source.name}: the rotation needs 9 finite numbers`);
  const t = Float64Array.from(source.translation);
  const centre = new Float64Array([
    -(r[0] * t[0] + r[3] * t[1] + r[6] * t[2]),
    -(r[1] * t[0] + r[4] * t[1] + r[7] * t[2]),
    -(r[2] * t[0] + r[5] * t[1] + r[8] * t[2]),
  ]);
  return { index, source, r, t, centre, borderRamp: Math.max(1, 0.1 * Math.min(source.width, source.height)) };
}

/** Where a projection lands: pixel coordinates (COLMAP's: pixel (i, j) spans [i, i+1) x [j, j+1)) and depth. */
export interface Projection {
  u: number;
  v: number;
  depth: number;
}

/** Projects a local point; false when it is behind the camera or outside its image. */
export function project(camera: PreparedCamera, x: number, y: number, z: number, out: Projection): boolean {
  const { r, t, source } = camera;
  const depth = r[6] * x + r[7] * y + r[8] * z + t[2];
  if (!(depth > 0)) return false;
  const u = (source.fx * (r[0] * x + r[1] * y + r[2] * z + t[0])) / depth + source.cx;
  const v = (source.fy * (r[3] * x + r[4] * y + r[5] * z + t[1])) / depth + source.cy;
  if (!(u >= 0 && v >= 0 && u < source.width && v < source.height)) return false;
  out.u = u;
  out.v = v;
  out.depth = depth;
  return true;
}

/**
 * How good the camera is for the cell at (x, y, z) that projects at `p`: the cosine of the ray's
 * angle from the vertical, squared (most nadir first), times the pixels per unit of length at that
 * distance (resolution), times a factor falling from 1 to 0.25 over the 10 % of the image nearest
 * its border (lens fall-off and the undistorter's edges). 0 when the camera is not above the cell.
 */
export function cameraScore(camera: PreparedCamera, x: number, y: number, z: number, p: Projection): number {
  const c = camera.centre;
  const dx = c[0] - x;
  const dy = c[1] - y;
  const dz = c[2] - z;
  if (!(dz > 0)) return 0;
  const distance = Math.sqrt(dx * dx + dy * dy + dz * dz);
  const cosNadir = dz / distance;
  const s = camera.source;
  const edge = Math.min(p.u, s.width - p.u, p.v, s.height - p.v) / camera.borderRamp;
  const b = edge >= 1 ? 1 : edge * edge * (3 - 2 * edge);
  return cosNadir * cosNadir * (s.fx / distance) * (0.25 + 0.75 * b);
}

/** Counts of the occlusion tests made each way, for the run's report. */
export interface OcclusionCounts {
  depthMap: number;
  rayMarch: number;
}

/** The DSM as the ray march reads it. */
export interface DsmSurface {
  grid: Grid;
  /** Highest DSM value: above it a ray meets nothing. */
  top: number;
}

/** Whether the cell at (x, y, z), projecting at `p`, is seen by the camera (not occluded). */
export function visibleFrom(camera: PreparedCamera, x: number, y: number, z: number, p: Projection, dsm: DsmSurface, tolerance: OcclusionTolerance, counts: OcclusionCounts): boolean {
  const map = camera.source.depthMap;
  if (map) {
    // The nearest depth of the 3x3 pixels around the projection: the bilinear sample reads the
    // pixel's neighbours, and at an occluder's edge one of them is the occluder.
    const col = Math.floor((p.u * map.width) / camera.source.width);
    const row = Math.floor((p.v * map.height) / camera.source.height);
    let seen = Infinity;
    for (let r = Math.max(0, row - 1); r <= Math.min(map.height - 1, row + 1); r++) {
      for (let c = Math.max(0, col - 1); c <= Math.min(map.width - 1, col + 1); c++) {
        const d = map.data[r * map.width + c];
        if (d > 0 && d < seen) seen = d;
      }
    }
    if (seen < Infinity) {
      counts.depthMap++;
      return p.depth <= seen * (1 + tolerance.relative) + tolerance.cells * dsm.grid.cellSize;
    }
  }
  counts.rayMarch++;
  return rayClearOfDsm(dsm, x, y, z, camera.centre, tolerance.cells * dsm.grid.cellSize);
}

/**
 * Walks the ray from the cell towards the camera centre through the DSM's cells (a grid traversal,
 * Amanatides and Woo), each cell taken as a flat-topped column: the ray is blocked when a column
 * rises above the ray's height where the ray enters it (its lowest point there: the ray climbs) by
 * more than `margin`. The cell itself is not tested; the walk ends where the ray is above the DSM's
 * highest cell, reaches the camera, or leaves the grid.
 */
export function rayClearOfDsm(dsm: DsmSurface, x: number, y: number, z: number, centre: Float64Array, margin: number): boolean {
  const { grid, top } = dsm;
  const { width, height, values, originEast, originNorth, cellSize: cell } = grid;
  const dx = centre[0] - x;
  const dy = centre[1] - y;
  const horizontal = Math.sqrt(dx * dx + dy * dy);
  if (horizontal < 1e-9) return true;
  const rise = (centre[2] - z) / horizontal;
  if (!(rise > 0)) return false;
  const run = Math.min(horizontal, (top - margin - z) / rise);
  // Grid coordinates: columns east, rows south; s is the horizontal distance walked.
  const ux = dx / horizontal;
  const uy = -dy / horizontal;
  const gx = (x - originEast) / cell;
  const gy = (originNorth - y) / cell;
  let col = Math.floor(gx);
  let row = Math.floor(gy);
  const stepCol = ux > 0 ? 1 : -1;
  const stepRow = uy > 0 ? 1 : -1;
  const deltaCol = ux !== 0 ? cell / Math.abs(ux) : Infinity;
  const deltaRow = uy !== 0 ? cell / Math.abs(uy) : Infinity;
  let nextCol = ux !== 0 ? ((ux > 0 ? col + 1 - gx : gx - col) * cell) / Math.abs(ux) : Infinity;
  let nextRow = uy !== 0 ? ((uy > 0 ? row + 1 - gy : gy - row) * cell) / Math.abs(uy) : Infinity;
  for (;;) {
    let entry: number;
    if (nextCol < nextRow) {
      entry = nextCol;
      nextCol += deltaCol;
      col += stepCol;
    } else {
      entry = nextRow;
      nextRow += deltaRow;
      row += stepRow;
    }
    if (entry > run) return true;
    if (col < 0 || row < 0 || col >= width || row >= height) return true;
    if (values[row * width + col] > z + rise * entry + margin) return false;
  }
}
