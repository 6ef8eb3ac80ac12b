// What photogrammetry reconstructed, brought from the cloud project into the inspection once the
// project is DONE (status 4 -> 5 or 7):
// - each camera record gets its calibrated position (WGS 84) and orientation (`quaternions`), and
//   a `calibration` (intrinsics and pose in the output coordinate system) that coords_3d casts
//   rays with (annotations/coords-3d.ts);
// - the inspection gets a `reconstruction` record: the output coordinate system and offset the
//   cloud wrote its outputs in (extras), where the point cloud and the mesh are (clipping,
//   coords_3d), and where the orthomosaic, DSM and DTM are with their extent and zooms
//   (ortho/raster-layers.ts; the orthomosaic is tiled for the console's map).
// The cloud's outputs are read from the shared object store at the keys the cloud's outputs API
// gives, as the outputs endpoint hands them to clients.
// Only engines that really reconstruct (`"reconstructed": true` in
// calibrated_camera_parameters_json: colmap, nodeodm) change the cameras; the exif engine's
// cameras are what image analysis already recorded.
import { buffer } from 'node:stream/consumers';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { FileStore } from '../storage/inspection-files.ts';
import type { ProjectionDefinition } from '../../shared/geo/projection.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import { LasFormatError, readPointCloudFile } from '../../shared/pointcloud/index.ts';
import { projectorFrom } from '../../shared/geo/projection.ts';
import { dtmGroundReference, groundReference, type GroundReference } from './ground-altitude.ts';
import { openElevationRaster } from '../ortho/elevation-raster.ts';
import { RasterRefused } from '../ortho/stored-cog.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { rasterLayersOf, type RasterLayers } from '../ortho/raster-layers.ts';

/** The output coordinate system as the cloud's outputs describe it (cloud coordinate-systems/crs.ts describeCrs). */
export interface OutputCrs extends ProjectionDefinition {
  name: string;
  wkt: string;
  /** Metres per unit of x, y, z (1 unless the system is in feet, say). */
  unit_factor?: number;
}

export interface StoredObject {
  bucket: string;
  key: string;
}

export interface ClippedPointCloud extends StoredObject {
  /** The same points as PLY, in the same bucket. */
  ply_key: string;
  /** Metres, horizontally, around `center` (the asset's position in the output system). */
  radius_m: number;
  center: { x: number; y: number };
  points_before: number;
  points_after: number;
}

export interface Reconstruction {
  engine: string | null;
  reconstructed: boolean;
  coordinate_system: OutputCrs | null;
  offset_3d_xyz: number[] | null;
  images_registered: number | null;
  /** The cloud's point cloud (LAS), in the output system. */
  point_cloud: StoredObject | null;
  /** The cloud's mesh (`3d_mesh_ply`: binary PLY, absolute output coordinates in doubles) that coords_3d casts rays at; absent: imported before it was recorded. */
  mesh?: StoredObject | null;
  /** The clipped point cloud (status 5), this service's own file; the inspection's point_cloud output when present. */
  clipped_point_cloud: ClippedPointCloud | null;
  /** How ground_reference_altitude was found (ground-altitude.ts); absent: not computed. */
  ground_reference?: GroundReference | null;
  /** The cloud's orthomosaic, DSM and DTM (ortho/raster-layers.ts); absent: imported before they were recorded. */
  rasters?: RasterLayers;
}

export interface CameraCalibration {
  width: number;
  height: number;
  intrinsics: { fx: number; fy: number; cx: number; cy: number; k1?: number; k2?: number; p1?: number; p2?: number };
  position_output_crs: { x: number; y: number; z: number };
  rotation_matrix_output_crs: number[][];
}

/** One camera of calibrated_camera_parameters_json (the fields this service reads). */
interface CalibratedCamera {
  key: string;
  width: number;
  height: number;
  intrinsics?: CameraCalibration['intrinsics'] | null;
  position_output_crs?: CameraCalibration['position_output_crs'] | null;
  rotation_matrix_output_crs?: number[][] | null;
  position_wgs84?: { latitude: number; longitude: number; altitude: number | null } | null;
  quaternion?: number[] | null;
}

interface CalibratedDocument {
  engine?: string;
  reconstructed?: boolean;
  output_coordinate_system?: OutputCrs | null;
  offset_3d_xyz?: number[] | null;
  images_registered?: number;
  cameras?: CalibratedCamera[];
}

/** Reads an object of the shared store whole (JSON documents, point clouds). */
export async function readStoredObject(files: FileStore, object: StoredObject): Promise<Buffer> {
  const { body } = await files.store.getObject(object.bucket, object.key);
  return buffer(body);
}

