// Spatial indexes over the local cloud, so that no stage compares every point with every other
// (the clouds hold millions): a dense grid of coarse bins (tower slabs, the ground, column
// heights), and a hash of fine voxels (equipment, neighbourhoods), both built by a counting sort of
// the point indices, O(n).
import type { LocalCloud } from './local-cloud.ts';

/** Dense bins of `cellXY` x `cellXY` x `cellZ` over the cloud's bounds; points sorted by bin. */
export class BinIndex {
  readonly nx: number;
  readonly ny: number;
  readonly nz: number;
  readonly x0: number;
  readonly y0: number;
  readonly z0: number;
  /** Point indices grouped by bin; bin b holds order[start[b]] .. order[start[b + 1] - 1]. */
  readonly order: Uint32Array;
  readonly start: Uint32Array;

  constructor(
    readonly cloud: LocalCloud,
    readonly cellXY: number,
    public cellZ: number,
  ) {
    const { x, y, z, count } = cloud;
    let minX = Infinity, minY = Infinity, minZ = Infinity, maxX = -Infinity, maxY = -Infinity, maxZ = -Infinity;
    for (let i = 0; i < count; i++) {
      if (x[i] < minX) minX = x[i];
      if (x[i] > maxX) maxX = x[i];
      if (y[i] < minY) minY = y[i];
      if (y[i] > maxY) maxY = y[i];
      if (z[i] < minZ) minZ = z[i];
      if (z[i] > maxZ) maxZ = z[i];
    }
    if (count === 0) minX = minY = minZ = maxX = maxY = maxZ = 0;
    this.x0 = minX;
    this.y0 = minY;
    this.z0 = minZ;
    this.nx = Math.max(1, Math.ceil((maxX - minX) / cellXY + 1e-9));
    this.ny = Math.max(1, Math.ceil((maxY - minY) / cellXY + 1e-9));
    // A cloud with far-flung outliers in height must not make the grid huge: coarser slabs then.
    this.cellZ = Math.max(cellZ, (maxZ - minZ) / 4000);
    this.nz = Math.max(1, Math.ceil((maxZ - minZ) / this.cellZ + 1e-9));
    const bins = this.nx * this.ny * this.nz;
    const binOf = new Uint32Array(count);
    const counts = new Uint32Array(bins + 1);
    for (let i = 0; i < count; i++) {
      const b = this.binAt(x[i], y[i], z[i]);
      binOf[i] = b;
      counts[b + 1]++;
    }
    for (let b = 0; b < bins; b++) counts[b + 1] += counts[b];
    this.start = counts;
    const fill = counts.slice(0, bins);
    this.order = new Uint32Array(count);
    for (let i = 0; i < count; i++) this.order[fill[binOf[i]]++] = i;
  }

  ix(x: number): number {
    return Math.min(this.nx - 1, Math.max(0, Math.floor((x - this.x0) / this.cellXY)));
  }
  iy(y: number): number {
    return Math.min(this.ny - 1, Math.max(0, Math.floor((y - this.y0) / this.cellXY)));
  }
  iz(z: number): number {
    return Math.min(this.nz - 1, Math.max(0, Math.floor((z - this.z0) / this.cellZ)));
  }
  binAt(x: number, y: number, z: number): number {
    return (this.iz(z) * this.ny + this.iy(y)) * this.nx + this.ix(x);
  }

  /** Calls `visit` for every point within `radius` (horizontally) of (cx, cy) with z in [zMin, zMax). */
  forEachInCylinder(cx: number, cy: number, radius: number, zMin: number, zMax: number, visit: (i: number) => void): void {
    const { x, y, z } = this.cloud;
    const r2 = radius * radius;
    const i0 = this.ix(cx - radius), i1 = this.ix(cx + radius);
    const j0 = this.iy(cy - radius), j1 = this.iy(cy + radius);
    if (zMax <= this.z0 || zMin > this.z0 + this.nz * this.cellZ) return;
    const k0 = this.iz(zMin), k1 = this.iz(zMax);
    for (let k = k0; k <= k1; k++) {
      for (let j = j0; j <= j1; j++) {
        for (let i = i0; i <= i1; i++) {
          const b = (k * this.ny + j) * this.nx + i;
          for (let s = this.start[b], e = this.start[b + 1]; s < e; s++) {
            const p = this.order[s];
            if (z[p] < zMin || z[p] >= zMax) continue;
            const dx = x[p] - cx, dy = y[p] - cy;
            if (dx * dx + dy * dy <= r2) visit(p);
          }
        }
      }
    }
  }
}

/** Open-addressing hash from integer voxel keys (exact doubles below 2^53) to voxel numbers. */
class KeyTable {
  private keys: Float64Array;
  private values: Int32Array;
  private mask: number;
  size = 0;

