// Rules and limits of the walking skeleton: registration, process preconditions, allowance
// spent exactly once, authentication failures.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { generateDemoImageSet } from '../scripts/generate-demo-images.ts';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { InspectionClient, s3ClientFor } from '../src/sdk/inspection-client.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';

describe('inspection rules', () => {
  let system: TestSystem;
  let images: { name: string; body: Buffer }[];
  before(async () => {
    system = await startTestSystem();
    images = (await generateDemoImageSet(3, { latitude: 47.37, longitude: 8.54, altitude: 500 }, { width: 320, height: 240 })).map((i) => ({
      name: i.filename,
      body: i.data,
    }));
  });
  after(async () => {
    await system?.stop();
  });

  async function inspectionWithUploads(account: TestAccount) {
    const asset = await account.client.createAsset({ name: 'Bridge', type: 3 });
    const inspection = await account.client.createInspection({ asset: asset.id });
    const credentials = await account.client.storageCredentials(inspection.id);
    const keys = await account.client.upload(credentials, images);
    return { inspection, credentials, keys };
  }

  it('register refuses a key outside the prefix, a key not in storage and more than 500 keys', async () => {
    const account = await system.newAccount();
    const { inspection, credentials, keys } = await inspectionWithUploads(account);
    const outside = await account.client.request('POST', `/v1/inspections/${inspection.id}/register_images/`, { image_keys: [...keys, 'elsewhere/photo.jpg'] });
    assert.equal(outside.status, 400);
    assert.ok(Array.isArray(outside.body.image_keys), JSON.stringify(outside.body));

    const missing = await account.client.request('POST', `/v1/inspections/${inspection.id}/register_images/`, { image_keys: [`${credentials.key}never-uploaded.jpg`] });
    assert.equal(missing.status, 400);
    assert.match(missing.body.image_keys[0], /never-uploaded/);

    const tooMany = Array.from({ length: 501 }, (_, i) => `${credentials.key}img-${i}.jpg`);
    const limit = await account.client.request('POST', `/v1/inspections/${inspection.id}/register_images/`, { image_keys: tooMany });
    assert.equal(limit.status, 400);
    assert.match(limit.body.image_keys[0], /500/);

    // Exactly 500 passes the limit (and then fails on presence, which proves the limit let it through).
    const atLimit = await account.client.request('POST', `/v1/inspections/${inspection.id}/register_images/`, { image_keys: tooMany.slice(0, 500) });
    assert.equal(atLimit.status, 400);
    assert.match(atLimit.body.image_keys[0], /Not found in storage/);

    // Nothing was registered by the refused calls.
    assert.equal((await account.client.register(inspection.id, keys)).nb_images_registered, keys.length);
  });

  it('process is refused before registration, and without allowance', async () => {
    const account = await system.newAccount({ projects: 0 });
    const { inspection, keys } = await inspectionWithUploads(account);
    const early = await account.client.request('POST', `/v1/inspections/${inspection.id}/process/`, {});
    assert.equal(early.status, 409);
    assert.equal(early.body.code, 'conflict');

    await account.client.register(inspection.id, keys);
    const broke = await account.client.request('POST', `/v1/inspections/${inspection.id}/process/`, {});
    assert.equal(broke.status, 403);
    assert.equal(broke.body.code, 'insufficient_allowance');
    assert.equal((await account.client.getInspection(inspection.id)).status, 2, 'nothing changed');
    assert.deepEqual(await account.client.expect(200, 'GET', '/v1/allowance/history/'), []);
  });

  it('20 concurrent process calls spend the allowance exactly once', async () => {
    const account = await system.newAccount({ projects: 5 });
    const { inspection, keys } = await inspectionWithUploads(account);
    await account.client.register(inspection.id, keys);
    const results = await Promise.all(Array.from({ length: 20 }, () => account.client.request('POST', `/v1/inspections/${inspection.id}/process/`, {})));
    const statuses = results.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 202).length, 1, `statuses: ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 409).length, 19);
    const history = await account.client.expect(200, 'GET', '/v1/allowance/history/');
    const egress = history.filter((h: any) => h.direction === 'egress');
    assert.equal(egress.length, 1);
    assert.equal(egress[0].inspection, inspection.id);
    const balance = await account.client.expect(200, 'GET', '/v1/allowance/');
    assert.equal(balance.find((b: any) => b.allowance_type === 'projects').balance, 4);
    const done = await account.client.waitUntilSettled(inspection.id, { timeoutMs: 60_000 });
    assert.equal(done.status, 7);
    assert.equal((await account.client.expect(200, 'GET', '/v1/allowance/')).find((b: any) => b.allowance_type === 'projects').balance, 4, 'nothing spent after start');
  });

  it('fewer than 3 valid images ends in status 19', async () => {
    const account = await system.newAccount();
    const asset = await account.client.createAsset({ name: 'Roof', type: 8 });
    const inspection = await account.client.createInspection({ asset: asset.id });
    const credentials = await account.client.storageCredentials(inspection.id);
    const keys = await account.client.upload(credentials, [
      images[0],
      images[1],
      { name: 'broken.jpg', body: images[2].body.subarray(0, 200) },
      { name: 'empty.jpg', body: Buffer.alloc(0) },
    ]);
    await account.client.register(inspection.id, keys);
    await account.client.process(inspection.id);
    const done = await account.client.waitUntilSettled(inspection.id, { timeoutMs: 60_000 });
    assert.equal(done.status, 19);
    assert.equal((await account.client.cameras(inspection.id)).length, 2);
  });

  it('the token call needs a valid API key and credentials; other calls need the token', async () => {
    const account = await system.newAccount();
    const base = system.urls.inspection;
    const noKey = await fetch(`${base}/v1/auth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: account.username, password: account.password }),
    });
    assert.equal(noKey.status, 401);
    assert.equal(((await noKey.json()) as any).code, 'invalid_api_key');

    const wrongKey = new InspectionClient({ baseUrl: base, apiKey: 'oik_wrong' });
    const refused = await wrongKey.request('POST', '/v1/auth/token/', { username: account.username, password: account.password });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'invalid_api_key');

    const badPassword = new InspectionClient({ baseUrl: base, apiKey: account.apiKey });
    const denied = await badPassword.request('POST', '/v1/auth/token/', { username: account.username, password: 'nope' });
    assert.equal(denied.status, 401);
    assert.equal(denied.body.code, 'authentication_failed');

    const empty = await badPassword.request('POST', '/v1/auth/token/', { username: '', password: '' });
    assert.equal(empty.status, 400);
    assert.ok(empty.body.username && empty.body.password);

    const noToken = await badPassword.request('GET', '/v1/inspections/');
    assert.equal(noToken.status, 401);
    assert.equal(noToken.body.code, 'not_authenticated');

    // A valid token with another application's API key is refused.
    const other = await system.inspection.accounts.createApiKey('other app');
    const mixed = new InspectionClient({ baseUrl: base, apiKey: other.key });
    mixed.token = account.client.token;
    const mismatch = await mixed.request('GET', '/v1/inspections/');
    assert.equal(mismatch.status, 401);

    // An organization the user does not belong to is refused.
    const foreign = await system.inspection.accounts.createOrganization('Someone else');
    const outsider = new InspectionClient({ baseUrl: base, apiKey: account.apiKey, organizationUuid: foreign.uuid });
    outsider.token = account.client.token;
    const forbidden = await outsider.request('GET', '/v1/inspections/');
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.code, 'permission_denied');
  });

  it('the token call honours a requested scope: cloud:read alone is read-only; an unknown scope is a 400 (issue 40 §8)', async () => {
    const account = await system.newAccount();
    const login = (scope?: string) => new InspectionClient({ baseUrl: system.urls.inspection, apiKey: account.apiKey }).request('POST', '/v1/auth/token/', { username: account.username, password: account.password, ...(scope === undefined ? {} : { scope }) });
    const asClient = (token: string) => Object.assign(new InspectionClient({ baseUrl: system.urls.inspection, apiKey: account.apiKey }), { token });

    const read = await login('cloud:read');
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.scope, 'cloud:read');
    assert.equal(decodeJwt(read.body.api_token).scope, 'cloud:read');
    const reader = asClient(read.body.api_token);
    assert.equal((await reader.request('GET', '/v1/inspections/')).status, 200);
    const write = await reader.request('POST', '/v1/assets/', { name: 'Mast', type: 9 });
    assert.equal(write.status, 403, JSON.stringify(write.body)); // old code: the scope was dropped, 201
    assert.equal(write.body.code, 'permission_denied');

    // cloud:write (writing implies reading), the cloud's spelling, or no scope: both.
    for (const scope of ['cloud:write', 'read:cloud write:cloud', 'cloud:read cloud:write', undefined]) {
      const both = await login(scope);
      assert.equal(both.status, 200, `${scope}: ${JSON.stringify(both.body)}`);
      assert.equal(both.body.scope, 'cloud:read cloud:write', String(scope));
    }
    const writer = asClient((await login('cloud:write')).body.api_token);
    assert.equal((await writer.request('POST', '/v1/assets/', { name: 'Mast', type: 9 })).status, 201);

    // Storage credentials follow the token: a read-only token's read and never write (issue 40 §8).
    const asset = await writer.createAsset({ name: 'Pole', type: 1, latitude: '46.5', longitude: '6.5' } as never);
    const inspection = await writer.createInspection({ asset: asset.id, name: 'Flight' });
    const writable = await writer.storageCredentials(inspection.id);
    await s3ClientFor(writable).send(new PutObjectCommand({ Bucket: writable.bucket, Key: `${writable.key}a.jpg`, Body: 'photo' }));
    const readOnly = await reader.storageCredentials(inspection.id);
    const refused = await s3ClientFor(readOnly)
      .send(new PutObjectCommand({ Bucket: readOnly.bucket, Key: `${readOnly.key}b.jpg`, Body: 'photo' }))
      .then(() => 'written', (err: { name?: string }) => err.name);
    assert.equal(refused, 'AccessDenied', 'a read-only token\'s credentials do not write');
    const object = await s3ClientFor(readOnly).send(new GetObjectCommand({ Bucket: readOnly.bucket, Key: `${readOnly.key}a.jpg` }));
    assert.equal(await object.Body!.transformToString(), 'photo');

    for (const scope of ['admin', 'cloud:read cloud:admin', 'share:read']) {
      const refused = await login(scope);
      assert.equal(refused.status, 400, `${scope}: ${refused.status}`);
      assert.match(refused.body.scope?.[0] ?? '', /Unknown scope .*cloud:read and cloud:write/, JSON.stringify(refused.body));
    }
  });

  it('a token lives at least its expires_in seconds, then is refused as expired', async () => {
    const short = await startTestSystem({ inspectionTokenTtl: 1 });
    try {
      const account = await short.newAccount();
      const issuedAfter = Date.now();
      const { api_token, expires_in } = await account.client.login(account.username, account.password);
      assert.equal(expires_in, 1);
      // exp is in whole seconds: rounded up from the issue time, never cutting the promised second short.
      const { exp } = decodeJwt(api_token);
      assert.ok(exp! * 1000 >= issuedAfter + expires_in * 1000, `exp ${exp} is at least ${expires_in} s after ${issuedAfter}`);
      assert.ok(exp! * 1000 < Date.now() + (expires_in + 1) * 1000);
      assert.equal((await account.client.request('GET', '/v1/inspections/')).status, 200);
      await new Promise((resolve) => setTimeout(resolve, exp! * 1000 - Date.now() + 100));
      const expired = await account.client.request('GET', '/v1/inspections/');
      assert.equal(expired.status, 401);
      assert.equal(expired.body.code, 'token_expired');
    } finally {
      await short.stop();
    }
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
