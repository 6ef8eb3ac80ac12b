// Ray against triangle mesh: a bounding-volume hierarchy over the triangles and the first hit of a
// ray (Möller–Trumbore per triangle), for coords_3d on the reconstruction's mesh
// (inspection annotations/coords-3d.ts).
//
// The hierarchy is built once per mesh (on a worker thread: mesh-loader.ts) by splitting the
// triangles at the median centroid along the longest axis of their centroids' box, down to leaves
// of at most LEAF_SIZE triangles: O(n log n), balanced whatever the mesh (a facade's long thin
// triangles included), with no tuning. A query then visits the boxes the ray crosses, nearest
// first, and stops when the next box lies beyond the nearest hit so far: microseconds on millions
// of triangles. Everything is in flat typed arrays, so the structure crosses threads by transfer
// (no copy, no serialisation) and costs about 60 bytes a triangle.
// Triangles are two-sided: a Poisson mesh's normals may face either way, and a wall is a wall.
// Coordinates stay doubles, as the delivered PLY holds them (absolute UTM northings included):
// the edge vectors are differences of nearby points, so the test keeps its precision.
import type { Vec3 } from '../geo/rotation.ts';

/** Triangles per leaf. */
const LEAF_SIZE = 4;

export interface MeshBvh {
  /** x, y, z per vertex. */
  positions: Float64Array;
  /** Three vertex indices per triangle, reordered so that each leaf's triangles are contiguous. */
  indices: Uint32Array;
  /** Per node: min x, y, z then max x, y, z. */
  bounds: Float64Array;
  /** Per node: [first triangle, 0, count] for a leaf (count > 0), [left child, right child, 0] for an inner node; node 0 is the root. */
  links: Uint32Array;
}

export interface MeshHit {
  /** Distance along the (unit) direction. */
  t: number;
  point: Vec3;
  /** Index of the triangle in `indices` of the hierarchy. */
  triangle: number;
}

/** Builds the hierarchy of the triangles `indices` (three vertex indices into `positions` each). */
export function buildMeshBvh(positions: Float64Array, indices: Uint32Array): MeshBvh {
  const n = Math.floor(indices.length / 3);
  const order = new Uint32Array(n);
  const centroids = new Float64Array(3 * n);
  for (let f = 0; f < n; f++) {
    order[f] = f;
    for (let k = 0; k < 3; k++) centroids[3 * f + k] = (positions[3 * indices[3 * f] + k] + positions[3 * indices[3 * f + 1] + k] + positions[3 * indices[3 * f + 2] + k]) / 3;
  }
  // A median split of more than LEAF_SIZE triangles halves them, so leaves hold 2 to LEAF_SIZE
  // triangles: at most n / 2 leaves, n - 1 nodes.
  const capacity = Math.max(1, n);
  const bounds = new Float64Array(6 * capacity);
  const links = new Uint32Array(3 * capacity);
  let nodes = 0;
  // Work stack of [node, first, end]; a node's slot is taken when it is pushed.
  const stack: number[] = n ? [nodes++, 0, n] : [];
  while (stack.length) {
    const end = stack.pop()!;
    const first = stack.pop()!;
    const node = stack.pop()!;
    boxOf(positions, indices, order, first, end, bounds, node);
    if (end - first <= LEAF_SIZE) {
      links.set([first, 0, end - first], 3 * node);
      continue;
    }
    const axis = longestCentroidAxis(centroids, order, first, end);
    const middle = (first + end) >>> 1;
    select(order, centroids, axis, first, end - 1, middle);
    const left = nodes++;
    const right = nodes++;
    links.set([left, right, 0], 3 * node);
    stack.push(left, first, middle, right, middle, end);
  }
  return { positions, indices: reorderTriangles(indices, order), bounds: bounds.slice(0, 6 * nodes), links: links.slice(0, 3 * nodes) };
}

function reorderTriangles(indices: Uint32Array, order: Uint32Array): Uint32Array {
  const sorted = new Uint32Array(3 * order.length);
  for (let i = 0; i < order.length; i++) {
    const f = order[i];
    sorted[3 * i] = indices[3 * f];
    sorted[3 * i + 1] = indices[3 * f + 1];
    sorted[3 * i + 2] = indices[3 * f + 2];
  }
  return sorted;
}

function boxOf(positions: Float64Array, indices: Uint32Array, order: Uint32Array, first: number, end: number, bounds: Float64Array, node: number): void {
  let [x0, y0, z0, x1, y1, z1] = [Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity];
  for (let i = first; i < end; i++) {
    const f = order[i];
    for (let c = 0; c < 3; c++) {
      const v = 3 * indices[3 * f + c];
      const x = positions[v];
      const y = positions[v + 1];
      const z = positions[v + 2];
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      if (z < z0) z0 = z;
      if (z > z1) z1 = z;
    }
  }
  bounds.set([x0, y0, z0, x1, y1, z1], 6 * node);
}

function longestCentroidAxis(centroids: Float64Array, order: Uint32Array, first: number, end: number): number {
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (let i = first; i < end; i++) {
    const c = 3 * order[i];
    for (let k = 0; k < 3; k++) {
      const v = centroids[c + k];
      if (v < lo[k]) lo[k] = v;
      if (v > hi[k]) hi[k] = v;
    }
  }
  const extent = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
  return extent[0] >= extent[1] && extent[0] >= extent[2] ? 0 : extent[1] >= extent[2] ? 1 : 2;
}

