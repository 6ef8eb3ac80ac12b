// An in-memory point cloud: positions as absolute coordinates (Float64, so that projected
// coordinates of millions of metres keep millimetres) and optional 8-bit RGB colours.
export type Vec3 = [number, number, number];

export interface PointCloud {
  count: number;
  /** x, y, z of point i at [3i, 3i + 1, 3i + 2], in the cloud's coordinate system. */
  positions: Float64Array;
  /** r, g, b (0-255) of point i at [3i, 3i + 1, 3i + 2]; null when the cloud has no colours. */
  colors: Uint8Array | null;
}

export function createPointCloud(count: number, withColors: boolean): PointCloud {
  return { count, positions: new Float64Array(count * 3), colors: withColors ? new Uint8Array(count * 3) : null };
}

export function pointAt(cloud: PointCloud, index: number): Vec3 {
  const p = cloud.positions;
  return [p[3 * index], p[3 * index + 1], p[3 * index + 2]];
}

export interface Bounds3 {
  min: Vec3;
  max: Vec3;
}

/** Bounding box; min > max (Infinity / -Infinity) for an empty cloud. */
export function boundsOf(cloud: PointCloud): Bounds3 {
  const min: Vec3 = [Infinity, Infinity, Infinity];
  const max: Vec3 = [-Infinity, -Infinity, -Infinity];
  const p = cloud.positions;
  for (let i = 0; i < cloud.count; i++) {
    for (let a = 0; a < 3; a++) {
      const v = p[3 * i + a];
      if (v < min[a]) min[a] = v;
      if (v > max[a]) max[a] = v;
    }
  }
  return { min, max };
}

/** The points whose indices are given, in that order. */
export function subset(cloud: PointCloud, indices: ArrayLike<number>): PointCloud {
  const out = createPointCloud(indices.length, cloud.colors !== null);
  for (let j = 0; j < indices.length; j++) {
    const i = indices[j];
    out.positions.set(cloud.positions.subarray(3 * i, 3 * i + 3), 3 * j);
    if (cloud.colors) out.colors!.set(cloud.colors.subarray(3 * i, 3 * i + 3), 3 * j);
  }
  return out;
}
