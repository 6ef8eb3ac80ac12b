// Inspections: creation (with a cloud project), storage credentials, image registration and the
// start of processing (spec "Endpoints" and "Allowance rules").
import crypto from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { InspectionRow, InspectionTables, ProcessingParameters } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { ownerOf, visibleTo } from '../auth/access.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { AssetInput, AssetService } from '../assets/asset.service.ts';
import { AllowanceService, accountOf, type AllowanceCode } from '../allowance/allowance.service.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import { conflict, notFound, ValidationError } from '../../infra/http/errors.ts';
import { mapInspection, type RetryInfo } from './inspection.mapper.ts';
import { PROCESSABLE_STATUSES, Status } from './statuses.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';

export const DEFAULT_PROCESSING_PARAMETERS: ProcessingParameters = { generate_point_cloud: true };
export const MAX_KEYS_PER_REGISTER_CALL = 500;

export interface CreateInspectionInput {
  asset?: number;
  new_asset?: boolean;
  asset_data?: AssetInput;
  processing_parameters?: ProcessingParameters;
  inspection_date?: string | null;
  description?: string | null;
  name?: string | null;
  processing_backend?: 'mapper' | 'vortex';
  app_source?: string;
}

type Db = Kysely<InspectionTables> | Transaction<InspectionTables>;

