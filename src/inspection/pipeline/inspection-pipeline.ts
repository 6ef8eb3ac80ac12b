// The processing pipeline of an inspection, as durable jobs (see inspection.jobs.ts):
//   process (API) -> 20 Waiting -> [analyze-images] 3 Analyzing -> 4 Photogrammetry (cloud project
//   started) -> [track-photogrammetry, polling the cloud] -> 7 Completed, or 16 / 19 on failure.
// Every step re-reads the inspection and acts only if it is still in the status the step expects,
// so a step retried after a crash (or run twice) does no harm.
import path from 'node:path';
import type { Insertable, Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionTables } from '../inspection.tables.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import { analyzeImage } from '../../shared/image-metadata/index.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';
import { StorageReader } from './storage-reader.ts';
import { Status } from '../inspections/statuses.ts';

/** Fewer valid images than this ends in status 19. */
export const MIN_VALID_IMAGES = 3;
const HEAD_BYTES = 64 * 1024;
const POLL_SECONDS = 2;

export class InspectionPipeline {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly cloud: CloudClient,
    private readonly jobs: JobQueue,
    private readonly logger: Logger,
  ) {}

  /** Status 3: one camera record per valid image; invalid files are counted, not fatal. */
  async analyzeImages(inspectionId: number): Promise<void> {
    const inspection = await this.find(inspectionId);
    if (!inspection || (inspection.status !== Status.Waiting && inspection.status !== Status.Analyzing)) return;
    await this.setStatus(inspectionId, Status.Analyzing);
    const keys = (await this.db.selectFrom('inspection.inspection_images').select('key').where('inspection_id', '=', inspectionId).orderBy('key').execute()).map((r) => r.key);
    const reader = new StorageReader(await this.cloud.storageCredentials(inspection.project_id!));
    const invalid: { key: string; reason: string }[] = [];
    // Performance (bench/README.md, "Image analysis"): the cameras are written together at the
    // end, 500 rows per statement, instead of one upsert per image on the one database connection.
    const cameras: Insertable<InspectionTables['inspection.cameras']>[] = [];
    try {
      await mapConcurrently(keys, 8, async (key) => {
        const object = await reader.open(key, HEAD_BYTES);
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
    } finally {
      reader.close();
    }
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
    const valid = cameras.length;
    const log = this.logger.child({ inspectionId });
    log.info({ valid, invalid: invalid.length }, 'images analysed');
    if (invalid.length) log.info({ invalid: invalid.slice(0, 20) }, 'invalid inputs');
    const summary = { images_valid: valid, images_invalid: invalid.length };
    if (valid < MIN_VALID_IMAGES) {
      await this.setStatus(inspectionId, Status.ErrorNotEnoughImages, {
        ...summary,
        processing_error: `Only ${valid} valid image(s); at least ${MIN_VALID_IMAGES} are needed (${invalid.length} file(s) could not be read as images).`,
        processing_ended_at: new Date(),
      });
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('inspection.inspections').set({ ...summary, status: Status.Photogrammetry, updated_at: new Date() }).where('id', '=', inspectionId).execute();
      await this.jobs.send<InspectionJobs, 'inspection.track-photogrammetry'>('inspection.track-photogrammetry', { inspectionId }, { trx });
    });
  }

  /** Status 4: starts the cloud project once, then follows it until it ends. */
  async trackPhotogrammetry(inspectionId: number): Promise<void> {
    const inspection = await this.find(inspectionId);
    if (!inspection || inspection.status !== Status.Photogrammetry) return;
    let project = await this.cloud.getProject(inspection.project_id!);
    if (project.public_status === 'NEW' || project.public_status === 'UPLOADING') {
      project = await this.cloud.startProcessing(inspection.project_id!);
    }
    switch (project.public_status) {
      case 'DONE':
        await this.setStatus(inspectionId, Status.Completed, { processing_ended_at: new Date() });
        this.logger.info({ inspectionId }, 'inspection processed');
        return;
      case 'ERROR':
      case 'CANCELED':
        await this.setStatus(inspectionId, Status.ErrorPhotogrammetry, {
          processing_error: `${project.error_code ?? ''} ${project.error_reason || project.public_status}`.trim(),
          processing_ended_at: new Date(),
        });
        return;
      default:
        await this.jobs.send<InspectionJobs, 'inspection.track-photogrammetry'>('inspection.track-photogrammetry', { inspectionId }, { startAfterSeconds: POLL_SECONDS });
    }
  }

  private find(id: number) {
    return this.db.selectFrom('inspection.inspections').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  }

  private async setStatus(id: number, status: number, extra: Record<string, unknown> = {}): Promise<void> {
    await this.db.updateTable('inspection.inspections').set({ ...extra, status, updated_at: new Date() }).where('id', '=', id).execute();
  }
}
