// Bad input answers 4xx in the CONTRACT's format (field errors for 400), never a 5xx.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';

describe('inspection API validation', () => {
  let system: TestSystem;
  let account: TestAccount;
  let inspectionId: number;
  let assetId: number;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    const asset = await account.client.createAsset({ name: 'A', type: 2 });
    assetId = asset.id;
    inspectionId = (await account.client.createInspection({ asset: asset.id })).id;
  });
  after(async () => {
    await system?.stop();
  });

  const cases: [string, string, unknown, string][] = [
    ['POST', '/v1/assets/', {}, 'name'],
    ['POST', '/v1/assets/', { name: '', type: 1 }, 'name'],
    ['POST', '/v1/assets/', { name: 'x'.repeat(256), type: 1 }, 'name'],
    ['POST', '/v1/assets/', { name: 'ok', type: 14 }, 'type'],
    ['POST', '/v1/assets/', { name: 'ok', type: 1, latitude: '12.123456789' }, 'latitude'],
    ['POST', '/v1/assets/', { name: 'ok', type: 1, longitude: 'east' }, 'longitude'],
    ['POST', '/v1/inspections', { asset: 'one' }, 'asset'],
    ['POST', '/v1/inspections', { asset: 999999 }, 'asset'],
    ['POST', '/v1/inspections', { new_asset: true }, 'asset'],
    ['POST', '/v1/inspections', { asset: 1, processing_backend: 'magic' }, 'processing_backend'],
    ['POST', '/v1/inspections', { asset: 1, processing_parameters: { clipping_radius: 'far' } }, 'processing_parameters'],
    ['POST', '/v1/inspections', { asset: 1, inspection_date: 'yesterday' }, 'inspection_date'],
    ['POST', '/v1/inspections/:id/register_images/', {}, 'image_keys'],
    ['POST', '/v1/inspections/:id/register_images/', { image_keys: 'a.jpg' }, 'image_keys'],
    ['POST', '/v1/inspections/:id/register_images/', { image_keys: [] }, 'image_keys'],
    // Issue 4: every other endpoint with a body or query.
    ['PUT', '/v1/assets/:asset/', {}, 'name'],
    ['PUT', '/v1/assets/:asset/', { name: 'ok', type: 99 }, 'type'],
    ['PATCH', '/v1/assets/:asset/', { name: '' }, 'name'],
    ['PATCH', '/v1/assets/:asset/', { latitude: 'north' }, 'latitude'],
    ['PATCH', '/v1/assets/:asset/', { longitude: '200' }, 'longitude'],
    ['GET', '/v1/assets/?page=0', undefined, 'querystring'],
    ['GET', '/v1/assets/?search=' + 'x'.repeat(256), undefined, 'querystring'],
    ['GET', '/v1/inspections/?page_size=0', undefined, 'querystring'],
    ['GET', '/v1/inspections/?page_size=1001', undefined, 'querystring'],
    ['PUT', '/v1/inspections/:id/', { base_plate_size: -1 }, 'base_plate_size'],
    ['PUT', '/v1/inspections/:id/', { status: 'done' }, 'status'],
    ['PATCH', '/v1/inspections/:id/', { status: 6 }, 'status'],
    ['PATCH', '/v1/inspections/:id/', { report_status: 'ready' }, 'report_status'],
    ['PATCH', '/v1/inspections/:id/', { additional_statuses: { inventory: 12 } }, 'additional_statuses'],
    ['PATCH', '/v1/inspections/:id/', { top_point_location: { x: 'a', y: 0, z: 0 } }, 'top_point_location'],
    ['PATCH', '/v1/inspections/:id/', { processing_parameters: { generate_mesh: 'sure' } }, 'processing_parameters'],
    ['PATCH', '/v1/inspections/:id/?skip_email=perhaps', { name: 'x' }, 'querystring'],
    ['POST', '/v1/inspections/:id/process/', [1], 'non_field_errors'],
    ['POST', '/v1/inspections/retry/', {}, 'inspection'],
    ['POST', '/v1/inspections/retry/', { inspection: 0 }, 'inspection'],
    ['POST', '/v1/inspections/:id/report/', { include_annotations: 'both' }, 'include_annotations'],
    ['POST', '/v1/inspections/:id/report/', { extra_remarks: ['a'] }, 'extra_remarks'],
    ['POST', '/v1/annotations/', {}, 'type'],
    ['POST', '/v1/annotations/', { type: 'x', inspection: 1, photo_id: 1 }, 'data'],
    ['POST', '/v1/annotations/', { type: 'x', inspection: 1, photo_id: 1, data: { coords_2d: [[0, 0]] } }, 'data'],
    ['PUT', '/v1/annotations/1/', { type: 'x' }, 'data'],
    ['PATCH', '/v1/annotations/1/', { severity_level: 9 }, 'severity_level'],
    ['PATCH', '/v1/annotations/1/', { data: { coords_2d: 'square' } }, 'data'],
    ['GET', '/v1/annotations/types/?page=-1', undefined, 'querystring'],
    ['POST', '/v1/inspections/:id/measurements/', {}, 'annotations'],
    ['POST', '/v1/inspections/:id/measurements/', { annotations: [{ geometry: { type: 'Point', coordinates: [1, 2] } }] }, 'annotations'],
    ['PUT', '/v1/inspections/:id/measurements/0b9c3e0e-8f55-4f3f-9e39-2f0d8c0c1c11/', { tags: [] }, 'properties'],
    ['PATCH', '/v1/inspections/:id/measurements/0b9c3e0e-8f55-4f3f-9e39-2f0d8c0c1c11/', { properties: { color: 'blue' } }, 'properties'],
  ];

  for (const [method, path, body, field] of cases) {
    it(`${method} ${path.slice(0, 80)} ${JSON.stringify(body ?? null).slice(0, 60)} -> 400 naming ${field}`, async () => {
      const response = await account.client.request(method, path.replace(':id', String(inspectionId)).replace(':asset', String(assetId)), body);
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.ok(field in response.body, `field ${field} in ${JSON.stringify(response.body)}`);
      assert.ok(Array.isArray(response.body[field]) || typeof response.body[field] === 'object');
    });
  }

  it('malformed JSON, unknown ids and unknown routes answer 4xx with {detail, code}', async () => {
    const bad = await fetch(`${system.urls.inspection}/v1/assets/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey, authorization: `Bearer ${account.client.token}` },
      body: '{"name": ',
    });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as any).code, 'parse_error');
    for (const path of ['/v1/inspections/999999/', '/v1/assets/999999/', '/v1/inspections/999999/cameras/', '/v1/nothing-here/']) {
      const response = await account.client.request('GET', path);
      assert.equal(response.status, 404, path);
      assert.equal(response.body.code, 'not_found');
    }
    const notInt = await account.client.request('GET', '/v1/inspections/abc/');
    assert.ok(notInt.status === 400 || notInt.status === 404);
  });

  it('another user and another organization get 404 for these records', async () => {
    const stranger = await system.newAccount();
    for (const path of [`/v1/inspections/${inspectionId}/`, `/v1/inspections/${inspectionId}/cameras/`, `/v1/inspections/${inspectionId}/s3_credentials/`]) {
      assert.equal((await stranger.client.request('GET', path)).status, 404, path);
    }
    assert.equal((await stranger.client.request('POST', `/v1/inspections/${inspectionId}/process/`, {})).status, 404);
    assert.deepEqual(await stranger.client.expect(200, 'GET', '/v1/inspections/'), []);
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
