// Where an inventory item marked by hand stands, and which way it faces (issue 30 §4).
//
// The reviewer marks the item's front face on two or more photos: four corners per photo, in the
// order top-left, top-right, bottom-right, bottom-left as the photo shows them, in 0..1 of the
// photo's width and height (the console sends the corners of the rectangle drawn on each photo).
// Each corner is triangulated from the calibrated cameras (shared/pointcloud pixelRay: the same
// intrinsics, distortion and output-system pose that annotations' coords_3d use): the point
// nearest, in least squares, to the rays through that corner on every photo. Nothing is cast at
// the point cloud or the mesh: an antenna is a thin panel in front of a lattice, where a cloud
// pick takes whatever lies behind; two calibrated views fix the point by themselves.
//
// From the four corners, in the output coordinate system (x east, y north, z up, metres):
// - the facing normal n = right x up, right = the top and bottom edges (left to right), up = the
//   left and right edges (bottom to top); it points out of the face, towards whoever sees its
//   front (flipped when it points away from the cameras, e.g. corners marked mirrored);
// - azimuth: degrees clockwise from north of n's horizontal part, 0..360, against the grid north
//   of the output system here; inventory.service.ts turns it to true north by the meridian
//   convergence at the asset when the system is georeferenced (UTM: up to ~3°);
// - downtilt: degrees of n below the horizontal (negative: facing upwards);
// - plumb: degrees between the item's vertical axis and the vertical, measured within its front
//   plane (the sideways lean; the lean front-to-back is the downtilt, not counted twice);
// - width: the mean length of the top and bottom edges; the mean of the side edges is given as
//   `vertical_size_m` in the computation (the spec's `height` is the elevation below);
// - height: the centre's z above the asset's base (`base_plate_location.z`) when the inspection has
//   one, else above `ground_reference_altitude` (the ground at the asset) when the reconstruction
//   found it, else none (inventory.service.ts);
// - residual_m: the root mean square distance of the corners from their rays; planarity_m the
//   RMS distance of the corners from the face's plane through their centroid.
import { pixelRay, type PhotoCamera, type Ray } from '../../shared/pointcloud/index.ts';

export type Vec3 = [number, number, number];
/** Four corners of the front face on one photo: top-left, top-right, bottom-right, bottom-left, 0..1. */
export type FaceCorners = [[number, number], [number, number], [number, number], [number, number]];

export interface MarkedPhoto {
  photoId: number;
  camera: PhotoCamera;
  corners: FaceCorners;
}

/** Below this angle between the rays of two photos the triangulation is refused: nearly the same viewpoint. */
export const MIN_RAY_ANGLE_DEG = 2;

export interface ItemGeometry {
  centre: Vec3;
  corners: [Vec3, Vec3, Vec3, Vec3];
  normal: Vec3;
  azimuth: number;
  downtilt: number;
  plumb: number;
  width: number;
  verticalSize: number;
  residual: number;
  planarity: number;
  /** The widest angle between two photos' rays through the face's centre, degrees. */
  rayAngle: number;
}

export class GeometryError extends Error {}

