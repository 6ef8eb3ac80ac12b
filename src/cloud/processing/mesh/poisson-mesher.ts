// The mesh of the dense cloud: `colmap poisson_mesher` (screened Poisson reconstruction, COLMAP
// 3.8's bundled PoissonRecon + SurfaceTrimmer, src/mvs/meshing.cc) on fused.ply, then trimmed back
// to the surface the cloud saw (mesh-trim.ts).
//
// The options and why:
// - depth: the octree's maximum depth; the finest cell is 1.1 x the cloud's largest extent / 2^depth
//   (PoissonRecon's bounding cube is 1.1 times the cloud's). We aim the finest cell at twice the
//   point spacing (a cell with about four points on a surface: finer only meshes the noise), with
//   the spacing estimated from the occupied cells of a coarse grid (`estimateSpacing`), clamped to
//   6..10. Measured on a 2-core machine shared with other work (wall time inflated by the load),
//   a 1.94M-point plane with a bump: depth 9 -> 0.49M faces, 27 s CPU, 0.76 GB; depth 10 (the
//   choice for that cloud) -> 1.9M faces, 73 s CPU, 2.7 GB; depth 11 passed 12 GB and was stopped
//   after 6.5 minutes. Memory follows the octree nodes near the surface (about 4x per level), not
//   the point count, so depth 11 is left to an explicit `depth` on a machine with the memory.
// - trim: COLMAP's trim is an absolute threshold on Poisson's density value (the mesh keeps the
//   part with value > trim, islands under 0.1% of the area cut off by the trim are dropped), and
//   the value's scale depends on the points per node: COLMAP's default 10 removes a whole
//   160k-point plane (its values are 4.9..8.6). So we pass a trim that removes nothing
//   (TRIM_KEEP_ALL: any value is above it, but a trim > 0 makes COLMAP write the value per vertex)
//   and trim relative to the median ourselves (mesh-trim.ts), with the distance to the fused points.
// - color 32 (COLMAP's default: vertex colours from the points, finer estimates weighted up);
// - point_weight 1 (COLMAP's default: screened Poisson, the surface is pulled to the points);
// - num_threads: the engine's thread count.
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { colmapFailure, runColmap } from '../colmap/colmap-process.ts';
import { readPlyMeshFile, writePlyMeshFile, type PlyMesh } from './mesh-ply.ts';
import { trimMesh, type TrimReport } from './mesh-trim.ts';

export interface PoissonParameters {
  depth: number;
  trim: number;
  color: number;
  pointWeight: number;
  numThreads: number;
}

/** A trim above 0 (so that COLMAP writes the density) and below any density value it produces. */
export const TRIM_KEEP_ALL = 0.01;
export const MIN_DEPTH = 6;
export const MAX_DEPTH = 10;
/** Density rule: faces with a vertex 16x less densely sampled (per area) than the median go (mesh-trim.ts). */
export const DENSITY_DROP = 2;
/** Distance rule: faces with a vertex farther than this many finest cells from every fused point go. */
export const MAX_DISTANCE_CELLS = 2;
/** Pieces with fewer faces than this share of the mesh (or than MIN_ISLAND_FACES) go. */
export const ISLAND_FRACTION = 0.001;
export const MIN_ISLAND_FACES = 20;

export function poissonMesherArgs(inputPath: string, outputPath: string, p: PoissonParameters): string[] {
  return [
    'poisson_mesher',
    '--input_path', inputPath,
    '--output_path', outputPath,
    '--PoissonMeshing.depth', String(p.depth),
    '--PoissonMeshing.trim', String(p.trim),
    '--PoissonMeshing.color', String(p.color),
    '--PoissonMeshing.point_weight', String(p.pointWeight),
    '--PoissonMeshing.num_threads', String(p.numThreads),
  ];
}

/** The cloud's largest extent along an axis (local units). */
export function largestExtent(positions: Float64Array): number {
  let extent = 0;
  for (let k = 0; k < 3; k++) {
    let min = Infinity;
    let max = -Infinity;
    for (let i = k; i < positions.length; i += 3) {
      if (positions[i] < min) min = positions[i];
      if (positions[i] > max) max = positions[i];
    }
    if (max > min) extent = Math.max(extent, max - min);
  }
  return extent;
}

/**
 * The mean spacing of the points on the surface they sample: the cloud is binned in cubes; a
 * surface crosses about (area / side^2) of them, so the area is the occupied cubes times the side
 * squared, and the spacing sqrt(area / points). That holds only when the cubes are larger than the
 * spacing (else every point has a cube of its own and the estimate is the side): the side starts
 * at 1/1024 of the extent and doubles until a cube holds at least 8 points on average.
 */