/** Quickselect (Hoare partition, middle pivot): order[k] gets the k-th centroid along `axis` within [left, right]. */
function select(order: Uint32Array, centroids: Float64Array, axis: number, left: number, right: number, k: number): void {
  while (left < right) {
    const pivot = centroids[3 * order[(left + right) >>> 1] + axis];
    let i = left;
    let j = right;
    while (i <= j) {
      while (centroids[3 * order[i] + axis] < pivot) i++;
      while (centroids[3 * order[j] + axis] > pivot) j--;
      if (i <= j) {
        const swap = order[i];
        order[i] = order[j];
        order[j] = swap;
        i++;
        j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else return;
  }
}

/**
 * The first triangle the ray meets at a distance in (tMin, tMax), or null. `direction` need not
 * be a unit vector; t is then in its units.
 */
export function intersectRay(bvh: MeshBvh, origin: Vec3, direction: Vec3, tMin = 0, tMax = Infinity): MeshHit | null {
  if (!bvh.links.length) return null;
  const [ox, oy, oz] = origin;
  const [dx, dy, dz] = direction;
  const ix = 1 / dx;
  const iy = 1 / dy;
  const iz = 1 / dz;
  let best = tMax;
  let bestTriangle = -1;
  const stack = [0];
  const { bounds, links, positions, indices } = bvh;
  while (stack.length) {
    const node = stack.pop()!;
    const near = boxEntry(bounds, node, ox, oy, oz, ix, iy, iz, tMin, best);
    if (near === null) continue;
    const count = links[3 * node + 2];
    if (count > 0) {
      const first = links[3 * node];
      for (let f = first; f < first + count; f++) {
        const t = triangleHit(positions, indices, f, ox, oy, oz, dx, dy, dz);
        if (t > tMin && t < best) {
          best = t;
          bestTriangle = f;
        }
      }
      continue;
    }
    // Visit the nearer child first: its hits cut the farther child's box off.
    const left = links[3 * node];
    const right = links[3 * node + 1];
    const tl = boxEntry(bounds, left, ox, oy, oz, ix, iy, iz, tMin, best);
    const tr = boxEntry(bounds, right, ox, oy, oz, ix, iy, iz, tMin, best);
    if (tl !== null && tr !== null) {
      if (tl <= tr) stack.push(right, left);
      else stack.push(left, right);
    } else if (tl !== null) stack.push(left);
    else if (tr !== null) stack.push(right);
  }
  if (bestTriangle < 0) return null;
  return { t: best, point: [ox + best * dx, oy + best * dy, oz + best * dz], triangle: bestTriangle };
}

/** Where the ray enters the node's box within (tMin, tMax) (slab test), or null when it misses it there. */
function boxEntry(b: Float64Array, node: number, ox: number, oy: number, oz: number, ix: number, iy: number, iz: number, tMin: number, tMax: number): number | null {
  const o = 6 * node;
  let t0 = tMin;
  let t1 = tMax;
  let a = (b[o] - ox) * ix;
  let c = (b[o + 3] - ox) * ix;
  // NaN (a zero direction component on the slab's plane) compares false and leaves t0/t1 as they are.
  if (a > c) [a, c] = [c, a];
  if (a > t0) t0 = a;
  if (c < t1) t1 = c;
  a = (b[o + 1] - oy) * iy;
  c = (b[o + 4] - oy) * iy;
  if (a > c) [a, c] = [c, a];
  if (a > t0) t0 = a;
  if (c < t1) t1 = c;
  a = (b[o + 2] - oz) * iz;
  c = (b[o + 5] - oz) * iz;
  if (a > c) [a, c] = [c, a];
  if (a > t0) t0 = a;
  if (c < t1) t1 = c;
  return t0 <= t1 ? t0 : null;
}

/** Möller–Trumbore: the distance along the ray to triangle f, or NaN when it misses (both faces count). */
function triangleHit(p: Float64Array, indices: Uint32Array, f: number, ox: number, oy: number, oz: number, dx: number, dy: number, dz: number): number {
  const a = 3 * indices[3 * f];
  const b = 3 * indices[3 * f + 1];
  const c = 3 * indices[3 * f + 2];
  const e1x = p[b] - p[a];
  const e1y = p[b + 1] - p[a + 1];
  const e1z = p[b + 2] - p[a + 2];
  const e2x = p[c] - p[a];
  const e2y = p[c + 1] - p[a + 1];
  const e2z = p[c + 2] - p[a + 2];
  const px = dy * e2z - dz * e2y;
  const py = dz * e2x - dx * e2z;
  const pz = dx * e2y - dy * e2x;
  const det = e1x * px + e1y * py + e1z * pz;
  if (det === 0 || !Number.isFinite(det)) return NaN;
  const inv = 1 / det;
  const sx = ox - p[a];
  const sy = oy - p[a + 1];
  const sz = oz - p[a + 2];
  const u = (sx * px + sy * py + sz * pz) * inv;
  if (u < 0 || u > 1) return NaN;
  const qx = sy * e1z - sz * e1y;
  const qy = sz * e1x - sx * e1z;
  const qz = sx * e1y - sy * e1x;
  const v = (dx * qx + dy * qy + dz * qz) * inv;
  if (v < 0 || u + v > 1) return NaN;
  return (e2x * qx + e2y * qy + e2z * qz) * inv;
}
