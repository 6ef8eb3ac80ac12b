// A fitted item's angles and corners as the inventory reports them (detection-types.ts, and the
// generator's truth: scripts/tower-flight/scene-types.ts `Equipment`, scene-geometry.ts
// `equipmentAxes`):
// - azimuth: the heading of the front face's outward normal (the boresight), clockwise from north;
//   the cloud's frame is a grid (UTM), whose north lies `gridConvergenceDeg` east of true north,
//   so a grid heading a is the true heading a + gridConvergenceDeg;
// - downtilt: the boresight's angle below the horizon (the top leans forward, away from the mast);
// - plumb: the sideways lean of the long axis after the downtilt, positive when its top leans to
//   the item's right seen from behind: the long axis is up0·cos(p) + right0·sin(p), with right0
//   the horizontal direction to the right of the azimuth, so sin(p) = up · right0.
import type { Vec3 } from './detection-types.ts';
import { DEG, add, dot } from './geometry.ts';
import type { FittedShape } from './box-fit.ts';

export interface Orientation {
  azimuthDeg: number;
  downtiltDeg: number;
  plumbDeg: number;
}

export const normaliseDeg = (deg: number) => ((deg % 360) + 360) % 360;

export function orientationOf(shape: Pick<FittedShape, 'front' | 'up'>, gridConvergenceDeg: number): Orientation {
  const { front, up } = shape;
  const gridAzimuth = Math.atan2(front[0], front[1]) / DEG;
  const downtiltDeg = Math.asin(Math.max(-1, Math.min(1, -front[2]))) / DEG;
  const az = gridAzimuth * DEG;
  const right0: Vec3 = [Math.cos(az), -Math.sin(az), 0];
  const plumbDeg = Math.asin(Math.max(-1, Math.min(1, dot(up, right0)))) / DEG;
  return { azimuthDeg: normaliseDeg(gridAzimuth + gridConvergenceDeg), downtiltDeg, plumbDeg };
}

/**
 * The box's eight corners (dish: of its bounding box), moved by `offset` (local to input frame).
 * Corner i is on the right side when bit 0 of i is set, the top when bit 1 is, the front when bit 2
 * is: an order the API publishes (computation.box_corners_3d) and the console draws edges by.
 */
export function cornersOf(shape: Pick<FittedShape, 'centre' | 'front' | 'up' | 'right' | 'width' | 'height' | 'depth'>, offset: Vec3): Vec3[] {
  const out: Vec3[] = [];
  for (const f of [-1, 1]) {
    for (const u of [-1, 1]) {
      for (const r of [-1, 1]) {
        const p = add(add(add(shape.centre, shape.right, (r * shape.width) / 2), shape.up, (u * shape.height) / 2), shape.front, (f * shape.depth) / 2);
        out.push(add(p, offset));
      }
    }
  }
  return out;
}
