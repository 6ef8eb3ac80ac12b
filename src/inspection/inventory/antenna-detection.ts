// The automatic antenna detection of an inspection with `detect_antennas` (issue 36 §3; spec
// additional statuses 1–10 on the key `inventory`, allowance rules 3 and 5), as a durable job,
// `inspection.detect-antennas`, queued in the transaction that completes processing
// (pipeline/inspection-pipeline.ts), as the rust analysis is: it reads the processed inspection.
//
// 1 Pending (from `process`, or when a retry starts processing; the Tower inventory unit is spent
// by `process` with the Projects unit, and a retry recycles it) -> 2 when the job starts ->
//   - the cloud project's point cloud (its `point_cloud` output, listed by the cloud's outputs API
//     through the cloud client, read from the shared object store; LAS or LAZ in the output system,
//     UTM with an offset for colmap and NodeODM) is handed with the asset's position in that system
//     and the grid convergence there to the detector (detection/detect-antennas.ts), on a worker
//     thread (detection-runner.ts);
//   - detected: one inventory item per fitted box (detected-items.ts), written in the transaction
//     that moves the status: 3 (review pending) on a good cloud, 9 (borderline quality, a warning,
//     the reasons in inventory_reason) on a borderline one;
//   - 8 "No tower" (a bridge, a street, a park) and 10 "Insufficient quality" (a tower, but too
//     little cloud to find its equipment), each with the detector's reason;
//   - 7 with the reason when it cannot be done: no point cloud (the engine made none), a cloud that
//     cannot be read, a system that is not georeferenced, an asset without a position, the
//     detector failing. Processing that ends in an error status settles 1 as 7 too
//     (inventory-statuses.ts inventorySettledBy).
// The inspection's other results are never touched: status stays 7, the cameras, outputs and
// annotations as they were. Storage, cloud and database outages fail the job for pg-boss to retry
// it (2 -> 2 is a listed move), and on its last attempt end in 7 with the outage in words (never
// left at 2 for good); anything else ends in 7 with its message.
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import { CAMERA_COLUMNS } from '../inspection.tables.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { JobAttempt, JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import type { FileStore } from '../storage/inspection-files.ts';
import { readStoredObject, type CameraCalibration, type OutputCrs, type Reconstruction } from '../pipeline/reconstruction.ts';
import { ApiError } from '../../infra/http/errors.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { isDatabaseUnavailable } from '../../infra/database/connection-errors.ts';
import { projectorFrom } from '../../shared/geo/projection.ts';
import { gridConvergenceDeg, utmZoneOfEpsg } from '../../shared/geo/utm.ts';
import { cameraFromCalibrated, type PhotoCamera } from '../../shared/pointcloud/index.ts';
import type { InventoryService } from './inventory.service.ts';
import { InventoryStatus } from './inventory-statuses.ts';
import { detectedItemColumns, type DetectedItemColumns } from './detected-items.ts';
import { DetectionFailure, runAntennaDetection, type DetectionRunner } from './detection-runner.ts';

/** In the transaction that starts processing: 1 Pending when the inspection asks for antenna detection. */
export async function markInventoryPending(inspections: InspectionRepository, trx: Transaction<InspectionTables>, inspectionId: number): Promise<void> {
  const row = await inspections.find(inspectionId, trx);
  if (row?.processing_parameters.detect_antennas) await inspections.inventoryTransition(inspectionId, InventoryStatus.DetectionPending, trx, { from: 'any' });
}

/** In the transaction that completes processing: the detection job queued when it is pending. */
export async function queueAntennaDetection(inspections: InspectionRepository, jobs: JobQueue, trx: Transaction<InspectionTables>, inspectionId: number): Promise<void> {
  const row = await inspections.find(inspectionId, trx);
  if (row?.additional_statuses.inventory !== InventoryStatus.DetectionPending) return;
  await jobs.send<InspectionJobs, 'inspection.detect-antennas'>('inspection.detect-antennas', { inspectionId }, { trx });
}

