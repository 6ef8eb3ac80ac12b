// All SQL of ground control points, manual tie points and marks. Marks come and go in pages
// (markPages, countStoredPairs, upsertMarks by the caller's chunks): a project holds up to 100,000
// of them, and on the embedded database one statement over all of them blocks the whole process
// (issue 40 §5).
import { sql, type Kysely, type Transaction } from 'kysely';
import type { CloudTables } from '../cloud.tables.ts';
import type { ControlPoints } from '../processing/engine.ts';

type Db = Kysely<CloudTables> | Transaction<CloudTables>;

/** Marks per page read: a few milliseconds of the embedded database each. */
export const MARK_PAGE_SIZE = 250;

export interface GcpValues {
  name: string;
  point_type: 'GCP' | 'CHECKPOINT';
  x: number;
  y: number;
  z: number;
  xy_accuracy: number;
  z_accuracy: number;
}

export interface MarkValues {
  gcp: string;
  photo: string;
  x: number;
  y: number;
}

export class ControlPointRepository {
  constructor(readonly db: Kysely<CloudTables>) {}

  /** Adds GCPs; a GCP registered again under its name is replaced. */
  async upsertGcps(projectId: number, gcps: GcpValues[], db: Db): Promise<void> {
    for (let i = 0; i < gcps.length; i += 1000) {
      await db
        .insertInto('cloud.project_gcps')
        .values(gcps.slice(i, i + 1000).map((g) => ({ project_id: projectId, ...g })))
        .onConflict((oc) =>
          oc.columns(['project_id', 'name']).doUpdateSet((eb) => ({
            point_type: eb.ref('excluded.point_type'),
            x: eb.ref('excluded.x'),
            y: eb.ref('excluded.y'),
            z: eb.ref('excluded.z'),
            xy_accuracy: eb.ref('excluded.xy_accuracy'),
            z_accuracy: eb.ref('excluded.z_accuracy'),
          })),
        )
        .execute();
    }
  }

  async upsertMtps(projectId: number, mtps: { name: string; is_checkpoint: boolean }[], db: Db): Promise<void> {
    for (let i = 0; i < mtps.length; i += 1000) {
      await db
        .insertInto('cloud.project_mtps')
        .values(mtps.slice(i, i + 1000).map((m) => ({ project_id: projectId, ...m })))
        .onConflict((oc) => oc.columns(['project_id', 'name']).doUpdateSet((eb) => ({ is_checkpoint: eb.ref('excluded.is_checkpoint') })))
        .execute();
    }
  }

  /** Adds marks; a point marked again in the same photo keeps the latest pixel coordinates. */
  async upsertMarks(projectId: number, marks: MarkValues[], db: Db): Promise<void> {
    for (let i = 0; i < marks.length; i += 1000) {
      await db
        .insertInto('cloud.project_marks')
        .values(marks.slice(i, i + 1000).map((m) => ({ project_id: projectId, point_name: m.gcp, photo: m.photo, x: m.x, y: m.y })))
        .onConflict((oc) => oc.columns(['project_id', 'point_name', 'photo']).doUpdateSet((eb) => ({ x: eb.ref('excluded.x'), y: eb.ref('excluded.y') })))
        .execute();
    }
  }

  /** How many of `marks` (point, photo) the project already holds (a registration replaces those). */
  async countStoredPairs(projectId: number, marks: MarkValues[], db: Db = this.db): Promise<number> {
    if (marks.length === 0) return 0;
    const row = await sql<{ count: number }>`
      select count(*)::int as count from cloud.project_marks m
      join unnest(${marks.map((m) => m.gcp)}::text[], ${marks.map((m) => m.photo)}::text[]) as r(point_name, photo)
        on m.point_name = r.point_name and m.photo = r.photo
      where m.project_id = ${projectId}`.execute(db);
    return Number(row.rows[0]?.count ?? 0);
  }

