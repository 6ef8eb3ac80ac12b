// `ground_reference_altitude` of an inspection: the height of the ground at the asset.
// From the cloud's DTM when there is one (issue 28, method `dtm`): the median of the DTM cells whose
// centres lie within DTM_RADIUS_M horizontally of the asset's position. The DTM is already the
// ground (what stands on it filtered out by the cloud), so no low percentile is needed; the median
// of a small disc rather than the one cell under the asset because that cell is the one the asset
// itself covered, where the ground was interpolated under it, and a median shrugs off a few cells
// of filter residue or edge artefacts; 5 m keeps it local (on a 10 % slope the disc's heights span
// +-0.5 m and their median is the centre's). A DTM coarser than the disc (no cell centre within it)
// gives its bilinear height at the asset. No DTM, no asset position, the asset outside the DTM, a
// disc less than MIN_DTM_SHARE with data, or a DTM the reader refuses: the point cloud, as below.
// From the reconstruction's point cloud otherwise (issue 12). Points within a horizontal
// radius of the asset's position (output system, as clipping measures it) are gathered, starting
// at 20 m and widening to 50 m and 100 m until at least MIN_POINTS are found; the ground is their
// 5th percentile of height: low enough to ignore the asset and whatever stands on the ground,
// high enough that a few points reconstructed below the ground (mismatches) do not decide it.
// Without an asset position (or with no point within 100 m) the whole cloud's 5th percentile is
// used. Heights are those of the output system's vertical axis (EGM96 height for the default UTM
// system), in metres (unit_factor applied). With no point cloud (exif engine, or one that cannot
// be read) nothing is computed and the value stays as it was ("0.000" for a new inspection).
import { clipByRadius, type PointCloud } from '../../shared/pointcloud/index.ts';
import { heightAt, readElevationWindow, type ElevationRaster } from '../ortho/elevation-raster.ts';

export const GROUND_RADII_M = [20, 50, 100] as const;
export const GROUND_PERCENTILE = 5;
export const MIN_POINTS = 20;
/** Radius of the disc of DTM cells around the asset, metres. */
export const DTM_RADIUS_M = 5;
/** Share of the disc's cells that must have data; below it the DTM barely saw the ground there (lund: 1 cell in 31 000) and the points decide. */
export const MIN_DTM_SHARE = 0.25;

export type GroundReference = PointGroundReference | DtmGroundReference;

export interface DtmGroundReference {
  /** Metres, in the output system's vertical reference. */
  altitude_m: number;
  method: 'dtm';
  /** Horizontal radius of the disc of cells, metres. */
  radius_m: number;
  /** DTM cells with data in the disc whose median was taken (0: the bilinear height at the asset). */
  cells: number;
  raster: { bucket: string; key: string; resolution_m: number };
}

export interface PointGroundReference {
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
export function groundReference(cloud: PointCloud, center: { x: number; y: number } | null, unitFactor = 1): PointGroundReference | null {
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

/**
 * The ground height at `center` (output system x, y) from the DTM (see the head comment); null when
 * the asset is outside it or the cells there have no data. `unitFactor`: metres per unit.
 */
export async function dtmGroundReference(dtm: ElevationRaster, center: { x: number; y: number }, unitFactor = 1): Promise<DtmGroundReference | null> {
  const [column, row] = dtm.toPixel(center.x, center.y);
  if (!(column >= 0 && row >= 0 && column <= dtm.width && row <= dtm.height)) return null;
  const [px, py] = dtm.cog.pixelSize;
  const radius = DTM_RADIUS_M / unitFactor;
  const reach = [radius / px, radius / py];
  const window = await readElevationWindow(dtm, column - reach[0] - 1, row - reach[1] - 1, column + reach[0] + 1, row + reach[1] + 1);
  const heights: number[] = [];
  let inDisc = 0;
  if (window?.level === 0) {
    for (let r = 0; r < window.height; r++) {
      for (let c = 0; c < window.width; c++) {
        const [x, y] = dtm.toOutput(window.col0 + c + 0.5, window.row0 + r + 0.5);
        if (Math.hypot(x - center.x, y - center.y) > radius) continue;
        inDisc++;
        const h = window.values[r * window.width + c];
        if (!Number.isNaN(h)) heights.push(h);
      }
    }
  }
  if (inDisc > 0 && heights.length < MIN_DTM_SHARE * inDisc) return null;
  const height = heights.length > 0 ? median(heights) : await heightAt(dtm, center.x, center.y);
  if (height === null) return null;
  const resolution = Math.round(Math.sqrt(px * py) * unitFactor * 1000) / 1000;
  return { altitude_m: height * unitFactor, method: 'dtm', radius_m: DTM_RADIUS_M, cells: heights.length, raster: { bucket: dtm.layer.bucket, key: dtm.layer.key, resolution_m: resolution } };
}

function median(values: number[]): number {
  const sorted = Float64Array.from(values).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
