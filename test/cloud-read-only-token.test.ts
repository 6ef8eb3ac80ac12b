// Read-only cloud tokens (issue 30 §5): `scope=read:cloud` (or `cloud:read`) gives a token whose
// scope is read:cloud only; it reads (GET, HEAD) every protected route, every other method is 403
// permission_denied before the route runs, and the storage credentials it gets read the
// project's prefix and results with a stock S3 client but write nothing (AccessDenied).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, type CloudTestClient } from './helpers/cloud-api.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { s3Outcome } from './helpers/s3-outcome.ts';

describe('cloud read-only tokens (scope read:cloud)', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  let readToken: string;

  before(async () => {
    system = await startTestSystem();
    api = await cloudClient(system, 'Readers');
    readToken = (await token({ scope: 'read:cloud' })).body.access_token;
  });
  after(async () => {
    assertNoServerErrors(system);
    await system?.stop();
  });

  async function token(extra: Record<string, string>) {
    const params = { grant_type: 'client_credentials', client_id: api.clientId, client_secret: api.clientSecret, ...extra };
    const response = await fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', body: new URLSearchParams(params) });
    return { status: response.status, body: (await response.json()) as any };
  }
  /** A call with the read-only token (the test client's own token may write). */
  const asReader = (method: string, path: string, body?: unknown, expect?: number) => api.call(method, path, body, { expect, headers: { authorization: `Bearer ${readToken}` } });
  const s3With = (c: any) =>
    new S3Client({ region: c.region, endpoint: c.endpoint_override, forcePathStyle: true, credentials: { accessKeyId: c.access_key, secretAccessKey: c.secret_key, sessionToken: c.session_token } });

  it('the token says what it grants: read:cloud alone (either spelling) is read-only; no scope, both or write:cloud give both', async () => {
    for (const scope of ['read:cloud', 'cloud:read', 'read:cloud read:cloud']) {
      const answer = await token({ scope });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.scope, 'read:cloud', scope);
      assert.equal(decodeJwt(answer.body.access_token).scope, 'read:cloud', `${scope}: the JWT's claim`);
    }
    for (const scope of [undefined, 'read:cloud write:cloud', 'cloud:read cloud:write', 'write:cloud', 'cloud:write']) {
      const answer = await token(scope === undefined ? {} : { scope });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.scope, 'read:cloud write:cloud', String(scope));
      assert.equal(decodeJwt(answer.body.access_token).scope, 'read:cloud write:cloud', `${scope}: the JWT's claim`);
    }
    for (const scope of ['read:cloud admin', 'cloud:admin', 'constructor', 'read:cloud\twrite:cloud']) {
      const answer = await token({ scope });
      assert.equal(answer.status, 400, scope);
      assert.equal(answer.body.error, 'invalid_scope', scope);
    }
  });

  it('a read-only token reads (GET, HEAD); every other method is 403 permission_denied, before validation or lookup', async () => {
    const project = await api.call('POST', '/project/api/v3/projects/', { name: 'Read me' }, { expect: 201 });
    const path = `/project/api/v3/projects/${project.id}/`;
    assert.equal((await asReader('GET', path, undefined, 200)).name, 'Read me');
    assert.ok((await asReader('GET', '/project/api/v3/projects/', undefined, 200)).some((p: any) => p.id === project.id));
    await asReader('GET', '/project/api/v3/project-groups/', undefined, 200);
    await asReader('GET', '/common/api/v4/drive/folders/', undefined, 200);
    await asReader('GET', '/project/api/v3/webhooks/', undefined, 200);
    const head = await fetch(`${system.urls.cloud}${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${readToken}` } });
    assert.equal(head.status, 200);

    const writes: [string, string, unknown][] = [
      ['POST', '/project/api/v3/projects/', { name: 'Not made' }],
      ['POST', '/project/api/v3/projects/', { name: '' }], // invalid too: the scope answers first
      ['PATCH', path, { project_group_id: null }],
      ['DELETE', path, undefined],
      ['DELETE', '/project/api/v3/projects/999999/', undefined], // no such project: still 403, nothing revealed
      ['POST', `${path}inputs/bulk_register/`, { input_file_keys: [] }],
      ['POST', `${path}start_processing/`, {}],
      ['POST', `${path}inputs/zip/`, undefined],
      ['POST', `${path}gcp/register`, { gcps: [] }],
      ['POST', '/project/api/v3/project-groups/', { name: 'G' }],
      ['POST', '/common/api/v4/drive/folders/', { name: 'F' }],
      ['PUT', '/common/api/v4/drive/move_batch/', { source_nodes: [], target_type: 'organization' }],
      ['POST', '/project/api/v3/webhooks/', { url: 'https://example.org/hook', events: ['project.status_changed'] }],
    ];
    for (const [method, route, body] of writes) {
      const refused = await asReader(method, route, body, 403);
      assert.equal(refused.code, 'permission_denied', `${method} ${route}`);
      assert.match(refused.detail, /read:cloud scope only; writing needs write:cloud/, `${method} ${route}`);
      assert.deepEqual(Object.keys(refused).sort(), ['code', 'detail'], "CONTRACT's error body");
    }
    // Nothing was changed; the writing token of the same client still writes.
    assert.equal((await api.call('GET', path, undefined, { expect: 200 })).name, 'Read me');
    assert.ok(!(await api.call('GET', '/project/api/v3/projects/', undefined, { expect: 200 })).some((p: any) => p.name === 'Not made'));
    await api.call('PATCH', path, { project_group_id: null }, { expect: 200 });
  });

  it("a read-only token's storage credentials download with the AWS SDK but every write is AccessDenied", async () => {
    const project = await api.call('POST', '/project/api/v3/projects/', { name: 'Stored' }, { expect: 201 });
    const photo = await api.put(project, 'photo.jpg', Buffer.from('pixels'));
    const result = `results/${project.uuid}/run/report.pdf`;
    await system.store.putObject(project.bucket_name, result, Buffer.from('report'));

    const credentials = await asReader('GET', `/project/api/v3/projects/${project.id}/s3_credentials/`, undefined, 200);
    assert.equal(credentials.key, `${project.s3_base_path}/`);
    const s3 = s3With(credentials);
    const Bucket = credentials.bucket;
    try {
      // Reads: the uploads prefix and the results.
      assert.equal(await (await s3.send(new GetObjectCommand({ Bucket, Key: photo }))).Body!.transformToString(), 'pixels');
      assert.equal((await s3.send(new HeadObjectCommand({ Bucket, Key: photo }))).ContentLength, 6);
      assert.deepEqual((await s3.send(new ListObjectsV2Command({ Bucket, Prefix: credentials.key }))).Contents?.map((o) => o.Key), [photo]);
      assert.equal(await (await s3.send(new GetObjectCommand({ Bucket, Key: result }))).Body!.transformToString(), 'report');

      // Writes: none, inside the prefix either.
      assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket, Key: `${credentials.key}new.jpg`, Body: 'x' }))), 'AccessDenied', 'PutObject');
      assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket, Key: photo, Body: 'overwritten' }))), 'AccessDenied', 'overwrite');
      assert.equal(await s3Outcome(s3.send(new DeleteObjectCommand({ Bucket, Key: photo }))), 'AccessDenied', 'DeleteObject');
      assert.equal(await s3Outcome(s3.send(new CreateMultipartUploadCommand({ Bucket, Key: `${credentials.key}big.jpg` }))), 'AccessDenied', 'multipart');
      assert.equal(await s3Outcome(s3.send(new CopyObjectCommand({ Bucket, Key: `${credentials.key}copy.jpg`, CopySource: `${Bucket}/${photo}` }))), 'AccessDenied', 'CopyObject');
      assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket, Key: result, Body: 'x' }))), 'AccessDenied', 'results stay read-only');
    } finally {
      s3.destroy();
    }
    assert.equal((await system.store.headObject(project.bucket_name, photo))?.size, 6, 'the photo is untouched');
    assert.deepEqual((await system.store.listObjects(project.bucket_name, { prefix: credentials.key })).objects.map((o) => o.key), [photo]);

    // The writing token's credentials for the same project still write.
    const writer = s3With(await api.call('GET', `/project/api/v3/projects/${project.id}/s3_credentials/`, undefined, { expect: 200 }));
    try {
      await writer.send(new PutObjectCommand({ Bucket, Key: `${credentials.key}new.jpg`, Body: 'x' }));
    } finally {
      writer.destroy();
    }
  });
});
