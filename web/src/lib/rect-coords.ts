// Rectangles drawn on a photo ↔ the spec's `data.coords_2d`: four [x, y] points, fractions of
// the photo, (0, 0) upper left and (1, 1) bottom right. The console writes them in the order
// upper left, upper right, bottom right, bottom left (clockwise from the origin), rounded to 6
// decimals (a micro-fraction: under a pixel even on a 100-megapixel photo); it reads any order.

export interface Point {
  x: number;
  y: number;
}

/** A rectangle in photo fractions, x0 < x1 and y0 < y1. */
export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export type Coords2d = [number, number][];

/** Smallest side of a rectangle worth saving, as a fraction of the photo (a click is not a box). */
export const MIN_SIDE = 0.004;

const clamp01 = (v: number) => Math.min(1, Math.max(0, v));
const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

/** The rectangle between two corners dragged in any direction, clamped to the photo. */
export function rectFromCorners(a: Point, b: Point): Rect {
  const xs = [clamp01(a.x), clamp01(b.x)].sort((p, q) => p - q);
  const ys = [clamp01(a.y), clamp01(b.y)].sort((p, q) => p - q);
  return { x0: xs[0], y0: ys[0], x1: xs[1], y1: ys[1] };
}

/** Whether a rectangle is big enough to be an annotation (both sides at least `minSide`). */
export function isUsableRect(rect: Rect, minSide = MIN_SIDE): boolean {
  return rect.x1 - rect.x0 >= minSide && rect.y1 - rect.y0 >= minSide;
}

export function rectToCoords2d(rect: Rect): Coords2d {
  const x0 = round6(rect.x0);
  const y0 = round6(rect.y0);
  const x1 = round6(rect.x1);
  const y1 = round6(rect.y1);
  return [
    [x0, y0],
    [x1, y0],
    [x1, y1],
    [x0, y1],
  ];
}

/**
 * The rectangle of a stored `coords_2d` (the bounding box of its points, whatever their order);
 * null when it is not four pairs of numbers within 0..1.
 */
export function coords2dToRect(coords: unknown): Rect | null {
  if (!Array.isArray(coords) || coords.length !== 4) return null;
  const points: Point[] = [];
  for (const point of coords) {
    if (!Array.isArray(point) || point.length !== 2) return null;
    const [x, y] = point;
    if (typeof x !== 'number' || typeof y !== 'number' || !(x >= 0 && x <= 1 && y >= 0 && y <= 1)) return null;
    points.push({ x, y });
  }
  return {
    x0: Math.min(...points.map((p) => p.x)),
    y0: Math.min(...points.map((p) => p.y)),
    x1: Math.max(...points.map((p) => p.x)),
    y1: Math.max(...points.map((p) => p.y)),
  };
}

/** Where a pointer at (clientX, clientY) falls on a photo drawn in `box` (its on-screen rectangle, zoomed and panned), as fractions. */
export function clientToPhoto(client: Point, box: { left: number; top: number; width: number; height: number }): Point {
  return { x: (client.x - box.left) / box.width, y: (client.y - box.top) / box.height };
}

/** The rectangle between two corners given in pixels of a photo of the given size (dragged in any direction), clamped to the photo. */
export function rectFromPixelCorners(a: Point, b: Point, width: number, height: number): Rect {
  return rectFromCorners({ x: a.x / width, y: a.y / height }, { x: b.x / width, y: b.y / height });
}

/** Where a point of the photo (fractions) is on screen when the photo is drawn in `box`: the inverse of clientToPhoto. */
export function photoToClient(point: Point, box: { left: number; top: number; width: number; height: number }): Point {
  return { x: box.left + point.x * box.width, y: box.top + point.y * box.height };
}

/**
 * The on-screen box of a photo of `size` pixels shown at `view` (scale, then translation by x, y)
 * inside a frame whose upper left is at `frame` (client pixels): what clientToPhoto needs.
 */
export function viewBox(view: { scale: number; x: number; y: number }, size: { width: number; height: number }, frame: Point = { x: 0, y: 0 }): { left: number; top: number; width: number; height: number } {
  return { left: frame.x + view.x, top: frame.y + view.y, width: size.width * view.scale, height: size.height * view.scale };
}

/** A rectangle in pixels of a photo of the given size (for display: "312 × 140 px at 1200, 800"). */
export function rectInPixels(rect: Rect, width: number, height: number): { left: number; top: number; width: number; height: number } {
  return {
    left: Math.round(rect.x0 * width),
    top: Math.round(rect.y0 * height),
    width: Math.round((rect.x1 - rect.x0) * width),
    height: Math.round((rect.y1 - rect.y0) * height),
  };
}

/** Zoom about a point: the photo point under `anchor` (view pixels) stays under it. */
export function zoomAbout(view: { scale: number; x: number; y: number }, factor: number, anchor: Point, limits = { min: 0.05, max: 20 }): { scale: number; x: number; y: number } {
  const scale = Math.min(limits.max, Math.max(limits.min, view.scale * factor));
  const applied = scale / view.scale;
  return { scale, x: anchor.x - (anchor.x - view.x) * applied, y: anchor.y - (anchor.y - view.y) * applied };
}
