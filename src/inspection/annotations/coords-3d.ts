// `?coords_3d=true` on annotation creation: where the annotation lies on the reconstruction.
//
// The ray from the annotation's calibrated camera through the centre of its `coords_2d`
// rectangle (pixelRay: intrinsics and distortion of the calibration imported with the
// reconstruction, pipeline/reconstruction.ts) is cast at the dense model, in the output coordinate
// system (extras.coordinate_system), absolute coordinates in metres (CONTRACT: {x, y, z}):
// 1. the mesh (reconstruction.mesh, the cloud's `3d_mesh_ply`) when there is one: the first
//    triangle the ray meets in front of the camera (shared/mesh: BVH, Möller–Trumbore). The mesh
//    is used first because it is a surface: the ray through a window or a crack meets the wall
//    where it is, between the points of the cloud, where a cloud pick takes the nearest point
//    of a cone that widens with distance and may be one of a nearer object's edge or of the
//    facade beside the window;
// 2. otherwise the point cloud (reconstruction.point_cloud, the dense cloud when the engine made
//    one): the point nearest to the camera among those inside a cone around the ray
//    (pickAlongRay). The cone's half-angle is half the rectangle's smaller side, between
//    PICK_MIN_PX and PICK_MAX_PX pixels: the point the user framed, not one at the rectangle's
//    edge. The cloud is the project's full point cloud (not the clipped one: an annotation may
//    lie outside the clipping radius).
// The cloud is the fallback whenever the mesh gives nothing: no mesh (not asked for, the engine
// makes none, imported before meshes were recorded), a mesh that cannot be read (not a binary
// PLY, truncated, counts beyond its bytes, too large: storage/stored-meshes.ts) or a ray that
// misses it (the mesh is trimmed where the photos saw little; the cloud's cone still finds a
// point there).
// null when the inspection has no calibrated camera (the exif engine reconstructs nothing), or
// neither the mesh nor the cloud gives a point. LAS (colmap) and LAZ (NodeODM) clouds are read
// alike (shared/pointcloud/laz.ts).
import type { FileStore } from '../storage/inspection-files.ts';
import type { CameraRow, InspectionRow, Point3 } from '../inspection.tables.ts';
import { cameraFromCalibrated, pickAlongRay, pixelRay, type Ray } from '../../shared/pointcloud/index.ts';
import { intersectRay } from '../../shared/mesh/mesh-bvh.ts';
import type { CameraCalibration, Reconstruction, StoredObject } from '../pipeline/reconstruction.ts';
import { StoredPointClouds } from '../storage/point-clouds.ts';
import { StoredMeshes } from '../storage/stored-meshes.ts';

export const PICK_MIN_PX = 3;
export const PICK_MAX_PX = 25;

export interface Coords3dLocator {
  locate(inspection: InspectionRow, camera: CameraRow, coords2d: [number, number][]): Promise<Point3 | null>;
}

export class PointCloudLocator implements Coords3dLocator {
  /** `clouds`: the module's cache, shared with measurement volumes, so a series of annotations reads the cloud once; `meshes` likewise for meshes. */
  constructor(
    files: FileStore,
    private readonly clouds = new StoredPointClouds(files),
    private readonly meshes = new StoredMeshes(files),
  ) {}

  async locate(inspection: InspectionRow, camera: CameraRow, coords2d: [number, number][]): Promise<Point3 | null> {
    const reconstruction = inspection.reconstruction as Reconstruction | null;
    const calibration = camera.calibration as CameraCalibration | null;
    const photo = calibration ? cameraFromCalibrated(calibration) : null;
    if (!reconstruction || !photo) return null;
    const us = coords2d.map((p) => p[0] * photo.width);
    const vs = coords2d.map((p) => p[1] * photo.height);
    const u = (Math.min(...us) + Math.max(...us)) / 2;
    const v = (Math.min(...vs) + Math.max(...vs)) / 2;
    const ray = pixelRay(photo, u, v);
    const onMesh = reconstruction.mesh ? await this.onMesh(reconstruction.mesh, ray) : null;
    if (onMesh) return point(onMesh);
    if (!reconstruction.point_cloud) return null;
    const halfSide = Math.min(Math.max(...us) - Math.min(...us), Math.max(...vs) - Math.min(...vs)) / 2;
    const pixels = Math.min(PICK_MAX_PX, Math.max(PICK_MIN_PX, halfSide));
    // A cloud that cannot be read (not LAS/LAZ, removed from storage) gives no coords_3d rather
    // than failing the annotation's creation.
    const cloud = await this.clouds.read(reconstruction.point_cloud).catch(() => null);
    if (!cloud) return null;
    const hit = pickAlongRay(cloud, ray.origin, ray.direction, 0, pixels / photo.fx);
    return hit ? point(hit.point) : null;
  }

  /** The first point of the mesh along the ray in front of the camera; null when the mesh cannot be read or the ray misses it. */
  private async onMesh(source: StoredObject, ray: Ray): Promise<[number, number, number] | null> {
    const bvh = await this.meshes.read(source).catch(() => null);
    return bvh ? (intersectRay(bvh, ray.origin, ray.direction, 0)?.point ?? null) : null;
  }
}

// 12 significant digits: a cloud's point came from LAS integers times a scale, and float64 keeps
// the product's noise (3.1390000000000002); 12 digits still hold 10 µm in UTM northings and 1e-10
// degrees in a geographic system (and more than the mesh's own accuracy).
function point(p: readonly number[]): Point3 {
  return { x: significant(p[0]), y: significant(p[1]), z: significant(p[2]) };
}

function significant(value: number): number {
  return Number(value.toPrecision(12));
}
