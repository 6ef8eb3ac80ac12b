// `?coords_3d=true` on annotation creation: the position of the annotation in the point cloud.
//
// The ray from the annotation's calibrated camera through the centre of its `coords_2d`
// rectangle (pixelRay: intrinsics and distortion of the calibration imported with the
// reconstruction, pipeline/reconstruction.ts) meets the reconstructed point nearest to the camera
// among those inside a cone around it (pickAlongRay). The cone's half-angle is half the
// rectangle's smaller side, between PICK_MIN_PX and PICK_MAX_PX pixels: the point the user framed,
// not one at the rectangle's edge. The cloud is the project's full point cloud (not the clipped
// one: an annotation may lie outside the clipping radius), in the output coordinate system
// (extras.coordinate_system), absolute coordinates in metres (CONTRACT: {x, y, z}).
// null when the inspection has no point cloud or calibrated camera (the exif engine reconstructs
// nothing), when the cloud cannot be read, or when no point lies in the cone. LAS (colmap) and
// LAZ (NodeODM) clouds are read alike (shared/pointcloud/laz.ts).
import type { FileStore } from '../storage/inspection-files.ts';
import type { CameraRow, InspectionRow, Point3 } from '../inspection.tables.ts';
import { cameraFromCalibrated, pickAlongRay, pixelRay } from '../../shared/pointcloud/index.ts';
import type { CameraCalibration, Reconstruction } from '../pipeline/reconstruction.ts';
import { StoredPointClouds } from '../storage/point-clouds.ts';

export const PICK_MIN_PX = 3;
export const PICK_MAX_PX = 25;

export interface Coords3dLocator {
  locate(inspection: InspectionRow, camera: CameraRow, coords2d: [number, number][]): Promise<Point3 | null>;
}

export class PointCloudLocator implements Coords3dLocator {
  /** `clouds`: the module's cache, shared with measurement volumes, so a series of annotations reads the cloud once. */
  constructor(
    files: FileStore,
    private readonly clouds = new StoredPointClouds(files),
  ) {}

  async locate(inspection: InspectionRow, camera: CameraRow, coords2d: [number, number][]): Promise<Point3 | null> {
    const source = (inspection.reconstruction as Reconstruction | null)?.point_cloud;
    const calibration = camera.calibration as CameraCalibration | null;
    const photo = calibration ? cameraFromCalibrated(calibration) : null;
    if (!source || !photo) return null;
    const us = coords2d.map((p) => p[0] * photo.width);
    const vs = coords2d.map((p) => p[1] * photo.height);
    const u = (Math.min(...us) + Math.max(...us)) / 2;
    const v = (Math.min(...vs) + Math.max(...vs)) / 2;
    const halfSide = Math.min(Math.max(...us) - Math.min(...us), Math.max(...vs) - Math.min(...vs)) / 2;
    const pixels = Math.min(PICK_MAX_PX, Math.max(PICK_MIN_PX, halfSide));
    const ray = pixelRay(photo, u, v);
    // A cloud that cannot be read (not LAS/LAZ, removed from storage) gives no coords_3d rather
    // than failing the annotation's creation.
    const cloud = await this.clouds.read(source).catch(() => null);
    if (!cloud) return null;
    const hit = pickAlongRay(cloud, ray.origin, ray.direction, 0, pixels / photo.fx);
    // 12 significant digits: the point came from LAS integers times a scale, and float64 keeps
    // the product's noise (3.1390000000000002); 12 digits still hold 10 µm in UTM northings and
    // 1e-10 degrees in a geographic system.
    return hit ? { x: significant(hit.point[0]), y: significant(hit.point[1]), z: significant(hit.point[2]) } : null;
  }
}

function significant(value: number): number {
  return Number(value.toPrecision(12));
}