export class ReconstructionImporter {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly cloud: CloudClient,
    private readonly files: FileStore,
    private readonly logger: Logger,
  ) {}

  /**
   * Records what the DONE cloud project produced on the inspection and its cameras. Idempotent
   * (a retried step writes the same values). Returns the reconstruction record, null when the
   * project produced no calibrated cameras.
   */
  async import(inspection: InspectionRow): Promise<Reconstruction | null> {
    const outputs = await this.cloud.as(inspection).outputs(inspection.project_id!);
    const done = (type: string): StoredObject | null => {
      const o = outputs.find((x) => x.output_type === type && x.availability === 'done' && x.s3_key);
      return o ? { bucket: o.s3_bucket ?? this.files.bucket, key: o.s3_key! } : null;
    };
    const calibratedFile = done('calibrated_camera_parameters_json');
    if (!calibratedFile) return null;
    const document = JSON.parse((await readStoredObject(this.files, calibratedFile)).toString('utf8')) as CalibratedDocument;
    const reconstructed = document.reconstructed === true;
    const reconstruction: Reconstruction = {
      engine: document.engine ?? null,
      reconstructed,
      coordinate_system: document.output_coordinate_system ?? null,
      offset_3d_xyz: document.offset_3d_xyz ?? null,
      images_registered: document.images_registered ?? null,
      point_cloud: done('point_cloud'),
      mesh: done('3d_mesh_ply'),
      clipped_point_cloud: null,
      rasters: await rasterLayersOf(this.cloud.as(inspection), inspection.project_id!, outputs, this.files.store, this.files.bucket),
    };
    reconstruction.ground_reference = reconstructed ? await this.groundReferenceOf(inspection, reconstruction) : null;

    const updates = reconstructed ? (document.cameras ?? []).map(cameraUpdate).filter((u) => u !== null) : [];
    await this.db.transaction().execute(async (trx) => {
      // One statement per 500 cameras, the values passed as one JSON parameter.
      for (let i = 0; i < updates.length; i += 500) {
        await sql`
          update inspection.cameras c
             set latitude = v.latitude, longitude = v.longitude, elevation = coalesce(v.elevation, c.elevation),
                 quaternion = v.quaternion, calibration = v.calibration
            from jsonb_to_recordset(${JSON.stringify(updates.slice(i, i + 500))}::jsonb)
                 as v(image_key text, latitude double precision, longitude double precision, elevation double precision, quaternion jsonb, calibration jsonb)
           where c.inspection_id = ${inspection.id} and c.image_key = v.image_key`.execute(trx);
      }
      await this.inspections.recordReconstruction(inspection.id, reconstruction, trx);
      if (reconstruction.ground_reference) await this.inspections.recordGroundReferenceAltitude(inspection.id, reconstruction.ground_reference.altitude_m, trx);
    });
    this.logger.info({ inspectionId: inspection.id, engine: reconstruction.engine, reconstructed, cameras: updates.length, pointCloud: reconstruction.point_cloud !== null, orthomosaic: reconstruction.rasters?.orthomosaic !== null }, 'reconstruction imported');
    return reconstruction;
  }

  /**
   * The ground height at the asset (ground-altitude.ts): from the DTM when there is one that covers
   * the asset and can be read, else from the point cloud; null without either.
   */
  private async groundReferenceOf(inspection: InspectionRow, reconstruction: Reconstruction): Promise<GroundReference | null> {
    const crs = reconstruction.coordinate_system;
    const unitFactor = crs?.unit_factor ?? 1;
    const asset = await this.db.selectFrom('inspection.assets').select(['latitude', 'longitude']).where('id', '=', inspection.asset_id).executeTakeFirst();
    const project = crs ? projectorFrom(crs) : null;
    const center = project && asset?.latitude != null && asset.longitude != null ? project(Number(asset.latitude), Number(asset.longitude)) : null;
    const dtm = reconstruction.rasters?.dtm;
    if (dtm && center) {
      try {
        const ground = await dtmGroundReference(await openElevationRaster(this.files.store, dtm, crs), center, unitFactor);
        if (ground) {
          this.logger.info({ inspectionId: inspection.id, ground }, 'ground reference altitude');
          return ground;
        }
        this.logger.info({ inspectionId: inspection.id, key: dtm.key }, 'ground_reference_altitude: no DTM height at the asset, the point cloud is used');
      } catch (err) {
        if (!(err instanceof RasterRefused || err instanceof StorageError)) throw err;
        this.logger.warn({ inspectionId: inspection.id, key: dtm.key, err: err.message }, 'ground_reference_altitude: the DTM cannot be used, the point cloud is');
      }
    }
    if (!reconstruction.point_cloud) return null;
    let cloud;
    try {
      cloud = await readPointCloudFile(await readStoredObject(this.files, reconstruction.point_cloud));
    } catch (err) {
      if (!(err instanceof LasFormatError)) throw err;
      this.logger.warn({ inspectionId: inspection.id, err: err.message }, 'ground_reference_altitude not computed: the point cloud cannot be read');
      return null;
    }
    const ground = groundReference(cloud, center ?? null, unitFactor);
    this.logger.info({ inspectionId: inspection.id, ground }, 'ground reference altitude');
    return ground;
  }
}

/** The camera record's new values, or null for a camera without a calibrated pose. */
function cameraUpdate(c: CalibratedCamera) {
  const p = c.position_wgs84;
  if (!c.key || !p || !Array.isArray(c.quaternion) || c.quaternion.length !== 4) return null;
  const calibration: CameraCalibration | null =
    c.intrinsics && c.position_output_crs && c.rotation_matrix_output_crs
      ? { width: c.width, height: c.height, intrinsics: c.intrinsics, position_output_crs: c.position_output_crs, rotation_matrix_output_crs: c.rotation_matrix_output_crs }
      : null;
  return { image_key: c.key, latitude: p.latitude, longitude: p.longitude, elevation: p.altitude, quaternion: c.quaternion, calibration };
}
