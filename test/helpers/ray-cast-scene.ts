// A small ray-caster for the orthomosaic tests: a flat ground (height 0) painted with a smooth
// colour pattern of (east, north), and upright boxes with a coloured roof and walls, photographed
// by pinhole cameras. It renders each camera's photo and its depth map (z along the optical axis,
// as COLMAP writes them) from the scene itself, so that the orthomosaic's colours can be checked
// against the pattern at every cell.
import { cameraToEnuQuaternion, quaternionToMatrix, type Vec3 } from '../../src/shared/geo/rotation.ts';
import type { OrthoCamera } from '../../src/cloud/processing/rasters/orthomosaic.ts';

export type Rgb = [number, number, number];

export interface SceneBox {
  west: number;
  east: number;
  south: number;
  north: number;
  top: number;
  roof: Rgb;
  wall: Rgb;
}

/** The ground's colour at (east, north): three sines of different periods and directions (58..198 per channel). */
export function groundColour(east: number, north: number): Rgb {
  return [
    Math.round(128 + 70 * Math.sin((2 * Math.PI * east) / 7)),
    Math.round(128 + 70 * Math.sin((2 * Math.PI * north) / 5 + 1)),
    Math.round(128 + 70 * Math.sin((2 * Math.PI * (east + north)) / 9 + 2)),
  ];
}

/** Height of the scene's surface at (east, north): a box's top, else the ground. */
export function surfaceHeight(boxes: SceneBox[], east: number, north: number): number {
  let z = 0;
  for (const b of boxes) if (east >= b.west && east < b.east && north > b.south && north <= b.north) z = Math.max(z, b.top);
  return z;
}

/** The colour seen from straight above at (east, north). */
export function surfaceColour(boxes: SceneBox[], east: number, north: number): Rgb {
  let best: SceneBox | null = null;
  for (const b of boxes) if (east >= b.west && east < b.east && north > b.south && north <= b.north && (!best || b.top > best.top)) best = b;
  return best ? best.roof : groundColour(east, north);
}

export type SceneCamera = Omit<OrthoCamera, 'imagePath' | 'depthMap'>;

/** A camera at `centre` with DJI-style gimbal angles (degrees; pitch -90 looks straight down). */
export function gimbalCamera(name: string, centre: Vec3, angles: { yaw: number; pitch: number; roll?: number }, size: { width: number; height: number; focal: number }): SceneCamera {
  const toEnu = quaternionToMatrix(cameraToEnuQuaternion({ yaw: angles.yaw, pitch: angles.pitch, roll: angles.roll ?? 0 }));
  // World to camera: the transpose of camera to world.
  const r = [0, 1, 2].flatMap((i) => [toEnu[0][i], toEnu[1][i], toEnu[2][i]]);
  const translation: [number, number, number] = [0, 1, 2].map((i) => -(r[3 * i] * centre[0] + r[3 * i + 1] * centre[1] + r[3 * i + 2] * centre[2])) as [number, number, number];
  return { name, width: size.width, height: size.height, fx: size.focal, fy: size.focal, cx: size.width / 2, cy: size.height / 2, rotation: r, translation };
}

interface Hit {
  t: number;
  colour: Rgb;
}

/** The first surface a ray from `origin` along `direction` meets, or null. */
function castRay(boxes: SceneBox[], origin: Vec3, direction: Vec3): Hit | null {
  let hit: Hit | null = null;
  if (direction[2] < 0) {
    const t = -origin[2] / direction[2];
    const e = origin[0] + t * direction[0];
    const n = origin[1] + t * direction[1];
    hit = { t, colour: groundColour(e, n) };
  }
  for (const b of boxes) {
    // Slab method: the entry face is the slab entered last.
    const low: Vec3 = [b.west, b.south, 0];
    const high: Vec3 = [b.east, b.north, b.top];
    let enter = -Infinity;
    let leave = Infinity;
    let face = -1;
    for (let axis = 0; axis < 3; axis++) {
      if (direction[axis] === 0) {
        if (origin[axis] < low[axis] || origin[axis] > high[axis]) leave = -Infinity;
        continue;
      }
      const t1 = (low[axis] - origin[axis]) / direction[axis];
      const t2 = (high[axis] - origin[axis]) / direction[axis];
      const near = Math.min(t1, t2);
      if (near > enter) {
        enter = near;
        face = axis;
      }
      leave = Math.min(leave, Math.max(t1, t2));
    }
    if (enter <= leave && enter > 0 && (!hit || enter < hit.t)) hit = { t: enter, colour: face === 2 ? b.roof : b.wall };
  }
  return hit;
}

function centreOf(camera: SceneCamera): Vec3 {
  const { rotation: r, translation: t } = camera;
  return [0, 1, 2].map((i) => -(r[i] * t[0] + r[3 + i] * t[1] + r[6 + i] * t[2])) as Vec3;
}

/** The camera's photo (RGB) and depth map (z along the optical axis; 0 where the ray meets nothing). */
export function render(boxes: SceneBox[], camera: SceneCamera): { rgb: Uint8Array; depth: Float32Array } {
  const { width, height, fx, fy, cx, cy, rotation: r } = camera;
  const origin = centreOf(camera);
  const rgb = new Uint8Array(3 * width * height);
  const depth = new Float32Array(width * height);
  for (let v = 0; v < height; v++) {
    for (let u = 0; u < width; u++) {
      // Through the pixel's centre; with the camera ray's z = 1, t is the depth along the optical axis.
      const x = (u + 0.5 - cx) / fx;
      const y = (v + 0.5 - cy) / fy;
      const direction: Vec3 = [r[0] * x + r[3] * y + r[6], r[1] * x + r[4] * y + r[7], r[2] * x + r[5] * y + r[8]];
      const hit = castRay(boxes, origin, direction);
      if (!hit) continue;
      const i = v * width + u;
      depth[i] = hit.t;
      rgb.set(hit.colour, 3 * i);
    }
  }
  return { rgb, depth };
}

/** Whether the camera frames the point and nothing of the scene stands between them. */
export function sees(boxes: SceneBox[], camera: SceneCamera, point: Vec3): boolean {
  const { rotation: r, translation: t } = camera;
  const z = r[6] * point[0] + r[7] * point[1] + r[8] * point[2] + t[2];
  if (!(z > 0)) return false;
  const u = (camera.fx * (r[0] * point[0] + r[1] * point[1] + r[2] * point[2] + t[0])) / z + camera.cx;
  const v = (camera.fy * (r[3] * point[0] + r[4] * point[1] + r[5] * point[2] + t[1])) / z + camera.cy;
  if (!(u >= 0 && v >= 0 && u < camera.width && v < camera.height)) return false;
  const origin = centreOf(camera);
  const direction: Vec3 = [(point[0] - origin[0]) / z, (point[1] - origin[1]) / z, (point[2] - origin[2]) / z];
  const hit = castRay(boxes, origin, direction);
  return !hit || hit.t >= z * (1 - 1e-6);
}
