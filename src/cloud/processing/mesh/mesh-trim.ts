// Trimming of a Poisson mesh back to the surface the fused cloud saw. Poisson reconstruction fits
// a closed indicator function: it extends an open surface past its edges (by up to a tenth of the
// cloud's extent: the solver's bounding cube is 1.1 times the cloud) and closes surfaces over
// holes. Three rules, applied in this order, measured on a 20 x 20 plane with a bump and a hole of
// radius 2 (40k points, depth 7, finest cell 0.17; test/mesh-poisson.test.ts):
//  1. density: Poisson's per-vertex `value` (the depth of its sample-density estimate: +1 per 4x
//     the points per area; 8.4 on a 160k-point plane, 6.6 on a 14k one, at any depth) drops where
//     it extrapolates. COLMAP's own `--PoissonMeshing.trim` is an absolute threshold (default 10:
//     it removes those planes whole), so we cut relative to the median: faces with a vertex below
//     median - 2 go (16x sparser than the median: a facade seen obliquely or an edge seen by few
//     images stays; blobs Poisson grows around isolated outliers go). Alone, median - 1 stops the
//     plane 0.31 past its edges, median - 2 does not stop it (11.0: Poisson's bounding cube).
//  2. distance: faces with a vertex farther than `maxDistance` (2 finest cells) from every fused
//     point go: the mesh then stops 0.31 (1.8 cells) past the edges and 0.33 inside the hole's rim,
//     where untrimmed Poisson reaches its bounding cube and closes the hole.
//  3. islands: connected pieces with fewer than `minComponentFaces` faces go (specks that trimming
//     cut off, what is left of blobs around outliers).
// On a real survey cloud (OpenDroneMap's Brighton beach cloud, 940k points, normals by PCA; depth
// 10, cell 0.11 m): untrimmed, 5.4 % of the vertices lie over 0.5 m from any point (up to 40 m,
// across the holes and past the edges); trimmed (12 % of the faces), none lies beyond 0.23 m, and
// 0.2 % of the points are left over 0.5 m from a mesh vertex (isolated points).
import type { PlyMesh } from './mesh-ply.ts';

export interface TrimOptions {
  /** Faces with a vertex whose density value is below median - densityDrop go; null: no density rule. */
  densityDrop: number | null;
  /** Faces with a vertex farther than this from any cloud point go (local units); null: no distance rule. */
  maxDistance: number | null;
  /** Connected pieces with fewer faces than this go (0: keep all). */
  minComponentFaces: number;
}

export interface TrimReport {
  densityThreshold: number | null;
  removedByDensity: number;
  removedByDistance: number;
  removedIslands: number;
  removedIslandFaces: number;
}

/** Points of a cloud hashed into cubic cells, for "is any point within d of here" questions. */
export class PointGrid {
  private readonly cells = new Map<number, number[]>();
  private readonly min: [number, number, number];
  private readonly dims: [number, number, number];

  constructor(
    private readonly positions: Float64Array,
    private readonly cellSize: number,
  ) {
    const count = positions.length / 3;
    const min: [number, number, number] = [Infinity, Infinity, Infinity];
    const max: [number, number, number] = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < count; i++) for (let k = 0; k < 3; k++) {
      min[k] = Math.min(min[k], positions[3 * i + k]);
      max[k] = Math.max(max[k], positions[3 * i + k]);
    }
    this.min = count ? min : [0, 0, 0];
    this.dims = count ? ([0, 1, 2].map((k) => Math.floor((max[k] - min[k]) / cellSize) + 3) as [number, number, number]) : [1, 1, 1];
    for (let i = 0; i < count; i++) {
      const key = this.key(this.cell(positions[3 * i], 0), this.cell(positions[3 * i + 1], 1), this.cell(positions[3 * i + 2], 2));
      const list = this.cells.get(key);
      if (list) list.push(i);
      else this.cells.set(key, [i]);
    }
  }

  private cell(value: number, axis: number): number {
    return Math.floor((value - this.min[axis]) / this.cellSize) + 1;
  }

  private key(ix: number, iy: number, iz: number): number {
    return ix + this.dims[0] * (iy + this.dims[1] * iz);
  }

  /** Whether a point of the cloud lies within `distance` (at most the cell size) of (x, y, z). */
  hasPointWithin(x: number, y: number, z: number, distance: number): boolean {
    const ix = this.cell(x, 0);
    const iy = this.cell(y, 1);
    const iz = this.cell(z, 2);
    if (ix < 0 || iy < 0 || iz < 0 || ix >= this.dims[0] || iy >= this.dims[1] || iz >= this.dims[2]) return false;
    const d2 = distance * distance;
    const p = this.positions;
    for (let dz = -1; dz <= 1; dz++) for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
      const list = this.cells.get(this.key(ix + dx, iy + dy, iz + dz));
      if (!list) continue;
      for (const i of list) {
        const ex = p[3 * i] - x;
        const ey = p[3 * i + 1] - y;
        const ez = p[3 * i + 2] - z;
        if (ex * ex + ey * ey + ez * ez <= d2) return true;
      }
    }
    return false;
  }
}

