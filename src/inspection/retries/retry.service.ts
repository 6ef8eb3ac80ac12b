// Retrying an inspection (spec "Retry inspection", "Retry conditions", allowance rule 6).
//
// A retry is a new inspection of the same asset, with a cloud project of its own, that reprocesses
// the original's inputs:
// 1. POST /v1/inspections/retry/ checks the five conditions (retry-rules.ts), creates the cloud
//    project and the retry (status 2 "Uploading input files", `retry_of` = the bundle's main
//    inspection) and queues `inspection.prepare-retry`; answers 201 with the retry.
// 2. The job copies the original's registered inputs, server side through the ObjectStore, from
//    the original project's prefix into the retry's (the cloud only registers keys under a
//    project's own prefix, and the original's files must stay where they are), registers them
//    with the cloud, records them, and starts processing: the retry goes 20 -> ... -> 7 like any
//    inspection. It spends no allowance: it recycles the units of the bundle's main inspection,
//    so its parameters may not need a resource type the main did not spend (rule 5: 409).
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionRow, InspectionTables, ProcessingParameters } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import type { InspectionPipeline } from '../pipeline/inspection-pipeline.ts';
import type { AllowanceCode, AllowanceService } from '../allowance/allowance.service.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { conflict } from '../../infra/http/errors.ts';
import type { InspectionRecord } from '../inspections/inspection.mapper.ts';
import { toRecord } from '../inspections/inspection-records.ts';
import { Status } from '../inspections/statuses.ts';
import { retryRefusal } from './retry-rules.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';
import { refusePurged } from '../retention/purged.ts';

export interface RetryInput {
  inspection: number;
  processing_parameters?: ProcessingParameters;
  description?: string | null;
}

const COPY_CONCURRENCY = 4;

