// A project's share link (issue 30 §5): the token POST …/share_link/ mints opens GET project and
// GET outputs with `?shareToken=` and no bearer token, as the real API's clients read a shared
// project; never a write, another read, another project; revoked at once; stored hashed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { createLogger } from '../src/system.ts';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';

const P = '/project/api/v3/projects';

describe('cloud project share links', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  let other: CloudTestClient;
  const logLines: string[] = [];
  before(async () => {
    const sink = new Writable({ write: (chunk, _encoding, done) => (logLines.push(String(chunk)), done()) });
    system = await startTestSystem({}, createLogger({ logLevel: 'info' }, sink));
    api = await cloudClient(system);
    other = await cloudClient(system, 'Other');
  });
  after(async () => {
    await system?.stop();
  });

  /** An anonymous request (no Authorization header) with `?shareToken=`. */
  const anonymous = async (method: string, path: string, token: string, body?: unknown) => {
    const response = await fetch(`${system.urls.cloud}${path}?shareToken=${encodeURIComponent(token)}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const newProject = (client = api, name = 'Shared') => client.call('POST', `${P}/`, { name }, { expect: 201 });
  const mint = (id: number, client = api) => client.call('POST', `${P}/${id}/share_link/`, undefined, { expect: 201 });

  it('the token reads the project and its outputs without a bearer token, with and without the trailing slash, after processing too', async () => {
    const project = await newProject();
    const key = await api.put(project, 'a.jpg', await generateGeotaggedJpeg({ latitude: 46.5, longitude: 6.5, altitude: 400, width: 96, height: 64 }));
    await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
    const link = await mint(project.id);
    assert.match(link.share_token, /^cst_[A-Za-z0-9_-]{43}$/);
    assert.equal(link.share_url, `${system.urls.cloud}${P}/${project.id}/?shareToken=${link.share_token}`);
    assert.ok(!Number.isNaN(Date.parse(link.created_at)));

    const read = await anonymous('GET', `${P}/${project.id}/`, link.share_token);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.deepEqual(read.body, await api.call('GET', `${P}/${project.id}/`, undefined, { expect: 200 }));
    assert.equal((await anonymous('GET', `${P}/${project.id}`, link.share_token)).status, 200);
    assert.equal((await fetch(link.share_url)).status, 200);

    await api.call('POST', `${P}/${project.id}/start_processing/`, undefined, { expect: 202 });
    await api.waitFor(project.id, settled);
    const outputs = await anonymous('GET', `${P}/${project.id}/outputs/`, link.share_token);
    assert.equal(outputs.status, 200);
    assert.deepEqual(
      outputs.body.outputs.map((o: any) => [o.output_type, o.availability]),
      (await api.call('GET', `${P}/${project.id}/outputs/`, undefined, { expect: 200 })).outputs.map((o: any) => [o.output_type, o.availability]),
    );
    // The real API's clients send their bearer token as well: the share token still decides.
    assert.equal((await other.call('GET', `${P}/${project.id}/?shareToken=${link.share_token}`)).id, project.id);
  });

  it('opens nothing else: no write, no other read of the project, no other project, not the list', async () => {
    const project = await newProject();
    const sibling = await newProject();
    const foreign = await newProject(other, 'Foreign');
    const { share_token: token } = await mint(project.id);
    for (const [method, path, body] of [
      ['GET', `${P}/${project.id}/s3_credentials/`],
      ['GET', `${P}/${project.id}/extras/`],
      ['GET', `${P}/${project.id}/share_link/`],
      ['GET', `${P}/${project.id}/gcp/`],
      ['GET', `${P}/`],
      ['POST', `${P}/${project.id}/start_processing/`],
      ['POST', `${P}/${project.id}/share_link/`],
      ['POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: ['x'] }],
      ['PATCH', `${P}/${project.id}/`, { project_group_id: null }],
      ['DELETE', `${P}/${project.id}/`],
    ] as [string, string, unknown?][]) {
      const answer = await anonymous(method, path, token, body);
      assert.equal(answer.status, 401, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.code, 'not_authenticated');
    }
    for (const id of [sibling.id, foreign.id, 999999]) {
      const answer = await anonymous('GET', `${P}/${id}/`, token);
      assert.equal(answer.status, 404);
      assert.equal(answer.body.code, 'not_found');
      assert.equal((await anonymous('GET', `${P}/${id}/outputs/`, token)).status, 404);
    }
    assert.equal((await api.call('GET', `${P}/${project.id}/`, undefined, { expect: 200 })).public_status, 'NEW');
  });

  it('a token that does not open the project: 404 without a bearer token; with one, the request is answered as any other', async () => {
    const project = await newProject();
    await mint(project.id);
    for (const token of ['wrong', '', 'x'.repeat(300)]) assert.equal((await anonymous('GET', `${P}/${project.id}/`, token)).status, 404, token);
    assert.equal((await api.call('GET', `${P}/${project.id}/?shareToken=wrong`, undefined, { expect: 200 })).id, project.id);
    await other.call('GET', `${P}/${project.id}/?shareToken=wrong`, undefined, { expect: 404 });
  });

  it('minting again replaces the token; DELETE revokes it at once (404 without one); GET says whether one is active, never the token', async () => {
    const project = await newProject();
    assert.deepEqual(await api.call('GET', `${P}/${project.id}/share_link/`, undefined, { expect: 200 }), { enabled: false, created_at: null });
    const first = await mint(project.id);
    const second = await mint(project.id);
    assert.notEqual(first.share_token, second.share_token);
    assert.equal((await anonymous('GET', `${P}/${project.id}/`, first.share_token)).status, 404);
    assert.equal((await anonymous('GET', `${P}/${project.id}/`, second.share_token)).status, 200);
    const state = await api.call('GET', `${P}/${project.id}/share_link/`, undefined, { expect: 200 });
    assert.deepEqual(state, { enabled: true, created_at: second.created_at });

    await api.call('DELETE', `${P}/${project.id}/share_link/`, undefined, { expect: 204 });
    assert.equal((await anonymous('GET', `${P}/${project.id}/`, second.share_token)).status, 404);
    assert.equal((await api.call('DELETE', `${P}/${project.id}/share_link/`, undefined, { expect: 404 })).code, 'not_found');
    assert.deepEqual(await api.call('GET', `${P}/${project.id}/share_link/`, undefined, { expect: 200 }), { enabled: false, created_at: null });
  });

  it("another organization can neither mint, see nor revoke a project's link; a deleted project's token opens nothing", async () => {
    const project = await newProject();
    const { share_token: token } = await mint(project.id);
    await other.call('POST', `${P}/${project.id}/share_link/`, undefined, { expect: 404 });
    await other.call('GET', `${P}/${project.id}/share_link/`, undefined, { expect: 404 });
    await other.call('DELETE', `${P}/${project.id}/share_link/`, undefined, { expect: 404 });
    assert.equal((await anonymous('GET', `${P}/${project.id}/`, token)).status, 200);
    await api.call('DELETE', `${P}/${project.id}/`, undefined, { expect: 204 });
    assert.equal((await anonymous('GET', `${P}/${project.id}/`, token)).status, 404);
  });

  it('a read-only token (scope read:cloud) sees whether a link is active but neither mints nor revokes one; HEAD reads with the share token too', async () => {
    const project = await newProject();
    const { share_token: token } = await mint(project.id);
    const answer = await fetch(`${system.urls.cloud}/oauth2/token/`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: api.clientId, client_secret: api.clientSecret, scope: 'read:cloud' }),
    });
    const { access_token: readOnly } = (await answer.json()) as { access_token: string };
    const call = (method: string) => fetch(`${system.urls.cloud}${P}/${project.id}/share_link/`, { method, headers: { authorization: `Bearer ${readOnly}` } });
    assert.equal((await call('GET')).status, 200);
    assert.equal((await call('POST')).status, 403);
    assert.equal((await call('DELETE')).status, 403);
    assert.equal((await anonymous('GET', `${P}/${project.id}/`, token)).status, 200, 'the link still works');
    assert.equal((await fetch(`${system.urls.cloud}${P}/${project.id}/?shareToken=${token}`, { method: 'HEAD' })).status, 200);
    assert.equal((await fetch(`${system.urls.cloud}${P}/${project.id}/?shareToken=wrong`, { method: 'HEAD' })).status, 404);
  });

  it('the token is stored as its SHA-256 only', async () => {
    const project = await newProject();
    const { share_token: token } = await mint(project.id);
    const { rows } = await sql<{ project_id: number; token_hash: string }>`select project_id, token_hash from cloud.project_share_links where project_id = ${project.id}`.execute(system.cloud.db);
    assert.deepEqual(rows, [{ project_id: project.id, token_hash: crypto.createHash('sha256').update(token).digest('hex') }]);
    const { rows: all } = await sql<{ row: string }>`select l::text as row from cloud.project_share_links l`.execute(system.cloud.db);
    assert.ok(all.length > 0 && all.every((r) => !r.row.includes(token)));
  });

  it('the token never reaches the log: ?shareToken= is blanked out of logged URLs', async () => {
    const project = await newProject();
    const { share_token: token } = await mint(project.id);
    assert.equal((await anonymous('GET', `${P}/${project.id}/`, token)).status, 200);
    const log = logLines.join('');
    assert.ok(log.includes(`${P}/${project.id}/?shareToken=[redacted]`), 'the read is logged, its token blanked');
    assert.ok(!log.includes(token));
  });
});