/** The mesh without the faces the rules reject, and without the vertices no face uses any more. */
export function trimMesh(mesh: PlyMesh, cloudPositions: Float64Array, options: TrimOptions): { mesh: PlyMesh; report: TrimReport } {
  const keep = new Uint8Array(mesh.faceCount).fill(1);
  const report: TrimReport = { densityThreshold: null, removedByDensity: 0, removedByDistance: 0, removedIslands: 0, removedIslandFaces: 0 };
  const dropFacesWithVertex = (bad: Uint8Array): number => {
    let removed = 0;
    for (let f = 0; f < mesh.faceCount; f++) {
      if (keep[f] && (bad[mesh.indices[3 * f]] || bad[mesh.indices[3 * f + 1]] || bad[mesh.indices[3 * f + 2]])) {
        keep[f] = 0;
        removed++;
      }
    }
    return removed;
  };

  if (options.densityDrop !== null && mesh.values && mesh.vertexCount > 0) {
    const threshold = median(mesh.values) - options.densityDrop;
    const bad = new Uint8Array(mesh.vertexCount);
    for (let v = 0; v < mesh.vertexCount; v++) bad[v] = mesh.values[v] < threshold ? 1 : 0;
    report.densityThreshold = threshold;
    report.removedByDensity = dropFacesWithVertex(bad);
  }
  if (options.maxDistance !== null && options.maxDistance > 0) {
    const grid = new PointGrid(cloudPositions, options.maxDistance);
    const bad = new Uint8Array(mesh.vertexCount);
    const p = mesh.positions;
    for (let v = 0; v < mesh.vertexCount; v++) bad[v] = grid.hasPointWithin(p[3 * v], p[3 * v + 1], p[3 * v + 2], options.maxDistance) ? 0 : 1;
    report.removedByDistance = dropFacesWithVertex(bad);
  }
  if (options.minComponentFaces > 0) {
    const islands = smallComponents(mesh, keep, options.minComponentFaces);
    report.removedIslands = islands.components;
    report.removedIslandFaces = islands.faces;
  }
  return { mesh: compact(mesh, keep), report };
}

/** Marks the faces of connected pieces (sharing a vertex) smaller than `minFaces` as dropped. */
function smallComponents(mesh: PlyMesh, keep: Uint8Array, minFaces: number): { components: number; faces: number } {
  const parent = new Int32Array(mesh.vertexCount);
  for (let v = 0; v < parent.length; v++) parent[v] = v;
  const find = (v: number): number => {
    while (parent[v] !== v) {
      parent[v] = parent[parent[v]];
      v = parent[v];
    }
    return v;
  };
  const union = (a: number, b: number) => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[ra] = rb;
  };
  for (let f = 0; f < mesh.faceCount; f++) {
    if (!keep[f]) continue;
    union(mesh.indices[3 * f], mesh.indices[3 * f + 1]);
    union(mesh.indices[3 * f], mesh.indices[3 * f + 2]);
  }
  const faces = new Int32Array(mesh.vertexCount);
  for (let f = 0; f < mesh.faceCount; f++) if (keep[f]) faces[find(mesh.indices[3 * f])]++;
  let components = 0;
  let removed = 0;
  for (let v = 0; v < mesh.vertexCount; v++) if (parent[v] === v && faces[v] > 0 && faces[v] < minFaces) components++;
  for (let f = 0; f < mesh.faceCount; f++) {
    if (keep[f] && faces[find(mesh.indices[3 * f])] < minFaces) {
      keep[f] = 0;
      removed++;
    }
  }
  return { components, faces: removed };
}

function compact(mesh: PlyMesh, keep: Uint8Array): PlyMesh {
  const remap = new Int32Array(mesh.vertexCount).fill(-1);
  let faceCount = 0;
  for (let f = 0; f < mesh.faceCount; f++) if (keep[f]) faceCount++;
  const indices = new Uint32Array(3 * faceCount);
  let vertexCount = 0;
  let n = 0;
  for (let f = 0; f < mesh.faceCount; f++) {
    if (!keep[f]) continue;
    for (let k = 0; k < 3; k++) {
      const v = mesh.indices[3 * f + k];
      if (remap[v] < 0) remap[v] = vertexCount++;
      indices[n++] = remap[v];
    }
  }
  const positions = new Float64Array(3 * vertexCount);
  const colors = mesh.colors ? new Uint8Array(3 * vertexCount) : null;
  const values = mesh.values ? new Float32Array(vertexCount) : null;
  const normals = mesh.normals ? new Float32Array(3 * vertexCount) : null;
  for (let v = 0; v < mesh.vertexCount; v++) {
    const w = remap[v];
    if (w < 0) continue;
    for (let k = 0; k < 3; k++) positions[3 * w + k] = mesh.positions[3 * v + k];
    if (colors) for (let k = 0; k < 3; k++) colors[3 * w + k] = mesh.colors![3 * v + k];
    if (normals) for (let k = 0; k < 3; k++) normals[3 * w + k] = mesh.normals![3 * v + k];
    if (values) values[w] = mesh.values![v];
  }
  return { vertexCount, positions, colors, normals, values, faceCount, indices };
}

function median(values: Float32Array): number {
  const sorted = Float32Array.from(values).sort();
  return sorted[sorted.length >> 1];
}