export function itemGeometry(marks: readonly MarkedPhoto[]): ItemGeometry {
  if (marks.length < 2) throw new GeometryError('mark the item on at least two photos');
  const corners: Vec3[] = [];
  const distances: number[] = [];
  for (let k = 0; k < 4; k++) {
    const rays = marks.map((m) => pixelRay(m.camera, m.corners[k][0] * m.camera.width, m.corners[k][1] * m.camera.height));
    const p = triangulate(rays);
    for (const ray of rays) {
      if (dot(sub(p, ray.origin), ray.direction) <= 0) throw new GeometryError('the marked corners meet behind a camera: check that the same corners are marked on every photo');
      distances.push(distanceToRay(p, ray));
    }
    corners.push(p);
  }
  const [tl, tr, br, bl] = corners;
  const centre = scale(add(add(tl, tr), add(br, bl)), 0.25);
  const centreRays = marks.map((m) => {
    const u = (m.corners[0][0] + m.corners[1][0] + m.corners[2][0] + m.corners[3][0]) / 4;
    const v = (m.corners[0][1] + m.corners[1][1] + m.corners[2][1] + m.corners[3][1]) / 4;
    return pixelRay(m.camera, u * m.camera.width, v * m.camera.height);
  });
  let rayAngle = 0;
  for (let i = 0; i < centreRays.length; i++)
    for (let j = i + 1; j < centreRays.length; j++) rayAngle = Math.max(rayAngle, degrees(Math.acos(clamp(dot(centreRays[i].direction, centreRays[j].direction)))));
  if (rayAngle < MIN_RAY_ANGLE_DEG) throw new GeometryError(`the photos see the item from nearly the same direction (${rayAngle.toFixed(1)}°, at least ${MIN_RAY_ANGLE_DEG}° needed): mark it on photos taken further apart`);

  const right = add(sub(tr, tl), sub(br, bl));
  const up = add(sub(tl, bl), sub(tr, br));
  let normal = unit(cross(right, up));
  const towardsCameras = marks.reduce((s, m) => s + dot(normal, sub(m.camera.position as Vec3, centre)), 0);
  if (towardsCameras < 0) normal = scale(normal, -1);
  const planarity = Math.sqrt(corners.reduce((s, c) => s + dot(sub(c, centre), normal) ** 2, 0) / 4);
  // The item's right-hand axis within its face, orthogonal to the normal: its slope from the
  // horizontal is the lean of the vertical axis within the face.
  const rightInPlane = unit(sub(right, scale(normal, dot(right, normal))));
  return {
    centre,
    corners: [tl, tr, br, bl],
    normal,
    azimuth: (degrees(Math.atan2(normal[0], normal[1])) + 360) % 360,
    downtilt: degrees(Math.asin(clamp(-normal[2]))),
    plumb: Math.abs(degrees(Math.asin(clamp(rightInPlane[2])))),
    width: (length(sub(tr, tl)) + length(sub(br, bl))) / 2,
    verticalSize: (length(sub(tl, bl)) + length(sub(tr, br))) / 2,
    residual: Math.sqrt(distances.reduce((s, d) => s + d * d, 0) / distances.length),
    planarity,
    rayAngle,
  };
}

/**
 * The point nearest in least squares to every ray (midpoint method for two): solves
 * Σ(I − d dᵀ) p = Σ(I − d dᵀ) o. Refused when the system is singular (parallel rays).
 */
export function triangulate(rays: readonly Ray[]): Vec3 {
  const a = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  const b = [0, 0, 0];
  for (const { origin, direction: d } of rays) {
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        const m = (i === j ? 1 : 0) - d[i] * d[j];
        a[3 * i + j] += m;
        b[i] += m * origin[j];
      }
    }
  }
  const det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
  if (!(Math.abs(det) > 1e-12)) throw new GeometryError('the rays through the marked corners are parallel');
  // Cramer's rule: a 3 x 3 system.
  const solve = (col: number) => {
    const m = [...a];
    for (let i = 0; i < 3; i++) m[3 * i + col] = b[i];
    return (m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6])) / det;
  };
  return [solve(0), solve(1), solve(2)];
}

function distanceToRay(p: Vec3, ray: Ray): number {
  const v = sub(p, ray.origin as Vec3);
  return length(sub(v, scale(ray.direction as Vec3, dot(v, ray.direction))));
}

const add = (a: readonly number[], b: readonly number[]): Vec3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
export const sub = (a: readonly number[], b: readonly number[]): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const scale = (a: readonly number[], k: number): Vec3 => [a[0] * k, a[1] * k, a[2] * k];
export const dot = (a: readonly number[], b: readonly number[]) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: Vec3, b: Vec3): Vec3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const length = (a: readonly number[]) => Math.hypot(a[0], a[1], a[2]);
const unit = (a: Vec3): Vec3 => scale(a, 1 / length(a));
const degrees = (rad: number) => (rad * 180) / Math.PI;
const clamp = (x: number) => Math.max(-1, Math.min(1, x));

/** `value` to `digits` decimals, as the item's figures are stored. */
export function round(value: number, digits: number): number {
  return Number(value.toFixed(digits));
}