type Ending =
  | { status: typeof InventoryStatus.ReviewPending | typeof InventoryStatus.BorderlineQuality; reason: string | null; items: DetectedItemColumns[] }
  | { status: typeof InventoryStatus.NoTower | typeof InventoryStatus.InsufficientQuality | typeof InventoryStatus.DetectionError; reason: string; items?: undefined };

export class AntennaDetection {
  /** Where the detector runs: a worker thread (detection-runner.ts). Tests put a failing detector here. */
  runner: DetectionRunner = (input) => runAntennaDetection(input);

  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly inventory: InventoryService,
    private readonly cloud: CloudClient,
    private readonly files: FileStore,
    private readonly logger: Logger,
  ) {}

  /** The `inspection.detect-antennas` job; `attempt`: which run of it (an outage on the last one ends in 7). */
  async run(inspectionId: number, attempt: JobAttempt = { retryCount: 0, last: false }): Promise<void> {
    const S = InventoryStatus;
    if (!(await this.inspections.inventoryTransition(inspectionId, S.Detecting, undefined, { from: [S.DetectionPending, S.Detecting] }))) return;
    const inspection = await this.inspections.find(inspectionId);
    if (!inspection) return;
    const log = this.logger.child({ inspectionId });
    let ending: Ending;
    try {
      ending = await this.detect(inspection, log);
    } catch (err) {
      if (transient(err) && !attempt.last) throw err; // pg-boss retries the job
      const text = err instanceof Error ? err.message : String(err);
      const message =
        err instanceof DetectionFailure ? err.message : transient(err) ? `the cloud service or the storage could not be reached after ${attempt.retryCount + 1} attempts (${text.replace(/\.$/, '')}); retry the inspection to run it again` : `an unexpected error (${text})`;
      if (!(err instanceof DetectionFailure)) log.error({ err, attempt }, 'antenna detection failed');
      ending = { status: S.DetectionError, reason: sentence(`The automatic antenna detection failed: ${message}`) };
    }
    await this.db.transaction().execute(async (trx) => {
      if (!(await this.inspections.inventoryTransition(inspectionId, ending.status, trx, { from: [S.Detecting], reason: ending.reason }))) return;
      if (ending.items) await this.inventory.insertDetected(trx, inspectionId, ending.items);
    });
    log.info({ inventory: ending.status, items: ending.items?.length ?? 0 }, 'antenna detection done');
  }

  private async detect(inspection: InspectionRow, log: Logger): Promise<Ending> {
    const S = InventoryStatus;
    const reconstruction = inspection.reconstruction as Reconstruction | null;
    const crs = reconstruction?.coordinate_system ?? null;
    if (!reconstruction) throw new DetectionFailure('processing recorded no reconstruction (the cloud project produced no calibrated cameras)');
    const project = crs ? projectorFrom(crs) : null;
    if (!crs || !project) throw new DetectionFailure(`the point cloud's coordinate system (${crs?.name ?? 'unknown'}) is not georeferenced: the asset's position cannot be placed in it`);
    const asset = await this.db.selectFrom('inspection.assets').select(['latitude', 'longitude']).where('id', '=', inspection.asset_id).executeTakeFirst();
    if (asset?.latitude == null || asset.longitude == null) throw new DetectionFailure('the asset has no position (latitude, longitude): the tower cannot be looked for around it');
    const [latitude, longitude] = [Number(asset.latitude), Number(asset.longitude)];
    const assetXY = project(latitude, longitude);
    if (!assetXY) throw new DetectionFailure(`the asset's position cannot be projected into ${crs.name}`);

    // The cloud project's own, full point cloud (not the clipped one), as its outputs API lists it.
    const outputs = await this.cloud.as(inspection).outputs(inspection.project_id!);
    const listed = outputs.find((o) => o.output_type === 'point_cloud');
    if (!listed || listed.availability !== 'done' || !listed.s3_key) {
      const why = listed ? `its point_cloud output is ${listed.availability}${listed.note ? ` (${listed.note.replace(/\.$/, '')})` : ''}` : 'it lists no point_cloud output';
      throw new DetectionFailure(`the cloud project has no dense point cloud to search: ${why}`);
    }
    let cloud: Buffer;
    try {
      cloud = await readStoredObject(this.files, { bucket: listed.s3_bucket ?? this.files.bucket, key: listed.s3_key });
    } catch (err) {
      if (err instanceof StorageError && (err.code === 'NoSuchKey' || err.code === 'NoSuchBucket')) throw new DetectionFailure('the point cloud is no longer in storage');
      throw err;
    }
    const convergence = convergenceAt(crs, latitude, longitude);
    const unitFactor = crs.unit_factor ?? 1;
    const bytes = cloud.length;
    const run = await this.runner({ cloud, assetXY: [assetXY.x, assetXY.y], unitFactor, gridConvergenceDeg: convergence });
    const { outcome } = run;
    log.info(
      { bytes, points: run.points, readSeconds: round(run.readSeconds), detectSeconds: round(run.detectSeconds), outcome: outcome.kind, items: outcome.kind === 'detected' ? outcome.items.length : 0 },
      'antenna detection ran',
    );
    if (outcome.kind === 'no-tower') return { status: S.NoTower, reason: sentence(`No tower was found in the point cloud around the asset: ${outcome.reason}`) };
    if (outcome.kind === 'insufficient') return { status: S.InsufficientQuality, reason: sentence(`The point cloud is not good enough to find the tower's equipment: ${outcome.reason}`) };

    const cameras = await this.db.selectFrom('inspection.cameras').select(CAMERA_COLUMNS).where('inspection_id', '=', inspection.id).orderBy('id').execute();
    const photos = cameras.flatMap((c): { photoId: number; camera: PhotoCamera }[] => {
      const camera = c.calibration ? cameraFromCalibrated(c.calibration as CameraCalibration) : null;
      return camera ? [{ photoId: c.id, camera }] : [];
    });
    const items = detectedItemColumns(outcome.items, {
      photos,
      tower: outcome.tower,
      basePlate: inspection.base_plate_location as { x: number; y: number; z: number } | null,
      gridConvergenceDeg: convergence,
      unitFactor,
    });
    const found = `${items.length} item(s) detected on a ${outcome.tower.type} tower of ${outcome.tower.heightM.toFixed(1)} m`;
    if (outcome.quality.level === 'borderline') {
      return { status: S.BorderlineQuality, reason: sentence(`Borderline point cloud quality (${found}; check them): ${outcome.quality.reasons.join('; ') || 'no reason given'}`), items };
    }
    return { status: S.ReviewPending, reason: items.length === 0 ? sentence(`The detection found a ${outcome.tower.type} tower of ${outcome.tower.heightM.toFixed(1)} m but no equipment on it`) : null, items };
  }
}

