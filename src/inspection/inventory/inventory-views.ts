// Where a triangulated inventory item shows on the inspection's photos, the viewpoint that sees it
// best, and where it stands from the asset's base: the spec's `photo_projection`, `point_of_view`
// and `offset_xyz` (issue 30 §4), computed with the rest of the item's geometry whenever its marks
// change (inventory.service.ts).
//
// - photo_projection: `{"<photo_id>": [[x, y] × 4]}`, the face's four triangulated corners projected
//   into every calibrated photo that sees its front (the camera on the side the normal points to)
//   with all four corners in front of the camera and inside the image, in coords_2d's convention
//   (top-left, top-right, bottom-right, bottom-left of the face; 0..1 of the photo). The marked
//   photos are included: their projection beside their marks shows the triangulation's error.
//   Occlusion is not checked (a mast in front of the antenna is not known without the mesh), so a
//   photo listed may show the face hidden behind something.
// - point_of_view: `[x, y, z]`, the projection centre (output system, metres) of the photo of
//   photo_projection that sees the face most head-on (smallest angle between the face's normal and
//   the direction to the camera): where a 3D view should stand to look at the item. `[]` when no
//   photo sees the whole face.
// - offset_xyz: `{x, y, z}`, the face centre less `base_plate_location` (metres along the output
//   system's axes: east, north, up for a projected system); `{}` without a base plate location.
import type { PhotoCamera } from '../../shared/pointcloud/index.ts';
import { projectPoint } from '../../shared/pointcloud/index.ts';
import { dot, round, sub, type Vec3 } from './inventory-geometry.ts';

export interface CalibratedPhoto {
  photoId: number;
  camera: PhotoCamera;
}

export interface ItemViews {
  photo_projection: Record<string, [number, number][]>;
  point_of_view: number[];
  offset_xyz: { x: number; y: number; z: number } | Record<string, never>;
}

export function itemViews(
  face: { centre: Vec3; corners: readonly Vec3[]; normal: Vec3 },
  photos: readonly CalibratedPhoto[],
  basePlate: { x: number; y: number; z: number } | null,
): ItemViews {
  const projection: Record<string, [number, number][]> = {};
  let best: { angle: number; position: Vec3 } | null = null;
  for (const { photoId, camera } of photos) {
    const toCamera = sub(camera.position, face.centre);
    const distance = Math.hypot(...toCamera);
    const facing = dot(face.normal, toCamera) / (distance || 1);
    if (!(facing > 0)) continue; // behind the face: it shows its back, if anything
    const corners = face.corners.map((corner) => projectPoint(camera, corner));
    if (corners.some((p) => !(p.depth > 0) || p.u < 0 || p.v < 0 || p.u > camera.width || p.v > camera.height)) continue;
    projection[String(photoId)] = corners.map((p) => [round(p.u / camera.width, 4), round(p.v / camera.height, 4)]);
    const angle = Math.acos(Math.min(1, facing));
    if (!best || angle < best.angle) best = { angle, position: camera.position };
  }
  return {
    photo_projection: projection,
    point_of_view: best ? best.position.map((v) => round(v, 3)) : [],
    offset_xyz:
      basePlate && [basePlate.x, basePlate.y, basePlate.z].every(Number.isFinite)
        ? { x: round(face.centre[0] - basePlate.x, 3), y: round(face.centre[1] - basePlate.y, 3), z: round(face.centre[2] - basePlate.z, 3) }
        : {},
  };
}
