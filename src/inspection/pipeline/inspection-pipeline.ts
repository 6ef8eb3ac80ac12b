// The processing pipeline of an inspection, as durable jobs (see inspection.jobs.ts):
//   process (API) -> 20 Waiting -> (is_video: [extract-video] 12 Extracting video images, frames
//   become the images, ../video/video-extraction.ts; or 14) -> [analyze-images] 3 Analyzing -> 4 Photogrammetry (cloud project
//   started) -> [track-photogrammetry, polling the cloud; on DONE the reconstruction is imported,
//   reconstruction.ts] -> with clip_point_cloud and a point cloud: 5 Clipping [clip-point-cloud,
//   clipping.ts] -> 7 Completed; or 19 (too few valid images), 16 (photogrammetry), 17 (clipping).
// With detect_rust, the rust analysis (additional_statuses.rust 11 from the start) is queued with
// the move to 7 and runs as its own job (rust/rust-analysis.ts); so does, with detect_antennas, the
// antenna detection (additional_statuses.inventory 1 from the start; inventory/antenna-detection.ts).
// Every step re-reads the inspection and acts only if it is still in the status the step expects,
// and every status change is a transition of inspection-transitions.ts that applies only from the
// expected status (InspectionRepository.transition): a step retried after a crash (or run twice),
// or one that finds the inspection deleted or changed meanwhile, does no harm.
import crypto from 'node:crypto';
import path from 'node:path';
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionTables } from '../inspection.tables.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import { analyzeImage } from '../../shared/image-metadata/index.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';
import { openInput } from './storage-reader.ts';
import { Status } from '../inspections/statuses.ts';
import { CAMERA_STATISTICS_ROWS, refreshCameraStatistics } from '../inspections/camera-list.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import { ApiError, ValidationError } from '../../infra/http/errors.ts';
import type { FileStore } from '../storage/inspection-files.ts';
import { ReconstructionImporter, type Reconstruction } from './reconstruction.ts';
import { ClippingError, PointCloudClipper } from './clipping.ts';
import { requestedOutputsOf } from './output-options.ts';
import { markRustPending, queueRustAnalysis } from '../rust/rust-analysis.ts';
import { markInventoryPending, queueAntennaDetection } from '../inventory/antenna-detection.ts';

/** Fewer valid images than this ends in status 19. */
export const MIN_VALID_IMAGES = 3;
const HEAD_BYTES = 64 * 1024;
const POLL_SECONDS = 2;

