// All SQL of cloud projects, their inputs and outputs.
import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { CloudTables, ProjectRow, ProjectsTable, PublicStatus, StoredAnalysis } from '../cloud.tables.ts';
import type { RasterInfo } from '../processing/map-layers.ts';
import { resultTypeOf } from '../processing/result-types.ts';
import { acceptsInputs } from './project-state.ts';

export type OutputRow = Selectable<CloudTables['cloud.project_outputs']>;

type Db = Kysely<CloudTables> | Transaction<CloudTables>;

/** Told of every change of a project's public_status, in the transaction that makes it (webhooks). */
export type ProjectStatusListener = (trx: Transaction<CloudTables>, before: ProjectRow, after: ProjectRow) => Promise<void>;

export class ProjectRepository {
  private listener: ProjectStatusListener | undefined;

  constructor(readonly db: Kysely<CloudTables>) {}

  /** Set once by the module (webhooks/cloud-webhooks.ts). */
  onStatusChange(listener: ProjectStatusListener): void {
    this.listener = listener;
  }

  /**
   * Runs a write that sets public_status with the row locked and hands the row before and after
   * to the listener in the same transaction (the caller's, else one of its own).
   */
  private async observed(id: number, db: Db, setsStatus: boolean, write: (db: Db) => Promise<ProjectRow | undefined>): Promise<ProjectRow | undefined> {
    const listener = this.listener;
    if (!listener || !setsStatus) return write(db);
    const run = async (trx: Transaction<CloudTables>) => {
      const before = await trx.selectFrom('cloud.projects').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      const after = await write(trx);
      if (before && after && before.public_status !== after.public_status) await listener(trx, before, after);
      return after;
    };
    return db.isTransaction ? run(db as Transaction<CloudTables>) : db.transaction().execute(run);
  }

