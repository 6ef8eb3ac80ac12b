// All SQL that writes `inspection.inspections` (no other file does), and the reads of it that the
// services repeat: insertion of inspections and retries, status transitions that apply only from
// the expected status (inspection-transitions.ts), the rust status's (rust/rust-statuses.ts) and the
// inventory status's (inventory/inventory-statuses.ts),
// a client's update, soft deletion, and the report, inputs-ZIP, reconstruction and
// annotation-number fields. Also the inspection's
// registered images (`inspection.inspection_images`), which belong to it.
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { ImageSource, InspectionRow, InspectionsTable, InspectionTables, ReportOptions } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { visibleTo } from '../auth/access.ts';
import type { Reconstruction } from '../pipeline/reconstruction.ts';
import { assertTransition, CREATION, DELETION, PURGEABLE_STATUSES } from './inspection-transitions.ts';
import { Status } from './statuses.ts';
import { assertRustTransition, RustStatus, rustSettledBy } from '../rust/rust-statuses.ts';
import { assertInventoryTransition, InventoryStatus, inventorySettledBy, inventorySources, type InventoryFrom } from '../inventory/inventory-statuses.ts';

type Db = Kysely<InspectionTables> | Transaction<InspectionTables>;

/** Columns of a new row; `status` is CREATION's, never the caller's. */
export type NewInspection = Omit<Insertable<InspectionsTable>, 'id' | 'status' | 'retry_of' | 'has_retries' | 'created_at' | 'updated_at' | 'deleted_at'>;

/** What a status transition may write besides `status` and `updated_at`. */
export interface TransitionFields {
  processing_started_at?: Date;
  processing_ended_at?: Date;
  processing_error?: string | null;
  pcs_task_uuid?: string;
  images_valid?: number;
  images_invalid?: number;
  reconstruction?: Reconstruction;
}

/** The fields of PUT/PATCH (and the processing parameters until processing starts), as stored. */
export type InspectionUpdate = Pick<
  Updateable<InspectionsTable>,
  | 'status'
  | 'additional_statuses'
  | 'pcs_task_uuid'
  | 'inspection_date'
  | 'description'
  | 'name'
  | 'base_plate_location'
  | 'top_point_location'
  | 'base_plate_size'
  | 'report_status'
  | 'processing_parameters'
>;

export type ReportOutcome =
  | { report_status: 'available'; report_pdf_key: string; report_json_key: string }
  | { report_status: 'error'; report_error: string };

/**
 * Told of every committed-together change of a row's status, additional statuses, report or
 * inputs ZIP, inside the transaction that makes it (webhooks queue their events there).
 */
export type InspectionChangeListener = (trx: Transaction<InspectionTables>, before: InspectionRow, after: InspectionRow) => Promise<void>;

export class InspectionRepository {
  /** Set once by the module (webhooks/webhook-events.ts); none: writes are not observed. */
  private listener: InspectionChangeListener | undefined;

  constructor(readonly db: Kysely<InspectionTables>) {}

  onChange(listener: InspectionChangeListener): void {
    this.listener = listener;
  }

  /**
   * Runs `write` with the row locked and, when `applied` says it wrote, hands the row before and
   * after to the listener in the same transaction (the caller's, else one of its own). `applied`
   * may return the row the write returned, which is then the row after (not read again).
   */
  private async observed<T>(id: number, db: Db, write: (db: Db) => Promise<T>, applied: (result: T) => boolean | InspectionRow): Promise<T> {
    const listener = this.listener;
    if (!listener) return write(db);
    const run = async (trx: Transaction<InspectionTables>) => {
      const before = await trx.selectFrom('inspection.inspections').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      const result = await write(trx);
      const outcome = applied(result);
      if (before && outcome) {
        const after = outcome === true ? await trx.selectFrom('inspection.inspections').selectAll().where('id', '=', id).executeTakeFirstOrThrow() : outcome;
        await listener(trx, before, after);
      }
      return result;
    };
    return db.isTransaction ? run(db as Transaction<InspectionTables>) : db.transaction().execute(run);
  }

  // Reads

  /** A live (not deleted) inspection, or undefined. */
  find(id: number, db: Db = this.db): Promise<InspectionRow | undefined> {
    return db.selectFrom('inspection.inspections').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  }

