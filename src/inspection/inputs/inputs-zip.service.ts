// The ZIP of an inspection's original inputs (spec "Get inspection inputs"):
// - GET answers 200 `{url}` (presigned, DOWNLOAD_URL_TTL_SECONDS) when the ZIP exists, 202 when it
//   does not (and starts building it, once), 404 for an unknown inspection, 409 when no inputs
//   are registered (there is nothing to zip);
// - a job streams the registered inputs, read from the ObjectStore one at a time, through yazl
//   (stored, not deflated: photos do not compress) straight into a putObject of the store: the
//   ZIP is never held in memory nor written elsewhere; then it marks the ZIP available and
//   e-mails the creator (spec "Events");
// - registering more images makes the ZIP stale (register_images resets its state), and a build
//   that has not finished within STALE_BUILD_MS can be requested again.
import type { Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionTables } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import type { NotificationService } from '../notifications/notification.service.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { conflict } from '../../infra/http/errors.ts';
import { DOWNLOAD_URL_TTL_SECONDS, STALE_BUILD_MS, inspectionFiles, type FileStore } from '../storage/inspection-files.ts';

export type InputsAnswer = { status: 200; body: { url: string } } | { status: 202; body: { detail: string } };

/** Lifetime of the link in the "inputs ready" e-mail. */
const MAIL_URL_TTL_SECONDS = 24 * 3600;

export class InputsZipService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly access: InspectionAccess,
    private readonly cloud: CloudClient,
    private readonly files: FileStore,
    private readonly jobs: JobQueue,
    private readonly notifications: NotificationService,
    private readonly logger: Logger,
  ) {}

  async request(auth: AuthContext, id: number): Promise<InputsAnswer> {
    const inspection = await this.access.requireInspectionData(auth, id); // 410 once purged (retention)
    if (inspection.inputs_zip_status === 'available' && inspection.inputs_zip_key) {
      return { status: 200, body: { url: await this.files.store.presignGetUrl(this.files.bucket, inspection.inputs_zip_key, DOWNLOAD_URL_TTL_SECONDS) } };
    }
    if ((await this.inspections.imageKeys(inspection.id)).length === 0) throw conflict('No inputs are registered: there is nothing to download.');
    await this.db.transaction().execute(async (trx) => {
      const locked = await this.inspections.lock(trx, inspection.id);
      const building = locked.inputs_zip_status === 'processing' && locked.inputs_zip_requested_at && Date.now() - locked.inputs_zip_requested_at.getTime() < STALE_BUILD_MS;
      if (locked.deleted_at || building || locked.inputs_zip_status === 'available') return;
      await this.inspections.inputsZipRequested(trx, inspection.id);
      await this.jobs.send<InspectionJobs, 'inspection.build-inputs-zip'>('inspection.build-inputs-zip', { inspectionId: inspection.id }, { trx });
    });
    return { status: 202, body: { detail: 'The ZIP of the inputs is being prepared; call again in a few minutes.' } };
  }

  /** The job. Idempotent: does nothing unless a build is still expected. */
  async build(inspectionId: number): Promise<void> {
    const inspection = await this.inspections.find(inspectionId);
    // Given up by retention meanwhile: its inputs are (being) deleted.
    if (!inspection || inspection.purged_at || inspection.inputs_zip_status !== 'processing' || !inspection.inputs_zip_requested_at) return;
    const generation = inspection.inputs_zip_requested_at.getTime();
    const keys = await this.inspections.imageKeys(inspection.id);
    const { bucket_name: bucket } = await this.cloud.as(inspection).getProject(inspection.project_id!);
    const prefix = inspection.storage_prefix ?? '';
    const zipKey = inspectionFiles.inputsZip(inspection.id, generation);
    const zip = new ZipFile();
    const output = zip.outputStream as Readable;
    try {
      for (const key of keys) {
        zip.addReadStreamLazy(key.slice(prefix.length), { compress: false }, (cb) => {
          this.files.store.getObject(bucket, key).then(
            (object) => cb(null, object.body),
            (err) => cb(err, undefined as never),
          );
        });
      }
      zip.on('error', (err) => output.destroy(err));
      zip.end();
      await this.files.store.putObject(this.files.bucket, zipKey, output, { contentType: 'application/zip' });
    } catch (err) {
      output.destroy(); // stop reading inputs if the store gave up first
      if (err instanceof StorageError && err.code === 'NoSuchKey') {
        this.logger.warn({ inspectionId, err: err.message }, 'an input is missing; the inputs ZIP cannot be built');
        await this.inspections.inputsZipFailed(inspection.id, inspection.inputs_zip_requested_at);
        return;
      }
      throw err; // transient: the job is retried
    }
    const url = await this.files.store.presignGetUrl(this.files.bucket, zipKey, MAIL_URL_TTL_SECONDS);
    const previous = await this.db.transaction().execute(async (trx) => {
      const locked = await this.inspections.lock(trx, inspection.id);
      const current = locked.inputs_zip_status === 'processing' && locked.inputs_zip_requested_at?.getTime() === generation;
      // Superseded: a newer request (or new inputs) took over; or retention gave the inputs up meanwhile (its purge may have run already).
      if (!current || locked.deleted_at || locked.purged_at) return undefined;
      await this.inspections.inputsZipReady(trx, inspection.id, zipKey);
      await this.notifications.inputsReady(trx, locked, url, MAIL_URL_TTL_SECONDS / 3600);
      return locked.inputs_zip_key ?? null;
    });
    if (previous === undefined) await this.files.store.deleteObject(this.files.bucket, zipKey);
    else if (previous && previous !== zipKey) await this.files.store.deleteObject(this.files.bucket, previous);
    this.logger.info({ inspectionId, files: keys.length }, 'inputs ZIP ready');
  }
}
