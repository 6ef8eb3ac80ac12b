// Geometric queries on a point cloud: clipping to a horizontal radius, and picking the first
// reconstructed point along a ray (the 3D position of a photo pixel, with `pixelRay`).
import { subset, type PointCloud, type Vec3 } from './point-cloud.ts';

/**
 * The points whose horizontal distance (x, y only; z is ignored) to `center` is at most
 * `radius`, in the cloud's order. Coordinates and radius in the cloud's unit (metres in a metric
 * system).
 */
export function clipByRadius(cloud: PointCloud, center: { x: number; y: number }, radius: number): PointCloud {
  if (!(radius >= 0)) throw new RangeError('radius must be a non-negative number');
  const r2 = radius * radius;
  const keep: number[] = [];
  const p = cloud.positions;
  for (let i = 0; i < cloud.count; i++) {
    const dx = p[3 * i] - center.x;
    const dy = p[3 * i + 1] - center.y;
    if (dx * dx + dy * dy <= r2) keep.push(i);
  }
  return subset(cloud, keep);
}

export interface RayHit {
  index: number;
  point: Vec3;
  /** Distance from the origin along the ray to the foot of the perpendicular from the point. */
  distanceAlongRay: number;
  /** Distance of the point from the ray. */
  distanceFromRay: number;
}

/**
 * The reconstructed point nearest to `origin` along the ray (origin + t * direction, t > 0) among
 * those within `tolerance + tolerancePerDistance * t` of the ray: what the ray meets first. With
 * `tolerancePerDistance` (the tangent of an angle) the tolerance is a cone, as a photo's pixels
 * are: a few pixels are centimetres near the camera and metres far away. Null when no point is
 * that close. `direction` need not be a unit vector. Units are the cloud's.
 */
export function pickAlongRay(cloud: PointCloud, origin: Vec3, direction: Vec3, tolerance: number, tolerancePerDistance = 0): RayHit | null {
  const n = Math.hypot(direction[0], direction[1], direction[2]);
  if (!(n > 0)) throw new RangeError('direction must be a non-zero vector');
  if (!(tolerance >= 0) || !(tolerancePerDistance >= 0)) throw new RangeError('tolerances must be non-negative numbers');
  const [dx, dy, dz] = [direction[0] / n, direction[1] / n, direction[2] / n];
  const p = cloud.positions;
  let best: RayHit | null = null;
  for (let i = 0; i < cloud.count; i++) {
    const vx = p[3 * i] - origin[0];
    const vy = p[3 * i + 1] - origin[1];
    const vz = p[3 * i + 2] - origin[2];
    const t = vx * dx + vy * dy + vz * dz;
    if (t <= 0 || (best && t >= best.distanceAlongRay)) continue;
    const ex = vx - t * dx;
    const ey = vy - t * dy;
    const ez = vz - t * dz;
    const d2 = ex * ex + ey * ey + ez * ez;
    const allowed = tolerance + tolerancePerDistance * t;
    if (d2 <= allowed * allowed) best = { index: i, point: [p[3 * i], p[3 * i + 1], p[3 * i + 2]], distanceAlongRay: t, distanceFromRay: Math.sqrt(d2) };
  }
  return best;
}
