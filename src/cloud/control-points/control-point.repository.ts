// All SQL of ground control points, manual tie points and marks.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { CloudTables } from '../cloud.tables.ts';
import type { ControlPoints } from '../processing/engine.ts';

type Db = Kysely<CloudTables> | Transaction<CloudTables>;

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

  async all(projectId: number, db: Db = this.db): Promise<ControlPoints> {
    const [gcps, mtps, marks] = await Promise.all([
      db
        .selectFrom('cloud.project_gcps')
        .select(['name', 'point_type', 'x', 'y', 'z', 'xy_accuracy', 'z_accuracy'])
        .where('project_id', '=', projectId)
        .orderBy('name')
        .execute(),
      db.selectFrom('cloud.project_mtps').select(['name', 'is_checkpoint']).where('project_id', '=', projectId).orderBy('name').execute(),
      db
        .selectFrom('cloud.project_marks')
        .select(['point_name as gcp', 'photo', 'x', 'y'])
        .where('project_id', '=', projectId)
        .orderBy('point_name')
        .orderBy('photo')
        .execute(),
    ]);
    return { gcps: gcps.map((g) => ({ ...g, point_type: g.point_type as GcpValues['point_type'] })), mtps, marks };
  }
}
