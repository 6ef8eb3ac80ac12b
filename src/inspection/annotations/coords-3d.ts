// `?coords_3d=true` on annotation creation: where the annotation lies on the reconstruction.
//
// The ray from the annotation's calibrated camera through the centre of its `coords_2d`
// rectangle (pixelRay: intrinsics and distortion of the calibration imported with the
// reconstruction, pipeline/reconstruction.ts) is cast at the dense model, in the output coordinate
// system (extras.coordinate_system), absolute coordinates in metres (CONTRACT: {x, y, z}):
// 1. the mesh (reconstruction.mesh, the cloud's `3d_mesh_ply`) when there is one: rays through
//    a 5 x 5 grid over the rectangle's inner 80 % each meet their first triangle in front of the
//    camera (shared/mesh: BVH, Möller–Trumbore); once at least a third of them met the mesh, the
//    point is the centre ray's own hit when it lies within 2 % of their median depth (along the
//    centre ray), else the centre ray at that median. One ray through the centre met whatever
//    the mesh had there: on lund's facade windows the glass reflects, its depth maps are wrong,
//    and the mesh bulges out of the windows (bench/coords3d-facade.ts); the frame and the wall
//    around the glass, in the same rectangle, outvote it. The mesh
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
// The mesh's point must be backed by the cloud: when the cloud's cone (2.) holds no point until
// more than UNSUPPORTED_MESH_GAP of the mesh point's depth behind it, that piece of mesh has no
// measurement under it and the cloud's point is taken (on lund, a Poisson sheet 2.4 m in front
// of a window whose glass gave no depths, where the cloud's cone found the facade at 0.18 m).
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
/**
 * The mesh's point is set aside when the cloud's cone holds no point before this share of its
 * depth past it: the surface there was made up by Poisson (which closes and bridges what the
 * photos did not see), not measured.
 */
export const UNSUPPORTED_MESH_GAP = 0.1;

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
    const samples = rectangleSamples(us, vs).map(([su, sv]) => pixelRay(photo, su, sv));
    const onMesh = reconstruction.mesh ? await this.onMesh(reconstruction.mesh, ray, samples) : null;
    const halfSide = Math.min(Math.max(...us) - Math.min(...us), Math.max(...vs) - Math.min(...vs)) / 2;
    const pixels = Math.min(PICK_MAX_PX, Math.max(PICK_MIN_PX, halfSide));
    // A cloud that cannot be read (not LAS/LAZ, removed from storage) gives no coords_3d rather
    // than failing the annotation's creation (the mesh's point stands alone then).
    const cloud = reconstruction.point_cloud ? await this.clouds.read(reconstruction.point_cloud).catch(() => null) : null;
    const onCloud = cloud ? pickAlongRay(cloud, ray.origin, ray.direction, 0, pixels / photo.fx) : null;
    if (onMesh && !(onCloud && onCloud.distanceAlongRay - onMesh.depth > UNSUPPORTED_MESH_GAP * onMesh.depth)) return point(onMesh.point);
    return onCloud ? point(onCloud.point) : null;
  }

  /** The point of the centre ray at the samples' median depth on the mesh; null when the mesh cannot be read or too few samples meet it. */
  private async onMesh(source: StoredObject, ray: Ray, samples: Ray[]): Promise<{ point: [number, number, number]; depth: number } | null> {
    const bvh = await this.meshes.read(source).catch(() => null);
    if (!bvh) return null;
    const depths = samples.flatMap((sample) => {
      const hit = intersectRay(bvh, sample.origin, sample.direction, 0);
      return hit ? [hit.t * dot(sample.direction, ray.direction)] : [];
    });
    if (depths.length < Math.ceil(samples.length / 3)) return null;
    // The centre ray's own hit when it agrees with the median (exact on any surface); else the
    // centre ray at the median depth (its hit was a spike or a hole of the mesh).
    const centre = intersectRay(bvh, ray.origin, ray.direction, 0);
    const middle = median(depths);
    const t = centre && Math.abs(centre.t - middle) <= CENTRE_AGREES * middle ? centre.t : middle;
    return { point: [ray.origin[0] + t * ray.direction[0], ray.origin[1] + t * ray.direction[1], ray.origin[2] + t * ray.direction[2]], depth: t };
  }
}

export const SAMPLES_PER_SIDE = 5;
/** The centre ray's hit is kept when within this share of the median depth. */
const CENTRE_AGREES = 0.02;

/** Pixels of a SAMPLES_PER_SIDE² grid over the inner 80 % of the rectangle spanned by `us` x `vs` (its centre among them). */
export function rectangleSamples(us: number[], vs: number[]): [number, number][] {
  const [u0, u1, v0, v1] = [Math.min(...us), Math.max(...us), Math.min(...vs), Math.max(...vs)];
  const at = (lo: number, hi: number, k: number) => (lo + hi) / 2 + (hi - lo) * 0.8 * (k / (SAMPLES_PER_SIDE - 1) - 0.5);
  const samples: [number, number][] = [];
  for (let i = 0; i < SAMPLES_PER_SIDE; i++) for (let j = 0; j < SAMPLES_PER_SIDE; j++) samples.push([at(u0, u1, i), at(v0, v1, j)]);
  return samples;
}

function dot(a: readonly number[], b: readonly number[]): number {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
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
