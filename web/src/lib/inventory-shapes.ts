// Where an inventory item is drawn: its outline on a photo (the API's `photo_projection`, the front
// face's four corners in photo fractions, keyed by photo id) and its box in the 3D view (a detected
// item's `computation.box_corners_3d`: eight corners whose indices differing in one bit share an
// edge, as the API describes). Framework-free, unit-tested (test/web-inventory-shapes.test.ts).
import type { Point } from './rect-coords.ts';

export type Vec3 = [number, number, number];

/** What these functions read of an inventory item (the API's record has more). */
export interface ShapedItem {
  photo_projection: Record<string, unknown>;
  computation: { box_corners_3d?: { x: number; y: number; z: number }[] } | null;
}

const isFraction = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= -1 && v <= 2;

/** The item's front face on `photoId` (four points in photo fractions), or null when it is not projected there. */
export function photoOutline(item: ShapedItem, photoId: number): Point[] | null {
  const corners = item.photo_projection?.[String(photoId)];
  if (!Array.isArray(corners) || corners.length !== 4) return null;
  const points = corners.map((c) => (Array.isArray(c) && c.length === 2 && isFraction(c[0]) && isFraction(c[1]) ? { x: c[0], y: c[1] } : null));
  return points.every((p) => p !== null) ? (points as Point[]) : null;
}

/** The photos the item is projected on (photo ids), in the order the API lists them. */
export function outlinedPhotos(item: ShapedItem): number[] {
  return Object.keys(item.photo_projection ?? {})
    .map(Number)
    .filter((id) => Number.isInteger(id) && photoOutline(item, id) !== null);
}

/** The twelve edges of a detected item's box (pairs of absolute points), or null without one. */
export function boxEdges(item: ShapedItem): [Vec3, Vec3][] | null {
  const corners = item.computation?.box_corners_3d;
  if (!Array.isArray(corners) || corners.length !== 8) return null;
  const points = corners.map((c) => [c.x, c.y, c.z] as Vec3);
  if (!points.every((p) => p.every(Number.isFinite))) return null;
  const edges: [Vec3, Vec3][] = [];
  for (let i = 0; i < 8; i++) for (const bit of [1, 2, 4]) if (!(i & bit)) edges.push([points[i], points[i | bit]]);
  return edges;
}

/** The middle of a detected item's box, or null without one. */
export function boxCentre(item: ShapedItem): Vec3 | null {
  const edges = boxEdges(item);
  if (!edges) return null;
  const corners = item.computation!.box_corners_3d!;
  return [0, 1, 2].map((axis) => corners.reduce((sum, c) => sum + [c.x, c.y, c.z][axis], 0) / 8) as Vec3;
}
