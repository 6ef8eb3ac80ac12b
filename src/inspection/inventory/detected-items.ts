// The inventory items of an automatic antenna detection (antenna-detection.ts): one item per
// detected box (detection/detection-types.ts DetectedItem, its positions already in the output
// coordinate system), in the fields and shapes of the items entered by hand
// (inventory.service.ts, inventory-geometry.ts, inventory-views.ts), so that the list, the
// report and the review treat both alike:
// - model_type: the detected type (panel_antenna, microwave_antenna, ancillary_box); source
//   DETECTED_SOURCE ("automatic_detection"; by hand: "manual");
// - name: "Panel antenna 3 (L1, 121°)": per type, numbered by level (L1 the highest) then azimuth;
//   a level is a group of panel antennas whose centres lie within LEVEL_GAP_M of the next one's
//   height; an item more than LEVEL_REACH_M from every level (a dish between levels) is named by
//   its height instead, "Microwave antenna 1 (18.4 m, 45°)";
// - azimuth, downtilt: the detector's (true north; positive downtilt looks below the horizon);
//   plumb: the size of its sideways lean (unsigned, as by hand: 0..90); width, depth: the box's
//   extents across and front to back; the extent along the long axis is
//   computation.vertical_size_m, as for items by hand, because the spec's `height` is the centre's
//   elevation: above base_plate_location.z when the inspection has one, else above the base of
//   the tower the detector found (computation.height_reference says which);
// - coords_3d: [x, y, z] of the box's centre, output coordinate system (as by hand); offset_xyz
//   that centre less base_plate_location ({} without one), as by hand;
// - the front face: the four of the box's eight corners furthest along the boresight, ordered
//   top-left, top-right, bottom-right, bottom-left as seen from the front (as by-hand marks are);
//   computation.corners_3d holds them, computation.box_corners_3d all eight, in the order of
//   detection/orientation.ts cornersOf (bit 0 of the index: right, bit 1: top, bit 2: front; the
//   console draws the edges between corners that differ in one bit);
// - photo_id: the calibrated photo that sees the front face most squarely (the smallest angle
//   between the boresight and the direction to the camera; those within SQUARE_TOLERANCE_DEG = 10°
//   of the smallest count alike) and, of those, the closest, among the photos that see the front
//   (the camera on the side the boresight points to) with all eight corners in front of the camera
//   and inside the image (computation.photos counts them); photo_projection
//   `{"<photo_id>": [[x, y] × 4]}`, the front face's corners in that photo (0..1, coords_2d's
//   convention), and point_of_view that camera's projection centre. None when no calibrated
//   photo sees the whole box (photo_id null, `{}`, `[]`).
//   Occlusion is not checked (as by hand).
import type { DetectedItem, DetectedItemType, DetectedTower } from './detection/detection-types.ts';
import { projectPoint, type PhotoCamera } from '../../shared/pointcloud/index.ts';
import { dot, round, sub, type Vec3 } from './inventory-geometry.ts';
import type { InventoryComputation } from './inventory.service.ts';

/** `source` of an item the detection wrote; items entered by hand say MANUAL_SOURCE. */
export const DETECTED_SOURCE = 'automatic_detection';
export const MANUAL_SOURCE = 'manual';

/** Panel antennas whose centres are at most this far apart in height belong to one level. */
export const LEVEL_GAP_M = 2;
/** An item within this height of a level's mean belongs to it. */
export const LEVEL_REACH_M = 1.5;

const TYPE_NAMES: Record<DetectedItemType, string> = { panel_antenna: 'Panel antenna', microwave_antenna: 'Microwave antenna', ancillary_box: 'Ancillary box' };
const TYPE_ORDER: Record<DetectedItemType, number> = { panel_antenna: 0, ancillary_box: 1, microwave_antenna: 2 };

export interface DetectionContext {
  /** The inspection's calibrated photos. */
  photos: readonly { photoId: number; camera: PhotoCamera }[];
  /** The tower the detector found (output system). */
  tower: DetectedTower;
  basePlate: { x: number; y: number; z: number } | null;
  /** Degrees from true north to grid north at the asset (detection-types.ts). */
  gridConvergenceDeg: number;
  /** Metres per unit of the output system. */
  unitFactor: number;
}

/** The columns of one detected item (inventory.service.ts insertDetected adds the inspection and its number). */
export interface DetectedItemColumns {
  model_type: DetectedItemType;
  name: string;
  source: typeof DETECTED_SOURCE;
  photo_id: number | null;
  photo_projection: string;
  point_of_view: string;
  offset_xyz: string;
  coords_2d: string;
  coords_3d: string;
  azimuth: number;
  downtilt: number;
  plumb: number;
  height: number;
  width: number;
  depth: number;
  computation: string;
}

