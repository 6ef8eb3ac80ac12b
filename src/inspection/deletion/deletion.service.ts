// Deleting inspections and assets (spec "Delete inspection", "Delete asset").
//
// - An inspection can be deleted only when it is in a stable status (CONTRACT: 1, 7, 13-17, 19,
//   24, 27 and the reserved ones); deleting a main inspection deletes its retries too, so all of
//   them must be stable. An asset can be deleted only when all its inspections are stable; it
//   takes its inspections with it.
// - The records are marked deleted in one transaction that locks them (a concurrent process or
//   retry call waits, then finds them gone), and the same transaction queues a durable job that
//   deletes the cloud projects, the asset's project group and the files this service stored for
//   them. The job tolerates what is already gone, so a retried job does no harm.
// - Concurrent deletions of the same record: the marking statements are guarded (`deleted_at is
//   null`) and their row counts checked, so exactly one request deletes (204) and the others find
//   nothing to delete (404), whatever order the database runs them in.
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import { ApiError, conflict, notFound } from '../../infra/http/errors.ts';
import { STABLE_STATUSES } from '../inspections/statuses.ts';
import { inspectionFiles, type FileStore } from '../storage/inspection-files.ts';

export class DeletionService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly access: InspectionAccess,
    private readonly cloud: CloudClient,
    private readonly jobs: JobQueue,
    private readonly files: FileStore,
    private readonly logger: Logger,
  ) {}

  async deleteInspection(auth: AuthContext, id: number): Promise<void> {
    const visible = await this.access.requireInspection(auth, id);
    await this.db.transaction().execute(async (trx) => {
      const rows = await this.inspections.lockForDeletion(trx, visible.retry_of === null ? { bundleOf: visible.id } : { id: visible.id });
      if (!rows.some((r) => r.id === visible.id)) throw notFound('Inspection');
      requireStable(rows, 'The inspection');
      if (!(await this.markDeleted(trx, rows, null))) throw notFound('Inspection');
    });
  }

  async deleteAsset(auth: AuthContext, id: number): Promise<void> {
    const asset = await this.access.requireAsset(auth, id);
    await this.db.transaction().execute(async (trx) => {
      const locked = await trx.selectFrom('inspection.assets').select('id').where('id', '=', asset.id).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
      if (!locked) throw notFound('Asset');
      const rows = await this.inspections.lockForDeletion(trx, { assetId: asset.id });
      requireStable(rows, 'Every inspection of the asset');
      const marked = await trx
        .updateTable('inspection.assets')
        .set({ deleted_at: new Date(), updated_at: new Date() })
        .where('id', '=', asset.id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(marked.numUpdatedRows) !== 1 || !(await this.markDeleted(trx, rows, asset.project_group_id))) throw notFound('Asset');
    });
  }

  /** The job: cloud projects, then the project group, then this service's files. Idempotent. */
  async deleteResources(payload: InspectionJobs['inspection.delete-resources']): Promise<void> {
    const cloud = this.cloud.as(await this.ownerOfResources(payload));
    for (const projectId of payload.projectIds) {
      await tolerateGone(cloud.deleteProject(projectId));
    }
    if (payload.projectGroupId !== null) {
      // The cloud service may not offer project-group deletion yet: 404/405 leave an empty group behind.
      const gone = await tolerateGone(cloud.deleteProjectGroup(payload.projectGroupId));
      if (gone) this.logger.info({ projectGroupId: payload.projectGroupId }, 'project group already gone or not deletable by the cloud service');
    }
    for (const inspectionId of payload.inspectionIds) {
      await this.files.store.deletePrefix(this.files.bucket, inspectionFiles.prefix(inspectionId));
    }
  }

  /**
   * The organization the cloud records of a deletion belong to (the cloud client acts for it): the
   * deleted inspections' (rows are only marked deleted), else the deleted asset's. One deletion is
   * one account's: an asset's inspections are all its organization's.
   */
  private async ownerOfResources(payload: InspectionJobs['inspection.delete-resources']): Promise<{ organization_id: number | null }> {
    if (payload.inspectionIds.length > 0) return { organization_id: (await this.inspections.findAny(payload.inspectionIds[0])).organization_id };
    if (payload.projectGroupId === null) return { organization_id: null };
    const asset = await this.db.selectFrom('inspection.assets').select('organization_id').where('project_group_id', '=', payload.projectGroupId).executeTakeFirst();
    return { organization_id: asset?.organization_id ?? null };
  }

  /** False (nothing queued; the caller rolls back) when another request marked any of the rows first. */
  private async markDeleted(trx: Transaction<InspectionTables>, rows: InspectionRow[], projectGroupId: number | null): Promise<boolean> {
    const ids = rows.map((r) => r.id);
    if ((await this.inspections.softDelete(trx, ids)) !== ids.length) return false;
    await this.jobs.send<InspectionJobs, 'inspection.delete-resources'>(
      'inspection.delete-resources',
      { projectIds: rows.flatMap((r) => (r.project_id === null ? [] : [r.project_id])), projectGroupId, inspectionIds: ids },
      { trx },
    );
    return true;
  }
}

function requireStable(rows: InspectionRow[], what: string): void {
  const busy = rows.filter((r) => !STABLE_STATUSES.has(r.status));
  if (busy.length > 0) {
    throw conflict(`${what} must be in a stable status to be deleted; work is under way on inspection(s) ${busy.map((r) => `${r.id} (status ${r.status})`).join(', ')}.`);
  }
}

/** Resolves true when the cloud says the thing is already gone (404) or cannot be deleted there (405). */
async function tolerateGone(call: Promise<void>): Promise<boolean> {
  try {
    await call;
    return false;
  } catch (err) {
    if (err instanceof ApiError && (err.statusCode === 404 || err.statusCode === 405)) return true;
    throw err;
  }
}
