// Assets: list (?search=, deleted excluded), types, get, PUT, PATCH, DELETE (stable statuses only;
// removes its inspections, their cloud projects and its project group), inspections of an asset,
// and the asset limits (name 1..255, latitude/longitude ±90/±180 with at most 8 decimals).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, uploadedInspection, waitFor } from './helpers/inspection-fixtures.ts';

describe('inspection service: assets', () => {
  let system: TestSystem;
  let account: TestAccount;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
  });
  after(async () => {
    await system?.stop();
  });

  it('lists the types: all 13 with their family', async () => {
    const types = await account.client.expect(200, 'GET', '/v1/assets/types/');
    assert.equal(types.length, 13);
    assert.deepEqual(types[0], { id: 1, description: 'Self-support', family: 'Telecom' });
    assert.deepEqual(types[12], { id: 13, description: 'Offshore energy utility', family: 'Generic' });
    assert.deepEqual(
      types.filter((t: any) => t.family === 'Telecom').map((t: any) => t.id),
      [1, 9, 10, 11, 12],
    );
  });

  it('lists the current account\'s assets, filters by ?search= on the name, excludes deleted ones', async () => {
    const mine = await system.newAccount();
    const a = await mine.client.createAsset({ name: 'North Tower', type: 1 });
    const b = await mine.client.createAsset({ name: 'South bridge', type: 3 });
    const c = await mine.client.createAsset({ name: 'tower 50%_off', type: 9 });
    const all = await mine.client.expect(200, 'GET', '/v1/assets/');
    assert.deepEqual(
      all.map((x: any) => x.id),
      [a.id, b.id, c.id],
    );
    const towers = await mine.client.expect(200, 'GET', '/v1/assets/?search=TOWER');
    assert.deepEqual(
      towers.map((x: any) => x.id),
      [a.id, c.id],
      'case-insensitive substring',
    );
    const literal = await mine.client.expect(200, 'GET', `/v1/assets/?search=${encodeURIComponent('50%_')}`);
    assert.deepEqual(
      literal.map((x: any) => x.id),
      [c.id],
      '% and _ are literal',
    );
    await mine.client.expect(204, 'DELETE', `/v1/assets/${b.id}/`);
    const after = await mine.client.expect(200, 'GET', '/v1/assets/');
    assert.deepEqual(
      after.map((x: any) => x.id),
      [a.id, c.id],
      'deleted asset excluded',
    );
    assert.equal((await mine.client.request('GET', `/v1/assets/${b.id}/`)).status, 404);
  });

  it('gets an asset with its inspections', async () => {
    const asset = await account.client.createAsset({ name: 'Mast', type: 9, latitude: '46.5', longitude: '-6.25', description: 'by the lake' });
    const inspection = await account.client.createInspection({ asset: asset.id });
    const got = await account.client.expect(200, 'GET', `/v1/assets/${asset.id}/`);
    assert.equal(got.name, 'Mast');
    assert.equal(got.latitude, '46.50000000');
    assert.equal(got.longitude, '-6.25000000');
    assert.equal(got.organization_uuid, account.organizationUuid);
    assert.equal(got.user, account.userId);
    assert.deepEqual(got.inspections, [inspection.id]);
    assert.ok(got.project_group_id > 0);
    const list = await account.client.expect(200, 'GET', `/v1/assets/${asset.id}/inspections/`);
    assert.deepEqual(
      list.map((i: any) => i.id),
      [inspection.id],
    );
    assert.equal(list[0].asset, asset.id);
  });

  it('PUT overwrites every field (absent optional ones cleared); PATCH changes only what it is given', async () => {
    const asset = await account.client.createAsset({ name: 'Old', type: 2, latitude: '10.5', longitude: '20.25', description: 'd' });
    const patched = await account.client.expect(200, 'PATCH', `/v1/assets/${asset.id}/`, { description: 'patched' });
    assert.equal(patched.name, 'Old');
    assert.equal(patched.latitude, '10.50000000');
    assert.equal(patched.description, 'patched');
    assert.ok(new Date(patched.updated_at) >= new Date(asset.updated_at));

    const put = await account.client.expect(200, 'PUT', `/v1/assets/${asset.id}/`, { name: 'New', latitude: 1.5 });
    assert.equal(put.name, 'New');
    assert.equal(put.type, 2, 'type kept');
    assert.equal(put.latitude, '1.50000000');
    assert.equal(put.longitude, null, 'absent longitude cleared');
    assert.equal(put.description, null, 'absent description cleared');

    const noName = await account.client.request('PUT', `/v1/assets/${asset.id}/`, { latitude: 1 });
    assert.equal(noName.status, 400);
    assert.deepEqual(noName.body.name, ['This field is required.']);
    const withType = await account.client.expect(200, 'PATCH', `/v1/assets/${asset.id}/`, { type: 5 });
    assert.equal(withType.type, 5);
  });

  // Limits: name 1..255; latitude within ±90, longitude within ±180, at most 8 decimals.
  const limits: [string, Record<string, unknown>, number, string?][] = [
    ['name of 1 character', { name: 'x' }, 201],
    ['name of 255 characters', { name: 'x'.repeat(255) }, 201],
    ['empty name', { name: '' }, 400, 'name'],
    ['name of 256 characters', { name: 'x'.repeat(256) }, 400, 'name'],
    ['latitude 90 (string)', { latitude: '90' }, 201],
    ['latitude -90.00000000', { latitude: '-90.00000000' }, 201],
    ['latitude 90.00000001', { latitude: '90.00000001' }, 400, 'latitude'],
    ['latitude "91"', { latitude: '91' }, 400, 'latitude'],
    ['latitude 91 (number)', { latitude: 91 }, 400, 'latitude'],
    ['longitude 180', { longitude: 180 }, 201],
    ['longitude -180.5', { longitude: '-180.5' }, 400, 'longitude'],
    ['longitude 181 (number)', { longitude: 181 }, 400, 'longitude'],
    ['8 decimals (string)', { latitude: '12.12345678' }, 201],
    ['8 decimals (number)', { longitude: 12.12345678 }, 201],
    ['9 decimals (string)', { latitude: '12.123456789' }, 400, 'latitude'],
    ['9 decimals (number)', { longitude: 12.123456789 }, 400, 'longitude'],
    ['type 0', { type: 0 }, 400, 'type'],
    ['type 13', { type: 13 }, 201],
  ];
  for (const [label, change, status, field] of limits) {
    it(`asset limit: ${label} -> ${status}`, async () => {
      const body = { name: 'Limit', type: 1, ...change };
      const created = await account.client.request('POST', '/v1/assets/', body);
      assert.equal(created.status, status, JSON.stringify(created.body));
      if (field) assert.ok(Array.isArray(created.body[field]), `400 names ${field}: ${JSON.stringify(created.body)}`);
      // The same limits hold on PATCH.
      const target = await account.client.createAsset({ name: 'Target', type: 1 });
      const patched = await account.client.request('PATCH', `/v1/assets/${target.id}/`, change);
      assert.equal(patched.status, status === 201 ? 200 : 400, JSON.stringify(patched.body));
    });
  }

  it('delete: 409 while an inspection is not in a stable status; then removes inspections, cloud projects and the project group', async () => {
    const owner = await system.newAccount();
    const { asset, inspection } = await uploadedInspection(owner); // status 2: work under way
    const second = await owner.client.createInspection({ asset: asset.id }); // status 1: stable
    const refused = await owner.client.request('DELETE', `/v1/assets/${asset.id}/`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.code, 'conflict');
    assert.match(refused.body.detail, new RegExp(`${inspection.id} \\(status 2\\)`));
    assert.equal((await owner.client.request('GET', `/v1/assets/${asset.id}/`)).status, 200, 'nothing deleted');

    await owner.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/?skip_email=true`, { status: 16 });
    const deleted = await owner.client.request('DELETE', `/v1/assets/${asset.id}/`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.body, undefined, 'no body');
    for (const path of [`/v1/assets/${asset.id}/`, `/v1/inspections/${inspection.id}/`, `/v1/inspections/${second.id}/`]) {
      assert.equal((await owner.client.request('GET', path)).status, 404, path);
    }
    assert.deepEqual(await owner.client.expect(200, 'GET', '/v1/inspections/'), []);
    // The cloud projects go (through a durable job); the cloud keeps no row for them.
    for (const id of [inspection.project_id, second.project_id]) {
      await waitFor(`cloud project ${id} deleted`, async () => (await system.cloud.projects.projects.findById(id)) === undefined);
    }
    await waitFor(`cloud project group ${asset.project_group_id} deleted`, async () => {
      const group = await system.cloud.db.selectFrom('cloud.project_groups').select('id').where('id', '=', asset.project_group_id).executeTakeFirst();
      return group === undefined;
    });
    assert.equal((await owner.client.request('DELETE', `/v1/assets/${asset.id}/`)).status, 404, 'already gone');
  });

  it('answers lists as the page envelope when page or page_size is given (max 1000)', async () => {
    const pager = await system.newAccount();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await pager.client.createAsset({ name: `A${i}`, type: 6 })).id);
    const first = await pager.client.expect(200, 'GET', '/v1/assets/?page_size=2');
    assert.equal(first.count, 5);
    assert.deepEqual(
      first.results.map((a: any) => a.id),
      ids.slice(0, 2),
    );
    assert.equal(first.previous, null);
    assert.match(first.next, /page=2/);
    const next = await pager.client.expect(200, 'GET', new URL(first.next).pathname + new URL(first.next).search);
    assert.deepEqual(
      next.results.map((a: any) => a.id),
      ids.slice(2, 4),
    );
    assert.match(next.previous, /page=1/);
    const last = await pager.client.expect(200, 'GET', '/v1/assets/?page=3&page_size=2');
    assert.deepEqual(
      last.results.map((a: any) => a.id),
      [ids[4]],
    );
    assert.equal(last.next, null);
    const searched = await pager.client.expect(200, 'GET', '/v1/assets/?search=A1&page=1');
    assert.equal(searched.count, 1);
    assert.equal((await pager.client.request('GET', '/v1/assets/?page=9&page_size=2')).status, 404, 'past the last page');
    const tooBig = await pager.client.request('GET', '/v1/assets/?page_size=1001');
    assert.equal(tooBig.status, 400);
    assert.ok(tooBig.body.querystring?.page_size || tooBig.body.page_size, JSON.stringify(tooBig.body));
    assert.equal((await pager.client.expect(200, 'GET', '/v1/assets/?page_size=1000')).results.length, 5);
    assert.ok(Array.isArray(await pager.client.expect(200, 'GET', '/v1/assets/')), 'a plain array without page parameters');
    // The same envelope for every list.
    for (const path of ['/v1/assets/types/', '/v1/inspections/statuses/', '/v1/inspections/additional_statuses/', '/v1/allowance/types/', '/v1/allowance/', '/v1/allowance/history/', '/v1/inspections/', '/v1/annotations/types/']) {
      const page = await pager.client.expect(200, 'GET', `${path}?page=1&page_size=1`);
      assert.deepEqual(Object.keys(page).sort(), ['count', 'next', 'previous', 'results'], path);
    }
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