/** The items' columns, in the order they are numbered (type, level from the top, azimuth). */
export function detectedItemColumns(items: readonly DetectedItem[], context: DetectionContext): DetectedItemColumns[] {
  const levels = levelsOf(items);
  const labelled = items.map((item) => {
    const level = levels.findIndex((h) => Math.abs(item.heightAboveBaseM - h) <= LEVEL_REACH_M);
    return { item, level: level < 0 ? Infinity : level };
  });
  // Type, then level (from the top; items of no level after, highest first), then azimuth.
  const rank = (x: { item: DetectedItem; level: number }) => (Number.isFinite(x.level) ? x.level : levels.length + 1);
  labelled.sort(
    (a, b) =>
      TYPE_ORDER[a.item.type] - TYPE_ORDER[b.item.type] ||
      rank(a) - rank(b) ||
      (Number.isFinite(a.level) ? 0 : b.item.heightAboveBaseM - a.item.heightAboveBaseM) ||
      a.item.azimuthDeg - b.item.azimuthDeg,
  );
  const counters = new Map<DetectedItemType, number>();
  return labelled.map(({ item, level }) => {
    const n = (counters.get(item.type) ?? 0) + 1;
    counters.set(item.type, n);
    const where = Number.isFinite(level) ? `L${level + 1}` : `${item.heightAboveBaseM.toFixed(1)} m`;
    return columnsOf(item, `${TYPE_NAMES[item.type]} ${n} (${where}, ${Math.round(item.azimuthDeg) % 360}°)`, context);
  });
}

/** Mean heights of the panel antennas' levels, highest first. */
export function levelsOf(items: readonly DetectedItem[]): number[] {
  const heights = items.filter((i) => i.type === 'panel_antenna').map((i) => i.heightAboveBaseM).sort((a, b) => b - a);
  const groups: number[][] = [];
  for (const h of heights) {
    const last = groups.at(-1);
    if (last && last.at(-1)! - h <= LEVEL_GAP_M) last.push(h);
    else groups.push([h]);
  }
  return groups.map((g) => g.reduce((s, h) => s + h, 0) / g.length);
}

function columnsOf(item: DetectedItem, name: string, context: DetectionContext): DetectedItemColumns {
  const normal = boresight(item.azimuthDeg - context.gridConvergenceDeg, item.downtiltDeg);
  const face = frontFace(item.centre, item.corners, normal);
  const view = bestPhoto(item, face, normal, context.photos);
  const base = context.basePlate && [context.basePlate.x, context.basePlate.y, context.basePlate.z].every(Number.isFinite) ? context.basePlate : null;
  const reference = base
    ? { name: 'base_plate_location' as const, z: base.z, height: (item.centre[2] - base.z) * context.unitFactor }
    : { name: 'detected_tower_base' as const, z: context.tower.base[2], height: item.heightAboveBaseM };
  const xyz = (p: readonly number[]) => ({ x: round(p[0], 3), y: round(p[1], 3), z: round(p[2], 3) });
  const computation: InventoryComputation = {
    method: 'detection',
    photos: view.seeing,
    residual_m: null,
    planarity_m: null,
    ray_angle_deg: null,
    corners_3d: face.map(xyz),
    normal: normal.map((v) => round(v, 4)),
    vertical_size_m: round(item.heightM, 3),
    height_reference: reference.name,
    height_reference_z: round(reference.z, 3),
    azimuth_reference: `true north (the detector's boresight in the output system's grid, turned by the meridian convergence at the asset, ${context.gridConvergenceDeg.toFixed(3)}° from true to grid north)`,
    north_convergence_deg: round(-context.gridConvergenceDeg, 4),
    confidence: round(item.confidence, 3),
    points: item.pointCount,
    box_corners_3d: item.corners.map(xyz),
  };
  return {
    model_type: item.type,
    name,
    source: DETECTED_SOURCE,
    photo_id: view.best?.photoId ?? null,
    photo_projection: JSON.stringify(view.best ? { [String(view.best.photoId)]: view.best.projection } : {}),
    point_of_view: JSON.stringify(view.best ? view.best.position.map((v) => round(v, 3)) : []),
    offset_xyz: JSON.stringify(base ? { x: round(item.centre[0] - base.x, 3), y: round(item.centre[1] - base.y, 3), z: round(item.centre[2] - base.z, 3) } : {}),
    coords_2d: '{}',
    coords_3d: JSON.stringify(item.centre.map((v) => round(v, 3))),
    azimuth: round(((item.azimuthDeg % 360) + 360) % 360, 2) % 360,
    downtilt: round(item.downtiltDeg, 2),
    plumb: round(Math.abs(item.plumbDeg), 2),
    height: round(reference.height, 3),
    width: round(item.widthM, 3),
    depth: round(item.depthM, 3),
    computation: JSON.stringify(computation),
  };
}

