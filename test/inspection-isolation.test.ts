// Tenant isolation: for every endpoint that takes an id, a user of another organization and a
// user without organization get 404 for the first account's records (never 403, never the
// record), change nothing, and do not see them in any list. A share token of the owner's
// inspection opens nothing of another account (inspection-share-tokens.test.ts has the rest).
// The cloud side (issue 30): an inspection's cloud project and its asset's project group belong
// to the inspection's organization, whose own cloud client reads and downloads them (boto3, as
// Pix4D's demo client does) while another organization's client gets 404; projects made before,
// in the service's own cloud organization, are handed over to their organizations. That service
// organization's uuid is random (issue 40 §7: it is part of storage prefixes), also after an
// upgrade from the former fixed one.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, uploadedInspection } from './helpers/inspection-fixtures.ts';
import { cloudClient, type CloudTestClient } from './helpers/cloud-api.ts';
import { requireTool } from './helpers/system-tools.ts';
import { cloudMigrations } from '../src/cloud/cloud.migrations.ts';

/** The uuid every installation's service organization had before issue 40 §7. */
const FORMER_SERVICE_ORG = '00000000-0000-4000-8000-000000000001';

describe('inspection service: tenant isolation', () => {
  let system: TestSystem;
  let owner: TestAccount;
  let ids: { asset: number; inspection: number; annotation: number; measurement: string; photo: number; key: string; shareToken: number; token: string };
  before(async () => {
    system = await startTestSystem();
    owner = await system.newAccount();
    const processed = await processedInspection(owner, {}, { name: 'Secret tower' });
    const photo = processed.cameras[0].photo_id;
    const annotation = await owner.client.expect(201, 'POST', '/v1/annotations/', {
      type: 'Owner-only type',
      inspection: processed.inspection.id,
      photo_id: photo,
      data: { coords_2d: [[0.1, 0.1], [0.2, 0.1], [0.2, 0.2], [0.1, 0.2]] },
    });
    const measurement = (
      await owner.client.expect(201, 'POST', `/v1/inspections/${processed.inspection.id}/measurements/`, { annotations: [{ geometry: { type: 'Point', coordinates: [1, 2, 3] } }] })
    ).annotations[0];
    const share = await owner.client.expect(201, 'POST', `/v1/inspections/${processed.inspection.id}/share_tokens/`, {});
    ids = { asset: processed.asset.id, inspection: processed.inspection.id, annotation: annotation.id, measurement: measurement.id, photo, key: processed.keys[0], shareToken: share.id, token: share.token };
  });
  after(async () => {
    await system?.stop();
  });

  function endpoints(): [string, string, unknown?][] {
    const { asset, inspection, annotation, measurement, key, shareToken } = ids;
    const rect = { coords_2d: [[0.1, 0.1], [0.3, 0.1], [0.3, 0.3], [0.1, 0.3]] };
    return [
      ['GET', `/v1/assets/${asset}/`],
      ['PUT', `/v1/assets/${asset}/`, { name: 'stolen' }],
      ['PATCH', `/v1/assets/${asset}/`, { name: 'stolen' }],
      ['DELETE', `/v1/assets/${asset}/`],
      ['GET', `/v1/assets/${asset}/inspections/`],
      ['GET', `/v1/inspections/${inspection}/`],
      ['PUT', `/v1/inspections/${inspection}/`, { name: 'stolen' }],
      ['PATCH', `/v1/inspections/${inspection}/`, { status: 16 }],
      ['DELETE', `/v1/inspections/${inspection}/`],
      ['GET', `/v1/inspections/${inspection}/s3_credentials/`],
      ['POST', `/v1/inspections/${inspection}/register_images/`, { image_keys: [key] }],
      ['POST', `/v1/inspections/${inspection}/process/`, {}],
      ['GET', `/v1/inspections/${inspection}/cameras/`],
      ['GET', `/v1/inspections/${inspection}/annotations/`],
      ['GET', `/v1/inspections/${inspection}/bundle/`],
      ['GET', `/v1/inspections/${inspection}/extras/`],
      ['GET', `/v1/inspections/${inspection}/inventory/`],
      ['GET', `/v1/inspections/${inspection}/outputs/`],
      ['GET', `/v1/inspections/${inspection}/inputs/`],
      ['GET', `/v1/inspections/${inspection}/measurements/`],
      ['POST', `/v1/inspections/${inspection}/measurements/`, { annotations: [{ geometry: { type: 'Point', coordinates: [0, 0, 0] } }] }],
      ['PUT', `/v1/inspections/${inspection}/measurements/${measurement}/`, { properties: {}, tags: [], geometry: { type: 'Point', coordinates: [0, 0, 0] } }],
      ['PATCH', `/v1/inspections/${inspection}/measurements/${measurement}/`, { tags: ['stolen'] }],
      ['DELETE', `/v1/inspections/${inspection}/measurements/${measurement}/`],
      ['POST', `/v1/inspections/${inspection}/report/`, {}],
      ['POST', `/v1/inspections/${inspection}/share_tokens/`, {}],
      ['GET', `/v1/inspections/${inspection}/share_tokens/`],
      ['DELETE', `/v1/inspections/${inspection}/share_tokens/${shareToken}/`],
      ['POST', '/v1/inspections/retry/', { inspection }],
      ['GET', `/v1/annotations/${annotation}/`],
      ['PUT', `/v1/annotations/${annotation}/`, { type: 'x', inspection, data: rect }],
      ['PATCH', `/v1/annotations/${annotation}/`, { severity_level: 5 }],
      ['DELETE', `/v1/annotations/${annotation}/`],
    ];
  }

  for (const who of ['a user of another organization', 'a user without organization'] as const) {
    it(`${who} gets 404 from every endpoint taking the owner's ids, and lists none of the owner's records`, async () => {
      const stranger = await system.newAccount({ organization: who === 'a user of another organization' });
      for (const [method, path, body] of endpoints()) {
        const response = await stranger.client.request(method, path, body);
        assert.equal(response.status, 404, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
        assert.equal(response.body.code, 'not_found', `${method} ${path}`);
        assert.ok(!JSON.stringify(response.body).includes('Secret tower'));
      }
      // Ids named in bodies are "invalid" for them, exactly like ids that do not exist.
      const annotation = await stranger.client.request('POST', '/v1/annotations/', {
        type: 'x',
        inspection: ids.inspection,
        photo_id: ids.photo,
        data: { coords_2d: [[0.1, 0.1], [0.3, 0.1], [0.3, 0.3], [0.1, 0.3]] },
      });
      assert.equal(annotation.status, 400);
      assert.deepEqual(annotation.body.inspection, [`Invalid pk "${ids.inspection}" - object does not exist.`]);
      const inspection = await stranger.client.request('POST', '/v1/inspections', { asset: ids.asset });
      assert.equal(inspection.status, 400);
      assert.deepEqual(inspection.body.asset, [`Invalid pk "${ids.asset}" - object does not exist.`]);
      // Lists.
      assert.deepEqual(await stranger.client.expect(200, 'GET', '/v1/assets/'), []);
      assert.deepEqual(await stranger.client.expect(200, 'GET', '/v1/assets/?search=Secret'), []);
      assert.deepEqual(await stranger.client.expect(200, 'GET', '/v1/inspections/'), []);
      assert.equal((await stranger.client.expect(200, 'GET', '/v1/inspections/?page=1')).count, 0);
      const types = (await stranger.client.expect(200, 'GET', '/v1/annotations/types/')).map((t: any) => t.type);
      assert.ok(!types.includes('Owner-only type'));
      const history = await stranger.client.expect(200, 'GET', '/v1/allowance/history/');
      assert.ok(!history.some((h: any) => h.inspection === ids.inspection));
    });
  }

  it('a share token of the owner\'s inspection opens no inspection of another account (404)', async () => {
    const stranger = await system.newAccount();
    const theirs = await stranger.client.createInspection({ asset: (await stranger.client.createAsset({ name: 'Theirs', type: 2 })).id });
    for (const path of [`/v1/inspections/${theirs.id}/`, `/v1/inspections/${theirs.id}/measurements/`, `/v1/inspections/${theirs.id}/annotations/`]) {
      const response = await fetch(`${system.urls.inspection}${path}`, { headers: { 'x-share-token': ids.token } });
      assert.equal(response.status, 404, path);
    }
    // Their own token does not open the owner's inspection either.
    const theirToken = (await stranger.client.expect(201, 'POST', `/v1/inspections/${theirs.id}/share_tokens/`, {})).token;
    assert.equal((await fetch(`${system.urls.inspection}/v1/inspections/${ids.inspection}/`, { headers: { 'x-share-token': theirToken } })).status, 404);
    assert.equal((await fetch(`${system.urls.inspection}/v1/inspections/${ids.inspection}/`, { headers: { 'x-share-token': ids.token } })).status, 200);
  });

  it('the owner\'s records are untouched', async () => {
    const asset = await owner.client.expect(200, 'GET', `/v1/assets/${ids.asset}/`);
    assert.equal(asset.name, 'Secret tower');
    const inspection = await owner.client.getInspection(ids.inspection);
    assert.equal(inspection.status, 7);
    assert.equal(inspection.name, 'Flight');
    assert.equal(inspection.report_status, 'not available');
    assert.deepEqual(inspection.retries, []);
    const annotation = await owner.client.expect(200, 'GET', `/v1/annotations/${ids.annotation}/`);
    assert.equal(annotation.severity_level, 0);
    const measurements = await owner.client.expect(200, 'GET', `/v1/inspections/${ids.inspection}/measurements/`);
    assert.deepEqual(
      measurements.results.map((m: any) => [m.id, m.tags]),
      [[ids.measurement, []]],
    );
    assert.equal((await owner.client.expect(200, 'GET', `/v1/inspections/${ids.inspection}/annotations/`)).length, 1);
    assert.deepEqual((await owner.client.expect(200, 'GET', `/v1/inspections/${ids.inspection}/share_tokens/`)).map((t: any) => [t.id, t.revoked_at]), [[ids.shareToken, null]]);
  });

  it('a second member of the organization sees the organization\'s records', async () => {
    const name = `member-${Date.now()}`;
    const user = await system.inspection.accounts.createUser(name, 'member-password-1', 'm@example.test');
    await system.inspection.accounts.addMember(user.id, owner.organizationId!);
    const { InspectionClient } = await import('../src/sdk/inspection-client.ts');
    const member = new InspectionClient({ baseUrl: system.urls.inspection, apiKey: owner.apiKey, organizationUuid: owner.organizationUuid });
    await member.login(name, 'member-password-1');
    assert.equal((await member.request('GET', `/v1/inspections/${ids.inspection}/`)).status, 200);
    assert.equal((await member.request('GET', `/v1/annotations/${ids.annotation}/`)).status, 200);
    // Without the organization header the member sees only their own records.
    const alone = new InspectionClient({ baseUrl: system.urls.inspection, apiKey: owner.apiKey });
    alone.token = member.token;
    assert.equal((await alone.request('GET', `/v1/inspections/${ids.inspection}/`)).status, 404);
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});

const run = promisify(execFile);

describe('cloud service: the organization\'s own cloud client sees its inspections\' projects (issue 30)', () => {
  let system: TestSystem;
  let owner: TestAccount;
  let processed: Awaited<ReturnType<typeof processedInspection>>;
  let ownerCloud: CloudTestClient;
  let foreignCloud: CloudTestClient;
  const db = () => system.database.db as Kysely<unknown>;
  const P = '/project/api/v3/projects';
  const G = '/project/api/v3/project-groups';
  /** The inspection service's own cloud organization: its client's. */
  const serviceOrganization = async () =>
    (await sql<{ id: number; uuid: string }>`select o.id, o.uuid from cloud.organizations o join cloud.clients c on c.organization_id = o.id where c.name = 'inspection-service'`.execute(db())).rows[0];

  before(async () => {
    system = await startTestSystem();
    owner = await system.newAccount();
    processed = await processedInspection(owner, {}, { name: 'Org tower' });
    // The organization's cloud client, as `admin create-cloud-client --org <its uuid>` makes it.
    ownerCloud = await cloudClient(system, 'Owner org', owner.organizationUuid);
    // Another organization with inspections of its own, and its cloud client.
    const other = await system.newAccount();
    await uploadedInspection(other);
    foreignCloud = await cloudClient(system, 'Foreign org', other.organizationUuid);
  });
  after(async () => {
    await system?.stop();
  });

  it('the organization\'s client reads the project, its outputs, the asset\'s project group and finds them in its lists', async () => {
    const { inspection, asset } = processed;
    const project = await ownerCloud.call('GET', `${P}/${inspection.project_id}/`, undefined, { expect: 200 });
    assert.equal(project.uuid, inspection.project_uuid);
    assert.equal(project.public_status, 'DONE');
    assert.equal(project.project_group_id, asset.project_group_id);
    const group = await ownerCloud.call('GET', `${G}/${asset.project_group_id}/`, undefined, { expect: 200 });
    assert.equal(group.organization_uuid, owner.organizationUuid);
    // The cloud organization, made when the inspection service first acted for it, got its name from the admin command.
    const named = await sql<{ name: string }>`select name from cloud.organizations where uuid = ${owner.organizationUuid}`.execute(db());
    assert.deepEqual(named.rows, [{ name: 'Owner org' }]);
    assert.deepEqual(group.project_ids, [inspection.project_id]);
    const projects = await ownerCloud.call('GET', `${P}/`, undefined, { expect: 200 });
    assert.deepEqual(projects.map((p: { id: number }) => p.id), [inspection.project_id]);
    const groups = await ownerCloud.call('GET', `${G}/`, undefined, { expect: 200 });
    assert.deepEqual(groups.map((g: { id: number }) => g.id), [asset.project_group_id]);
    const { outputs } = await ownerCloud.call('GET', `${P}/${inspection.project_id}/outputs/`, undefined, { expect: 200 });
    assert.ok(outputs.some((o: { output_type: string; availability: string }) => o.output_type === 'calibrated_camera_parameters_json' && o.availability === 'done'));
  });

  it('the organization\'s client lists and downloads an inspection\'s output with boto3 after asking the cloud API for storage credentials (Pix4D\'s demo client pattern)', async (t) => {
    if (!requireTool(t, '/usr/bin/python3', 'python3')) return;
    const work = tempDir('oi-org-boto3-');
    try {
      const script = path.join(import.meta.dirname, 'fixtures', 'pix4d_demo_client.py');
      const args = [script, system.urls.cloud, ownerCloud.clientId, ownerCloud.clientSecret, String(processed.inspection.project_id), work, 'calibrated_camera_parameters', 'calibrated_camera_parameters_json'];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: 60_000 });
      const result = JSON.parse(stdout);
      console.log(`# the organization's client with boto3: result types ${Object.keys(result.by_result_type).sort().join(', ')}; downloaded ${result.downloaded.key} (${result.downloaded.size} bytes); listed ${result.listed.length}; write: ${JSON.stringify(result.refused_write)}`);
      const bucket = (await ownerCloud.call('GET', `${P}/${processed.inspection.project_id}/`, undefined, { expect: 200 })).bucket_name;
      const { body } = await system.store.getObject(bucket, result.downloaded.key);
      const expected = Buffer.concat(await body.toArray());
      assert.ok(expected.length > 0);
      assert.equal(result.downloaded.size, expected.length);
      assert.equal(result.downloaded.sha256, crypto.createHash('sha256').update(expected).digest('hex'));
      assert.deepEqual(result.listed, [result.downloaded.key]);
      assert.deepEqual(result.refused_write, { code: 'AccessDenied', status: 403 });
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it('another organization\'s client gets 404 on the project, its outputs, its credentials and the project group, and lists none of them', async () => {
    const { inspection, asset } = processed;
    for (const path of [`${P}/${inspection.project_id}/`, `${P}/${inspection.project_id}/outputs/`, `${P}/${inspection.project_id}/s3_credentials/`, `${P}/${inspection.project_id}/inputs/zip/`, `${G}/${asset.project_group_id}/`]) {
      const body = await foreignCloud.call('GET', path, undefined, { expect: 404 });
      assert.equal(body.code, 'not_found', path);
    }
    await foreignCloud.call('DELETE', `${P}/${inspection.project_id}/`, undefined, { expect: 404 });
    const move = { owner_uuid: foreignCloud.orgUuid, source_nodes: [{ type: 'project', uuid: inspection.project_uuid }], target_type: 'organization', target_uuid: foreignCloud.orgUuid };
    await foreignCloud.call('PUT', '/common/api/v4/drive/move_batch/', move, { expect: 404 });
    const projects = await foreignCloud.call('GET', `${P}/`, undefined, { expect: 200 });
    assert.ok(!projects.some((p: { id: number }) => p.id === inspection.project_id));
    const groups = await foreignCloud.call('GET', `${G}/`, undefined, { expect: 200 });
    assert.ok(!groups.some((g: { id: number }) => g.id === asset.project_group_id));
    // Still the owner's, whole.
    await ownerCloud.call('GET', `${P}/${inspection.project_id}/`, undefined, { expect: 200 });
  });

  it('only a service client may act for another organization: a client naming organization_uuid in its token request is refused', async () => {
    const response = await fetch(`${system.urls.cloud}/oauth2/token/`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: foreignCloud.clientId, client_secret: foreignCloud.clientSecret, organization_uuid: owner.organizationUuid! }),
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: string }).error, 'unauthorized_client');
  });

  it('a service client acting for one organization sees nothing of another and cannot move another\'s project or group to it', async () => {
    const credentials = await system.cloud.oauth.createClient((await serviceOrganization()).id, 'another service', { actsForOrganizations: true });
    const token = async (organization: string) => {
      const response = await fetch(`${system.urls.cloud}/oauth2/token/`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: credentials.clientId, client_secret: credentials.clientSecret, organization_uuid: organization }),
      });
      return { status: response.status, body: (await response.json()) as { access_token: string; error?: string } };
    };
    const invalid = await token('not-a-uuid');
    assert.deepEqual([invalid.status, invalid.body.error], [400, 'invalid_request']);
    const acting = await token(foreignCloud.orgUuid);
    assert.equal(acting.status, 200);
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${system.urls.cloud}${path}`, {
        method,
        headers: { authorization: `Bearer ${acting.body.access_token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const { inspection, asset } = processed;
    assert.equal((await call('GET', `${P}/${inspection.project_id}/`)).status, 404);
    assert.equal((await call('GET', `${G}/${asset.project_group_id}/`)).status, 404);
    const nodes = [{ type: 'project_group', uuid: asset.project_group_uuid }, { type: 'project', uuid: inspection.project_uuid }];
    for (const node of nodes) {
      const move = { owner_uuid: foreignCloud.orgUuid, source_nodes: [node], target_type: 'organization', target_uuid: foreignCloud.orgUuid };
      assert.equal((await call('PUT', '/common/api/v4/drive/move_batch/', move)).status, 404, node.type);
    }
    const project = await ownerCloud.call('GET', `${P}/${inspection.project_id}/`, undefined, { expect: 200 });
    assert.equal(project.project_group_id, asset.project_group_id);
  });

  it('projects and project groups made before, in the service\'s own cloud organization, are handed over to their organization; a user\'s own stay', async () => {
    const legacy = await uploadedInspection(owner, {}, { name: 'Older tower' });
    const personal = await system.newAccount({ organization: false });
    const own = await uploadedInspection(personal);
    // As before issue 30: the project and the group in the service's organization.
    const serviceOrg = (await serviceOrganization()).id;
    await sql`update cloud.project_groups set organization_id = ${serviceOrg} where id = ${legacy.asset.project_group_id}`.execute(db());
    await sql`update cloud.projects set organization_id = ${serviceOrg} where id = ${legacy.inspection.project_id}`.execute(db());
    await ownerCloud.call('GET', `${P}/${legacy.inspection.project_id}/`, undefined, { expect: 404 });
    await ownerCloud.call('GET', `${G}/${legacy.asset.project_group_id}/`, undefined, { expect: 404 });

    const { moved } = await system.inspection.handOverLegacyCloudProjects();
    assert.equal(moved, 1, 'the group, its project going with it');
    const project = await ownerCloud.call('GET', `${P}/${legacy.inspection.project_id}/`, undefined, { expect: 200 });
    assert.equal(project.project_group_id, legacy.asset.project_group_id, 'still in its group');
    const group = await ownerCloud.call('GET', `${G}/${legacy.asset.project_group_id}/`, undefined, { expect: 200 });
    assert.deepEqual(group.project_ids, [legacy.inspection.project_id]);
    await foreignCloud.call('GET', `${P}/${legacy.inspection.project_id}/`, undefined, { expect: 404 });
    // Again: nothing left to move. The user's own inspection stays in the service's organization.
    assert.deepEqual(await system.inspection.handOverLegacyCloudProjects(), { moved: 0 });
    const rows = await sql<{ organization_id: number }>`select organization_id from cloud.projects where id = ${own.inspection.project_id}`.execute(db());
    assert.equal(rows.rows[0].organization_id, serviceOrg);
    // The inspection service still reaches both through the cloud API.
    await owner.client.expect(200, 'GET', `/v1/inspections/${legacy.inspection.id}/s3_credentials/`);
    await owner.client.process(legacy.inspection.id);
    assert.equal((await owner.client.waitUntilSettled(legacy.inspection.id, { timeoutMs: 90_000 })).status, 7);
    await personal.client.expect(200, 'GET', `/v1/inspections/${own.inspection.id}/s3_credentials/`);
  });

  it("the service's own organization has a random uuid; an installation made with the former fixed one gets a random one (migration 0013) and keeps working (issue 40 §7)", async () => {
    const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const made = await serviceOrganization();
    assert.match(made.uuid, uuidV4);
    assert.notEqual(made.uuid, FORMER_SERVICE_ORG);
    // An installation of before: the fixed uuid, in the prefix of a user's project and in the
    // claim of the inspection service's cached token for its own organization.
    await sql`update cloud.organizations set uuid = ${FORMER_SERVICE_ORG} where id = ${made.id}`.execute(db());
    const personal = await system.newAccount({ organization: false });
    const before = await uploadedInspection(personal);
    assert.match(before.credentials.key, new RegExp(`^uploads/org-${FORMER_SERVICE_ORG}/`));

    await cloudMigrations['0013_random_service_organization_uuid'].up(db());
    const upgraded = await serviceOrganization();
    assert.equal(upgraded.id, made.id);
    assert.match(upgraded.uuid, uuidV4);
    assert.notEqual(upgraded.uuid, FORMER_SERVICE_ORG);
    // The inspection service goes on (its token of the old uuid is refused once, then renewed): the
    // older inspection keeps its prefix and its photos, a new one gets a prefix of the new uuid.
    const after = await personal.client.createInspection({ asset: before.asset.id, name: 'After the upgrade' });
    const credentials = await personal.client.storageCredentials(after.id);
    assert.match(credentials.key, new RegExp(`^uploads/org-${upgraded.uuid}/`));
    assert.equal((await personal.client.storageCredentials(before.inspection.id)).key, before.credentials.key);
    await personal.client.expect(200, 'GET', `/v1/inspections/${before.inspection.id}/`);
    assert.ok(await system.store.headObject(before.credentials.bucket, before.keys[0]), 'the older photos stay where they are');
  });

  it('deleting an inspection deletes its project in the organization', async () => {
    const inspection = await owner.client.createInspection({ asset: processed.asset.id, name: 'Short-lived' });
    await ownerCloud.call('GET', `${P}/${inspection.project_id}/`, undefined, { expect: 200 });
    await owner.client.expect(204, 'DELETE', `/v1/inspections/${inspection.id}/`);
    const deadline = Date.now() + 30_000;
    while ((await ownerCloud.call('GET', `${P}/${inspection.project_id}/`)).$response?.status === 200) {
      assert.ok(Date.now() < deadline, 'the project is deleted');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
