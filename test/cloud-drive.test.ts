// Project groups (sites), folders and moves (cloud spec: "Create project group", "Move nodes",
// "Move project (deprecated)", Versioning 1 and 2).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, type CloudTestClient } from './helpers/cloud-api.ts';

const P = '/project/api/v3/projects';
const MOVE = '/common/api/v4/drive/move_batch/';
const FOLDERS = '/common/api/v4/drive/folders/';

describe('cloud project groups, folders and moves', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  let other: CloudTestClient;
  before(async () => {
    system = await startTestSystem();
    api = await cloudClient(system, 'Drive');
    other = await cloudClient(system, 'Elsewhere');
  });
  after(async () => {
    await system?.stop();
  });

  const newProject = (client = api, name = 'Project') => client.call('POST', `${P}/`, { name }, { expect: 201 });

  it('project groups: both path spellings, type bim for a site, the record of the CONTRACT', async () => {
    const dash = await api.call('POST', '/project/api/v3/project-groups/', { name: 'Tower 7', project_group_type: 'bim' }, { expect: 201 });
    const underscore = await api.call('POST', '/project/api/v3/project_groups/', { name: 'Tower 8', project_group_type: 'bim' }, { expect: 201 });
    for (const group of [dash, underscore]) {
      assert.deepEqual(Object.keys(group).sort(), ['created_at', 'id', 'name', 'organization_uuid', 'project_group_type', 'project_ids', 'uuid']);
      assert.equal(group.project_group_type, 'bim');
      assert.equal(group.organization_uuid, api.orgUuid);
      assert.deepEqual(group.project_ids, []);
    }
    assert.equal((await api.call('POST', '/project/api/v3/project-groups/', { name: 'Default type' }, { expect: 201 })).project_group_type, 'bim');
    assert.deepEqual(await api.call('GET', `/project/api/v3/project_groups/${dash.id}/`, undefined, { expect: 200 }), dash);
    assert.deepEqual(await api.call('GET', `/project/api/v3/project-groups/${underscore.id}/`, undefined, { expect: 200 }), underscore);
    const listed = await api.call('GET', '/project/api/v3/project-groups/', undefined, { expect: 200 });
    assert.deepEqual(listed.map((g: any) => g.id), [dash.id, underscore.id, listed[2].id]);
    const paged = await api.call('GET', '/project/api/v3/project_groups/?page_size=1&page=2', undefined, { expect: 200 });
    assert.equal(paged.count, 3);
    assert.deepEqual(paged.results.map((g: any) => g.id), [underscore.id]);
    await api.call('POST', '/project/api/v3/project-groups/', { project_group_type: 'bim' }, { expect: 400 });
    await other.call('GET', `/project/api/v3/project-groups/${dash.id}/`, undefined, { expect: 404 });
    assert.deepEqual(await other.call('GET', '/project/api/v3/project-groups/'), []);
  });

  it('folders: GET and POST, nested with parent_uuid in the organization', async () => {
    const root = await api.call('POST', FOLDERS, { name: 'Inspections 2025' }, { expect: 201 });
    assert.equal(root.parent_uuid, null);
    assert.equal(root.organization_uuid, api.orgUuid);
    const child = await api.call('POST', FOLDERS, { name: 'Q3', parent_uuid: root.uuid }, { expect: 201 });
    assert.equal(child.parent_uuid, root.uuid);
    const listed = await api.call('GET', FOLDERS, undefined, { expect: 200 });
    assert.deepEqual(listed.map((f: any) => f.uuid), [root.uuid, child.uuid]);
    const foreignParent = await other.call('POST', FOLDERS, { name: 'x', parent_uuid: root.uuid }, { expect: 400 });
    assert.ok(foreignParent.parent_uuid);
    assert.deepEqual(await other.call('GET', FOLDERS), []);
    const badUuid = await api.call('POST', FOLDERS, { name: 'x', parent_uuid: 'not-a-uuid' }, { expect: 400 });
    assert.ok(badUuid.parent_uuid);
  });

  it('move_batch to a project group, a folder and the organization: 200 {"moved": n}', async () => {
    const group = await api.call('POST', '/project/api/v3/project-groups/', { name: 'Site', project_group_type: 'bim' }, { expect: 201 });
    const folder = await api.call('POST', FOLDERS, { name: 'Archive' }, { expect: 201 });
    const a = await newProject();
    const b = await newProject();
    const nodes = [
      { type: 'project', uuid: a.uuid },
      { type: 'project', uuid: b.uuid },
    ];

    assert.deepEqual(await api.call('PUT', MOVE, { owner_uuid: api.orgUuid, source_nodes: nodes, target_type: 'project_group', target_uuid: group.uuid }, { expect: 200 }), { moved: 2 });
    assert.equal((await api.call('GET', `${P}/${a.id}/`)).project_group_id, group.id);
    assert.deepEqual((await api.call('GET', `/project/api/v3/project-groups/${group.id}/`)).project_ids, [a.id, b.id]);

    assert.deepEqual(await api.call('PUT', MOVE, { owner_uuid: api.orgUuid, source_nodes: [nodes[0]], target_type: 'folder', target_uuid: folder.uuid }, { expect: 200 }), { moved: 1 });
    const inFolder = await api.call('GET', `${P}/${a.id}/`);
    assert.equal(inFolder.folder_uuid, folder.uuid);
    assert.equal(inFolder.project_group_id, null, 'one place at a time');
    assert.deepEqual((await api.call('GET', FOLDERS)).find((f: any) => f.uuid === folder.uuid).project_ids, [a.id]);
    assert.deepEqual((await api.call('GET', `/project/api/v3/project-groups/${group.id}/`)).project_ids, [b.id]);

    assert.deepEqual(await api.call('PUT', MOVE, { owner_uuid: api.orgUuid, source_nodes: nodes, target_type: 'organization', target_uuid: api.orgUuid }, { expect: 200 }), { moved: 2 });
    for (const p of [a, b]) {
      const moved = await api.call('GET', `${P}/${p.id}/`);
      assert.equal(moved.project_group_id, null);
      assert.equal(moved.folder_uuid, null);
    }
    // The same project twice counts once; no trailing slash works too.
    assert.deepEqual(await api.call('PUT', MOVE.slice(0, -1), { owner_uuid: api.orgUuid, source_nodes: [nodes[0], nodes[0]], target_type: 'folder', target_uuid: folder.uuid }, { expect: 200 }), { moved: 1 });
  });

  it("move_batch refuses anything outside the caller's organization, and moves nothing", async () => {
    const mine = await newProject();
    const theirs = await newProject(other, 'Theirs');
    const myGroup = await api.call('POST', '/project/api/v3/project-groups/', { name: 'Mine' }, { expect: 201 });
    const theirGroup = await other.call('POST', '/project/api/v3/project-groups/', { name: 'Theirs' }, { expect: 201 });
    const theirFolder = await other.call('POST', FOLDERS, { name: 'Theirs' }, { expect: 201 });
    const move = (body: object, expect: number) => api.call('PUT', MOVE, body, { expect });

    const mixed = await move({ owner_uuid: api.orgUuid, source_nodes: [{ type: 'project', uuid: mine.uuid }, { type: 'project', uuid: theirs.uuid }], target_type: 'project_group', target_uuid: myGroup.uuid }, 404);
    assert.equal(mixed.code, 'not_found');
    assert.equal((await api.call('GET', `${P}/${mine.id}/`)).project_group_id, null, 'all or nothing');
    assert.equal((await other.call('GET', `${P}/${theirs.id}/`)).project_group_id, null);
    await move({ owner_uuid: api.orgUuid, source_nodes: [{ type: 'project', uuid: crypto.randomUUID() }], target_type: 'project_group', target_uuid: myGroup.uuid }, 404);
    await move({ owner_uuid: api.orgUuid, source_nodes: [{ type: 'project', uuid: mine.uuid }], target_type: 'project_group', target_uuid: theirGroup.uuid }, 404);
    await move({ owner_uuid: api.orgUuid, source_nodes: [{ type: 'project', uuid: mine.uuid }], target_type: 'folder', target_uuid: theirFolder.uuid }, 404);
    await move({ owner_uuid: api.orgUuid, source_nodes: [{ type: 'project', uuid: mine.uuid }], target_type: 'organization', target_uuid: other.orgUuid }, 404);
    await move({ owner_uuid: other.orgUuid, source_nodes: [{ type: 'project', uuid: mine.uuid }], target_type: 'organization', target_uuid: api.orgUuid }, 404);
    const type = await move({ owner_uuid: api.orgUuid, source_nodes: [{ type: 'folder', uuid: mine.uuid }], target_type: 'organization', target_uuid: api.orgUuid }, 400);
    assert.ok(type.source_nodes['0'].type);
    const target = await move({ owner_uuid: api.orgUuid, source_nodes: [{ type: 'project', uuid: mine.uuid }], target_type: 'site', target_uuid: myGroup.uuid }, 400);
    assert.ok(target.target_type);
    await move({ owner_uuid: api.orgUuid, source_nodes: [], target_type: 'organization', target_uuid: api.orgUuid }, 400);
    await move({ owner_uuid: api.orgUuid, source_nodes: [{ type: 'project', uuid: 'x' }], target_type: 'organization', target_uuid: api.orgUuid }, 400);
    assert.equal((await api.call('GET', `${P}/${mine.id}/`)).project_group_id, null);
  });

  it('the deprecated PATCH move: moves, and answers with Deprecation and Sunset headers', async () => {
    const group = await api.call('POST', '/project/api/v3/project-groups/', { name: 'Legacy' }, { expect: 201 });
    const project = await newProject();
    const moved = await api.call('PATCH', `${P}/${project.id}/`, { project_group_id: group.id }, { expect: 200 });
    assert.equal(moved.project_group_id, group.id);
    assert.equal(moved.$response.headers.get('deprecation'), 'true');
    const sunset = moved.$response.headers.get('sunset');
    assert.ok(sunset && new Date(sunset).toISOString().startsWith('2025-09-30'), sunset);
    assert.deepEqual((await api.call('GET', `/project/api/v3/project-groups/${group.id}/`)).project_ids, [project.id]);
    const root = await api.call('PATCH', `${P}/${project.id}/`, { project_group_id: null }, { expect: 200 });
    assert.equal(root.project_group_id, null);
    assert.equal(root.$response.headers.get('deprecation'), 'true');
    const foreign = await other.call('POST', '/project/api/v3/project-groups/', { name: 'Foreign' }, { expect: 201 });
    const refused = await api.call('PATCH', `${P}/${project.id}/`, { project_group_id: foreign.id }, { expect: 400 });
    assert.ok(refused.project_group_id);
    await api.call('PATCH', `${P}/${project.id}/`, {}, { expect: 400 });
    await other.call('PATCH', `${P}/${project.id}/`, { project_group_id: null }, { expect: 404 });
  });
});
