// Retries: POST /v1/inspections/retry/ (201), the five retry conditions, retry_of / retries /
// is_main / can_retry, the bundle, the retry's own cloud project with a copy of the inputs, and
// deletion of a main inspection taking its retries with it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, setCreatedAt, waitFor } from './helpers/inspection-fixtures.ts';
import { InspectionClient, s3ClientFor } from '../src/sdk/inspection-client.ts';

describe('inspection service: retries', () => {
  let system: TestSystem;
  let account: TestAccount;
  let original: Awaited<ReturnType<typeof processedInspection>>;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount({ projects: 20 });
    original = await processedInspection(account);
  });
  after(async () => {
    await system?.stop();
  });

  const retry = (body: Record<string, unknown>, client = account.client) => client.request('POST', '/v1/inspections/retry/', body);
  const setStatus = (id: number, status: number) => account.client.expect(200, 'PATCH', `/v1/inspections/${id}/?skip_email=true`, { status });

  it('creates a retry (201): own cloud project, retry_of, is_main false; the inputs are copied and it processes on its own', async () => {
    const main = original.inspection;
    assert.equal(main.can_retry, true, 'status 7, new, processed, no retries');
    const created = await retry({ inspection: main.id, description: 'second try' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const r = created.body;
    assert.equal(r.retry_of, main.id);
    assert.equal(r.is_main, false);
    assert.equal(r.asset, main.asset);
    assert.equal(r.description, 'second try');
    assert.equal(r.status, 2, 'uploading: the inputs are being copied');
    assert.notEqual(r.project_id, main.project_id);
    assert.deepEqual(r.processing_parameters, main.processing_parameters, 'the original parameters by default');
    const again = await retry({ inspection: main.id });
    assert.equal(again.status, 409, 'condition 4: a retry is in progress');
    assert.match(again.body.detail, /in progress/);

    const done = await account.client.waitUntilSettled(r.id, { timeoutMs: 90_000 });
    assert.equal(done.status, 7);
    const cameras = await account.client.cameras(r.id);
    assert.deepEqual(cameras.map((c) => c.filename).sort(), original.cameras.map((c) => c.filename).sort());
    // The copies live under the retry's own prefix, readable with the retry's credentials.
    const credentials = await account.client.storageCredentials(r.id);
    assert.notEqual(credentials.key, original.credentials.key);
    const s3 = s3ClientFor(credentials);
    try {
      for (const camera of cameras) {
        const head = await s3.send(new HeadObjectCommand({ Bucket: credentials.bucket, Key: `${credentials.key}${camera.filename}` }));
        assert.ok((head.ContentLength ?? 0) > 0);
      }
    } finally {
      s3.destroy();
    }
    const refreshed = await account.client.getInspection(main.id);
    assert.deepEqual(
      refreshed.retries.map((x: any) => [x.id, x.status]),
      [[r.id, 7]],
    );
    assert.equal(refreshed.is_main, true);
    const bundle = await account.client.expect(200, 'GET', `/v1/inspections/${r.id}/bundle/`);
    assert.deepEqual(
      bundle.map((x: any) => x.id),
      [main.id, r.id],
    );
    assert.deepEqual(
      (await account.client.expect(200, 'GET', `/v1/inspections/${main.id}/bundle/`)).map((x: any) => x.id),
      [main.id, r.id],
    );
    // A retry is never processed or fed by hand.
    assert.equal((await account.client.request('POST', `/v1/inspections/${r.id}/process/`, {})).status, 409);
    assert.equal((await account.client.request('POST', `/v1/inspections/${r.id}/register_images/`, { image_keys: [`${credentials.key}x.jpg`] })).status, 409);
  });

  it('condition 5: fewer than 2 retries (a retry of a retry joins the same bundle)', async () => {
    const main = original.inspection;
    const bundle = await account.client.expect(200, 'GET', `/v1/inspections/${main.id}/bundle/`);
    const firstRetry = bundle[1];
    await setStatus(firstRetry.id, 16);
    const second = await retry({ inspection: firstRetry.id });
    assert.equal(second.status, 201, JSON.stringify(second.body));
    assert.equal(second.body.retry_of, main.id, 'flat bundle: retry_of is the main inspection');
    assert.equal((await account.client.waitUntilSettled(second.body.id, { timeoutMs: 90_000 })).status, 7);
    const third = await retry({ inspection: main.id });
    assert.equal(third.status, 409);
    assert.match(third.body.detail, /2 retries/);
    assert.equal((await account.client.getInspection(main.id)).can_retry, false);
    assert.equal((await retry({ inspection: second.body.id })).status, 409, 'from any member of the bundle');
  });

  it('condition 3: only statuses 7, 8, 14, 16, 17, 18, 21, 22, 23 are retryable', async () => {
    const fresh = await processedInspection(account);
    // 24 is not set here: it purges the data (retention), and a retry of a purged inspection is a 410 (inspection-retention.test.ts).
    for (const status of [1, 2, 3, 4, 5, 12, 13, 15, 19, 20, 25, 27]) {
      await setStatus(fresh.inspection.id, status);
      const refused = await retry({ inspection: fresh.inspection.id });
      assert.equal(refused.status, 409, `status ${status}`);
      assert.equal((await account.client.getInspection(fresh.inspection.id)).can_retry, false, `can_retry in status ${status}`);
    }
    for (const status of [7, 8, 14, 16, 17, 18, 21, 22, 23]) {
      await setStatus(fresh.inspection.id, status);
      assert.equal((await account.client.getInspection(fresh.inspection.id)).can_retry, true, `can_retry in status ${status}`);
    }
    const accepted = await retry({ inspection: fresh.inspection.id });
    assert.equal(accepted.status, 201, 'status 23 is retryable');
    await account.client.waitUntilSettled(accepted.body.id, { timeoutMs: 90_000 });
  });

  it('condition 2: created less than 15 days ago', async () => {
    const aged = await processedInspection(account);
    await setCreatedAt(system, aged.inspection.id, new Date(Date.now() - 15 * 24 * 3600 * 1000 - 60_000));
    const refused = await retry({ inspection: aged.inspection.id });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /15 days/);
    assert.equal((await account.client.getInspection(aged.inspection.id)).can_retry, false);
    await setCreatedAt(system, aged.inspection.id, new Date(Date.now() - 14 * 24 * 3600 * 1000));
    assert.equal((await account.client.getInspection(aged.inspection.id)).can_retry, true);
    const accepted = await retry({ inspection: aged.inspection.id });
    assert.equal(accepted.status, 201);
    await account.client.waitUntilSettled(accepted.body.id, { timeoutMs: 90_000 });
  });

  it('condition 1: the inspection must belong to the user or the organization (404 otherwise); a never-processed inspection is processed, not retried', async () => {
    const stranger = await system.newAccount();
    const foreign = await retry({ inspection: original.inspection.id }, stranger.client);
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.code, 'not_found');
    // A member of the same organization may retry it (with the organization header).
    const name = `colleague-${Date.now()}`;
    const colleague = await system.inspection.accounts.createUser(name, 'pw-colleague-123', 'c@example.test');
    await system.inspection.accounts.addMember(colleague.id, account.organizationId!);
    const client = new InspectionClient({ baseUrl: system.urls.inspection, apiKey: account.apiKey, organizationUuid: account.organizationUuid });
    await client.login(name, 'pw-colleague-123');
    const byColleague = await retry({ inspection: original.inspection.id }, client);
    assert.equal(byColleague.status, 409, 'condition 1 holds for a member; the bundle has its 2 retries already');
    assert.match(byColleague.body.detail, /2 retries/);
    assert.equal((await retry({ inspection: 999999 })).status, 404);

    const unprocessed = await account.client.createInspection({ asset: original.inspection.asset });
    await setStatus(unprocessed.id, 7);
    const refused = await retry({ inspection: unprocessed.id });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /never processed/);
  });

  it('validates the body', async () => {
    for (const [body, field] of [
      [{}, 'inspection'],
      [{ inspection: 'x' }, 'inspection'],
      [{ inspection: original.inspection.id, processing_parameters: { detect_antennas: 'maybe' } }, 'processing_parameters'],
      [{ inspection: original.inspection.id, description: { text: 'x' } }, 'description'],
    ] as const) {
      const response = await retry(body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.ok(field in response.body, JSON.stringify(response.body));
    }
  });

  it('deleting a main inspection deletes its retries and their cloud projects; 409 while one is not stable', async () => {
    const owner = await system.newAccount({ projects: 5 });
    const main = await processedInspection(owner);
    await owner.client.expect(200, 'PATCH', `/v1/inspections/${main.inspection.id}/?skip_email=true`, { status: 16 });
    const r = await owner.client.expect(201, 'POST', '/v1/inspections/retry/', { inspection: main.inspection.id });
    await owner.client.waitUntilSettled(r.id, { timeoutMs: 90_000 });
    await owner.client.expect(200, 'PATCH', `/v1/inspections/${r.id}/?skip_email=true`, { status: 4 });
    const refused = await owner.client.request('DELETE', `/v1/inspections/${main.inspection.id}/`);
    assert.equal(refused.status, 409, 'a retry is not stable');
    await owner.client.expect(200, 'PATCH', `/v1/inspections/${r.id}/?skip_email=true`, { status: 7 });
    await owner.client.expect(204, 'DELETE', `/v1/inspections/${main.inspection.id}/`);
    assert.equal((await owner.client.request('GET', `/v1/inspections/${r.id}/`)).status, 404, 'the retry went with it');
    for (const projectId of [main.inspection.project_id, r.project_id]) {
      await waitFor(`project ${projectId} deleted`, async () => (await system.cloud.projects.projects.findById(projectId)) === undefined);
    }
    // Deleting a retry deletes that retry only.
    const other = await processedInspection(owner);
    await owner.client.expect(200, 'PATCH', `/v1/inspections/${other.inspection.id}/?skip_email=true`, { status: 16 });
    const r2 = await owner.client.expect(201, 'POST', '/v1/inspections/retry/', { inspection: other.inspection.id });
    await owner.client.waitUntilSettled(r2.id, { timeoutMs: 90_000 });
    await owner.client.expect(204, 'DELETE', `/v1/inspections/${r2.id}/`);
    const kept = await owner.client.getInspection(other.inspection.id);
    assert.deepEqual(kept.retries, []);
    assert.equal(kept.can_retry, true, 'a deleted retry no longer counts');
  });

  it('a retry whose original input is gone from storage ends in status 13', async () => {
    const owner = await system.newAccount({ projects: 2 });
    const main = await processedInspection(owner);
    await owner.client.expect(200, 'PATCH', `/v1/inspections/${main.inspection.id}/?skip_email=true`, { status: 16 });
    await system.store.deleteObject(main.credentials.bucket, main.keys[0]);
    const r = await owner.client.expect(201, 'POST', '/v1/inspections/retry/', { inspection: main.inspection.id });
    const settled = await owner.client.waitUntilSettled(r.id, { timeoutMs: 60_000 });
    assert.equal(settled.status, 13, 'ERROR - Uploading input files');
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
