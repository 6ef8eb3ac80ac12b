// A calibrated photo camera: intrinsics (focal lengths, principal point, OpenCV-style radial and
// tangential distortion) and pose in the point cloud's coordinate system, with the two mappings
// between a photo pixel and 3D: `pixelRay` (pixel -> ray) and `projectPoint` (3D point -> pixel).
//
// Pixel coordinates: u to the right, v down, (0, 0) the top-left corner of the top-left pixel (so
// the centre of that pixel is (0.5, 0.5)), in the image as stored (before any EXIF orientation),
// as COLMAP and OpenCV count them. Camera frame: x right, y down, z along the optical axis.
import type { Vec3 } from './point-cloud.ts';

export type Matrix3 = [Vec3, Vec3, Vec3];

export interface PhotoCamera {
  width: number;
  height: number;
  fx: number;
  fy: number;
  cx: number;
  cy: number;
  /** Radial (k1, k2) and tangential (p1, p2) distortion; 0 when absent. */
  k1: number;
  k2: number;
  p1: number;
  p2: number;
  /** Projection centre, in the point cloud's coordinate system. */
  position: Vec3;
  /** Row-major rotation from the camera frame to the point cloud's axes (v_world = R v_camera). */
  rotation: Matrix3;
}

export interface Ray {
  origin: Vec3;
  /** Unit vector. */
  direction: Vec3;
}

/** The ray through pixel (u, v) of the photo: from the projection centre, in the cloud's system. */
export function pixelRay(camera: PhotoCamera, u: number, v: number): Ray {
  const [x, y] = undistort(camera, (u - camera.cx) / camera.fx, (v - camera.cy) / camera.fy);
  const R = camera.rotation;
  const d: Vec3 = [R[0][0] * x + R[0][1] * y + R[0][2], R[1][0] * x + R[1][1] * y + R[1][2], R[2][0] * x + R[2][1] * y + R[2][2]];
  const n = Math.hypot(d[0], d[1], d[2]);
  return { origin: [...camera.position] as Vec3, direction: [d[0] / n, d[1] / n, d[2] / n] };
}

/** Pixel of a 3D point, with its depth along the optical axis (negative: behind the camera). */
export function projectPoint(camera: PhotoCamera, point: Vec3): { u: number; v: number; depth: number } {
  const R = camera.rotation;
  const d: Vec3 = [point[0] - camera.position[0], point[1] - camera.position[1], point[2] - camera.position[2]];
  // camera = R^T (world - centre)
  const xc = R[0][0] * d[0] + R[1][0] * d[1] + R[2][0] * d[2];
  const yc = R[0][1] * d[0] + R[1][1] * d[1] + R[2][1] * d[2];
  const zc = R[0][2] * d[0] + R[1][2] * d[1] + R[2][2] * d[2];
  const [xd, yd] = distort(camera, xc / zc, yc / zc);
  return { u: camera.fx * xd + camera.cx, v: camera.fy * yd + camera.cy, depth: zc };
}

/** Whether pixel (u, v) lies inside the image. */
export function insideImage(camera: PhotoCamera, u: number, v: number): boolean {
  return u >= 0 && v >= 0 && u < camera.width && v < camera.height;
}

function distort(c: PhotoCamera, x: number, y: number): [number, number] {
  const r2 = x * x + y * y;
  const radial = 1 + c.k1 * r2 + c.k2 * r2 * r2;
  return [x * radial + 2 * c.p1 * x * y + c.p2 * (r2 + 2 * x * x), y * radial + c.p1 * (r2 + 2 * y * y) + 2 * c.p2 * x * y];
}

/** Inverts `distort` by fixed-point iteration (converges for the distortions photogrammetry estimates). */
function undistort(c: PhotoCamera, xd: number, yd: number): [number, number] {
  if (c.k1 === 0 && c.k2 === 0 && c.p1 === 0 && c.p2 === 0) return [xd, yd];
  let x = xd;
  let y = yd;
  for (let i = 0; i < 100; i++) {
    const r2 = x * x + y * y;
    const radial = 1 + c.k1 * r2 + c.k2 * r2 * r2;
    const dx = 2 * c.p1 * x * y + c.p2 * (r2 + 2 * x * x);
    const dy = c.p1 * (r2 + 2 * y * y) + 2 * c.p2 * x * y;
    const nx = (xd - dx) / radial;
    const ny = (yd - dy) / radial;
    const change = Math.abs(nx - x) + Math.abs(ny - y);
    x = nx;
    y = ny;
    if (change < 1e-12) break;
  }
  return [x, y];
}

/**
 * A PhotoCamera from one camera of `calibrated_camera_parameters_json` as the colmap and nodeodm
 * engines write it (`intrinsics`, `position_output_crs`, `rotation_matrix_output_crs`): rays and
 * projections are then in the output coordinate system, like the point cloud. Null for a camera
 * that was not calibrated.
 */
export function cameraFromCalibrated(entry: {
  width: number;
  height: number;
  intrinsics?: { fx: number; fy: number; cx: number; cy: number; k1?: number; k2?: number; p1?: number; p2?: number } | null;
  position_output_crs?: { x: number; y: number; z: number } | null;
  rotation_matrix_output_crs?: number[][] | null;
}): PhotoCamera | null {
  const k = entry.intrinsics;
  const p = entry.position_output_crs;
  const r = entry.rotation_matrix_output_crs;
  if (!k || !p || !r) return null;
  return {
    width: entry.width,
    height: entry.height,
    fx: k.fx,
    fy: k.fy,
    cx: k.cx,
    cy: k.cy,
    k1: k.k1 ?? 0,
    k2: k.k2 ?? 0,
    p1: k.p1 ?? 0,
    p2: k.p2 ?? 0,
    position: [p.x, p.y, p.z],
    rotation: [
      [r[0][0], r[0][1], r[0][2]],
      [r[1][0], r[1][1], r[1][2]],
      [r[2][0], r[2][1], r[2][2]],
    ],
  };
}
