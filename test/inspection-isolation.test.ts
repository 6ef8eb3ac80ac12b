// Tenant isolation: for every endpoint that takes an id, a user of another organization and a
// user without organization get 404 for the first account's records (never 403, never the
// record), change nothing, and do not see them in any list. A share token of the owner's
// inspection opens nothing of another account (inspection-share-tokens.test.ts has the rest).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection } from './helpers/inspection-fixtures.ts';

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
