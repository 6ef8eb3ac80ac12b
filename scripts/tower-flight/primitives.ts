// Triangle soups for the scene's shapes (boxes, tubes, discs, height fields), appended to a plain
// number list: the renderer and the reference cloud both take the triangles as they are, so no
// indexing or normals are kept here (the renderer derives flat normals; faces are wound
// counter-clockwise seen from outside).
import type { Vec3 } from './scene-types.ts';

export const add = (a: Vec3, b: Vec3, k = 1): Vec3 => [a[0] + k * b[0], a[1] + k * b[1], a[2] + k * b[2]];
export const scale = (a: Vec3, k: number): Vec3 => [a[0] * k, a[1] * k, a[2] * k];
export const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const cross = (a: Vec3, b: Vec3): Vec3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
export const length = (a: Vec3) => Math.hypot(a[0], a[1], a[2]);
export const normalise = (a: Vec3): Vec3 => scale(a, 1 / (length(a) || 1));

/** An orthonormal frame: right, up and front axes (front is the outward normal of the "front" face). */
export interface Axes {
  right: Vec3;
  up: Vec3;
  front: Vec3;
}

export function triangle(out: number[], a: Vec3, b: Vec3, c: Vec3): void {
  out.push(a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2]);
}

/** A quad a-b-c-d (counter-clockwise seen from the side it faces). */
export function quad(out: number[], a: Vec3, b: Vec3, c: Vec3, d: Vec3): void {
  triangle(out, a, b, c);
  triangle(out, a, c, d);
}

/** A box centred at `centre` with half extents along the frame's right, up and front axes. */
export function box(out: number[], centre: Vec3, axes: Axes, half: { right: number; up: number; front: number }): void {
  const corner = (r: number, u: number, f: number): Vec3 => add(add(add(centre, axes.right, r * half.right), axes.up, u * half.up), axes.front, f * half.front);
  const c = [corner(-1, -1, -1), corner(1, -1, -1), corner(1, 1, -1), corner(-1, 1, -1), corner(-1, -1, 1), corner(1, -1, 1), corner(1, 1, 1), corner(-1, 1, 1)];
  quad(out, c[4], c[5], c[6], c[7]); // front
  quad(out, c[1], c[0], c[3], c[2]); // back
  quad(out, c[5], c[1], c[2], c[6]); // right
  quad(out, c[0], c[4], c[7], c[3]); // left
  quad(out, c[7], c[6], c[2], c[3]); // top
  quad(out, c[0], c[1], c[5], c[4]); // bottom
}

/** An axis-aligned-in-yaw box: centre, full size (x, y, z before the yaw) and yaw (degrees, clockwise from north). */
export function yawedBox(out: number[], centre: Vec3, size: Vec3, yawDeg: number): void {
  const yaw = (yawDeg * Math.PI) / 180;
  const right: Vec3 = [Math.cos(yaw), -Math.sin(yaw), 0];
  const front: Vec3 = [Math.sin(yaw), Math.cos(yaw), 0];
  box(out, centre, { right, up: [0, 0, 1], front }, { right: size[0] / 2, up: size[2] / 2, front: size[1] / 2 });
}

/** Two unit vectors perpendicular to `axis` and to each other. */
function perpendiculars(axis: Vec3): [Vec3, Vec3] {
  const helper: Vec3 = Math.abs(axis[2]) < 0.9 ? [0, 0, 1] : [1, 0, 0];
  const u = normalise(cross(axis, helper));
  return [u, cross(axis, u)];
}

/** A tube (open-ended frustum) from a to b with radii ra and rb; `caps` closes both ends. */
export function tube(out: number[], a: Vec3, b: Vec3, ra: number, rb: number, segments: number, caps = false): void {
  const axis = normalise(add(b, a, -1));
  const [u, v] = perpendiculars(axis);
  const ring = (centre: Vec3, r: number, k: number): Vec3 => {
    const t = (2 * Math.PI * k) / segments;
    return add(add(centre, u, r * Math.cos(t)), v, r * Math.sin(t));
  };
  for (let k = 0; k < segments; k++) {
    const a0 = ring(a, ra, k), a1 = ring(a, ra, k + 1), b0 = ring(b, rb, k), b1 = ring(b, rb, k + 1);
    quad(out, a0, a1, b1, b0);
    if (caps) {
      triangle(out, a, a1, a0);
      triangle(out, b, b0, b1);
    }
  }
}

/** A disc of radius r at `centre` facing `normal`, optionally bulged by `bulge` metres at its centre. */
export function disc(out: number[], centre: Vec3, normal: Vec3, r: number, segments: number, bulge = 0): void {
  const n = normalise(normal);
  const [u, v] = perpendiculars(n);
  const rings = bulge ? 4 : 1;
  const point = (ringIndex: number, k: number): Vec3 => {
    const s = ringIndex / rings; // 0 centre .. 1 rim
    const t = (2 * Math.PI * k) / segments;
    const height = bulge * (1 - s * s);
    return add(add(add(centre, u, r * s * Math.cos(t)), v, r * s * Math.sin(t)), n, height);
  };
  for (let ringIndex = 0; ringIndex < rings; ringIndex++) {
    for (let k = 0; k < segments; k++) {
      if (ringIndex === 0) triangle(out, point(0, 0), point(1, k), point(1, k + 1));
      else quad(out, point(ringIndex, k), point(ringIndex + 1, k), point(ringIndex + 1, k + 1), point(ringIndex, k + 1));
    }
  }
}

/** A height field z = height(x, y) over a square grid, leaving out the cells `skip` says. */
export function heightField(out: number[], min: [number, number], max: [number, number], cell: number, height: (x: number, y: number) => number, skip?: (x: number, y: number) => boolean): void {
  const nx = Math.ceil((max[0] - min[0]) / cell);
  const ny = Math.ceil((max[1] - min[1]) / cell);
  for (let i = 0; i < nx; i++) {
    for (let j = 0; j < ny; j++) {
      const x0 = min[0] + i * cell, y0 = min[1] + j * cell, x1 = x0 + cell, y1 = y0 + cell;
      if (skip?.((x0 + x1) / 2, (y0 + y1) / 2)) continue;
      quad(out, [x0, y0, height(x0, y0)], [x1, y0, height(x1, y0)], [x1, y1, height(x1, y1)], [x0, y1, height(x0, y1)]);
    }
  }
}