export class InspectionService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly cloud: CloudClient,
    private readonly assets: AssetService,
    private readonly allowance: AllowanceService,
    private readonly jobs: JobQueue,
  ) {}

  async create(auth: AuthContext, input: CreateInspectionInput) {
    let asset;
    if (input.new_asset) {
      if (!input.asset_data) throw ValidationError.field('asset', 'With new_asset, `asset` must be an object with at least `type` and `name`.');
      asset = await this.assets.create(auth, input.asset_data);
    } else {
      if (typeof input.asset !== 'number') throw ValidationError.field('asset', 'This field is required.');
      asset = await this.assets.require(auth, input.asset).catch(() => {
        throw ValidationError.field('asset', `Invalid pk "${input.asset}" - object does not exist.`);
      });
    }
    const project = await this.cloud.createProject(input.name || `Inspection of ${asset.name}`, asset.project_group_id);
    try {
      const row = await this.db
        .insertInto('inspection.inspections')
        .values({
          ...ownerOf(auth),
          asset_id: asset.id,
          project_id: project.id,
          project_uuid: project.uuid,
          storage_prefix: `${project.s3_base_path}/`,
          processing_parameters: JSON.stringify(input.processing_parameters ?? DEFAULT_PROCESSING_PARAMETERS),
          processing_backend: input.processing_backend ?? 'mapper',
          inspection_date: input.inspection_date ?? null,
          description: input.description ?? null,
          name: input.name ?? null,
          app_source: input.app_source ?? 'api',
          additional_statuses: JSON.stringify({ inventory: null, rust: null }),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return mapInspection(row, []);
    } catch (err) {
      await this.cloud.deleteProject(project.id).catch(() => undefined); // no orphan project
      throw err;
    }
  }

  async get(auth: AuthContext, id: number) {
    const row = await this.require(auth, id);
    return mapInspection(row, await this.retriesOf(row.id));
  }

  async list(auth: AuthContext) {
    const rows = await this.db.selectFrom('inspection.inspections').selectAll().where('deleted_at', 'is', null).where(visibleTo(auth)).orderBy('id').execute();
    return Promise.all(rows.map(async (row) => mapInspection(row, await this.retriesOf(row.id))));
  }

  async storageCredentials(auth: AuthContext, id: number) {
    const inspection = await this.require(auth, id);
    const c = await this.cloud.storageCredentials(this.projectOf(inspection));
    return {
      access_key: c.access_key,
      secret_key: c.secret_key,
      session_token: c.session_token,
      expiration: c.expiration,
      bucket: c.bucket,
      key: c.key,
      server_time: c.server_time,
      region: c.region,
      is_bucket_accelerated: c.is_bucket_accelerated,
      endpoint_override: c.endpoint_override,
    };
  }

  /** Spec rules 3 and 4 and the register limit: keys under the prefix, present, before processing; repeats add up. */
  async registerImages(auth: AuthContext, id: number, keys: string[]): Promise<{ nb_images_registered: number }> {
    if (keys.length > MAX_KEYS_PER_REGISTER_CALL) {
      throw ValidationError.field('image_keys', `At most ${MAX_KEYS_PER_REGISTER_CALL} keys per call; call repeatedly for more.`);
    }
    const inspection = await this.require(auth, id);
    this.requireBeforeProcessing(inspection);
    const prefix = inspection.storage_prefix ?? '';
    const outside = keys.filter((key) => !key.startsWith(prefix) || key.length === prefix.length);
    if (outside.length > 0) {
      throw ValidationError.field('image_keys', `Every key must begin with the prefix "${prefix}" of s3_credentials; not: ${outside.slice(0, 5).join(', ')}.`);
    }
    const unique = [...new Set(keys)];
    await this.cloud.registerInputs(this.projectOf(inspection), unique); // checks presence in storage
    return this.db.transaction().execute(async (trx) => {
      const locked = await this.lock(trx, inspection.id);
      this.requireBeforeProcessing(locked);
      for (let i = 0; i < unique.length; i += 500) {
        await trx
          .insertInto('inspection.inspection_images')
          .values(unique.slice(i, i + 500).map((key) => ({ inspection_id: inspection.id, key })))
          .onConflict((oc) => oc.columns(['inspection_id', 'key']).doNothing())
          .execute();
      }
      if (locked.status === Status.New) {
        await trx.updateTable('inspection.inspections').set({ status: Status.Uploading, updated_at: new Date() }).where('id', '=', inspection.id).execute();
      }
      return { nb_images_registered: await this.imageCount(trx, inspection.id) };
    });
  }

  /**
   * Starts processing: preconditions, allowance spent exactly once, and the pipeline job queued,
   * all in one transaction. Concurrent calls serialise on the inspection row; all but one see that
   * processing has started and get 409.
   */
  async process(auth: AuthContext, id: number) {
    const visible = await this.require(auth, id);
    const row = await this.db.transaction().execute(async (trx) => {
      const inspection = await this.lock(trx, visible.id);
      if (!PROCESSABLE_STATUSES.includes(inspection.status as 1 | 2 | 20) || inspection.processing_started_at) {
        throw conflict(`Processing cannot start: the inspection is in status ${inspection.status}${inspection.processing_started_at ? ' and processing has already started' : ''}.`);
      }
      if ((await this.imageCount(trx, inspection.id)) === 0) {
        throw conflict('Processing cannot start: no images are registered. Upload images and call register_images first.');
      }
      const spends: { code: AllowanceCode; amount: number }[] = [{ code: 'projects', amount: 1 }];
      if (inspection.processing_parameters.detect_antennas) spends.push({ code: 'tower_inventory', amount: 1 });
      await this.allowance.spend(trx, accountOf(inspection), inspection.id, spends);
      const updated = await trx
        .updateTable('inspection.inspections')
        .set({ status: Status.Waiting, processing_started_at: new Date(), pcs_task_uuid: crypto.randomUUID(), updated_at: new Date(), processing_error: null })
        .where('id', '=', inspection.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.jobs.send<InspectionJobs, 'inspection.analyze-images'>('inspection.analyze-images', { inspectionId: inspection.id }, { trx });
      return updated;
    });
    return mapInspection(row, await this.retriesOf(row.id));
  }

  async cameras(auth: AuthContext, id: number) {
    const inspection = await this.require(auth, id);
    const rows = await this.db.selectFrom('inspection.cameras').selectAll().where('inspection_id', '=', inspection.id).orderBy('id').execute();
    return rows.map((c) => ({
      id: c.id,
      photo_id: c.id,
      filename: c.filename,
      location: { latitude: c.latitude, longitude: c.longitude, elevation: c.elevation },
      mission: c.mission,
      dimensions: { x: c.width, y: c.height },
      quaternions: c.quaternion ?? [1, 0, 0, 0],
      is_master: c.is_master,
      is_reviewed: c.is_reviewed,
      is_visible: c.is_visible,
    }));
  }

  async require(auth: AuthContext, id: number): Promise<InspectionRow> {
    const row = await this.db
      .selectFrom('inspection.inspections')
      .selectAll()
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .where(visibleTo(auth))
      .executeTakeFirst();
    if (!row) throw notFound('Inspection');
    return row;
  }

  private lock(trx: Transaction<InspectionTables>, id: number): Promise<InspectionRow> {
    return trx.selectFrom('inspection.inspections').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
  }

  private async imageCount(db: Db, inspectionId: number): Promise<number> {
    const { count } = await db
      .selectFrom('inspection.inspection_images')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('inspection_id', '=', inspectionId)
      .executeTakeFirstOrThrow();
    return Number(count);
  }

  private retriesOf(id: number): Promise<RetryInfo[]> {
    return this.db.selectFrom('inspection.inspections').select(['id', 'status', 'created_at']).where('retry_of', '=', id).where('deleted_at', 'is', null).orderBy('id').execute();
  }

  private projectOf(inspection: InspectionRow): number {
    if (inspection.project_id === null) throw conflict('This inspection has no cloud project.');
    return inspection.project_id;
  }

  private requireBeforeProcessing(inspection: InspectionRow): void {
    if (inspection.processing_started_at || !PROCESSABLE_STATUSES.includes(inspection.status as 1 | 2 | 20)) {
      throw conflict('Images can only be registered before processing starts.');
    }
  }
}