  constructor(expected: number) {
    let capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    this.keys = new Float64Array(capacity).fill(-1);
    this.values = new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  private slot(key: number): number {
    const lo = key % 4294967296, hi = Math.floor(key / 4294967296);
    let h = Math.imul(lo | 0, 0x9e3779b1) ^ Math.imul(hi | 0, 0x85ebca6b);
    h ^= h >>> 15;
    return h & this.mask;
  }

  get(key: number): number {
    for (let s = this.slot(key); ; s = (s + 1) & this.mask) {
      const k = this.keys[s];
      if (k === key) return this.values[s];
      if (k === -1) return -1;
    }
  }

  /** The key's value, or `value` stored for it when absent. */
  getOrSet(key: number, value: number): number {
    for (let s = this.slot(key); ; s = (s + 1) & this.mask) {
      const k = this.keys[s];
      if (k === key) return this.values[s];
      if (k === -1) {
        this.keys[s] = key;
        this.values[s] = value;
        this.size++;
        return value;
      }
    }
  }
}

// Voxel coordinates are offset so that they stay positive; 2^17 voxels per axis is 2.6 km at 2 cm.
const SPAN = 131072;
const HALF = SPAN / 2;

/** Fine voxels of a subset of the points: each voxel's points, count and centroid, and its neighbours. */
export class VoxelHash {
  readonly voxelCount: number;
  /** Per voxel: integer coordinates. */
  readonly vi: Int32Array;
  readonly vj: Int32Array;
  readonly vk: Int32Array;
  /** Per voxel: centroid. */
  readonly cx: Float32Array;
  readonly cy: Float32Array;
  readonly cz: Float32Array;
  /** Points grouped by voxel: voxel v holds order[start[v]] .. order[start[v + 1] - 1]. */
  readonly order: Uint32Array;
  readonly start: Uint32Array;
  /** Voxel of each point of the subset, in the subset's order. */
  readonly voxelOfPoint: Int32Array;
  private table: KeyTable;

  constructor(
    readonly cloud: LocalCloud,
    readonly points: Uint32Array,
    readonly size: number,
  ) {
    const { x, y, z } = cloud;
    const n = points.length;
    this.table = new KeyTable(Math.min(n, 1 << 22));
    this.voxelOfPoint = new Int32Array(n);
    const vi: number[] = [], vj: number[] = [], vk: number[] = [];
    for (let s = 0; s < n; s++) {
      const p = points[s];
      const i = Math.floor(x[p] / size), j = Math.floor(y[p] / size), k = Math.floor(z[p] / size);
      const v = this.table.getOrSet(this.key(i, j, k), vi.length);
      if (v === vi.length) {
        vi.push(i);
        vj.push(j);
        vk.push(k);
      }
      this.voxelOfPoint[s] = v;
    }
    const m = vi.length;
    this.voxelCount = m;
    this.vi = Int32Array.from(vi);
    this.vj = Int32Array.from(vj);
    this.vk = Int32Array.from(vk);
    const start = new Uint32Array(m + 1);
    for (let s = 0; s < n; s++) start[this.voxelOfPoint[s] + 1]++;
    for (let v = 0; v < m; v++) start[v + 1] += start[v];
    const fill = start.slice(0, m);
    this.order = new Uint32Array(n);
    for (let s = 0; s < n; s++) this.order[fill[this.voxelOfPoint[s]]++] = points[s];
    this.start = start;
    this.cx = new Float32Array(m);
    this.cy = new Float32Array(m);
    this.cz = new Float32Array(m);
    for (let v = 0; v < m; v++) {
      let sx = 0, sy = 0, sz = 0;
      const a = start[v], b = start[v + 1];
      for (let s = a; s < b; s++) {
        const p = this.order[s];
        sx += x[p];
        sy += y[p];
        sz += z[p];
      }
      this.cx[v] = sx / (b - a);
      this.cy[v] = sy / (b - a);
      this.cz[v] = sz / (b - a);
    }
  }

  private key(i: number, j: number, k: number): number {
    return ((k + HALF) * SPAN + (j + HALF)) * SPAN + (i + HALF);
  }

  count(v: number): number {
    return this.start[v + 1] - this.start[v];
  }

  /** The voxel at integer coordinates, or -1. */
  find(i: number, j: number, k: number): number {
    return this.table.get(this.key(i, j, k));
  }

  /** Calls `visit` for every voxel within `reach` voxels (a cube) of voxel v, v included. */
  forEachNeighbour(v: number, reach: number, visit: (u: number) => void): void {
    const i0 = this.vi[v], j0 = this.vj[v], k0 = this.vk[v];
    for (let dk = -reach; dk <= reach; dk++) {
      for (let dj = -reach; dj <= reach; dj++) {
        for (let di = -reach; di <= reach; di++) {
          const u = this.table.get(this.key(i0 + di, j0 + dj, k0 + dk));
          if (u >= 0) visit(u);
        }
      }
    }
  }
}