/** The unit boresight in the output system's axes (x east, y grid north, z up) from a grid azimuth and a downtilt, degrees. */
export function boresight(gridAzimuthDeg: number, downtiltDeg: number): Vec3 {
  const a = (gridAzimuthDeg * Math.PI) / 180;
  const d = (downtiltDeg * Math.PI) / 180;
  return [Math.sin(a) * Math.cos(d), Math.cos(a) * Math.cos(d), -Math.sin(d)];
}

/**
 * The front face's corners, top-left, top-right, bottom-right, bottom-left as seen from the front:
 * the four corners furthest along the boresight; of those, the two highest along the face's up
 * direction are the top ones, and of each pair the one further to the left (seen from the front,
 * looking against the boresight) comes first.
 */
export function frontFace(centre: Vec3, corners: readonly Vec3[], normal: Vec3): [Vec3, Vec3, Vec3, Vec3] {
  const front = [...corners].sort((a, b) => dot(sub(b, centre), normal) - dot(sub(a, centre), normal)).slice(0, 4);
  // Right seen from the front: for a boresight heading a, [-cos a, sin a, 0] (up × boresight, horizontal); the face's up completes the frame.
  const flat = Math.hypot(normal[0], normal[1]);
  const right: Vec3 = flat > 1e-9 ? [-normal[1] / flat, normal[0] / flat, 0] : [1, 0, 0];
  const up: Vec3 = [normal[1] * right[2] - normal[2] * right[1], normal[2] * right[0] - normal[0] * right[2], normal[0] * right[1] - normal[1] * right[0]];
  const byUp = [...front].sort((a, b) => dot(b, up) - dot(a, up));
  const leftFirst = (pair: Vec3[]) => pair.sort((a, b) => dot(a, right) - dot(b, right));
  const [tl, tr] = leftFirst(byUp.slice(0, 2));
  const [bl, br] = leftFirst(byUp.slice(2));
  return [tl, tr, br, bl];
}

interface PhotoView {
  photoId: number;
  projection: [number, number][];
  position: Vec3;
  /** Between the boresight and the direction to the camera, degrees. */
  angle: number;
  distance: number;
}

/** Photos within this many degrees of the most square view count as square as it; the closest of them is taken. */
export const SQUARE_TOLERANCE_DEG = 10;

/**
 * The photo that sees the front face most squarely (smallest angle between the boresight and the
 * direction to the camera; the photos within SQUARE_TOLERANCE_DEG of the smallest count alike) and,
 * of those, the closest, among the photos that see the front with all eight corners in front of
 * the camera and inside the image; and how many photos see the box so.
 */
export function bestPhoto(item: DetectedItem, face: readonly Vec3[], normal: Vec3, photos: readonly { photoId: number; camera: PhotoCamera }[]): { best: PhotoView | null; seeing: number } {
  const views: PhotoView[] = [];
  for (const { photoId, camera } of photos) {
    const toCamera = sub(camera.position, item.centre);
    const distance = Math.hypot(toCamera[0], toCamera[1], toCamera[2]);
    const facing = dot(normal, toCamera) / (distance || 1);
    if (!(facing > 0)) continue; // it sees the back, if anything
    const box = item.corners.map((corner) => projectPoint(camera, corner));
    if (box.some((p) => !(p.depth > 0) || !(p.u >= 0 && p.v >= 0 && p.u <= camera.width && p.v <= camera.height))) continue;
    const projection = face.map((corner) => projectPoint(camera, corner)).map((p): [number, number] => [round(p.u / camera.width, 4), round(p.v / camera.height, 4)]);
    views.push({ photoId, projection, position: camera.position, angle: (Math.acos(Math.min(1, facing)) * 180) / Math.PI, distance });
  }
  if (views.length === 0) return { best: null, seeing: 0 };
  const squarest = Math.min(...views.map((v) => v.angle));
  const best = views.filter((v) => v.angle <= squarest + SQUARE_TOLERANCE_DEG).reduce((a, b) => (b.distance < a.distance || (b.distance === a.distance && b.angle < a.angle) ? b : a));
  return { best, seeing: views.length };
}