export class RetryService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly access: InspectionAccess,
    private readonly pipeline: InspectionPipeline,
    private readonly cloud: CloudClient,
    private readonly allowance: AllowanceService,
    private readonly jobs: JobQueue,
    private readonly store: ObjectStore,
    private readonly logger: Logger,
  ) {}

  async retry(auth: AuthContext, input: RetryInput): Promise<InspectionRecord> {
    const original = await this.access.requireInspection(auth, input.inspection); // condition 1: 404 otherwise
    const mainId = original.retry_of ?? original.id;
    // A retry copies the main inspection's inputs: 410 when retention deleted them (or the retried one's).
    refusePurged(original);
    if (mainId !== original.id) refusePurged(await this.inspections.findAny(mainId));
    const parameters = input.processing_parameters ?? original.processing_parameters;
    // Checked once before creating the cloud project (no project for a refused retry), and again under lock.
    await this.check(this.db, original, mainId, parameters);
    const asset = await this.db.selectFrom('inspection.assets').select(['project_group_id']).where('id', '=', original.asset_id).executeTakeFirstOrThrow();
    const project = await this.cloud.as(original).createProject(`Retry of inspection ${original.id}`, asset.project_group_id);
    try {
      const row = await this.db.transaction().execute(async (trx) => {
        // The main inspection's row lock serialises retries of one bundle (conditions 4 and 5).
        refusePurged(await this.inspections.lock(trx, mainId));
        const current = await this.inspections.lock(trx, original.id);
        if (current.deleted_at) throw conflict('The inspection has been deleted.');
        refusePurged(current);
        await this.check(trx, current, mainId, parameters);
        const retry = await this.inspections.insertRetry(
          {
            user_id: auth.userId,
            organization_id: original.organization_id, // the same account: the units it recycles are its
            asset_id: original.asset_id,
            project_id: project.id,
            project_uuid: project.uuid,
            storage_prefix: `${project.s3_base_path}/`,
            processing_parameters: JSON.stringify(parameters),
            processing_backend: original.processing_backend,
            inspection_date: original.inspection_date,
            description: input.description !== undefined ? input.description : original.description,
            name: original.name,
            app_source: original.app_source,
            ground_reference_altitude: original.ground_reference_altitude,
            additional_statuses: JSON.stringify({ inventory: null, rust: null }),
          },
          mainId,
          trx,
        );
        await this.jobs.send<InspectionJobs, 'inspection.prepare-retry'>('inspection.prepare-retry', { inspectionId: retry.id }, { trx });
        return retry;
      });
      return toRecord(this.db, row);
    } catch (err) {
      await this.cloud.as(original).deleteProject(project.id).catch(() => undefined);
      throw err;
    }
  }

  /** The job: copy inputs, register them, start processing with recycled allowance. Idempotent. */
  async prepare(inspectionId: number): Promise<void> {
    const retry = await this.inspections.find(inspectionId);
    if (!retry || retry.retry_of === null || retry.status !== Status.Uploading || retry.processing_started_at) return;
    const main = await this.inspections.findAny(retry.retry_of);
    const [source, target] = await Promise.all([this.cloud.as(main).getProject(main.project_id!), this.cloud.as(retry).getProject(retry.project_id!)]);
    const keys = await this.inspections.imageKeys(main.id);
    const fromPrefix = main.storage_prefix!;
    const toPrefix = retry.storage_prefix!;
    const copies = keys.map((key) => ({ from: key, to: toPrefix + key.slice(fromPrefix.length) }));
    try {
      await mapConcurrently(copies, COPY_CONCURRENCY, async ({ from, to }) => {
        const [have, want] = await Promise.all([this.store.headObject(target.bucket_name, to), this.store.headObject(source.bucket_name, from)]);
        if (!want) throw new StorageError('NoSuchKey', `Input ${from} of inspection ${main.id} is no longer in storage.`);
        if (have && have.size === want.size) return; // copied by an earlier run (puts are atomic)
        const object = await this.store.getObject(source.bucket_name, from);
        await this.store.putObject(target.bucket_name, to, object.body, { contentType: object.info.contentType });
      });
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NoSuchKey') {
        await this.fail(retry.id, err.message);
        return;
      }
      throw err; // transient: the job is retried
    }
    const targetKeys = copies.map((c) => c.to);
    for (let i = 0; i < targetKeys.length; i += 500) {
      await this.cloud.as(retry).registerInputs(retry.project_id!, targetKeys.slice(i, i + 500));
    }
    await this.db.transaction().execute(async (trx) => {
      const locked = await this.inspections.lock(trx, retry.id);
      if (locked.deleted_at || locked.status !== Status.Uploading || locked.processing_started_at) return;
      await this.inspections.addImages(trx, retry.id, targetKeys);
      // Allowance rule 6: recycled, nothing spent; with detect_antennas the detection runs again once processed (inventory 1).
      if (!(await this.pipeline.begin(trx, retry.id, [Status.Uploading]))) return;
    });
    this.logger.info({ inspectionId, copied: copies.length, retryOf: main.id }, 'retry inputs copied; processing started with recycled allowance');
  }

  private async check(db: Kysely<InspectionTables>, original: InspectionRow, mainId: number, parameters: ProcessingParameters): Promise<void> {
    const bundleRetries = await db
      .selectFrom('inspection.inspections')
      .select(['id', 'status', 'created_at'])
      .where('retry_of', '=', mainId)
      .where('deleted_at', 'is', null)
      .execute();
    const refusal = retryRefusal(original, bundleRetries);
    if (refusal) throw conflict(refusal);
    // Rule 6 with rule 5: a retry recycles the main's units and can add no resource type to them.
    const spent = new Set(await this.allowance.spentTypes(db, mainId));
    const needed: AllowanceCode[] = ['projects', ...(parameters.detect_antennas ? (['tower_inventory'] as const) : [])];
    const extra = needed.filter((code) => !spent.has(code));
    if (extra.length > 0) {
      throw conflict(`A retry recycles the resources of its original, which did not spend ${extra.join(', ')}; no further resource types can be spent once an inspection has been processed.`);
    }
  }

  private async fail(id: number, reason: string): Promise<void> {
    await this.inspections.transition(id, Status.Uploading, Status.ErrorUploading, { processing_error: reason, processing_ended_at: new Date() });
  }
}
