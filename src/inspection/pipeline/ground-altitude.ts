// `ground_reference_altitude` of an inspection: the height of the ground at the asset, taken from
// the reconstruction's point cloud rather than left at 0 (issue 12). Points within a horizontal
// radius of the asset's position (output system, as clipping measures it) are gathered, starting
// at 20 m and widening to 50 m and 100 m until at least MIN_POINTS are found; the ground is their
// 5th percentile of height: low enough to ignore the asset and whatever stands on the ground,
// high enough that a few points reconstructed below the ground (mismatches) do not decide it.
// Without an asset position (or with no point within 100 m) the whole cloud's 5th percentile is
// used. Heights are those of the output system's vertical axis (EGM96 height for the default UTM
// system), in metres (unit_factor applied). With no point cloud (exif engine, or one that cannot
// be read) nothing is computed and the value stays as it was ("0.000" for a new inspection).
import { clipByRadius, type PointCloud } from '../../shared/pointcloud/index.ts';

export const GROUND_RADII_M = [20, 50, 100] as const;
export const GROUND_PERCENTILE = 5;
export const MIN_POINTS = 20;

export interface GroundReference {
  /** Metres, in the output system's vertical reference. */
  altitude_m: number;
  method: 'points_around_asset' | 'whole_point_cloud';
  /** Horizontal radius used around the asset, metres (null: whole cloud). */
  radius_m: number | null;
  points: number;
  percentile: number;
}

/** The `percentile` (0-100) of `values` (nearest rank); NaN for none. */
export function percentile(values: Float64Array | number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

function heights(cloud: PointCloud): Float64Array {
  const z = new Float64Array(cloud.count);
  for (let i = 0; i < cloud.count; i++) z[i] = cloud.positions[3 * i + 2];
  return z;
}

/**
 * The ground height at `center` (x, y in the cloud's system; null: unknown) from `cloud`; null for
 * an empty cloud. `unitFactor`: metres per unit of the system.
 */
export function groundReference(cloud: PointCloud, center: { x: number; y: number } | null, unitFactor = 1): GroundReference | null {
  if (cloud.count === 0) return null;
  if (center) {
    for (const radius of GROUND_RADII_M) {
      const near = clipByRadius(cloud, center, radius / unitFactor);
      if (near.count >= MIN_POINTS) {
        return { altitude_m: percentile(heights(near), GROUND_PERCENTILE) * unitFactor, method: 'points_around_asset', radius_m: radius, points: near.count, percentile: GROUND_PERCENTILE };
      }
    }
  }
  return { altitude_m: percentile(heights(cloud), GROUND_PERCENTILE) * unitFactor, method: 'whole_point_cloud', radius_m: null, points: cloud.count, percentile: GROUND_PERCENTILE };
}
