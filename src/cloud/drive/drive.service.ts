// Folders and moves (cloud spec: "Move nodes", "Move project (deprecated)"; CONTRACT §3).
//
// A project sits at its organization's root, in a project group (site) or in a folder (one of
// them: moving it somewhere clears the other place). `PUT /common/api/v4/drive/move_batch/`
// moves projects (`source_nodes` of type `project`) to a project group, the organization root or
// a folder, all or nothing, and answers {"moved": n}. Everything it names must belong to the
// caller's organization: an `owner_uuid`, source or target of another organization, or one that
// does not exist, is a 404 (never revealing others' records) and nothing moves.
//
// One extension (issue 30): a service client acting for an organization (auth/oauth.service.ts)
// moves into it, with `target_type` `organization`, the projects and project groups it made in its
// own organization before it acted for others (`source_nodes` of type `project` or
// `project_group`; a group takes its projects along). That is how the inspection service hands
// each organization the projects of its earlier inspections (docs/cloud-service.md).
import crypto from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { CloudTables } from '../cloud.tables.ts';
import type { CloudPrincipal } from '../auth/oauth.service.ts';
import { ApiError, notFound, ValidationError } from '../../infra/http/errors.ts';
import { ItemErrors } from '../common/field-errors.ts';
import type { ProjectRepository } from '../projects/project.repository.ts';

type FolderRow = Selectable<CloudTables['cloud.folders']>;

export interface MoveBatchBody {
  owner_uuid: string;
  source_nodes: { type: string; uuid: string }[];
  target_type: 'project_group' | 'organization' | 'folder';
  target_uuid: string;
}

/** `Sunset` of the deprecated PATCH move: the end of the third quarter of 2025 (cloud spec, Versioning 2). */
export const LEGACY_MOVE_SUNSET = 'Tue, 30 Sep 2025 23:59:59 GMT';

export class DriveService {
  constructor(private readonly projects: ProjectRepository) {}

  private get db(): Kysely<CloudTables> {
    return this.projects.db;
  }

  async listFolders(principal: CloudPrincipal) {
    const rows = await this.db.selectFrom('cloud.folders').selectAll().where('organization_id', '=', principal.organizationId).orderBy('id').execute();
    return this.mapFolders(rows, principal);
  }

  async createFolder(principal: CloudPrincipal, body: { name: string; parent_uuid?: string | null }) {
    let parentId: number | null = null;
    if (body.parent_uuid) {
      const parent = await this.folderByUuid(principal, body.parent_uuid);
      if (!parent) throw ValidationError.field('parent_uuid', 'No such folder in your organization.');
      parentId = parent.id;
    }
    const row = await this.db
      .insertInto('cloud.folders')
      .values({ uuid: crypto.randomUUID(), name: body.name, organization_id: principal.organizationId, parent_id: parentId })
      .returningAll()
      .executeTakeFirstOrThrow();
    return (await this.mapFolders([row], principal))[0];
  }

  async moveBatch(principal: CloudPrincipal, body: MoveBatchBody): Promise<{ moved: number }> {
    if (principal.actsForOrganizations && principal.organizationId !== principal.homeOrganizationId && body.target_type === 'organization') {
      return this.handOver(principal, body);
    }
    const errors = new ItemErrors('source_nodes');
    body.source_nodes.forEach((node, i) => {
      if (node.type !== 'project') errors.add(i, 'type', 'Only nodes of type "project" can be moved.');
    });
    errors.throwIfAny();
    if (body.owner_uuid.toLowerCase() !== principal.organizationUuid.toLowerCase()) throw notFound('Organization');
    const uuids = [...new Set(body.source_nodes.map((n) => n.uuid.toLowerCase()))];
    const target = await this.resolveTarget(principal, body.target_type, body.target_uuid);
    return this.db.transaction().execute(async (trx) => {
      const found = await this.projects.findByUuids(uuids, principal.organizationId, trx);
      if (found.length !== uuids.length) {
        const known = new Set(found.map((p) => p.uuid.toLowerCase()));
        throw new ApiError(404, 'not_found', `Project not found: ${uuids.filter((u) => !known.has(u)).slice(0, 5).join(', ')}.`);
      }
      await trx
        .updateTable('cloud.projects')
        .set({ project_group_id: target.projectGroupId, folder_id: target.folderId })
        .where('id', 'in', found.map((p) => p.id))
        .execute();
      return { moved: found.length };
    });
  }

