// A segment's points as plain coordinate arrays, and the few things the fits do with them
// (projections on an axis, a PCA), in plain loops: they run for every fit.
import type { Vec3 } from './detection-types.ts';
import { Moments3, eigenSymmetric3 } from './geometry.ts';
import type { LocalCloud } from './local-cloud.ts';

/** Local coordinates of the listed points, relative to their first point (precision). */
export function gather(cloud: LocalCloud, points: ArrayLike<number>): { xs: Float64Array; ys: Float64Array; zs: Float64Array; origin: Vec3 } {
  const n = points.length;
  const origin: Vec3 = [cloud.x[points[0]], cloud.y[points[0]], cloud.z[points[0]]];
  const xs = new Float64Array(n), ys = new Float64Array(n), zs = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    xs[k] = cloud.x[points[k]] - origin[0];
    ys[k] = cloud.y[points[k]] - origin[1];
    zs[k] = cloud.z[points[k]] - origin[2];
  }
  return { xs, ys, zs, origin };
}

/** values[k] for the listed k. */
export function pick(values: Float64Array, subset: number[]): Float64Array {
  const out = new Float64Array(subset.length);
  for (let i = 0; i < subset.length; i++) out[i] = values[subset[i]];
  return out;
}

/** Coordinates along `axis` of all the points, or of the listed ones (plain loops: this runs often). */
export function project(xs: Float64Array, ys: Float64Array, zs: Float64Array, axis: Vec3, subset?: number[]): Float64Array {
  const [ax, ay, az] = axis;
  if (subset) {
    const out = new Float64Array(subset.length);
    for (let i = 0; i < subset.length; i++) {
      const k = subset[i];
      out[i] = xs[k] * ax + ys[k] * ay + zs[k] * az;
    }
    return out;
  }
  const out = new Float64Array(xs.length);
  for (let k = 0; k < xs.length; k++) out[k] = xs[k] * ax + ys[k] * ay + zs[k] * az;
  return out;
}

export function pca(xs: Float64Array, ys: Float64Array, zs: Float64Array, subset: number[]): { mean: Vec3; values: Vec3; vectors: [Vec3, Vec3, Vec3] } {
  const m = new Moments3();
  for (const k of subset) m.add(xs[k], ys[k], zs[k]);
  return { mean: m.mean(), ...eigenSymmetric3(m.covariance()) };
}
