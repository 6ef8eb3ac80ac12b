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

  it('rule 3: detect_antennas would need a Tower inventory unit, but no detector runs here: refused (400) at creation, update and retry, nothing spent', async () => {
    const account = await system.newAccount({ projects: 5, towerInventory: 1 });
    const asset = await account.client.createAsset({ name: 'T', type: 1 });
    const detectRefusal = (body: any) => {
      assert.deepEqual(Object.keys(body), ['processing_parameters']);
      assert.match(body.processing_parameters.detect_antennas[0], /automatic antenna detection is not available on this installation/i);
    };
    const refused = await account.client.request('POST', '/v1/inspections', { asset: asset.id, processing_parameters: { detect_antennas: true } });
    assert.equal(refused.status, 400);
    detectRefusal(refused.body);
    const plain = await account.client.createInspection({ asset: asset.id });
    for (const method of ['PATCH', 'PUT'] as const) {
      const update = await account.client.request(method, `/v1/inspections/${plain.id}/`, { processing_parameters: { detect_antennas: true } });
      assert.equal(update.status, 400, method);
      detectRefusal(update.body);
    }
    // false is accepted (and spends nothing either).
    await account.client.expect(200, 'PATCH', `/v1/inspections/${plain.id}/`, { processing_parameters: { detect_antennas: false } });
    const { inspection } = await processedInspection(account, { processing_parameters: { detect_antennas: false } });
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/?skip_email=true`, { status: 16 });
    const retry = await account.client.request('POST', '/v1/inspections/retry/', { inspection: inspection.id, processing_parameters: { detect_antennas: true } });
    assert.equal(retry.status, 400);
    detectRefusal(retry.body);
    const history = await account.client.expect(200, 'GET', '/v1/allowance/history/');
    assert.deepEqual(history.filter((h: any) => h.direction === 'egress').map((h: any) => h.allowance_type), ['projects']);
    assert.equal(balanceOf(await account.client.expect(200, 'GET', '/v1/allowance/'), 'tower_inventory').balance, 1);
  });

  it('rule 3: an inspection that asked for detection before the refusal is processed without spending Tower inventory; inventory status 7 with the reason', async () => {
    const account = await system.newAccount({ projects: 2, towerInventory: 1 });
    const { inspection } = await uploadedInspection(account);
    // As stored by an earlier version, which accepted the option.
    await system.inspection.db
      .updateTable('inspection.inspections')
      .set({ processing_parameters: JSON.stringify({ ...inspection.processing_parameters, detect_antennas: true }) })
      .where('id', '=', inspection.id)
      .execute();
    await account.client.process(inspection.id);
    const done = await account.client.waitUntilSettled(inspection.id, { timeoutMs: 90_000 });
    assert.equal(done.status, 7);
    assert.equal(done.additional_statuses.inventory, 7, 'ERROR - Inventory automatic detection');
    assert.match(done.additional_statuses.inventory_reason, /not available on this installation/);
    assert.equal(done.processing_parameters.detect_antennas, true, 'the stored parameters are kept');
    const egress = await egressOf(account.client);
    assert.deepEqual(egress.map((h: any) => h.allowance_type), ['projects']);
    assert.equal(balanceOf(await account.client.expect(200, 'GET', '/v1/allowance/'), 'tower_inventory').balance, 1);
    // Its retry (inheriting the parameters) processes too, spends nothing and says the same.
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/?skip_email=true`, { status: 16 });
    const retry = await account.client.expect(201, 'POST', '/v1/inspections/retry/', { inspection: inspection.id });
    const retried = await account.client.waitUntilSettled(retry.id, { timeoutMs: 90_000 });
    assert.equal(retried.status, 7);
    assert.equal(retried.additional_statuses.inventory, 7);
    assert.deepEqual(await egressOf(account.client), egress);
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
    // (A retry asking for Tower inventory's detect_antennas is refused with 400 anyway: rule 3's test.)
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