  async create(values: {
    uuid: string;
    name: string;
    organizationId: number;
    clientId: number;
    userAgent: string | null;
    coordinateSystem: string | null;
    geoidModel: string | null;
    geoidHeight: number | null;
    projectGroupId: number | null;
    bucket: string;
    basePath: (id: number) => string;
  }): Promise<ProjectRow> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('cloud.projects')
        .values({
          uuid: values.uuid,
          name: values.name,
          organization_id: values.organizationId,
          client_id: values.clientId,
          user_agent: values.userAgent,
          coordinate_system: values.coordinateSystem,
          geoid_model: values.geoidModel,
          geoid_height: values.geoidHeight,
          project_group_id: values.projectGroupId,
          bucket_name: values.bucket,
          s3_base_path: '',
          tags: '[]',
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return trx
        .updateTable('cloud.projects')
        .set({ s3_base_path: values.basePath(row.id) })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    });
  }

  /** A live project of the organization, or undefined (also for other organizations' projects). */
  find(id: number, organizationId: number, db: Db = this.db, forUpdate = false): Promise<ProjectRow | undefined> {
    return db
      .selectFrom('cloud.projects')
      .selectAll()
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('deleted_at', 'is', null)
      .$if(forUpdate, (q) => q.forUpdate())
      .executeTakeFirst();
  }

  findById(id: number, db: Db = this.db): Promise<ProjectRow | undefined> {
    return db.selectFrom('cloud.projects').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  }

  /** The organization's live projects, oldest first; a window of them when `page` is given. */
  list(organizationId: number, page?: { limit: number; offset: number }): Promise<ProjectRow[]> {
    return this.db
      .selectFrom('cloud.projects')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .$if(page !== undefined, (q) => q.limit(page!.limit).offset(page!.offset))
      .execute();
  }

  async count(organizationId: number): Promise<number> {
    const { count } = await this.db
      .selectFrom('cloud.projects')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('organization_id', '=', organizationId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(count);
  }

  /** Live projects of the organization among `uuids` (others' and unknown ones are left out). */
  findByUuids(uuids: string[], organizationId: number, db: Db = this.db): Promise<ProjectRow[]> {
    if (uuids.length === 0) return Promise.resolve([]);
    return db
      .selectFrom('cloud.projects')
      .selectAll()
      .where('uuid', 'in', uuids)
      .where('organization_id', '=', organizationId)
      .where('deleted_at', 'is', null)
      .execute();
  }

  async update(id: number, values: Updateable<ProjectsTable>, db: Db = this.db): Promise<ProjectRow> {
    return (await this.observed(id, db, values.public_status !== undefined, (db) => db.updateTable('cloud.projects').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow()))!;
  }

  /**
   * Updates a project only while it is live and in one of `statuses`, and returns it (undefined
   * when it is not). Processing writes through this, so that nothing is written back for a project
   * deleted meanwhile (the deleting request makes it CANCELED, project.service.ts). A concurrent
   * deletion holds or waits for the row's lock: it either commits first (then no row matches) or
   * comes after this update.
   */
  updateWhile(id: number, statuses: PublicStatus[], values: Updateable<ProjectsTable>, db: Db = this.db): Promise<ProjectRow | undefined> {
    return this.observed(id, db, values.public_status !== undefined, (db) =>
      db
        .updateTable('cloud.projects')
        .set(values)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .where('public_status', 'in', statuses)
        .returningAll()
        .executeTakeFirst(),
    );
  }

  /**
   * Marks a live project deleted (with `values`, e.g. CANCELED); undefined when it is already
   * deleted. Of concurrent deletions of one project exactly one gets the row.
   */
  markDeleted(id: number, values: Omit<Updateable<ProjectsTable>, 'deleted_at'>, db: Db = this.db): Promise<ProjectRow | undefined> {
    return this.observed(id, db, values.public_status !== undefined, (db) =>
      db
        .updateTable('cloud.projects')
        .set({ ...values, deleted_at: new Date() })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returningAll()
        .executeTakeFirst(),
    );
  }

  /** Whether the project is still live and PROCESSING (processing's cancellation watch). */
  async isProcessing(id: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('cloud.projects')
      .select('id')
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .where('public_status', '=', 'PROCESSING')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Whether a live project owns the storage prefix `basePath` (its s3_base_path) in `bucket`:
   * the embedded S3 endpoint asks this before honouring temporary credentials (prefix-gate.ts).
   */
  /**
   * Whether project `id` owns the storage folder (false: no such live project), and whether it
   * still takes uploads: 'read-only' once processing has started (spec rule 4, requireNotStarted).
   */
  async storagePrefixState(id: number, bucket: string, basePath: string): Promise<boolean | 'read-only'> {
    const row = await this.db
      .selectFrom('cloud.projects')
      .select('public_status')
      .where('id', '=', id)
      .where('bucket_name', '=', bucket)
      .where('s3_base_path', '=', basePath)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) return false;
    return acceptsInputs(row.public_status) ? true : 'read-only';
  }

  /** Adds inputs (repeats are ignored) and returns the project's input count. */
  async addInputs(projectId: number, inputs: { key: string; size: number }[], trx: Transaction<CloudTables>): Promise<number> {
    for (let i = 0; i < inputs.length; i += 1000) {
      const chunk = inputs.slice(i, i + 1000);
      await trx
        .insertInto('cloud.project_inputs')
        .values(chunk.map((input) => ({ project_id: projectId, key: input.key, size: input.size })))
        .onConflict((oc) => oc.columns(['project_id', 'key']).doNothing())
        .execute();
    }
    const { count } = await trx
      .selectFrom('cloud.project_inputs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return Number(count);
  }

  listInputs(projectId: number, keys?: string[]): Promise<{ key: string; size: number; analysis: StoredAnalysis | null }[]> {
    if (keys && keys.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('cloud.project_inputs')
      .select(['key', 'size', 'analysis'])
      .where('project_id', '=', projectId)
      .$if(keys !== undefined, (q) => q.where('key', 'in', keys!))
      .orderBy('key')
      .execute();
  }

  /** Names of API clients by row id (user_display_name of their projects); deleted ones are absent. */
  async clientNames(clientIds: number[]): Promise<Map<number, string>> {
    const ids = [...new Set(clientIds)];
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('cloud.clients').select(['id', 'name']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  listOutputs(projectId: number) {
    return this.db.selectFrom('cloud.project_outputs').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  }

  /** Outputs of several projects at once (project lists). */
  async outputsOf(projectIds: number[]): Promise<Map<number, OutputRow[]>> {
    const byProject = new Map<number, OutputRow[]>(projectIds.map((id) => [id, []]));
    if (projectIds.length === 0) return byProject;
    const rows = await this.db.selectFrom('cloud.project_outputs').selectAll().where('project_id', 'in', projectIds).orderBy('id').execute();
    for (const row of rows) byProject.get(row.project_id)?.push(row);
    return byProject;
  }

  async replaceOutputs(
    projectId: number,
    outputs: { outputType: string; availability: string; key: string | null; note: string | null; raster?: RasterInfo | null }[],
    db: Db = this.db,
  ): Promise<void> {
    // The inputs bundle is not an engine output: it lives on across processing (inputs-bundle.ts).
    await db.deleteFrom('cloud.project_outputs').where('project_id', '=', projectId).where('output_type', '<>', 'input_zip').execute();
    if (outputs.length === 0) return;
    await db
      .insertInto('cloud.project_outputs')
      .values(
        outputs.map((o) => ({
          project_id: projectId,
          output_type: o.outputType,
          result_type: resultTypeOf(o.outputType),
          raster: o.raster ? JSON.stringify(o.raster) : null,
          availability: o.availability,
          s3_key: o.key,
          note: o.note,
        })),
      )
      .execute();
  }
}