  /** The row, deleted or not (a retry reads its original's inputs). */
  findAny(id: number, db: Db = this.db): Promise<InspectionRow> {
    return db.selectFrom('inspection.inspections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  /** The row locked for the rest of the transaction (deleted or not: the caller checks `deleted_at`). */
  lock(trx: Transaction<InspectionTables>, id: number): Promise<InspectionRow> {
    return trx.selectFrom('inspection.inspections').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
  }

  /** The live inspections a request may see. */
  visible(auth: AuthContext) {
    return this.db.selectFrom('inspection.inspections').selectAll().where('deleted_at', 'is', null).where(visibleTo(auth));
  }

  // Creation

  insert(values: NewInspection, db: Db = this.db): Promise<InspectionRow> {
    return db
      .insertInto('inspection.inspections')
      .values({ ...values, status: CREATION.inspection })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** A retry of main inspection `retryOf`, which from now on says it has retries (has_retries). */
  async insertRetry(values: NewInspection, retryOf: number, db: Db = this.db): Promise<InspectionRow> {
    // The flag first: a retry never exists without it (the caller's transaction holds both anyway).
    await db.updateTable('inspection.inspections').set({ has_retries: true }).where('id', '=', retryOf).execute();
    return db
      .insertInto('inspection.inspections')
      .values({ ...values, status: CREATION.retry, retry_of: retryOf })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  // Status

  /**
   * Moves a live inspection from one of `from` to `to` (a move of TRANSITIONS; any other throws),
   * writing `fields` too. Returns whether it applied: false when the row is deleted or no longer
   * in `from` (a concurrent request, a step run twice), and then nothing was written.
   */
  async transition(id: number, from: Status | readonly Status[], to: Status, fields: TransitionFields = {}, db: Db = this.db): Promise<boolean> {
    const fromList: readonly Status[] = Array.isArray(from) ? from : [from as Status];
    assertTransition(fromList, to);
    const { reconstruction, ...plain } = fields;
    // A pending rust analysis or antenna detection that will never run (processing failed) is
    // settled by the same statement.
    const rustSettled = rustSettledBy(to);
    const inventorySettled = inventorySettledBy(to);
    const afterRust = rustSettled
      ? sql<string>`case when additional_statuses->>'rust' = ${String(RustStatus.Pending)} then additional_statuses || ${JSON.stringify(rustSettled)}::jsonb else additional_statuses end`
      : sql<string>`additional_statuses`;
    const settled = inventorySettled
      ? sql<string>`case when additional_statuses->>'inventory' = ${String(InventoryStatus.DetectionPending)} then (${afterRust}) || ${JSON.stringify(inventorySettled)}::jsonb else (${afterRust}) end`
      : afterRust;
    return this.observed(id, db, async (db) => {
      const result = await db
        .updateTable('inspection.inspections')
        .set({
          ...plain,
          ...(reconstruction !== undefined ? { reconstruction: JSON.stringify(reconstruction) } : {}),
          ...(rustSettled || inventorySettled ? { additional_statuses: settled } : {}),
          status: to,
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .where('status', 'in', fromList)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    }, (applied) => applied);
  }

  /**
   * A client's PUT/PATCH (spec: `status` may be set to any value), applied only while the row is
   * live and still in `expectedStatus` (the caller holds its lock). Undefined when it did not apply.
   */
  applyUpdate(trx: Transaction<InspectionTables>, id: number, expectedStatus: number, changes: InspectionUpdate): Promise<InspectionRow | undefined> {
    return this.observed(
      id,
      trx,
      (db) =>
        db
          .updateTable('inspection.inspections')
          .set({ ...changes, updated_at: new Date() })
          .where('id', '=', id)
          .where('deleted_at', 'is', null)
          .where('status', '=', expectedStatus)
          .returningAll()
          .executeTakeFirst(),
      (row) => row ?? false,
    );
  }

  // Deletion

  /** Locks the live rows a deletion takes: one inspection, a main inspection and its retries, or an asset's. */
  lockForDeletion(trx: Transaction<InspectionTables>, which: { id: number } | { bundleOf: number } | { assetId: number }): Promise<InspectionRow[]> {
    return trx
      .selectFrom('inspection.inspections')
      .selectAll()
      .where('deleted_at', 'is', null)
      .where((eb) =>
        'id' in which ? eb('id', '=', which.id) : 'bundleOf' in which ? eb.or([eb('id', '=', which.bundleOf), eb('retry_of', '=', which.bundleOf)]) : eb('asset_id', '=', which.assetId),
      )
      .orderBy('id')
      .forUpdate()
      .execute();
  }

  /**
   * Marks live inspections in a stable status deleted; returns how many it marked. Concurrent
   * deletions of the same rows: one marks them, the others mark none.
   */
  async softDelete(trx: Transaction<InspectionTables>, ids: number[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await trx
      .updateTable('inspection.inspections')
      .set({ deleted_at: new Date(), updated_at: new Date() })
      .where('id', 'in', ids)
      .where('deleted_at', 'is', null)
      .where('status', 'in', DELETION.from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  // Retention (retention/retention.service.ts)

  /**
   * Live inspections, after `afterId`, whose data retention gives up at `now`: in a purgeable
   * status (PURGEABLE_STATUSES) and older than their organization's `retention_days`
   * (null: `defaultDays`; 0: kept for ever), or in status 24 without having been purged (a client
   * set it before purging existed). Oldest ids first, at most `limit`.
   */
  async retentionExpired(now: Date, defaultDays: number, afterId: number, limit: number): Promise<number[]> {
    const days = sql<number>`coalesce(o.retention_days, ${defaultDays}::int)`;
    const rows = await this.db
      .selectFrom('inspection.inspections as i')
      .leftJoin('inspection.organizations as o', 'o.id', 'i.organization_id')
      .select('i.id')
      .where('i.deleted_at', 'is', null)
      .where('i.purged_at', 'is', null)
      .where('i.id', '>', afterId)
      .where((eb) =>
        eb.or([
          eb('i.status', '=', Status.DataPurged),
          eb.and([eb('i.status', 'in', PURGEABLE_STATUSES), eb(days, '>', 0), eb('i.created_at', '<', sql<Date>`${now}::timestamptz - make_interval(days => ${days})`)]),
        ]),
      )
      .orderBy('i.id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Gives the locked row's data up for purging at `at`; false when it is deleted or was given up before. */
  async markPurged(trx: Transaction<InspectionTables>, id: number, at: Date): Promise<boolean> {
    const result = await trx
      .updateTable('inspection.inspections')
      .set({ purged_at: at, updated_at: new Date() })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .where('purged_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The inputs ZIP was deleted with the data: none any more (idempotent). */
  async inputsZipPurged(id: number): Promise<void> {
    await this.db.updateTable('inspection.inspections').set({ inputs_zip_status: 'none', inputs_zip_key: null }).where('id', '=', id).execute();
  }

  // Fields of processing, annotations, the inputs ZIP and reports

  /** What photogrammetry reconstructed (pipeline/reconstruction.ts); idempotent. */
  async recordReconstruction(id: number, reconstruction: Reconstruction, db: Db = this.db): Promise<void> {
    await db.updateTable('inspection.inspections').set({ reconstruction: JSON.stringify(reconstruction) }).where('id', '=', id).execute();
  }

  /**
   * Moves `additional_statuses.rust` (rust/rust-statuses.ts) from one of `from` ('any': whatever it
   * is) to `to`, with `reason` as `rust_reason` (removed when null); other keys kept. Returns
   * whether it applied: false when the row is deleted or its rust status is not in `from`.
   */
  async rustTransition(id: number, from: readonly RustStatus[] | 'any', to: RustStatus, reason: string | null, db: Db = this.db): Promise<boolean> {
    assertRustTransition(from, to);
    return this.observed(id, db, async (db) => {
      const result = await db
        .updateTable('inspection.inspections')
        .set({ additional_statuses: sql`(additional_statuses - 'rust_reason') || ${JSON.stringify(reason === null ? { rust: to } : { rust: to, rust_reason: reason })}::jsonb`, updated_at: new Date() })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .$if(from !== 'any', (q) => q.where(sql<string>`additional_statuses->>'rust'`, 'in', (from as readonly RustStatus[]).map(String)))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    }, (applied) => applied);
  }

  /**
   * Moves `additional_statuses.inventory` (inventory/inventory-statuses.ts) to `to` when its current
   * value is one of `from` (null: none yet; 'any': whatever it is; default: the one review rule
   * leading to `to`), with `reason` as `inventory_reason` (removed when null); other keys kept.
   * Returns whether it applied: false when the row is deleted or its inventory status is not in `from`.
   */
  async inventoryTransition(id: number, to: InventoryStatus, db: Db = this.db, move: { from?: readonly InventoryFrom[] | 'any'; reason?: string | null } = {}): Promise<boolean> {
    const from = move.from ?? inventorySources(to);
    assertInventoryTransition(from, to);
    const reason = move.reason ?? null;
    const listed = from === 'any' ? [] : from.filter((f): f is number => f !== null).map(String);
    return this.observed(id, db, async (db) => {
      const result = await db
        .updateTable('inspection.inspections')
        .set({ additional_statuses: sql`(additional_statuses - 'inventory_reason') || ${JSON.stringify(reason === null ? { inventory: to } : { inventory: to, inventory_reason: reason })}::jsonb`, updated_at: new Date() })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .$if(from !== 'any', (q) =>
          q.where((eb) => {
            const current = sql<string | null>`additional_statuses->>'inventory'`;
            if (listed.length === 0) return eb(current, 'is', null);
            return (from as readonly InventoryFrom[]).includes(null) ? eb.or([eb(current, 'is', null), eb(current, 'in', listed)]) : eb(current, 'in', listed);
          }),
        )
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    }, (applied) => applied);
  }

  /** The ground height at the asset from the reconstruction (pipeline/ground-altitude.ts), metres; idempotent. */
  async recordGroundReferenceAltitude(id: number, metres: number, db: Db = this.db): Promise<void> {
    await db.updateTable('inspection.inspections').set({ ground_reference_altitude: metres.toFixed(3) }).where('id', '=', id).execute();
  }

  /** The next annotation number of the inspection (never reused). */
  async nextAnnotationNumber(trx: Transaction<InspectionTables>, id: number): Promise<number> {
    const { annotation_seq } = await trx
      .updateTable('inspection.inspections')
      .set((eb) => ({ annotation_seq: eb('annotation_seq', '+', 1) }))
      .where('id', '=', id)
      .returning('annotation_seq')
      .executeTakeFirstOrThrow();
    return annotation_seq;
  }

  /** New inputs make an existing inputs ZIP stale. */
  async inputsChanged(trx: Transaction<InspectionTables>, id: number): Promise<void> {
    await trx.updateTable('inspection.inspections').set({ updated_at: new Date(), inputs_zip_status: 'none' }).where('id', '=', id).execute();
  }

  async inputsZipRequested(trx: Transaction<InspectionTables>, id: number): Promise<void> {
    await trx.updateTable('inspection.inspections').set({ inputs_zip_status: 'processing', inputs_zip_requested_at: new Date() }).where('id', '=', id).execute();
  }

  /** The build requested at `requestedAt` failed (a newer request is left alone). */
  async inputsZipFailed(id: number, requestedAt: Date): Promise<void> {
    await this.db
      .updateTable('inspection.inspections')
      .set({ inputs_zip_status: 'error' })
      .where('id', '=', id)
      .where('inputs_zip_requested_at', '=', requestedAt)
      .execute();
  }

  async inputsZipReady(trx: Transaction<InspectionTables>, id: number, key: string): Promise<void> {
    await this.observed(id, trx, (db) => db.updateTable('inspection.inspections').set({ inputs_zip_status: 'available', inputs_zip_key: key }).where('id', '=', id).execute(), () => true);
  }

  async reportRequested(trx: Transaction<InspectionTables>, id: number, options: ReportOptions): Promise<void> {
    await trx
      .updateTable('inspection.inspections')
      .set({ report_status: 'processing', report_options: JSON.stringify(options), report_requested_at: new Date(), report_error: null, updated_at: new Date() })
      .where('id', '=', id)
      .execute();
  }

  async reportFinished(trx: Transaction<InspectionTables>, id: number, outcome: ReportOutcome): Promise<void> {
    await this.observed(
      id,
      trx,
      (db) =>
        db
          .updateTable('inspection.inspections')
          .set({ ...outcome, updated_at: new Date() })
          .where('id', '=', id)
          .execute(),
      () => true,
    );
  }

  // Registered images: the client's uploads, and (is_video) the frames taken from its videos.

  /** `sizes`: the uploaded files' bytes (the storage quota counts them). */
  async addImages(trx: Transaction<InspectionTables>, inspectionId: number, keys: string[], source: ImageSource = 'upload', sizes?: ReadonlyMap<string, number>): Promise<void> {
    for (let i = 0; i < keys.length; i += 500) {
      await trx
        .insertInto('inspection.inspection_images')
        .values(keys.slice(i, i + 500).map((key) => ({ inspection_id: inspectionId, key, source, size: sizes?.get(key) ?? null })))
        .onConflict((oc) => oc.columns(['inspection_id', 'key']).doNothing())
        .execute();
    }
  }

  async imageKeys(inspectionId: number, db: Db = this.db, source: ImageSource = 'upload'): Promise<string[]> {
    const rows = await db.selectFrom('inspection.inspection_images').select('key').where('inspection_id', '=', inspectionId).where('source', '=', source).orderBy('key').execute();
    return rows.map((r) => r.key);
  }

  async imageCount(inspectionId: number, db: Db = this.db): Promise<number> {
    const { count } = await db
      .selectFrom('inspection.inspection_images')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('inspection_id', '=', inspectionId)
      .where('source', '=', 'upload')
      .executeTakeFirstOrThrow();
    return Number(count);
  }
}
