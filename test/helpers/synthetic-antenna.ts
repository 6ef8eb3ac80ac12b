// A synthetic panel antenna on a tower and calibrated cameras looking at it (issue 30 §4), shared by
// test/inspection-inventory-by-hand.test.ts and test/web-inventory-by-hand.test.ts: the antenna's
// front face with a known azimuth, downtilt and lean in absolute UTM coordinates, and camera
// calibrations as processing records them (gimbal poses as ray-cast-scene.ts builds them, with
// radial distortion); marks are the face's corners projected into each photo.
import assert from 'node:assert/strict';
import { gimbalCamera } from './ray-cast-scene.ts';
import { cameraFromCalibrated, projectPoint } from '../../src/shared/pointcloud/index.ts';
import type { Vec3 } from '../../src/inspection/inventory/inventory-geometry.ts';

export const ANGLE_TOLERANCE = 0.2;
export const [E, N, Z] = [500_000, 4_500_000, 100];
/** The asset's base; the antenna's face centre stands 31.5 m above it. */
export const BASE = { x: E, y: N, z: Z };
export const TRUTH = { azimuth: 120, downtilt: 6, plumb: 2, centre: [E + 1.2, N - 0.8, Z + 31.5] as Vec3, width: 0.3, tall: 1.4 };

export const rad = (deg: number) => (deg * Math.PI) / 180;
export const add = (a: Vec3, b: Vec3, k = 1): Vec3 => [a[0] + k * b[0], a[1] + k * b[1], a[2] + k * b[2]];
const cross = (a: Vec3, b: Vec3): Vec3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];

/** The front face's corners (top-left, top-right, bottom-right, bottom-left as seen from the front) of the synthetic antenna. */
export function faceCorners(truth = TRUTH): Vec3[] {
  const az = rad(truth.azimuth);
  const dt = rad(truth.downtilt);
  const n: Vec3 = [Math.sin(az) * Math.cos(dt), Math.cos(az) * Math.cos(dt), -Math.sin(dt)];
  // Seen from the front (looking along -n), right is -n x up; the face's up completes the frame.
  const flatRight: Vec3 = [-Math.cos(az), Math.sin(az), 0];
  const flatUp = cross(n, flatRight);
  // The lean within the face: right and up turned about n by `plumb`.
  const p = rad(truth.plumb);
  const right = add([0, 0, 0], flatRight, Math.cos(p)).map((v, i) => v + Math.sin(p) * flatUp[i]) as Vec3;
  const up = add([0, 0, 0], flatUp, Math.cos(p)).map((v, i) => v - Math.sin(p) * flatRight[i]) as Vec3;
  const c = truth.centre;
  const [w, h] = [truth.width / 2, truth.tall / 2];
  return [add(add(c, right, -w), up, h), add(add(c, right, w), up, h), add(add(c, right, w), up, -h), add(add(c, right, -w), up, -h)];
}

/** A calibration (as processing records it) of a camera at `position` looking at `target` (gimbal yaw/pitch), with radial distortion. */
export function calibrationLookingAt(position: Vec3, target: Vec3) {
  const d = [target[0] - position[0], target[1] - position[1], target[2] - position[2]];
  const yaw = (Math.atan2(d[0], d[1]) * 180) / Math.PI;
  const pitch = (Math.atan2(d[2], Math.hypot(d[0], d[1])) * 180) / Math.PI;
  const cam = gimbalCamera('c', position, { yaw, pitch }, { width: 4000, height: 3000, focal: 3200 });
  // gimbalCamera's rotation is world -> camera, row-major; the calibration's is camera -> world.
  const r = cam.rotation;
  return {
    width: 4000,
    height: 3000,
    intrinsics: { fx: 3200, fy: 3200, cx: 2000, cy: 1500, k1: -0.05, k2: 0.01 },
    position_output_crs: { x: position[0], y: position[1], z: position[2] },
    rotation_matrix_output_crs: [
      [r[0], r[3], r[6]],
      [r[1], r[4], r[7]],
      [r[2], r[5], r[8]],
    ],
  };
}

/** Three drone positions 14-16 m in front of the antenna, 90° apart at most, some above, some below it. */
export const CALIBRATIONS = [
  [TRUTH.azimuth - 40, 15, 3],
  [TRUTH.azimuth + 5, 14, -2],
  [TRUTH.azimuth + 45, 16, 5],
].map(([bearing, distance, rise]) => calibrationLookingAt(add(TRUTH.centre, [Math.sin(rad(bearing)) * distance, Math.cos(rad(bearing)) * distance, rise]), TRUTH.centre));

/** The face's corners on the photo of `calibration`, in 0..1. */
export function marksOn(calibration: (typeof CALIBRATIONS)[number], corners = faceCorners()): [number, number][] {
  const camera = cameraFromCalibrated(calibration)!;
  return corners.map((p) => {
    const { u, v, depth } = projectPoint(camera, p);
    assert.ok(depth > 0 && u > 0 && v > 0 && u < camera.width && v < camera.height, 'the antenna is in the photo');
    return [u / camera.width, v / camera.height];
  });
}


/**
 * The azimuth from true north of a direction at `grid` degrees from grid north, at the test
 * fixtures' asset (46.5183 N, 6.5619 E; inspection-fixtures.ts): the service turns azimuths by the
 * meridian convergence of its UTM zone 32 (central meridian 9° E). Written here from the
 * textbook's first-order formula γ = (λ − λ0) sin φ (exact to ~0.001° this close to the
 * meridian), independently of the service's proj4 computation.
 */
export function trueAzimuthAtFixtureAsset(grid: number): number {
  const [lat, lon, centralMeridian] = [46.5183, 6.5619, 9];
  return grid + (lon - centralMeridian) * Math.sin(rad(lat));
}