/**
 * Degrees from true north to grid north at the asset (detection-types.ts): the UTM formula when
 * the system is a WGS 84 UTM zone (shared/geo/utm.ts gridConvergenceDeg), else the grid bearing
 * of a short step north, as inventory.service.ts finds true north for items marked by hand.
 */
export function convergenceAt(crs: OutputCrs, latitude: number, longitude: number): number {
  const zone = utmZoneOfEpsg((crs as { horizontal_epsg?: number | null }).horizontal_epsg);
  if (zone) return gridConvergenceDeg(latitude, longitude, zone);
  const project = projectorFrom(crs);
  const here = project?.(latitude, longitude);
  const north = latitude + 0.001 < 90 ? project?.(latitude + 0.001, longitude) : null;
  if (!here || !north) return 0;
  return -(Math.atan2(north.x - here.x, north.y - here.y) * 180) / Math.PI;
}

/** A lost database, an unreachable cloud or store: worth another attempt of the job. */
function transient(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true;
  if (err instanceof ApiError) return err.statusCode >= 500 || err.statusCode === 429;
  return err instanceof StorageError;
}

/** Capitalised, one final full stop. */
function sentence(text: string): string {
  const trimmed = text.trim().replace(/[.\s]+$/, '');
  return `${trimmed[0].toUpperCase()}${trimmed.slice(1)}.`;
}

const round = (v: number) => Math.round(v * 100) / 100;
