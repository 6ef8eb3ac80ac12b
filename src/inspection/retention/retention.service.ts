// Retention (issue 30 §3): an inspection's photos, outputs, inputs ZIP and cloud project are
// deleted once its organization's retention period has passed since it was created, and it moves
// to status 24 "Data purged"; its record, annotations, measurements, inventory and report stay.
//
// - The period: `inspection.organizations.retention_days` (admin set-retention), else RETENTION_DAYS
//   (0: kept for ever). Inspections of a user without an organization follow RETENTION_DAYS.
// - A daily job (RETENTION_SCHEDULE, pg-boss schedule) sweeps: each expired inspection in a
//   stable status is given up (`purged_at` set) and a purge job queued in the same transaction.
//   Work under way (statuses 2-5, 12, 20, 25, or a report being built from the photos) is left
//   to finish; the next sweep takes it.
// - A client's PATCH/PUT to status 24 (spec: any status may be set) gives it up the same way.
// - Once given up, every route serving the deleted data answers 410 `purged` (purged.ts), before
//   the purge job has even run: nothing is handed out that is about to go.
// - The purge job deletes through the cloud's public API (the project: its uploads and results)
//   and this service's own files but the report, then moves the status to 24 by the typed
//   transition. Each step tolerates what is already gone, so a job retried after a crash
//   finishes the purge.
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import { ApiError, conflict } from '../../infra/http/errors.ts';
import { inspectionFiles, STALE_BUILD_MS, type FileStore } from '../storage/inspection-files.ts';
import { PURGEABLE_STATUSES } from '../inspections/inspection-transitions.ts';
import { STABLE_STATUSES, Status } from '../inspections/statuses.ts';

export interface RetentionOptions {
  /** RETENTION_DAYS: days an inspection's data is kept when its organization sets none; 0: for ever. */
  defaultDays: number;
}

/** The subfolder of an inspection's own files that retention keeps: the report stays. */
const KEPT_FOLDER = 'report/';
/** Inspections given up per database round of a sweep. */
const SWEEP_BATCH = 200;

export class RetentionService {
  constructor(
    private readonly inspections: InspectionRepository,
    private readonly cloud: CloudClient,
    private readonly jobs: JobQueue,
    private readonly files: FileStore,
    private readonly logger: Logger,
    private readonly options: RetentionOptions,
  ) {}

  /** The daily job: gives up every inspection whose retention ended at `now`; returns how many. */
  async sweep(now = new Date()): Promise<number> {
    let given = 0;
    let afterId = 0;
    for (;;) {
      const ids = await this.inspections.retentionExpired(now, this.options.defaultDays, afterId, SWEEP_BATCH);
      if (ids.length === 0) break;
      for (const id of ids) {
        const done = await this.inspections.db.transaction().execute(async (trx) => {
          const row = await this.inspections.lock(trx, id);
          // Re-checked under the lock: deleted, given up or set to work meanwhile is left alone.
          if (row.deleted_at || row.purged_at || !isPurgeable(row.status) || reportBuilding(row)) return false;
          return this.giveUp(trx, row, now);
        });
        if (done) given++;
      }
      afterId = ids[ids.length - 1];
    }
    if (given > 0) this.logger.info({ inspections: given }, 'retention: inspections given up for purging');
    return given;
  }

  /**
   * A client sets status 24 (InspectionService.update, under the row's lock): its data is purged
   * as retention would. 409 while work is under way on it, as a deletion would be.
   */
  async requestPurge(trx: Transaction<InspectionTables>, locked: InspectionRow): Promise<void> {
    if (locked.purged_at) return;
    if (!STABLE_STATUSES.has(locked.status)) {
      throw conflict(`Status 24 deletes the inspection's data: it must be in a stable status first; work is under way (status ${locked.status}).`);
    }
    if (reportBuilding(locked)) throw conflict('Status 24 deletes the inspection\'s photos: wait until the report being built is available (report_status).');
    await this.giveUp(trx, locked, new Date());
  }

  /** The purge job: idempotent, each step tolerating what an earlier run already did. */
  async purge(inspectionId: number): Promise<void> {
    const row = await this.inspections.findAny(inspectionId).catch(() => undefined);
    // Never given up, or deleted since (the deletion job removes everything itself).
    if (!row || !row.purged_at || row.deleted_at) return;
    if (row.project_id !== null) {
      // The project's uploads (photos, videos, frames) and its results go with it (cloud service).
      try {
        await this.cloud.as(row).deleteProject(row.project_id);
      } catch (err) {
        if (!(err instanceof ApiError && err.statusCode === 404)) throw err;
      }
    }
    const deleted = await this.deleteOwnFilesButReport(inspectionId);
    await this.inspections.inputsZipPurged(inspectionId);
    const moved = await this.inspections.transition(inspectionId, PURGEABLE_STATUSES, Status.DataPurged);
    this.logger.info({ inspectionId, objects: deleted, moved }, 'retention: inspection data purged');
  }

  private async giveUp(trx: Transaction<InspectionTables>, row: InspectionRow, at: Date): Promise<boolean> {
    if (!(await this.inspections.markPurged(trx, row.id, at))) return false;
    await this.jobs.send<InspectionJobs, 'inspection.purge-data'>('inspection.purge-data', { inspectionId: row.id }, { trx });
    return true;
  }

  /** This service's files of the inspection (inputs ZIP, clipped point cloud, previews, what comes), the report's folder kept. */
  private async deleteOwnFilesButReport(inspectionId: number): Promise<number> {
    const { store, bucket } = this.files;
    const prefix = inspectionFiles.prefix(inspectionId);
    let deleted = 0;
    let continuationToken: string | undefined;
    do {
      const page = await store.listObjects(bucket, { prefix, delimiter: '/', continuationToken });
      for (const folder of page.commonPrefixes) {
        if (folder !== `${prefix}${KEPT_FOLDER}`) deleted += await store.deletePrefix(bucket, folder);
      }
      for (const object of page.objects) {
        await store.deleteObject(bucket, object.key);
        deleted++;
      }
      continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (continuationToken);
    return deleted;
  }
}

/** A report is being built from the photos: the purge waits for it (the sweep takes the inspection the next day). */
function reportBuilding(row: InspectionRow): boolean {
  return row.report_status === 'processing' && row.report_requested_at !== null && Date.now() - row.report_requested_at.getTime() < STALE_BUILD_MS;
}

function isPurgeable(status: number): boolean {
  return status === Status.DataPurged || (PURGEABLE_STATUSES as readonly number[]).includes(status);
}
