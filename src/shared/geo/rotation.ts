// Rotation helpers for camera orientation.
//
// Quaternions are unit quaternions in the Hamilton convention, scalar first: [w, x, y, z].
// A quaternion q rotates a vector v by v' = q ⊗ (0, v) ⊗ q*; `multiplyQuaternions(a, b)` is the
// rotation "b, then a".
//
// Frames used by `cameraToEnuQuaternion`:
// - camera frame (the photogrammetry / OpenCV convention): x to the right of the image, y down the
//   image, z forward along the optical axis;
// - world frame: local East-North-Up (ENU) at the camera, x = east, y = north, z = up.
//
// Gimbal angles (the DJI `drone-dji:Gimbal*Degree` convention, degrees):
// - yaw: heading of the optical axis, clockwise from north seen from above (0 = north, 90 = east);
// - pitch: elevation of the optical axis, 0 = horizontal, positive up, -90 = looking straight down;
// - roll: rotation about the optical axis, positive = the right side of the image goes down
//   (clockwise as seen from behind the camera).
// They are applied intrinsically in the order yaw, pitch, roll (Tait-Bryan Z-Y-X, as an aircraft's
// heading, elevation and bank).

export type Quaternion = [number, number, number, number];
export type Vec3 = [number, number, number];

export interface GimbalAngles {
  /** Degrees clockwise from north. */
  yaw: number;
  /** Degrees; 0 = horizontal, -90 = looking straight down. */
  pitch: number;
  /** Degrees; positive = right side of the image down. */
  roll: number;
}

const DEG = Math.PI / 180;

/** Rotation by `angleRad` (right-hand rule) about `axis` (need not be normalized, must be non-zero). */
export function quaternionFromAxisAngle(axis: Vec3, angleRad: number): Quaternion {
  const n = Math.hypot(axis[0], axis[1], axis[2]);
  const s = Math.sin(angleRad / 2) / n;
  return [Math.cos(angleRad / 2), axis[0] * s, axis[1] * s, axis[2] * s];
}

/** Hamilton product a ⊗ b: the rotation b followed by the rotation a. */
export function multiplyQuaternions(a: Quaternion, b: Quaternion): Quaternion {
  const [aw, ax, ay, az] = a;
  const [bw, bx, by, bz] = b;
  return [
    aw * bw - ax * bx - ay * by - az * bz,
    aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw,
  ];
}

/** Scales to unit length and picks the representative with w >= 0 (q and -q are the same rotation). */
export function normalizeQuaternion(q: Quaternion): Quaternion {
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  if (!(n > 0) || !Number.isFinite(n)) throw new RangeError('cannot normalize a zero or non-finite quaternion');
  const s = q[0] < 0 ? -1 / n : 1 / n;
  return [q[0] * s, q[1] * s, q[2] * s, q[3] * s];
}

export function conjugateQuaternion(q: Quaternion): Quaternion {
  return [q[0], -q[1], -q[2], -q[3]];
}

/** Rotates v by the unit quaternion q. */
export function rotateVector(q: Quaternion, v: Vec3): Vec3 {
  const [w, x, y, z] = q;
  // v' = v + 2w (u × v) + 2 u × (u × v), with u = (x, y, z)
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [
    v[0] + w * tx + (y * tz - z * ty),
    v[1] + w * ty + (z * tx - x * tz),
    v[2] + w * tz + (x * ty - y * tx),
  ];
}

/** Row-major 3x3 rotation matrix of the unit quaternion q (columns are the images of the basis vectors). */
export function quaternionToMatrix(q: Quaternion): [Vec3, Vec3, Vec3] {
  const [w, x, y, z] = q;
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
  ];
}

// Camera at yaw = pitch = roll = 0: looking north, level. Camera x (right) -> east, camera y (down)
// -> down (-up), camera z (forward) -> north. That is a rotation of -90 degrees about the x axis.
const CAMERA_LEVEL_NORTH: Quaternion = quaternionFromAxisAngle([1, 0, 0], -Math.PI / 2);

/**
 * Orientation of a camera as the unit quaternion [w, x, y, z] that rotates vectors from the camera
 * frame (x right, y down, z along the optical axis) to the local East-North-Up frame:
 * v_enu = q ⊗ v_cam ⊗ q*.
 *
 * Angles in degrees: yaw clockwise from north, pitch 0 = horizontal / -90 = straight down, roll
 * positive = right side of the image down; applied intrinsically as yaw, then pitch, then roll.
 * Examples: yaw 0, pitch 0 maps camera z to (0, 1, 0) (north); pitch -90 maps camera z to (0, 0, -1)
 * and, with yaw 0, the top of the image (camera -y) to north; yaw 90, pitch 0 maps camera z to east.
 * The returned quaternion has w >= 0.
 */
export function cameraToEnuQuaternion(angles: GimbalAngles): Quaternion {
  const qYaw = quaternionFromAxisAngle([0, 0, 1], -angles.yaw * DEG); // clockwise seen from above
  const qPitch = quaternionFromAxisAngle([1, 0, 0], angles.pitch * DEG); // about the level right axis (east at yaw 0)
  const qRoll = quaternionFromAxisAngle([0, 1, 0], angles.roll * DEG); // about the forward axis (north at yaw 0)
  const body = multiplyQuaternions(qYaw, multiplyQuaternions(qPitch, qRoll));
  return normalizeQuaternion(multiplyQuaternions(body, CAMERA_LEVEL_NORTH));
}

/** Direction of the optical axis (camera +z) in ENU for the given quaternion from `cameraToEnuQuaternion`. */
export function opticalAxisEnu(q: Quaternion): Vec3 {
  return rotateVector(q, [0, 0, 1]);
}