export class InspectionPipeline {
  private readonly importer: ReconstructionImporter;
  private readonly clipper: PointCloudClipper;

  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly cloud: CloudClient,
    private readonly jobs: JobQueue,
    private readonly files: FileStore,
    private readonly logger: Logger,
    /** processing_backend -> cloud engine (config PROCESSING_BACKEND_ENGINES). */
    private readonly backendEngines: Record<string, string> = {},
  ) {
    this.importer = new ReconstructionImporter(db, inspections, cloud, files, logger);
    this.clipper = new PointCloudClipper(files, logger);
  }

  /**
   * The pipeline's entry, in the caller's transaction (process, or a prepared retry; allowance
   * settled by the caller): 20 Waiting and the first job queued. False when the inspection was
   * not in one of `from`.
   */
  async begin(trx: Transaction<InspectionTables>, inspectionId: number, from: readonly Status[]): Promise<boolean> {
    const fields = { processing_started_at: new Date(), pcs_task_uuid: crypto.randomUUID(), processing_error: null };
    if (!(await this.inspections.transition(inspectionId, from, Status.Waiting, fields, trx))) return false;
    await markRustPending(this.inspections, trx, inspectionId); // detect_rust: 11, run once processing completes
    await markInventoryPending(this.inspections, trx, inspectionId); // detect_antennas: 1, run once processing completes
    // A video inspection's images are the frames of its videos: extracted first (status 12).
    const first = (await this.inspections.findAny(inspectionId, trx)).processing_parameters.is_video ? 'inspection.extract-video' : 'inspection.analyze-images';
    await this.jobs.send<InspectionJobs, typeof first>(first, { inspectionId }, { trx });
    return true;
  }

  /** Status 3: one camera record per valid image; invalid files are counted, not fatal. */
  async analyzeImages(inspectionId: number): Promise<void> {
    const inspection = await this.inspections.find(inspectionId);
    if (!inspection) return;
    if (!(await this.inspections.transition(inspectionId, [Status.Waiting, Status.Analyzing], Status.Analyzing))) return;
    // A video inspection analyses the frames taken from its videos, not the videos.
    const keys = await this.inspections.imageKeys(inspectionId, undefined, inspection.processing_parameters.is_video ? 'video_frame' : 'upload');
    // The inputs are read from the ObjectStore, as the inputs ZIP reads them (inputs-zip.service.ts).
    const { bucket_name: bucket } = await this.cloud.as(inspection).getProject(inspection.project_id!);
    const invalid: { key: string; reason: string }[] = [];
    // Performance (bench/README.md, "Image analysis"): the cameras are written together at the
    // end, 500 rows per statement, instead of one upsert per image on the one database connection.
    const cameras: Insertable<InspectionTables['inspection.cameras']>[] = [];
    await mapConcurrently(keys, 8, async (key) => {
      const object = await openInput(this.files.store, bucket, key, HEAD_BYTES);
      const analysis = object ? await analyzeImage(object.readRange, object.size) : { ok: false as const, reason: 'empty file' };
      if (!analysis.ok) {
        invalid.push({ key, reason: analysis.reason });
        return;
      }
      const m = analysis.metadata;
      const camera = {
        inspection_id: inspectionId,
        image_key: key,
        filename: path.posix.basename(key),
        latitude: m.latitude,
        longitude: m.longitude,
        elevation: m.altitude,
        width: m.width,
        height: m.height,
        quaternion: m.quaternion ? JSON.stringify(m.quaternion) : null,
        make: m.make,
        model: m.model,
      };
      cameras.push(camera);
    });
    cameras.sort((a, b) => (a.image_key < b.image_key ? -1 : a.image_key > b.image_key ? 1 : 0)); // ids in key order, as before
    for (let i = 0; i < cameras.length; i += 500) {
      // Upsert: a retried analysis updates the same record, so photo_id (the camera id) stays stable.
      await this.db
        .insertInto('inspection.cameras')
        .values(cameras.slice(i, i + 500))
        .onConflict((oc) =>
          oc.columns(['inspection_id', 'image_key']).doUpdateSet((eb) => ({
            filename: eb.ref('excluded.filename'),
            latitude: eb.ref('excluded.latitude'),
            longitude: eb.ref('excluded.longitude'),
            elevation: eb.ref('excluded.elevation'),
            width: eb.ref('excluded.width'),
            height: eb.ref('excluded.height'),
            quaternion: eb.ref('excluded.quaternion'),
            make: eb.ref('excluded.make'),
            model: eb.ref('excluded.model'),
          })),
        )
        .execute();
    }
    if (cameras.length >= CAMERA_STATISTICS_ROWS) await refreshCameraStatistics(this.db);
    const valid = cameras.length;
    const log = this.logger.child({ inspectionId });
    log.info({ valid, invalid: invalid.length }, 'images analysed');
    if (invalid.length) log.info({ invalid: invalid.slice(0, 20) }, 'invalid inputs');
    const summary = { images_valid: valid, images_invalid: invalid.length };
    if (valid < MIN_VALID_IMAGES) {
      await this.inspections.transition(inspectionId, Status.Analyzing, Status.ErrorNotEnoughImages, {
        ...summary,
        processing_error: `Only ${valid} valid image(s); at least ${MIN_VALID_IMAGES} are needed (${invalid.length} file(s) could not be read as images).`,
        processing_ended_at: new Date(),
      });
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      if (!(await this.inspections.transition(inspectionId, Status.Analyzing, Status.Photogrammetry, summary, trx))) return;
      await this.jobs.send<InspectionJobs, 'inspection.track-photogrammetry'>('inspection.track-photogrammetry', { inspectionId }, { trx });
    });
  }

  /** Status 4: starts the cloud project once, then follows it until it ends. */
  async trackPhotogrammetry(inspectionId: number): Promise<void> {
    const inspection = await this.inspections.find(inspectionId);
    if (!inspection || inspection.status !== Status.Photogrammetry) return;
    let project = await this.cloud.as(inspection).getProject(inspection.project_id!);
    if (project.public_status === 'NEW' || project.public_status === 'UPLOADING') {
      // The engine configured for the inspection's processing_backend (none: the cloud's default).
      const engine = this.backendEngines[inspection.processing_backend];
      try {
        // generate_* become the cloud's `outputs` request (output-options.ts).
        project = await this.cloud.as(inspection).startProcessing(inspection.project_id!, { engine, outputs: { ...requestedOutputsOf(inspection.processing_parameters) } });
      } catch (err) {
        // A 400 will not pass on a retry (e.g. PROCESSING_BACKEND_ENGINES names an engine the cloud
        // does not offer): the inspection fails with the cloud's reason instead of waiting forever.
        if (!(err instanceof ApiError) || err.statusCode !== 400) throw err;
        await this.inspections.transition(inspectionId, Status.Photogrammetry, Status.ErrorPhotogrammetry, {
          processing_error: `The cloud service refused to start processing${engine ? ` with engine "${engine}"` : ''}: ${err instanceof ValidationError ? JSON.stringify(err.fields) : err.message}`,
          processing_ended_at: new Date(),
        });
        return;
      }
    }
    switch (project.public_status) {
      case 'DONE': {
        const reconstruction = await this.importer.import(inspection);
        if (inspection.processing_parameters.clip_point_cloud && reconstruction?.point_cloud) {
          await this.db.transaction().execute(async (trx) => {
            if (!(await this.inspections.transition(inspectionId, Status.Photogrammetry, Status.Clipping, {}, trx))) return;
            await this.jobs.send<InspectionJobs, 'inspection.clip-point-cloud'>('inspection.clip-point-cloud', { inspectionId }, { trx });
          });
          return;
        }
        if (inspection.processing_parameters.clip_point_cloud) this.logger.info({ inspectionId }, 'clipping skipped: the engine produced no point cloud');
        await this.complete(inspectionId, Status.Photogrammetry, {});
        return;
      }
      case 'ERROR':
      case 'CANCELED':
        await this.inspections.transition(inspectionId, Status.Photogrammetry, Status.ErrorPhotogrammetry, {
          processing_error: `${project.error_code ?? ''} ${project.error_reason || project.public_status}`.trim(),
          processing_ended_at: new Date(),
        });
        return;
      default:
        await this.jobs.send<InspectionJobs, 'inspection.track-photogrammetry'>('inspection.track-photogrammetry', { inspectionId }, { startAfterSeconds: POLL_SECONDS });
    }
  }

  /** Status 5: the point cloud clipped around the asset becomes the inspection's point-cloud output. */
  async clipPointCloud(inspectionId: number): Promise<void> {
    const inspection = await this.inspections.find(inspectionId);
    if (!inspection || inspection.status !== Status.Clipping) return;
    const reconstruction = inspection.reconstruction as Reconstruction | null;
    const asset = await this.db.selectFrom('inspection.assets').select(['latitude', 'longitude']).where('id', '=', inspection.asset_id).executeTakeFirst();
    try {
      const clipped = await this.clipper.clip({
        inspectionId,
        reconstruction,
        asset: { latitude: asset?.latitude == null ? null : Number(asset.latitude), longitude: asset?.longitude == null ? null : Number(asset.longitude) },
        radiusMetres: inspection.processing_parameters.clipping_radius,
      });
      await this.complete(inspectionId, Status.Clipping, { reconstruction: { ...reconstruction!, clipped_point_cloud: clipped } });
    } catch (err) {
      if (!(err instanceof ClippingError)) throw err; // retried by the job queue
      await this.inspections.transition(inspectionId, Status.Clipping, Status.ErrorClipping, { processing_error: err.message, processing_ended_at: new Date() });
    }
  }

  private async complete(inspectionId: number, from: typeof Status.Photogrammetry | typeof Status.Clipping, fields: { reconstruction?: Reconstruction }): Promise<void> {
    const completed = await this.db.transaction().execute(async (trx) => {
      if (!(await this.inspections.transition(inspectionId, from, Status.Completed, { ...fields, processing_ended_at: new Date() }, trx))) return false;
      await queueRustAnalysis(this.inspections, this.jobs, trx, inspectionId); // detect_rust (rust/rust-analysis.ts)
      await queueAntennaDetection(this.inspections, this.jobs, trx, inspectionId); // detect_antennas (inventory/antenna-detection.ts)
      return true;
    });
    if (completed) this.logger.info({ inspectionId }, 'inspection processed');
  }
}
