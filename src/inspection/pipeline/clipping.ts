// Status 5, "Clipping point cloud": with `clip_point_cloud`, the points within `clipping_radius`
// metres of the asset's position, measured horizontally (x, y in the output system; heights are
// kept whatever they are, so a tower keeps its top), become the inspection's point-cloud output
// (LAS and PLY, this service's own files; the cloud's may be LAS or LAZ). The cloud project's full point cloud stays as it is
// (coords_3d still uses it: an annotation may lie outside the radius).
import type { Logger } from 'pino';
import { clipByRadius, LasFormatError, readPointCloudFile, writeLas, writePly } from '../../shared/pointcloud/index.ts';
import { projectorFrom } from '../../shared/geo/projection.ts';
import { inspectionFiles, type FileStore } from '../storage/inspection-files.ts';
import { readStoredObject, type ClippedPointCloud, type Reconstruction } from './reconstruction.ts';

/** Radius used when `clip_point_cloud` is set without `clipping_radius`, metres. */
export const DEFAULT_CLIPPING_RADIUS_M = 50;

/** A clipping that cannot be done with these inputs (status 17 with this reason). */
export class ClippingError extends Error {}

export class PointCloudClipper {
  constructor(
    private readonly files: FileStore,
    private readonly logger: Logger,
  ) {}

  async clip(input: {
    inspectionId: number;
    /** null: nothing reconstructed (a ClippingError, as with no point cloud). */
    reconstruction: Reconstruction | null;
    asset: { latitude: number | null; longitude: number | null };
    radiusMetres: number | undefined;
  }): Promise<ClippedPointCloud> {
    const { reconstruction, asset } = input;
    const radius = input.radiusMetres ?? DEFAULT_CLIPPING_RADIUS_M;
    if (!reconstruction?.point_cloud) throw new ClippingError('Processing produced no point cloud to clip.');
    const crs = reconstruction.coordinate_system;
    const project = crs ? projectorFrom(crs) : null;
    if (!project) throw new ClippingError(`The point cloud's coordinate system (${crs?.name ?? 'unknown'}) is not georeferenced: the asset's position cannot be placed in it.`);
    if (asset.latitude === null || asset.longitude === null) throw new ClippingError('The asset has no position to clip around.');
    const center = project(asset.latitude, asset.longitude);
    if (!center) throw new ClippingError(`The asset's position cannot be projected into ${crs!.name}.`);

    const data = await readStoredObject(this.files, reconstruction.point_cloud);
    let las;
    try {
      las = await readPointCloudFile(data); // LAS (colmap) or LAZ (NodeODM)
    } catch (err) {
      if (err instanceof LasFormatError) throw new ClippingError(`The point cloud cannot be read for clipping: ${err.message}.`);
      throw err;
    }
    const unitFactor = crs!.unit_factor ?? 1; // metres per unit of the system
    const clipped = clipByRadius(las, center, radius / unitFactor);
    const h = las.header;
    const generation = Date.now();
    const lasKey = inspectionFiles.clippedPointCloud(input.inspectionId, generation, 'las');
    const plyKey = inspectionFiles.clippedPointCloud(input.inspectionId, generation, 'ply');
    await this.files.store.putObject(
      this.files.bucket,
      lasKey,
      writeLas(clipped, { pointFormat: 2, scale: h.scale, offset: h.offset, wkt: h.wkt ?? crs!.wkt, horizontalEpsg: h.horizontalEpsg, verticalEpsg: h.verticalEpsg, generatingSoftware: 'open-inspection clipping' }),
      { contentType: 'application/vnd.las' },
    );
    await this.files.store.putObject(
      this.files.bucket,
      plyKey,
      writePly(clipped, [`coordinate system: ${crs!.name}`, `clipped: ${radius} m horizontally around ${center.x.toFixed(3)} ${center.y.toFixed(3)}`]),
      { contentType: 'application/octet-stream' },
    );
    this.logger.info({ inspectionId: input.inspectionId, radius, before: las.count, after: clipped.count }, 'point cloud clipped');
    return { bucket: this.files.bucket, key: lasKey, ply_key: plyKey, radius_m: radius, center, points_before: las.count, points_after: clipped.count };
  }
}