  /**
   * A service client acting for an organization moves projects and project groups of its own
   * organization (or projects already in the acted-for one) to the acted-for organization's root;
   * a group's projects go with it and stay in it. All or nothing; 404 naming what is not found.
   */
  private async handOver(principal: CloudPrincipal, body: MoveBatchBody): Promise<{ moved: number }> {
    const errors = new ItemErrors('source_nodes');
    body.source_nodes.forEach((node, i) => {
      if (node.type !== 'project' && node.type !== 'project_group') errors.add(i, 'type', 'Only nodes of type "project" or "project_group" can be moved.');
    });
    errors.throwIfAny();
    if (body.owner_uuid.toLowerCase() !== principal.organizationUuid.toLowerCase()) throw notFound('Organization');
    if (body.target_uuid.toLowerCase() !== principal.organizationUuid.toLowerCase()) throw notFound('Organization');
    const uuidsOf = (type: string) => [...new Set(body.source_nodes.filter((n) => n.type === type).map((n) => n.uuid.toLowerCase()))];
    const groupUuids = uuidsOf('project_group');
    const projectUuids = uuidsOf('project');
    const home = principal.homeOrganizationId;
    const target = principal.organizationId;
    return this.db.transaction().execute(async (trx) => {
      const groups = groupUuids.length
        ? await trx.selectFrom('cloud.project_groups').select(['id', 'uuid']).where('uuid', 'in', groupUuids).where('organization_id', '=', home).execute()
        : [];
      const projects = projectUuids.length
        ? await trx
            .selectFrom('cloud.projects')
            .select(['id', 'uuid', 'project_group_id', 'organization_id'])
            .where('uuid', 'in', projectUuids)
            .where('organization_id', 'in', [home, target])
            .where('deleted_at', 'is', null)
            .execute()
        : [];
      const missing = [
        ...groupUuids.filter((u) => !groups.some((g) => g.uuid.toLowerCase() === u)),
        ...projectUuids.filter((u) => !projects.some((p) => p.uuid.toLowerCase() === u)),
      ];
      if (missing.length) throw new ApiError(404, 'not_found', `Not found: ${missing.slice(0, 5).join(', ')}.`);
      const groupIds = groups.map((g) => g.id);
      if (groupIds.length) {
        await trx.updateTable('cloud.project_groups').set({ organization_id: target }).where('id', 'in', groupIds).execute();
        await trx.updateTable('cloud.projects').set({ organization_id: target, folder_id: null }).where('project_group_id', 'in', groupIds).where('organization_id', '=', home).execute();
      }
      // A project named alone goes to the root, unless its group moved with it (it stays there);
      // one already in the organization stays where it is (a repeated hand-over changes nothing).
      const alone = projects.filter((p) => p.organization_id === home && (p.project_group_id === null || !groupIds.includes(p.project_group_id))).map((p) => p.id);
      if (alone.length) {
        await trx.updateTable('cloud.projects').set({ organization_id: target, project_group_id: null, folder_id: null }).where('id', 'in', alone).execute();
      }
      return { moved: groups.length + projects.length };
    });
  }

  /** The deprecated PATCH move: `project_group_id` a group of the organization, or null for the root. */
  async legacyMove(principal: CloudPrincipal, projectId: number, projectGroupId: number | null): Promise<void> {
    const project = await this.projects.find(projectId, principal.organizationId);
    if (!project) throw notFound('Project');
    if (projectGroupId !== null) {
      const group = await this.db
        .selectFrom('cloud.project_groups')
        .select('id')
        .where('id', '=', projectGroupId)
        .where('organization_id', '=', principal.organizationId)
        .executeTakeFirst();
      if (!group) throw ValidationError.field('project_group_id', 'No such project group in your organization.');
    }
    await this.projects.update(project.id, { project_group_id: projectGroupId, folder_id: null });
  }

  private async resolveTarget(
    principal: CloudPrincipal,
    type: MoveBatchBody['target_type'],
    uuid: string,
  ): Promise<{ projectGroupId: number | null; folderId: number | null }> {
    switch (type) {
      case 'organization':
        if (uuid.toLowerCase() !== principal.organizationUuid.toLowerCase()) throw notFound('Organization');
        return { projectGroupId: null, folderId: null };
      case 'project_group': {
        const group = await this.db
          .selectFrom('cloud.project_groups')
          .select('id')
          .where('uuid', '=', uuid.toLowerCase())
          .where('organization_id', '=', principal.organizationId)
          .executeTakeFirst();
        if (!group) throw notFound('Project group');
        return { projectGroupId: group.id, folderId: null };
      }
      case 'folder': {
        const folder = await this.folderByUuid(principal, uuid);
        if (!folder) throw notFound('Folder');
        return { projectGroupId: null, folderId: folder.id };
      }
    }
  }

  private folderByUuid(principal: CloudPrincipal, uuid: string): Promise<FolderRow | undefined> {
    return this.db
      .selectFrom('cloud.folders')
      .selectAll()
      .where('uuid', '=', uuid.toLowerCase())
      .where('organization_id', '=', principal.organizationId)
      .executeTakeFirst();
  }

  private async mapFolders(rows: FolderRow[], principal: CloudPrincipal) {
    const ids = rows.map((r) => r.id);
    const parentIds = [...new Set(rows.map((r) => r.parent_id).filter((id): id is number => id !== null))];
    const [projects, parents] = await Promise.all([
      ids.length
        ? this.db.selectFrom('cloud.projects').select(['id', 'folder_id']).where('folder_id', 'in', ids).where('deleted_at', 'is', null).orderBy('id').execute()
        : [],
      parentIds.length ? this.db.selectFrom('cloud.folders').select(['id', 'uuid']).where('id', 'in', parentIds).execute() : [],
    ]);
    const parentUuid = new Map(parents.map((p) => [p.id, p.uuid]));
    return rows.map((row) => ({
      id: row.id,
      uuid: row.uuid,
      name: row.name,
      parent_uuid: row.parent_id === null ? null : (parentUuid.get(row.parent_id) ?? null),
      organization_uuid: principal.organizationUuid,
      project_ids: projects.filter((p) => p.folder_id === row.id).map((p) => p.id),
      created_at: row.created_at.toISOString(),
    }));
  }
}
