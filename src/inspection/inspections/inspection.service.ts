// Inspections: creation (with a cloud project), reads, updates, storage credentials, image
// registration and the start of processing (spec "Endpoints", "Allowance rules", "States and
// transitions"). Deletion lives in ../deletion, retries in ../retries; the SQL of the inspections
// table in inspection.repository.ts, access checks in ../auth/inspection-access.ts.
import type { Kysely } from 'kysely';
import type { InspectionRow, InspectionTables, Point3, ProcessingParameters } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { ownerOf } from '../auth/access.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { AssetInput, AssetService } from '../assets/asset.service.ts';
import { AllowanceService, accountOf, type AllowanceCode } from '../allowance/allowance.service.ts';
import { conflict, notFound, ValidationError } from '../../infra/http/errors.ts';
import type { InspectionRecord } from './inspection.mapper.ts';
import { toRecord, toRecords } from './inspection-records.ts';
import { readRecord } from './inspection-read.ts';
import { CameraList } from './camera-list.ts';
import { PROCESSABLE_STATUSES, SETTABLE_STATUSES, Status, takesUploads } from './statuses.ts';
import type { InspectionRepository, InspectionUpdate } from './inspection.repository.ts';
import type { InspectionPipeline } from '../pipeline/inspection-pipeline.ts';
import type { NotificationService } from '../notifications/notification.service.ts';
import type { WindowedSource } from '../http/lists.ts';
import { normalizeInspectionDate } from './inspection-date.ts';
import { videoProcessRefusal, videoRegistrationRefusal } from '../video/video-inputs.ts';
import type { StorageQuota } from '../limits/storage-quota.ts';
import type { ImageReader } from '../../shared/images/image-reader.ts';
import type { RetentionService } from '../retention/retention.service.ts';
import { purgedError, refusePurged } from '../retention/purged.ts';
import type { StorageGrants } from '../auth/storage-grants.ts';
import { WRITE_SCOPE } from '../auth/token-scopes.ts';

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

/** Fields of PUT and PATCH (spec "Update inspection"); every one optional, so PUT and PATCH agree. */
export interface UpdateInspectionInput {
  status?: number;
  additional_statuses?: { inventory?: number | null; rust?: number | null };
  pcs_task_uuid?: string | null;
  inspection_date?: string | null;
  description?: string | null;
  name?: string | null;
  base_plate_location?: Point3 | null;
  top_point_location?: Point3 | null;
  base_plate_size?: number | null;
  report_status?: 'not available' | 'processing' | 'available' | 'error';
  /** Beyond the spec's list: accepted until processing starts (allowance rules 4 and 5). */
  processing_parameters?: ProcessingParameters;
}

type VisibleQuery = ReturnType<InspectionRepository['visible']>;

