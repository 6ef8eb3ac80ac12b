// A project's share link (issue 30 §5): the token POST …/share_link/ mints opens GET project,
// GET outputs and GET s3_credentials (read-only storage credentials, which download the outputs
// with the AWS SDK and write nothing) with `?shareToken=` and no bearer token, as the real API's
// clients read a shared project; never a write, another read, another project; revoked at once;
// stored hashed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createLogger } from '../src/system.ts';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { s3Outcome } from './helpers/s3-outcome.ts';

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
  const s3With = (c: any) =>
    new S3Client({ region: c.region, endpoint: c.endpoint_override, forcePathStyle: true, credentials: { accessKeyId: c.access_key, secretAccessKey: c.secret_key, sessionToken: c.session_token } });
  /** Seconds from the credential record's server_time to its expiration. */
  const lifetime = (c: any) => (Date.parse(c.expiration) - Date.parse(c.server_time)) / 1000;

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

  it("a share holder's presigned URLs last 600 s at most (revoking cannot recall them); the project's own clients keep STORAGE_CREDENTIALS_TTL", async () => {
    const project = await newProject();
    const key = await api.put(project, 'a.jpg', await generateGeotaggedJpeg({ latitude: 46.5, longitude: 6.5, altitude: 400, width: 96, height: 64 }));
    await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
    await api.call('POST', `${P}/${project.id}/start_processing/`, undefined, { expect: 202 });
    await api.waitFor(project.id, settled);
    const { share_token: token } = await mint(project.id);
    /** X-Amz-Expires of every presigned URL anywhere in an answer. */
    const lifetimes = (body: unknown): number[] =>
      [...JSON.stringify(body).matchAll(/"(https?:[^"]*X-Amz-Expires=[^"]*)"/g)].map((m) => Number(new URL(m[1]!).searchParams.get('X-Amz-Expires')));
    const shared = await anonymous('GET', `${P}/${project.id}/outputs/`, token);
    assert.equal(shared.status, 200);
    const own = await api.call('GET', `${P}/${project.id}/outputs/`, undefined, { expect: 200 });
    assert.ok(lifetimes(shared.body).length > 0, 'processing left outputs with URLs');
    assert.equal(lifetimes(shared.body).length, lifetimes(own).length);
    assert.ok(lifetimes(shared.body).every((s) => s > 0 && s <= 600), `share holder's: ${lifetimes(shared.body)}`);
    assert.ok(lifetimes(own).every((s) => s === 43200), `owner's: ${lifetimes(own)}`);
    // With the project's own bearer token beside the share token, the client's own URLs.
    assert.ok(lifetimes(await api.call('GET', `${P}/${project.id}/outputs/?shareToken=${token}`, undefined, { expect: 200 })).every((s) => s === 43200));
    // The project record (its thumbnail and inputs bundle URLs, when it has them).
    const record = await anonymous('GET', `${P}/${project.id}/`, token);
    assert.ok(lifetimes(record.body).every((s) => s <= 600), `share holder's project record: ${lifetimes(record.body)}`);
  });

  it("the token's storage credentials download the outputs and the photos with the AWS SDK, write nothing, and last 900 s at most", async () => {
    const project = await newProject();
    const sibling = await newProject();
    const jpeg = await generateGeotaggedJpeg({ latitude: 46.5, longitude: 6.5, altitude: 400, width: 96, height: 64 });
    const photo = await api.put(project, 'a.jpg', jpeg);
    const siblingPhoto = await api.put(sibling, 'b.jpg', jpeg);
    await system.store.putObject(sibling.bucket_name, `results/${sibling.uuid}/run/report.pdf`, Buffer.from('report'));
    await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [photo] }, { expect: 200 });
    await api.call('POST', `${P}/${project.id}/start_processing/`, undefined, { expect: 202 });
    await api.waitFor(project.id, settled);
    const { share_token: token } = await mint(project.id);
    const output = (await anonymous('GET', `${P}/${project.id}/outputs/`, token)).body.outputs.find((o: any) => o.availability === 'done' && o.s3_key);
    assert.ok(output, 'processing left an output to download');
    console.log(`downloading ${output.output_type} (${output.s3_key}) with the share token's credentials`);

    const answer = await anonymous('GET', `${P}/${project.id}/s3_credentials/`, token);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const credentials = answer.body;
    assert.equal(credentials.key, `${project.s3_base_path}/`);
    assert.equal(credentials.bucket, output.s3_bucket);
    assert.ok(lifetime(credentials) <= 900, `share credentials last ${lifetime(credentials)} s`);
    const owners = await api.call('GET', `${P}/${project.id}/s3_credentials/`, undefined, { expect: 200 });
    assert.ok(lifetime(owners) > 3600, "the owner's keep STORAGE_CREDENTIALS_TTL");

    const Bucket = credentials.bucket;
    const expected = Buffer.concat(await (await system.store.getObject(Bucket, output.s3_key)).body.toArray());
    const s3 = s3With(credentials);
    try {
      const downloaded = Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket, Key: output.s3_key }))).Body!.transformToByteArray());
      assert.ok(downloaded.equals(expected), `${output.output_type} downloads`);
      assert.equal((await s3.send(new HeadObjectCommand({ Bucket, Key: output.s3_key }))).ContentLength, expected.length);
      const listed = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: `results/${project.uuid}/` }));
      assert.ok(listed.Contents?.some((o) => o.Key === output.s3_key), 'the results are listed');
      // The photos too: the share shows the project, whose photos the inputs bundle hands out anyway.
      assert.ok(Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket, Key: photo }))).Body!.transformToByteArray()).equals(jpeg));
      // Another project: nothing.
      assert.equal(await s3Outcome(s3.send(new GetObjectCommand({ Bucket, Key: siblingPhoto }))), 'AccessDenied', "another project's photo");
      assert.equal(await s3Outcome(s3.send(new GetObjectCommand({ Bucket, Key: `results/${sibling.uuid}/run/report.pdf` }))), 'AccessDenied', "another project's results");

      for (const [what, call] of [
        ['PutObject in the prefix', new PutObjectCommand({ Bucket, Key: `${credentials.key}new.jpg`, Body: 'x' })],
        ['PutObject over a photo', new PutObjectCommand({ Bucket, Key: photo, Body: 'x' })],
        ['PutObject over an output', new PutObjectCommand({ Bucket, Key: output.s3_key, Body: 'x' })],
        ['DeleteObject of an output', new DeleteObjectCommand({ Bucket, Key: output.s3_key })],
        ['DeleteObject of a photo', new DeleteObjectCommand({ Bucket, Key: photo })],
      ] as const) {
        assert.equal(await s3Outcome(s3.send(call as never)), 'AccessDenied', what);
      }
    } finally {
      s3.destroy();
    }
    assert.ok(Buffer.concat(await (await system.store.getObject(Bucket, output.s3_key)).body.toArray()).equals(expected), 'the output is untouched');
    assert.equal((await system.store.headObject(Bucket, photo))?.size, jpeg.length, 'the photo is untouched');
    assert.equal(await system.store.headObject(Bucket, `${credentials.key}new.jpg`), undefined, 'nothing was written');
  });

  it("s3_credentials with the token: another organization's bearer token (or a broken one) gets the read-only ones, the project's own its writable ones", async () => {
    const project = await newProject();
    const { share_token: token } = await mint(project.id);
    const path = `${P}/${project.id}/s3_credentials/?shareToken=${token}`;
    const write = async (credentials: any) => {
      const s3 = s3With(credentials);
      try {
        return await s3Outcome(s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: `${credentials.key}upload.jpg`, Body: 'x' })));
      } finally {
        s3.destroy();
      }
    };
    assert.equal(await write(await other.call('GET', path, undefined, { expect: 200 })), 'AccessDenied', 'another organization: the share token decides');
    assert.equal(await write(await api.call('GET', path, undefined, { expect: 200 })), 'ok', "the project's own client uploads as before");
    const stale = await fetch(`${system.urls.cloud}${path}`, { headers: { authorization: 'Bearer not-a-token' } });
    assert.equal(stale.status, 200, 'a bearer token that does not authenticate is ignored: the share token opens the read');
    assert.equal(await write(await stale.json()), 'AccessDenied');
  });

  it('s3_credentials with a revoked token, another project\'s token or a deleted project\'s: 404', async () => {
    const project = await newProject();
    const sibling = await newProject();
    const { share_token: token } = await mint(project.id);
    const { share_token: siblingToken } = await mint(sibling.id);
    const credentials = (id: number, t: string) => anonymous('GET', `${P}/${id}/s3_credentials/`, t);
    assert.equal((await credentials(project.id, token)).status, 200);
    for (const [id, t, what] of [
      [project.id, siblingToken, "another project's token"],
      [sibling.id, token, "another project's token"],
      [project.id, 'wrong', 'a mistyped token'],
    ] as const) {
      const answer = await credentials(id, t);
      assert.equal(answer.status, 404, what);
      assert.equal(answer.body.code, 'not_found', what);
    }

    await api.call('DELETE', `${P}/${project.id}/share_link/`, undefined, { expect: 204 });
    const revoked = await credentials(project.id, token);
    assert.equal(revoked.status, 404, 'revoked');
    assert.equal(revoked.body.code, 'not_found');
    await api.call('GET', `${P}/${project.id}/s3_credentials/`, undefined, { expect: 200 });

    assert.equal((await credentials(sibling.id, siblingToken)).status, 200);
    await api.call('DELETE', `${P}/${sibling.id}/`, undefined, { expect: 204 });
    assert.equal((await credentials(sibling.id, siblingToken)).status, 404, 'deleted project');
  });

  it('opens nothing else: no write, no other read of the project, no other project, not the list', async () => {
    const project = await newProject();
    const sibling = await newProject();
    const foreign = await newProject(other, 'Foreign');
    const { share_token: token } = await mint(project.id);
    for (const [method, path, body] of [
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
