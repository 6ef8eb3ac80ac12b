// A lighter copy of the mesh for the web viewer's 3D tab (a browser draws a few hundred thousand
// triangles smoothly, not the millions of a dense survey mesh). Vertex clustering (Rossignac and
// Borrel): the vertices in each cube of a grid merge into one at their mean position and colour;
// triangles whose corners fall in fewer than three cubes vanish, duplicates are dropped. It is one
// pass over the mesh and never moves a vertex farther than a cube's diagonal, which is what a
// preview needs; it does not keep sharp features as well as edge collapse would.
//
// The cube side is first set from the mesh's area so that about `maxFaces` triangles remain (a
// surface meshed at side s has about 2 * area / s^2 triangles), then grown by 25 % until the
// result fits.
import type { PlyMesh } from './mesh-ply.ts';

function triangleArea(p: Float64Array, a: number, b: number, c: number): number {
  const ux = p[3 * b] - p[3 * a];
  const uy = p[3 * b + 1] - p[3 * a + 1];
  const uz = p[3 * b + 2] - p[3 * a + 2];
  const vx = p[3 * c] - p[3 * a];
  const vy = p[3 * c + 1] - p[3 * a + 1];
  const vz = p[3 * c + 2] - p[3 * a + 2];
  return 0.5 * Math.hypot(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx);
}

/** The mesh itself when it has at most `maxFaces` triangles, else a clustered copy with at most that many. */
export function decimateMesh(mesh: PlyMesh, maxFaces: number): PlyMesh {
  if (mesh.faceCount <= maxFaces) return mesh;
  let area = 0;
  for (let f = 0; f < mesh.faceCount; f++) area += triangleArea(mesh.positions, mesh.indices[3 * f], mesh.indices[3 * f + 1], mesh.indices[3 * f + 2]);
  let side = Math.sqrt((2 * area) / maxFaces);
  for (let attempt = 0; attempt < 40; attempt++, side *= 1.25) {
    const result = cluster(mesh, side);
    if (result.faceCount <= maxFaces) return result;
  }
  throw new Error(`the mesh could not be reduced to ${maxFaces} faces`);
}

/** Vertex clustering on a grid of cubes of the given side. */
export function cluster(mesh: PlyMesh, side: number): PlyMesh {
  const p = mesh.positions;
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  for (let v = 0; v < mesh.vertexCount; v++) {
    for (let k = 0; k < 3; k++) {
      min[k] = Math.min(min[k], p[3 * v + k]);
      max[k] = Math.max(max[k], p[3 * v + k]);
    }
  }
  const [nx, ny] = [0, 1].map((k) => Math.floor((max[k] - min[k]) / side) + 1);
  const cellOf = new Map<number, number>();
  const clusterOf = new Int32Array(mesh.vertexCount);
  const sums: number[] = [];
  const colorSums: number[] = [];
  const counts: number[] = [];
  for (let v = 0; v < mesh.vertexCount; v++) {
    const key = Math.floor((p[3 * v] - min[0]) / side) + nx * (Math.floor((p[3 * v + 1] - min[1]) / side) + ny * Math.floor((p[3 * v + 2] - min[2]) / side));
    let c = cellOf.get(key);
    if (c === undefined) {
      c = counts.length;
      cellOf.set(key, c);
      counts.push(0);
      sums.push(0, 0, 0);
      colorSums.push(0, 0, 0);
    }
    clusterOf[v] = c;
    counts[c]++;
    for (let k = 0; k < 3; k++) sums[3 * c + k] += p[3 * v + k];
    if (mesh.colors) for (let k = 0; k < 3; k++) colorSums[3 * c + k] += mesh.colors[3 * v + k];
  }
  const faces: number[] = [];
  const seen = new Set<number | string>();
  const n = counts.length;
  const numericKeys = n ** 3 < Number.MAX_SAFE_INTEGER;
  for (let f = 0; f < mesh.faceCount; f++) {
    const a = clusterOf[mesh.indices[3 * f]];
    const b = clusterOf[mesh.indices[3 * f + 1]];
    const c = clusterOf[mesh.indices[3 * f + 2]];
    if (a === b || b === c || a === c) continue;
    const [lo, mid, hi] = [a, b, c].sort((x, y) => x - y);
    const key = numericKeys ? (lo * n + mid) * n + hi : `${lo},${mid},${hi}`;
    if (seen.has(key)) continue;
    seen.add(key);
    faces.push(a, b, c);
  }
  // Only the clusters a face uses stay.
  const remap = new Int32Array(counts.length).fill(-1);
  let vertexCount = 0;
  for (const c of faces) if (remap[c] < 0) remap[c] = vertexCount++;
  const positions = new Float64Array(3 * vertexCount);
  const colors = mesh.colors ? new Uint8Array(3 * vertexCount) : null;
  for (let c = 0; c < counts.length; c++) {
    const w = remap[c];
    if (w < 0) continue;
    for (let k = 0; k < 3; k++) positions[3 * w + k] = sums[3 * c + k] / counts[c];
    if (colors) for (let k = 0; k < 3; k++) colors[3 * w + k] = Math.round(colorSums[3 * c + k] / counts[c]);
  }
  return { vertexCount, positions, colors, normals: null, values: null, faceCount: faces.length / 3, indices: Uint32Array.from(faces, (c) => remap[c]) };
}
