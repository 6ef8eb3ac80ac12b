// Inspections beyond the walking skeleton: creation with new_asset, processing_backend and the
// default processing_parameters; the record's user, retries, can_retry and is_main; PUT and PATCH
// with every field of the spec; the status e-mails (started, finished, error; skip_email=true);
// deletion (stable statuses only, cloud project deleted).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, outbox, uploadedInspection, waitFor } from './helpers/inspection-fixtures.ts';

describe('inspection service: inspections', () => {
  let system: TestSystem;
  let account: TestAccount;
  let assetId: number;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    assetId = (await account.client.createAsset({ name: 'Pylon', type: 7 })).id;
  });
  after(async () => {
    await system?.stop();
  });

  it('creates with the spec defaults: status 1, processing_parameters {generate_point_cloud: true}, backend mapper; fills user, retries, can_retry, is_main', async () => {
    const created = await account.client.createInspection({ asset: assetId });
    assert.equal(created.status, 1);
    assert.deepEqual(created.processing_parameters, { generate_point_cloud: true });
    assert.equal(created.processing_backend, 'mapper');
    assert.equal(created.report_status, 'not available');
    assert.deepEqual(created.additional_statuses, { inventory: null, rust: null });
    const got = await account.client.getInspection(created.id);
    assert.equal(got.user, account.userId);
    assert.deepEqual(got.retries, []);
    assert.equal(got.retry_of, null);
    assert.equal(got.is_main, true);
    assert.equal(got.can_retry, false, 'status 1 is not retryable');
  });

  it('creates with processing_backend vortex and the given processing_parameters; refuses other backends', async () => {
    const vortex = await account.client.createInspection({ asset: assetId, processing_backend: 'vortex', processing_parameters: { generate_mesh: true, clipping_radius: 50 } });
    assert.equal(vortex.processing_backend, 'vortex');
    assert.deepEqual(vortex.processing_parameters, { generate_mesh: true, clipping_radius: 50 });
    const bad = await account.client.request('POST', '/v1/inspections', { asset: assetId, processing_backend: 'pix4d' });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.processing_backend);
  });

  it('creates the asset with the inspection when new_asset is true', async () => {
    const created = await account.client.createInspection({ new_asset: true, asset: { name: 'Brand new', type: 12, latitude: '1.5' }, inspection_date: '2024-05-01 10:30' });
    const asset = await account.client.expect(200, 'GET', `/v1/assets/${created.asset}/`);
    assert.equal(asset.name, 'Brand new');
    assert.equal(asset.type, 12);
    assert.ok(asset.project_group_id > 0);
    assert.deepEqual(asset.inspections, [created.id]);
    assert.equal(created.inspection_date, '2024-05-01T10:30:00.000Z');
    const incomplete = await account.client.request('POST', '/v1/inspections', { new_asset: true, asset: { name: 'no type' } });
    assert.equal(incomplete.status, 400);
    assert.ok(incomplete.body.asset);
  });

  it('PUT and PATCH overwrite the fields of the spec; updated_at moves', async () => {
    const created = await account.client.createInspection({ asset: assetId, name: 'before' });
    const body = {
      additional_statuses: { inventory: 3, rust: 11 },
      pcs_task_uuid: '3f9c2a55-1b7e-4c5e-9a57-0a1b2c3d4e5f',
      inspection_date: '2024-07-02T08:00:00Z',
      description: 'described',
      name: 'after',
      base_plate_location: { x: 1.5, y: -2, z: 3 },
      top_point_location: { x: 1.5, y: -2, z: 40.25 },
      base_plate_size: 2.5,
      report_status: 'not available',
    };
    const put = await account.client.expect(200, 'PUT', `/v1/inspections/${created.id}/`, body);
    for (const [key, value] of Object.entries(body)) {
      if (key === 'inspection_date') assert.equal(put[key], '2024-07-02T08:00:00.000Z');
      else assert.deepEqual(put[key], value, key);
    }
    assert.ok(new Date(put.updated_at) > new Date(created.updated_at));
    const patched = await account.client.expect(200, 'PATCH', `/v1/inspections/${created.id}/`, { additional_statuses: { rust: 13 }, base_plate_size: null, description: null });
    assert.deepEqual(patched.additional_statuses, { inventory: 3, rust: 13 }, 'keys merged');
    assert.equal(patched.base_plate_size, null);
    assert.equal(patched.description, null);
    assert.equal(patched.name, 'after', 'untouched');
    for (const [field, value] of [
      ['base_plate_size', -0.1],
      ['status', 99],
      ['report_status', 'done'],
      ['additional_statuses', { inventory: 11 }],
      ['additional_statuses', { rust: 3 }],
      ['pcs_task_uuid', 'not-a-uuid'],
      ['base_plate_location', { x: 1, y: 2 }],
      ['inspection_date', '2024-13-45 10:00'],
    ] as const) {
      const refused = await account.client.request('PATCH', `/v1/inspections/${created.id}/`, { [field]: value });
      assert.equal(refused.status, 400, `${field}=${JSON.stringify(value)}: ${JSON.stringify(refused.body)}`);
      assert.ok(refused.body[field], `names ${field}: ${JSON.stringify(refused.body)}`);
    }
  });

  it('e-mails the creator when status is set to a started, finished or error value, unless skip_email=true', async () => {
    const mailer = await system.newAccount();
    const created = await mailer.client.createInspection({ asset: (await mailer.client.createAsset({ name: 'Mailed', type: 1 })).id, name: 'Mailed flight' });
    const mine = () => outbox(system).filter((m) => m.to.includes(mailer.username));
    const expectMails = async (count: number) => waitFor(`${count} e-mails`, async () => (mine().length >= count ? mine() : undefined));

    await mailer.client.expect(200, 'PATCH', `/v1/inspections/${created.id}/`, { status: 3 }); // started
    await expectMails(1);
    await mailer.client.expect(200, 'PUT', `/v1/inspections/${created.id}/`, { status: 7 }); // finished
    await expectMails(2);
    await mailer.client.expect(200, 'PATCH', `/v1/inspections/${created.id}/`, { status: 16 }); // error
    const three = await expectMails(3);
    assert.match(three[0].subject, /processing started/);
    assert.match(three[1].subject, /processing completed/);
    assert.match(three[2].subject, /processing failed/);
    assert.equal(three[0].to, `${mailer.username}@example.test`);
    assert.match(three[2].body, /status of Inspection \d+ "Mailed flight" is now 16 \(ERROR - Photogrammetry processing\)/);

    await mailer.client.expect(200, 'PATCH', `/v1/inspections/${created.id}/?skip_email=true`, { status: 4 }); // suppressed
    await mailer.client.expect(200, 'PATCH', `/v1/inspections/${created.id}/`, { status: 4, name: 'same status' }); // no change of status
    await mailer.client.expect(200, 'PATCH', `/v1/inspections/${created.id}/`, { status: 1 }); // not a started/finished/error value
    await mailer.client.expect(200, 'PUT', `/v1/inspections/${created.id}/?skip_email=true`, { status: 7 }); // suppressed
    await mailer.client.expect(200, 'PATCH', `/v1/inspections/${created.id}/`, { status: 19 }); // error: sent
    await expectMails(4);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // let any wrongly queued e-mail arrive
    assert.equal(mine().length, 4);
    assert.match(mine()[3].subject, /processing failed/);
  });

  it('deletes only in a stable status (409 otherwise); 204 deletes its cloud project', async () => {
    const owner = await system.newAccount();
    const { inspection } = await uploadedInspection(owner); // status 2
    const refused = await owner.client.request('DELETE', `/v1/inspections/${inspection.id}/`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.code, 'conflict');
    for (const status of [3, 4, 5, 12, 20, 25]) {
      await owner.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/?skip_email=true`, { status });
      assert.equal((await owner.client.request('DELETE', `/v1/inspections/${inspection.id}/`)).status, 409, `status ${status}`);
    }
    await owner.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/?skip_email=true`, { status: 13 });
    const deleted = await owner.client.request('DELETE', `/v1/inspections/${inspection.id}/`);
    assert.equal(deleted.status, 204);
    assert.equal((await owner.client.request('GET', `/v1/inspections/${inspection.id}/`)).status, 404);
    assert.deepEqual(await owner.client.expect(200, 'GET', '/v1/inspections/'), [], 'deleted ones excluded from the list');
    await waitFor('cloud project deleted', async () => (await system.cloud.projects.projects.findById(inspection.project_id)) === undefined);
    assert.equal((await owner.client.request('DELETE', `/v1/inspections/${inspection.id}/`)).status, 404);
    // Every stable status allows deletion.
    for (const status of [1, 7, 8, 14, 15, 17, 18, 19, 21, 22, 23, 24, 27]) {
      const created = await owner.client.createInspection({ asset: inspection.asset });
      if (status !== 1) await owner.client.expect(200, 'PATCH', `/v1/inspections/${created.id}/?skip_email=true`, { status });
      assert.equal((await owner.client.request('DELETE', `/v1/inspections/${created.id}/`)).status, 204, `status ${status}`);
    }
  });

  it('lists the current account\'s inspections only, deleted ones excluded', async () => {
    const lister = await system.newAccount();
    const asset = await lister.client.createAsset({ name: 'L', type: 2 });
    const a = await lister.client.createInspection({ asset: asset.id });
    const b = await lister.client.createInspection({ asset: asset.id });
    await lister.client.expect(204, 'DELETE', `/v1/inspections/${a.id}/`);
    const list = await lister.client.expect(200, 'GET', '/v1/inspections/');
    assert.deepEqual(
      list.map((i: any) => i.id),
      [b.id],
    );
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
