// A microwave dish fitted as a disc (issue 36 §3): its boresight is the axis of least spread of
// its points (a shroud and a radome much wider than deep), turned away from the tower; its
// diameter that of a robust circle through the points seen along that axis (the shroud's rim);
// its depth the extent of the points along it, less the noise either side. The generator's truth
// and the inventory give a dish's width and height as its diameter.
import { fitCircle } from './circle-fit.ts';
import type { FittedShape } from './box-fit.ts';
import type { Vec3 } from './detection-types.ts';
import { add, cross, dot, normalise, quantile, scale } from './geometry.ts';
import type { LocalCloud } from './local-cloud.ts';
import { gather, pca, project } from './point-frame.ts';

/** Fits a dish (module comment); null when the points are not disc-like. */
export function fitDisc(cloud: LocalCloud, points: ArrayLike<number>, outward: Vec3, noise: number): FittedShape | null {
  const n = points.length;
  if (n < 30) return null;
  const { xs, ys, zs, origin } = gather(cloud, points);
  const all = Array.from({ length: n }, (_, k) => k);
  const { values, vectors, mean } = pca(xs, ys, zs, all);
  let front = vectors[2];
  if (dot(front, outward) < 0) front = scale(front, -1);
  const horizontal = normalise([front[1], -front[0], 0]);
  const right = Math.hypot(front[0], front[1]) > 0.1 ? horizontal : normalise(cross(front, [0, 0, 1]));
  const up = cross(right, front);
  // The shroud seen along the axis: a circle.
  const pr = project(xs, ys, zs, right), pu = project(xs, ys, zs, up);
  const fit = fitCircle(pr, pu, n, { cx: dot(mean, right), cy: dot(mean, up), r: Math.sqrt(values[0] + values[1]) }, Math.sqrt(values[0]), Math.max(3 * noise, 0.02));
  if (!fit || fit.coverage < 0.5) return null;
  const t = project(xs, ys, zs, front);
  // Points span from the back to the radome's dome; the box's depth is rim to back.
  const depth = Math.max(quantile(t, 0.98) - quantile(t, 0.02) - 2 * noise, 0.02);
  const tMid = (quantile(t, 0.98) + quantile(t, 0.02)) / 2;
  const local = add(add(scale(right, fit.cx), up, fit.cy), front, tMid);
  return {
    shape: 'disc',
    centre: add(local, origin),
    front,
    up,
    right,
    width: 2 * fit.r,
    height: 2 * fit.r,
    depth,
    members: all,
    facePoints: fit.inliers,
    frontPoints: fit.inliers,
    backPoints: 0,
    faceSpread: fit.scale / 4.685,
    fill: fit.coverage,
  };
}