export class InspectionService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly access: InspectionAccess,
    private readonly cloud: CloudClient,
    private readonly assets: AssetService,
    private readonly allowance: AllowanceService,
    private readonly pipeline: InspectionPipeline,
    private readonly notifications: NotificationService,
    /** The registered files' sizes are read in the shared store (the cloud projects' bucket) and checked against the image limits. */
    private readonly photos: { reader: ImageReader; bucket: string },
    /** The account's storage quota, checked before credentials and registration (limits/storage-quota.ts). */
    private readonly quota: StorageQuota,
    /** A status set to 24 purges the data as retention does (retention/retention.service.ts). */
    private readonly retention: Pick<RetentionService, 'requestPurge'>,
    /** Credentials handed out are remembered: closed to writes once processing starts, revoked if their member leaves (auth/storage-grants.ts). */
    private readonly grants: StorageGrants,
  ) {}

  async create(auth: AuthContext, input: CreateInspectionInput): Promise<InspectionRecord> {
    const parameters = input.processing_parameters ?? DEFAULT_PROCESSING_PARAMETERS;
    // Allowance rule 3, checked up front (nothing is spent before processing starts: rule 4).
    if (parameters.detect_antennas) await this.allowance.requireAvailable(this.db, accountOf(ownerOf(auth)), 'tower_inventory');
    let asset;
    if (input.new_asset) {
      if (!input.asset_data) throw ValidationError.field('asset', 'With new_asset, `asset` must be an object with at least `type` and `name`.');
      asset = await this.assets.create(auth, input.asset_data);
    } else {
      if (typeof input.asset !== 'number') throw ValidationError.field('asset', 'This field is required.');
      asset = await this.access.requireAsset(auth, input.asset, { field: 'asset' });
    }
    const project = await this.cloud.as(ownerOf(auth)).createProject(input.name || `Inspection of ${asset.name}`, asset.project_group_id);
    try {
      const row = await this.db.transaction().execute(async (trx) => {
        // The asset may have been deleted meanwhile; its row lock orders us against that deletion.
        const live = await trx.selectFrom('inspection.assets').select('id').where('id', '=', asset.id).where('deleted_at', 'is', null).forShare().executeTakeFirst();
        if (!live) throw ValidationError.field('asset', `Invalid pk "${asset.id}" - object does not exist.`);
        return this.inspections.insert(
          {
            ...ownerOf(auth),
            asset_id: asset.id,
            project_id: project.id,
            project_uuid: project.uuid,
            storage_prefix: `${project.s3_base_path}/`,
            processing_parameters: JSON.stringify(parameters),
            processing_backend: input.processing_backend ?? 'mapper',
            inspection_date: normalizeInspectionDate(input.inspection_date),
            description: input.description ?? null,
            name: input.name ?? null,
            app_source: input.app_source ?? 'api',
            additional_statuses: JSON.stringify({ inventory: null, rust: null }),
          },
          trx,
        );
      });
      return toRecord(this.db, row);
    } catch (err) {
      await this.cloud.as(ownerOf(auth)).deleteProject(project.id).catch(() => undefined); // no orphan project
      throw err;
    }
  }

  async get(auth: AuthContext, id: number): Promise<InspectionRecord> {
    // Performance (bench/README.md, "API"): the row and its bundle's retries in one prepared statement.
    const record = await readRecord(this.db, auth, id);
    if (!record) throw notFound('Inspection');
    return record;
  }

  /** The inspections of the request's account, deleted ones excluded. */
  list(auth: AuthContext): WindowedSource<InspectionRecord> {
    return this.windowed(auth, (q) => q);
  }

  /** The inspections of one asset (404 when the asset is not visible). */
  async listOfAsset(auth: AuthContext, assetId: number): Promise<WindowedSource<InspectionRecord>> {
    await this.access.requireAsset(auth, assetId);
    return this.windowed(auth, (q) => q.where('asset_id', '=', assetId));
  }

  /** The bundle of an inspection: its main inspection and every retry of it, the queried one included. */
  async bundle(auth: AuthContext, id: number): Promise<InspectionRecord[]> {
    const inspection = await this.access.requireInspection(auth, id);
    const main = inspection.retry_of ?? inspection.id;
    const rows = await this.inspections
      .visible(auth)
      .where((eb) => eb.or([eb('id', '=', main), eb('retry_of', '=', main)]))
      .orderBy('id')
      .execute();
    return toRecords(this.db, rows);
  }

  /**
   * PUT and PATCH (the spec's update body has no required field, so both overwrite exactly the
   * fields given). A status set to a started, finished or error value e-mails the creator unless
   * `skip_email`; only an actual change of status does, so re-sending a record sends nothing.
   */
  async update(auth: AuthContext, id: number, input: UpdateInspectionInput, options: { skipEmail: boolean }): Promise<InspectionRecord> {
    const visible = await this.access.requireInspection(auth, id);
    if (input.status !== undefined && !SETTABLE_STATUSES.has(input.status)) {
      throw ValidationError.field('status', `"${input.status}" is not a valid choice; see GET /v1/inspections/statuses/.`);
    }
    const row = await this.db.transaction().execute(async (trx) => {
      const current = await this.inspections.lock(trx, visible.id);
      if (current.deleted_at) throw notFound('Inspection');
      const changes: InspectionUpdate = {};
      if (input.processing_parameters !== undefined) {
        // Allowance rules 4 and 5: parameters decide what processing spends, so they are fixed once it starts.
        if (current.processing_started_at !== null || current.retry_of !== null) {
          throw conflict('Processing has started: processing parameters, and the resource types they spend, can no longer change.');
        }
        if (input.processing_parameters.detect_antennas) await this.allowance.requireAvailable(trx, accountOf(current), 'tower_inventory');
        changes.processing_parameters = JSON.stringify(input.processing_parameters);
      }
      if (input.status !== undefined) {
        // Purged data does not come back: the status stays 24 (other fields may change).
        if (current.purged_at && input.status !== Status.DataPurged) throw purgedError(current);
        if (input.status === Status.DataPurged) await this.retention.requestPurge(trx, current);
        changes.status = input.status;
      }
      if (input.additional_statuses !== undefined) changes.additional_statuses = JSON.stringify({ ...current.additional_statuses, ...input.additional_statuses });
      if (input.pcs_task_uuid !== undefined) changes.pcs_task_uuid = input.pcs_task_uuid;
      if (input.inspection_date !== undefined) changes.inspection_date = normalizeInspectionDate(input.inspection_date);
      if (input.description !== undefined) changes.description = input.description;
      if (input.name !== undefined) changes.name = input.name;
      if (input.base_plate_location !== undefined) changes.base_plate_location = JSON.stringify(input.base_plate_location);
      if (input.top_point_location !== undefined) changes.top_point_location = JSON.stringify(input.top_point_location);
      if (input.base_plate_size !== undefined) changes.base_plate_size = input.base_plate_size;
      if (input.report_status !== undefined) changes.report_status = input.report_status;
      // The spec's "any -> the given value": a client's override, outside the pipeline's TRANSITIONS.
      const updated = await this.inspections.applyUpdate(trx, current.id, current.status, changes);
      if (!updated) throw notFound('Inspection');
      if (input.status !== undefined && input.status !== current.status && !options.skipEmail) {
        await this.notifications.statusChanged(trx, updated, input.status);
      }
      return updated;
    });
    return toRecord(this.db, row);
  }

  async storageCredentials(auth: AuthContext, id: number) {
    const inspection = await this.access.requireInspectionData(auth, id);
    await this.quota.requireRoomToUpload(inspection);
    // A token asked for cloud:read only gets credentials that only read (issue 40 §8), as the cloud's read-only tokens do.
    const c = await this.cloud.as(inspection).storageCredentials(this.projectOf(inspection), !auth.scopes.includes(WRITE_SCOPE));
    await this.grants.record({ accessKey: c.access_key, userId: auth.userId, organizationId: inspection.organization_id, inspectionId: inspection.id, expiresAt: c.expiration });
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
    const inspection = await this.access.requireInspectionData(auth, id);
    this.requireBeforeProcessing(inspection);
    const prefix = inspection.storage_prefix ?? '';
    const outside = keys.filter((key) => !key.startsWith(prefix) || key.length === prefix.length);
    if (outside.length > 0) {
      throw ValidationError.field('image_keys', `Every key must begin with the prefix "${prefix}" of s3_credentials; not: ${outside.slice(0, 5).join(', ')}.`);
    }
    const unique = [...new Set(keys)];
    // is_video: videos and their telemetry sidecars instead of photos (video/video-inputs.ts).
    const notVideo = inspection.processing_parameters.is_video ? videoRegistrationRefusal(unique) : null;
    if (notVideo) throw ValidationError.field('image_keys', notVideo);
    // One HEAD per key, shared by the size checks below.
    const objects = await this.photos.reader.heads(this.photos.bucket, unique);
    // Photos are decoded from memory (previews, rust analysis, report crops): a file over
    // IMAGE_MAX_BYTES is refused here, and again before each read (shared/images/image-reader.ts).
    // Videos are read from disk by ffmpeg and are not held to it.
    if (!inspection.processing_parameters.is_video) {
      const oversized = this.photos.reader.oversized(objects);
      if (oversized.length > 0) {
        const named = oversized.slice(0, 5).map((o) => `${o.key}: ${o.reason}`).join('; ');
        throw ValidationError.field('image_keys', `Images too large to register: ${named}${oversized.length > 5 ? `; and ${oversized.length - 5} more` : ''}.`);
      }
    }
    // The account's storage quota, before the cloud project sees the keys (limits/storage-quota.ts).
    await this.quota.requireRoomFor(inspection, objects);
    await this.cloud.as(inspection).registerInputs(this.projectOf(inspection), unique); // checks presence in storage
    return this.db.transaction().execute(async (trx) => {
      const locked = await this.inspections.lock(trx, inspection.id);
      if (locked.deleted_at) throw notFound('Inspection');
      refusePurged(locked);
      this.requireBeforeProcessing(locked);
      await this.inspections.addImages(trx, inspection.id, unique, 'upload', new Map(objects.flatMap((o) => (o.info ? [[o.key, o.info.size] as const] : []))));
      await this.inspections.inputsChanged(trx, inspection.id);
      if (locked.status === Status.New) await this.inspections.transition(inspection.id, Status.New, Status.Uploading, {}, trx);
      return { nb_images_registered: await this.inspections.imageCount(inspection.id, trx) };
    });
  }

  /**
   * Starts processing: preconditions, allowance spent exactly once, and the pipeline job queued,
   * all in one transaction. Concurrent calls serialise on the inspection row; all but one see that
   * processing has started and get 409.
   */
  async process(auth: AuthContext, id: number): Promise<InspectionRecord> {
    const visible = await this.access.requireInspection(auth, id);
    const row = await this.db.transaction().execute(async (trx) => {
      const inspection = await this.inspections.lock(trx, visible.id);
      if (inspection.deleted_at) throw notFound('Inspection');
      refusePurged(inspection);
      if (inspection.retry_of !== null) {
        throw conflict('A retry starts processing on its own once the inputs of its original are copied; it cannot be processed by hand.');
      }
      if (!PROCESSABLE_STATUSES.includes(inspection.status as 1 | 2 | 20) || inspection.processing_started_at) {
        throw conflict(`Processing cannot start: the inspection is in status ${inspection.status}${inspection.processing_started_at ? ' and processing has already started' : ''}.`);
      }
      if ((await this.inspections.imageCount(inspection.id, trx)) === 0) {
        throw conflict('Processing cannot start: no images are registered. Upload images and call register_images first.');
      }
      const notVideo = inspection.processing_parameters.is_video ? videoProcessRefusal(await this.inspections.imageKeys(inspection.id, trx)) : null;
      if (notVideo) throw conflict(notVideo);
      // Rule 3: antenna detection spends a Tower inventory unit, with the Projects unit, once
      // (inventory/antenna-detection.ts); a retry recycles both (rule 6).
      const spends: { code: AllowanceCode; amount: number }[] = [{ code: 'projects', amount: 1 }];
      if (inspection.processing_parameters.detect_antennas) spends.push({ code: 'tower_inventory', amount: 1 });
      await this.allowance.spend(trx, accountOf(inspection), inspection.id, spends);
      // Under the row lock the move applies; were it not to, the spend above rolls back with it.
      if (!(await this.pipeline.begin(trx, inspection.id, PROCESSABLE_STATUSES))) throw conflict('Processing cannot start: the inspection changed meanwhile.');
      return this.inspections.findAny(inspection.id, trx);
    });
    return toRecord(this.db, row);
  }

  /** The cameras of an inspection (404 when it is not visible); camera-list.ts streams them. */
  async cameras(auth: AuthContext, id: number): Promise<CameraList> {
    const inspection = await this.access.requireInspectionData(auth, id);
    return new CameraList(this.db, inspection.id);
  }

  private windowed(auth: AuthContext, filter: (q: VisibleQuery) => VisibleQuery): WindowedSource<InspectionRecord> {
    return {
      count: async () => {
        const { count } = await filter(this.inspections.visible(auth))
          .clearSelect()
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow();
        return Number(count);
      },
      fetch: async (window) => {
        const rows = await filter(this.inspections.visible(auth))
          .orderBy('id')
          .$if(window !== undefined, (q) => q.limit(window!.limit).offset(window!.offset))
          .execute();
        return toRecords(this.db, rows);
      },
    };
  }

  private projectOf(inspection: InspectionRow): number {
    if (inspection.project_id === null) throw conflict('This inspection has no cloud project.');
    return inspection.project_id;
  }

  private requireBeforeProcessing(inspection: InspectionRow): void {
    if (inspection.retry_of !== null) throw conflict('A retry reuses the inputs of its original; images cannot be registered to it.');
    if (!takesUploads(inspection)) throw conflict('Images can only be registered before processing starts.');
  }
}
