// Hands each organization the cloud projects and project groups this service made for it before
// issue 30, when everything was made in the service's own cloud organization and the
// organization's own cloud clients could not see it. Only this service knows whose a project is
// (the cloud never reads these tables), so the move is done here, through the cloud's public API:
// the service client lists what its own organization holds, finds the inspection (deleted or not:
// a pending deletion must find the project where it looks) or asset that owns each record, and,
// acting for that organization, moves them there (move_batch, extended for service clients:
// docs/cloud-service.md "Service clients"). A group takes its projects along. Records of users
// without an organization stay. Run at each start of `serve`; once everything is moved, a start
// costs two list calls that return only those users' records.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionTables } from '../inspection.tables.ts';
import type { CloudClient } from './cloud-client.ts';

/** move_batch takes at most this many source nodes per call. */
const NODES_PER_CALL = 1000;

export async function handOverLegacyProjects(db: Kysely<InspectionTables>, cloud: CloudClient, logger: Logger): Promise<{ moved: number }> {
  const home = cloud.as({ organization_id: null });
  const [projects, groups] = await Promise.all([home.listProjects(), home.listProjectGroups()]);
  if (projects.length === 0 && groups.length === 0) return { moved: 0 };

  const owners = new Map<number, { uuid: string; groups: Set<number>; nodes: { type: 'project' | 'project_group'; uuid: string }[] }>();
  const ownerOf = (organizationId: number, uuid: string) => {
    let owner = owners.get(organizationId);
    if (!owner) owners.set(organizationId, (owner = { uuid, groups: new Set(), nodes: [] }));
    return owner;
  };
  if (groups.length > 0) {
    const assets = await db
      .selectFrom('inspection.assets')
      .innerJoin('inspection.organizations', 'inspection.organizations.id', 'inspection.assets.organization_id')
      .select(['inspection.assets.project_group_id', 'inspection.assets.organization_id', 'inspection.organizations.uuid'])
      .where('inspection.assets.project_group_id', 'in', groups.map((g) => g.id))
      .execute();
    for (const asset of assets) {
      const group = groups.find((g) => g.id === asset.project_group_id)!;
      const owner = ownerOf(asset.organization_id!, asset.uuid);
      owner.groups.add(group.id);
      owner.nodes.push({ type: 'project_group', uuid: group.uuid });
    }
  }
  if (projects.length > 0) {
    const inspections = await db
      .selectFrom('inspection.inspections')
      .innerJoin('inspection.organizations', 'inspection.organizations.id', 'inspection.inspections.organization_id')
      .select(['inspection.inspections.project_id', 'inspection.inspections.organization_id', 'inspection.organizations.uuid'])
      .where('inspection.inspections.project_id', 'in', projects.map((p) => p.id))
      .execute();
    for (const inspection of inspections) {
      const project = projects.find((p) => p.id === inspection.project_id)!;
      const owner = ownerOf(inspection.organization_id!, inspection.uuid);
      // A project in a group handed over with it goes along; named too, it would leave the group.
      if (project.project_group_id != null && owner.groups.has(project.project_group_id)) continue;
      owner.nodes.push({ type: 'project', uuid: project.uuid });
    }
  }
  let moved = 0;
  for (const [organizationId, owner] of owners) {
    // Groups first: a project named in a later call is then already in its organization, and stays put.
    for (let i = 0; i < owner.nodes.length; i += NODES_PER_CALL) {
      moved += await cloud.as({ organization_id: organizationId }).handOver(owner.uuid, owner.nodes.slice(i, i + NODES_PER_CALL));
    }
  }
  if (moved > 0) logger.info({ moved, organizations: owners.size }, 'cloud projects and project groups handed over to their organizations');
  return { moved };
}
