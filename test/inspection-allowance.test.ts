// The six allowance rules of the spec, one test each.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, uploadedInspection } from './helpers/inspection-fixtures.ts';
import { accountOf } from '../src/inspection/allowance/allowance.service.ts';
import { ApiError } from '../src/infra/http/errors.ts';

const balanceOf = (balances: any[], type: string) => balances.find((b) => b.allowance_type === type);
const egressOf = async (client: any) => (await client.expect(200, 'GET', '/v1/allowance/history/')).filter((h: any) => h.direction === 'egress');

describe('inspection service: allowance rules', () => {
  let system: TestSystem;
  before(async () => {
    system = await startTestSystem();
  });
  after(async () => {
    await system?.stop();
  });

  it('rule 1: allowance is counted per resource type; the main type is Projects', async () => {
    const account = await system.newAccount({ projects: 4, towerInventory: 2 });
    const types = await account.client.expect(200, 'GET', '/v1/allowance/types/');
    assert.deepEqual(types[0], { id: 1, code: 'projects', name: 'Projects' });
    assert.ok(types.some((t: any) => t.code === 'tower_inventory' && t.name === 'Tower inventory'));
    const balances = await account.client.expect(200, 'GET', '/v1/allowance/');
    assert.deepEqual(balanceOf(balances, 'projects'), { allowance_type: 'projects', granted: 4, consumed: 0, balance: 4 });
    assert.deepEqual(balanceOf(balances, 'tower_inventory'), { allowance_type: 'tower_inventory', granted: 2, consumed: 0, balance: 2 });
    // Spending Projects leaves Tower inventory as it was.
    await processedInspection(account);
    const after = await account.client.expect(200, 'GET', '/v1/allowance/');
    assert.equal(balanceOf(after, 'projects').balance, 3);
    assert.equal(balanceOf(after, 'tower_inventory').balance, 2);
  });

  it('rule 2: each processing spends at least one Projects unit', async () => {
    const account = await system.newAccount({ projects: 2 });
    const { inspection } = await processedInspection(account);
    const history = await account.client.expect(200, 'GET', '/v1/allowance/history/');
    const egress = history.filter((h: any) => h.direction === 'egress');
    assert.equal(egress.length, 1);
    assert.deepEqual({ type: egress[0].allowance_type, amount: egress[0].amount, inspection: egress[0].inspection }, { type: 'projects', amount: 1, inspection: inspection.id });
  });

  it('rule 3: detect_antennas needs a Tower inventory unit: refused (403) without one at creation and update, spent exactly once when processing starts', async () => {
    const none = await system.newAccount({ projects: 5 });
    const asset = await none.client.createAsset({ name: 'T', type: 1 });
    const refused = await none.client.request('POST', '/v1/inspections', { asset: asset.id, processing_parameters: { detect_antennas: true } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'insufficient_allowance');
    assert.match(refused.body.detail, /tower_inventory/);
    const plain = await none.client.createInspection({ asset: asset.id });
    for (const method of ['PATCH', 'PUT'] as const) {
      const update = await none.client.request(method, `/v1/inspections/${plain.id}/`, { processing_parameters: { detect_antennas: true } });
      assert.equal(update.status, 403, `${method}: enabling it later needs the unit too`);
      assert.equal(update.body.code, 'insufficient_allowance');
    }
    await none.client.expect(200, 'PATCH', `/v1/inspections/${plain.id}/`, { processing_parameters: { detect_antennas: false } });

    // One unit, two inspections asking for it: the first process spends it, the second is refused.
    const one = await system.newAccount({ projects: 5, towerInventory: 1 });
    const first = await uploadedInspection(one, { processing_parameters: { detect_antennas: true } });
    const second = await uploadedInspection(one, { processing_parameters: { detect_antennas: true } });
    assert.equal(balanceOf(await one.client.expect(200, 'GET', '/v1/allowance/'), 'tower_inventory').balance, 1, 'creating does not spend it');
    const started = await one.client.process(first.inspection.id);
    assert.equal(started.additional_statuses.inventory, 1, 'detection pending from process on');
    const broke = await one.client.request('POST', `/v1/inspections/${second.inspection.id}/process/`, {});
    assert.equal(broke.status, 403);
    assert.equal(broke.body.code, 'insufficient_allowance');
    assert.match(broke.body.detail, /tower_inventory/);
    assert.equal((await one.client.getInspection(second.inspection.id)).status, 2, 'not started');
    const done = await one.client.waitUntilSettled(first.inspection.id, { timeoutMs: 90_000 });
    assert.equal(done.status, 7);
    const history = await one.client.expect(200, 'GET', '/v1/allowance/history/');
    const towers = history.filter((h: any) => h.direction === 'egress' && h.allowance_type === 'tower_inventory');
    assert.equal(towers.length, 1, 'spent exactly once');
    assert.equal(towers[0].inspection, first.inspection.id);
    const projects = history.filter((h: any) => h.direction === 'egress' && h.allowance_type === 'projects');
    assert.deepEqual(
      projects.map((h: any) => h.inspection),
      [first.inspection.id],
      'the refused process spent no Projects unit either',
    );
  });

  it('rule 4: allowance is consumed when processing starts, not before and not after', async () => {
    const account = await system.newAccount({ projects: 3 });
    const { inspection } = await uploadedInspection(account);
    assert.deepEqual(await egressOf(account.client), [], 'creating, uploading and registering spend nothing');
    const started = await account.client.process(inspection.id);
    assert.equal(started.status, 20);
    const atStart = await egressOf(account.client);
    assert.equal(atStart.length, 1, 'spent in the call that starts processing');
    const done = await account.client.waitUntilSettled(inspection.id, { timeoutMs: 90_000 });
    assert.equal(done.status, 7);
    const cameras = await account.client.cameras(inspection.id);
    // What follows processing spends nothing.
    await account.client.expect(201, 'POST', '/v1/annotations/', { type: 'Crack', inspection: inspection.id, photo_id: cameras[0].photo_id, data: { coords_2d: [[0.1, 0.1], [0.2, 0.1], [0.2, 0.2], [0.1, 0.2]] } });
    await account.client.expect(202, 'POST', `/v1/inspections/${inspection.id}/report/`, {});
    await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/outputs/`);
    assert.equal((await account.client.request('POST', `/v1/inspections/${inspection.id}/process/`, {})).status, 409, 'no second processing');
    assert.deepEqual(await egressOf(account.client), atStart);
    assert.equal(balanceOf(await account.client.expect(200, 'GET', '/v1/allowance/'), 'projects').balance, 2);
  });

  it('rule 5: no further resource type can be spent once the inspection has been processed', async () => {
    const account = await system.newAccount({ projects: 3, towerInventory: 3 });
    const { inspection } = await processedInspection(account); // spent Projects only
    // Observable through the API: the parameters that decide what is spent are frozen (409).
    const patch = await account.client.request('PATCH', `/v1/inspections/${inspection.id}/`, { processing_parameters: { detect_antennas: true } });
    assert.equal(patch.status, 409);
    assert.equal(patch.body.code, 'conflict');
    const put = await account.client.request('PUT', `/v1/inspections/${inspection.id}/`, { processing_parameters: { generate_point_cloud: true, detect_antennas: true } });
    assert.equal(put.status, 409);
    // A retry that would need Tower inventory is refused too (it recycles, it cannot add a type).
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/?skip_email=true`, { status: 16 });
    const retry = await account.client.request('POST', '/v1/inspections/retry/', { inspection: inspection.id, processing_parameters: { detect_antennas: true } });
    assert.equal(retry.status, 409);
    assert.match(retry.body.detail, /tower_inventory/);
    // And the allowance itself refuses a second spend for the inspection.
    const db = system.inspection.db;
    await assert.rejects(
      db.transaction().execute((trx) => system.inspection.allowance.spend(trx, accountOf({ organization_id: account.organizationId!, user_id: account.userId }), inspection.id, [{ code: 'tower_inventory', amount: 1 }])),
      (err: unknown) => err instanceof ApiError && err.statusCode === 409,
    );
    const balances = await account.client.expect(200, 'GET', '/v1/allowance/');
    assert.equal(balanceOf(balances, 'tower_inventory').consumed, 0);
    assert.equal(balanceOf(balances, 'projects').consumed, 1);
  });

  it('rule 6: a retry recycles the resources of the original and spends none', async () => {
    const account = await system.newAccount({ projects: 1 });
    const { inspection } = await processedInspection(account, { processing_parameters: { generate_point_cloud: true } });
    const spent = await egressOf(account.client);
    assert.equal(spent.length, 1);
    assert.equal(balanceOf(await account.client.expect(200, 'GET', '/v1/allowance/'), 'projects').balance, 0, 'nothing left');
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/?skip_email=true`, { status: 16 });
    const retry = await account.client.expect(201, 'POST', '/v1/inspections/retry/', { inspection: inspection.id });
    const done = await account.client.waitUntilSettled(retry.id, { timeoutMs: 90_000 });
    assert.equal(done.status, 7, 'processed with an empty balance');
    assert.deepEqual(await egressOf(account.client), spent, 'no egress for the retry');
    assert.equal((await account.client.cameras(retry.id)).length, 3, 'the retry processed the copied inputs');
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
