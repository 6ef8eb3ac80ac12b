// Project groups (sites): created by the inspection service for each asset.
import crypto from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { CloudTables } from '../cloud.tables.ts';
import type { CloudPrincipal } from '../auth/oauth.service.ts';
import { conflict, notFound } from '../../infra/http/errors.ts';

type GroupRow = Selectable<CloudTables['cloud.project_groups']>;

export class ProjectGroupService {
  constructor(private readonly db: Kysely<CloudTables>) {}

  async create(principal: CloudPrincipal, body: { name: string; project_group_type?: string }) {
    const row = await this.db
      .insertInto('cloud.project_groups')
      .values({ uuid: crypto.randomUUID(), name: body.name, project_group_type: body.project_group_type ?? 'bim', organization_id: principal.organizationId })
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.map(row, principal, []);
  }

  async get(principal: CloudPrincipal, id: number) {
    const row = await this.db
      .selectFrom('cloud.project_groups')
      .selectAll()
      .where('id', '=', id)
      .where('organization_id', '=', principal.organizationId)
      .executeTakeFirst();
    if (!row) throw notFound('Project group');
    return this.map(row, principal, await this.projectIds([row.id]));
  }

  /** Deletes an empty group (the inspection service does this when an asset is deleted); 409 while it holds projects. */
  async remove(principal: CloudPrincipal, id: number): Promise<void> {
    const group = await this.get(principal, id);
    if (group.project_ids.length > 0) {
      throw conflict(`The project group still holds ${group.project_ids.length} project(s); delete or move them first.`);
    }
    await this.db.deleteFrom('cloud.project_groups').where('id', '=', id).where('organization_id', '=', principal.organizationId).execute();
  }

  async list(principal: CloudPrincipal) {
    const rows = await this.db.selectFrom('cloud.project_groups').selectAll().where('organization_id', '=', principal.organizationId).orderBy('id').execute();
    const ids = await this.projectIds(rows.map((r) => r.id));
    return rows.map((row) => this.map(row, principal, ids.filter((p) => p.group === row.id)));
  }

  private async projectIds(groupIds: number[]): Promise<{ group: number; id: number }[]> {
    if (groupIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('cloud.projects')
      .select(['id', 'project_group_id'])
      .where('project_group_id', 'in', groupIds)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ group: r.project_group_id!, id: r.id }));
  }

  private map(row: GroupRow, principal: CloudPrincipal, projects: { id: number }[]) {
    return {
      id: row.id,
      uuid: row.uuid,
      name: row.name,
      project_group_type: row.project_group_type,
      organization_uuid: principal.organizationUuid,
      project_ids: projects.map((p) => p.id),
      created_at: row.created_at.toISOString(),
    };
  }
}