  async countMarks(projectId: number, db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('cloud.project_marks')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /**
   * The project's marks in (point, photo) order, `pageSize` at a time: keyset pages along the
   * primary key, each a short query, so that other requests' queries run between them. Each page
   * is read with sorting and bitmap scans off: without statistics (PGlite has no autovacuum to
   * gather them) the planner guessed few rows past the key and sorted all of them for every page
   * (60 ms a page at 100,000 marks instead of 2 ms along the index).
   */
  async *markPages(projectId: number, pageSize: number): AsyncGenerator<MarkValues[]> {
    let after: { point_name: string; photo: string } | undefined;
    for (;;) {
      const rows = await this.db.transaction().execute(async (trx) => {
        await sql`set local enable_sort = off`.execute(trx);
        await sql`set local enable_bitmapscan = off`.execute(trx);
        return trx
          .selectFrom('cloud.project_marks')
          .select(['point_name', 'photo', 'x', 'y'])
          .where('project_id', '=', projectId)
          .$if(after !== undefined, (q) => q.where((eb) => eb(eb.refTuple('point_name', 'photo'), '>', eb.tuple(after!.point_name, after!.photo))))
          .orderBy('point_name')
          .orderBy('photo')
          .limit(pageSize)
          .execute();
      });
      if (rows.length > 0) yield rows.map((r) => ({ gcp: r.point_name, photo: r.photo, x: r.x, y: r.y }));
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1];
    }
  }

  async gcps(projectId: number, db: Db = this.db): Promise<GcpValues[]> {
    const rows = await db
      .selectFrom('cloud.project_gcps')
      .select(['name', 'point_type', 'x', 'y', 'z', 'xy_accuracy', 'z_accuracy'])
      .where('project_id', '=', projectId)
      .orderBy('name')
      .execute();
    return rows.map((g) => ({ ...g, point_type: g.point_type as GcpValues['point_type'] }));
  }

  mtps(projectId: number, db: Db = this.db): Promise<{ name: string; is_checkpoint: boolean }[]> {
    return db.selectFrom('cloud.project_mtps').select(['name', 'is_checkpoint']).where('project_id', '=', projectId).orderBy('name').execute();
  }

  async names(projectId: number, db: Db = this.db): Promise<{ gcps: Set<string>; mtps: Set<string> }> {
    const [gcps, mtps] = await Promise.all([
      db.selectFrom('cloud.project_gcps').select('name').where('project_id', '=', projectId).execute(),
      db.selectFrom('cloud.project_mtps').select('name').where('project_id', '=', projectId).execute(),
    ]);
    return { gcps: new Set(gcps.map((r) => r.name)), mtps: new Set(mtps.map((r) => r.name)) };
  }

  /** Each GCP and MTP with the number of distinct photos it is marked in. */
  async markCounts(projectId: number, db: Db = this.db): Promise<{ kind: 'GCP' | 'MTP'; name: string; photos: number }[]> {
    const counts = db
      .selectFrom('cloud.project_marks')
      .select(['point_name', sql<number>`count(distinct photo)`.as('photos')])
      .where('project_id', '=', projectId)
      .groupBy('point_name')
      .as('c');
    const gcps = await db
      .selectFrom('cloud.project_gcps as g')
      .leftJoin(counts, 'c.point_name', 'g.name')
      .select(['g.name', 'c.photos'])
      .where('g.project_id', '=', projectId)
      .orderBy('g.name')
      .execute();
    const mtps = await db
      .selectFrom('cloud.project_mtps as m')
      .leftJoin(counts, 'c.point_name', 'm.name')
      .select(['m.name', 'c.photos'])
      .where('m.project_id', '=', projectId)
      .orderBy('m.name')
      .execute();
    return [
      ...gcps.map((r) => ({ kind: 'GCP' as const, name: r.name, photos: Number(r.photos ?? 0) })),
      ...mtps.map((r) => ({ kind: 'MTP' as const, name: r.name, photos: Number(r.photos ?? 0) })),
    ];
  }

  /** How many GCPs and MTPs (one namespace) and how many marks the project holds. */
  async counts(projectId: number, db: Db = this.db): Promise<{ points: number; marks: number }> {
    const count = (table: 'cloud.project_gcps' | 'cloud.project_mtps' | 'cloud.project_marks') =>
      db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('project_id', '=', projectId)
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.count));
    const [gcps, mtps, marks] = [await count('cloud.project_gcps'), await count('cloud.project_mtps'), await count('cloud.project_marks')];
    return { points: gcps + mtps, marks };
  }

  /** Everything an engine needs; the marks read page by page. */
  async all(projectId: number): Promise<ControlPoints> {
    const marks: MarkValues[] = [];
    for await (const page of this.markPages(projectId, MARK_PAGE_SIZE)) marks.push(...page);
    return { gcps: await this.gcps(projectId), mtps: await this.mtps(projectId), marks };
  }
}