export function estimateSpacing(positions: Float64Array): number {
  const count = positions.length / 3;
  const extent = largestExtent(positions);
  if (count < 2 || extent <= 0) return 0;
  const min = [0, 1, 2].map((k) => {
    let m = Infinity;
    for (let i = k; i < positions.length; i += 3) m = Math.min(m, positions[i]);
    return m;
  });
  let side = extent / 1024;
  for (;;) {
    const cells = Math.floor(extent / side) + 2;
    const occupied = new Set<number>();
    for (let i = 0; i < count; i++) {
      const ix = Math.floor((positions[3 * i] - min[0]) / side);
      const iy = Math.floor((positions[3 * i + 1] - min[1]) / side);
      const iz = Math.floor((positions[3 * i + 2] - min[2]) / side);
      occupied.add(ix + cells * (iy + cells * iz));
    }
    if (occupied.size * 8 <= count || side >= extent / 4) return Math.sqrt((occupied.size * side * side) / count);
    side *= 2;
  }
}

/** The octree depth whose finest cell is about twice the point spacing, within MIN_DEPTH..MAX_DEPTH. */
export function chooseDepth(positions: Float64Array): number {
  const extent = largestExtent(positions);
  const spacing = estimateSpacing(positions);
  if (extent <= 0 || spacing <= 0) return MIN_DEPTH;
  const depth = Math.ceil(Math.log2((1.1 * extent) / (2 * spacing)));
  return Math.min(MAX_DEPTH, Math.max(MIN_DEPTH, depth));
}

/** The finest cell of PoissonRecon's octree at `depth` for a cloud of this extent. */
export function finestCell(extent: number, depth: number): number {
  return (1.1 * extent) / 2 ** depth;
}

export interface MeshOptions {
  binary: string;
  glogDir: string;
  /** The processing log. */
  log: Writable;
  threads: number;
  /** Overrides the chosen depth (chooseDepth). */
  depth?: number;
  /** Overrides the trimming rules (mesh-trim.ts); null turns a rule off. */
  densityDrop?: number | null;
  maxDistanceCells?: number | null;
  islandFraction?: number;
}

export interface MeshResult {
  /** The trimmed mesh (binary PLY, double x y z in the local frame, colours): workDir/meshed-trimmed.ply. */
  meshPly: string;
  vertices: number;
  faces: number;
  depth: number;
  trim: TrimReport;
}

/** Meshes a fused cloud (stereo_fusion's PLY) with poisson_mesher and trims the mesh; the files go in workDir. */
export async function meshFromFusedCloud(fusedPly: string, workDir: string, options: MeshOptions, signal: AbortSignal, onLine?: (line: string) => void): Promise<MeshResult> {
  const cloud = await readPlyMeshFile(fusedPly);
  if (cloud.vertexCount === 0) throw new Error('the fused cloud has no points');
  if (!cloud.normals) throw new Error('the fused cloud has no normals (poisson_mesher needs nx, ny, nz)');
  const depth = options.depth ?? chooseDepth(cloud.positions);
  const raw = path.join(workDir, 'meshed.ply');
  const outcome = await runColmap({
    binary: options.binary,
    args: poissonMesherArgs(fusedPly, raw, { depth, trim: TRIM_KEEP_ALL, color: 32, pointWeight: 1, numThreads: options.threads }),
    cwd: workDir,
    glogDir: options.glogDir,
    log: options.log,
    signal,
    onLine,
  });
  if (outcome.aborted) throw signal.reason;
  if (outcome.code !== 0 || outcome.signal) throw colmapFailure('meshing (poisson_mesher)', outcome);

  const mesh = await readPlyMeshFile(raw);
  const cell = finestCell(largestExtent(cloud.positions), depth);
  const distanceCells = options.maxDistanceCells === undefined ? MAX_DISTANCE_CELLS : options.maxDistanceCells;
  const { mesh: trimmed, report } = trimMesh(mesh, cloud.positions, {
    densityDrop: options.densityDrop === undefined ? DENSITY_DROP : options.densityDrop,
    maxDistance: distanceCells === null ? null : distanceCells * cell,
    minComponentFaces: Math.max(MIN_ISLAND_FACES, Math.ceil((options.islandFraction ?? ISLAND_FRACTION) * mesh.faceCount)),
  });
  options.log.write(
    `mesh: depth ${depth} (finest cell ${cell.toPrecision(3)}), ${mesh.faceCount} faces from poisson_mesher; trimmed ${report.removedByDensity} by density` +
      `${report.densityThreshold === null ? '' : ` (value < ${report.densityThreshold.toFixed(2)})`}, ${report.removedByDistance} by distance, ` +
      `${report.removedIslandFaces} in ${report.removedIslands} small pieces; ${trimmed.faceCount} faces, ${trimmed.vertexCount} vertices left\n`,
  );
  const meshPly = path.join(workDir, 'meshed-trimmed.ply');
  await writeLocalMesh(meshPly, trimmed);
  return { meshPly, vertices: trimmed.vertexCount, faces: trimmed.faceCount, depth, trim: report };
}

/** The trimmed mesh in the local frame (what the OBJ and PLY writers read back). */
async function writeLocalMesh(file: string, mesh: PlyMesh): Promise<void> {
  await fs.promises.rm(file, { force: true });
  await writePlyMeshFile(file, mesh, ['local frame of the colmap engine (east, north, up minus offset_3d_xyz)']);
}
