// Issue 10, findings 2, 3, 12 and 15 on both services: characters PostgreSQL cannot store, numbers
// that are not finite or beyond int4, unbounded texts and lists, and lenient path ids. Each case
// asserts the status, the field named in the 400 body, and that nothing was written.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, type CloudTestClient } from './helpers/cloud-api.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';

type Service = 'inspection' | 'cloud';
/** [service, method, path, body, field path in the 400 body]; `:id`, `:asset`, `:project` are replaced. */
type Case = [Service, string, string, unknown, string[]];

const NUL = 'a\u0000b';
const SQUARE = [
  [0.1, 0.1],
  [0.1, 0.2],
  [0.2, 0.2],
  [0.2, 0.1],
];
const point = { type: 'Point', coordinates: [1, 2, 3] };
const measurement = (extra: Record<string, unknown>) => ({ annotations: [{ geometry: point, ...extra }] });
const nested = (levels: number): unknown => (levels === 0 ? 'leaf' : { k: nested(levels - 1) });

describe('robustness: input validation on both services (issue 10)', () => {
  let system: TestSystem;
  let account: TestAccount;
  let cloud: CloudTestClient;
  let inspectionId: number;
  let assetId: number;
  let projectId: number;
  let groupId: number;

  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    assetId = (await account.client.createAsset({ name: 'Tower', type: 2 })).id;
    inspectionId = (await account.client.createInspection({ asset: assetId, name: 'Flight' })).id;
    cloud = await cloudClient(system);
    projectId = (await cloud.call('POST', '/project/api/v3/projects/', { name: 'P' }, { expect: 201 })).id;
    groupId = (await cloud.call('POST', '/project/api/v3/project-groups/', { name: 'G' }, { expect: 201 })).id;
  });
  after(async () => {
    await system?.stop();
  });

  const fill = (path: string) =>
    path.replaceAll(':id', String(inspectionId)).replaceAll(':asset', String(assetId)).replaceAll(':project', String(projectId)).replaceAll(':group', String(groupId));

  async function send(service: Service, method: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
    if (service === 'inspection') return account.client.request(method, fill(path), body);
    const parsed = await cloud.call(method, fill(path), body);
    return { status: parsed?.$response?.status ?? 0, body: parsed };
  }

  /** Everything the cases could have written, to compare before and after. */
  async function snapshot() {
    const c = account.client;
    return {
      assets: (await c.expect(200, 'GET', '/v1/assets/')).map((a: any) => [a.id, a.name, a.type, a.description]),
      inspections: (await c.expect(200, 'GET', '/v1/inspections/')).map((i: any) => [i.id, i.name, i.description, i.additional_statuses, i.base_plate_size]),
      annotations: await c.expect(200, 'GET', `/v1/inspections/${inspectionId}/annotations/`),
      measurements: await c.expect(200, 'GET', `/v1/inspections/${inspectionId}/measurements/`),
      projects: (await cloud.call('GET', '/project/api/v3/projects/', undefined, { expect: 200 })).map((p: any) => [p.id, p.name, p.project_group_id, p.public_status]),
      groups: (await cloud.call('GET', '/project/api/v3/project-groups/', undefined, { expect: 200 })).map((g: any) => [g.id, g.name]),
      folders: await cloud.call('GET', '/common/api/v4/drive/folders/', undefined, { expect: 200 }),
      controlPoints: [
        await cloud.call('GET', `/project/api/v3/projects/${projectId}/gcp/`, undefined, { expect: 200 }),
        await cloud.call('GET', `/project/api/v3/projects/${projectId}/mtp/`, undefined, { expect: 200 }),
      ],
    };
  }

  function assertNamed(body: any, field: string[], label: string): string[] {
    let node = body;
    for (const segment of field) {
      assert.ok(node && typeof node === 'object' && segment in node, `${label}: ${field.join('.')} named in ${JSON.stringify(body).slice(0, 400)}`);
      node = node[segment];
    }
    assert.ok(Array.isArray(node) && node.every((m) => typeof m === 'string'), `${label}: messages at ${field.join('.')}: ${JSON.stringify(body).slice(0, 400)}`);
    return node;
  }

  async function run400(cases: Case[], message?: RegExp) {
    const before = await snapshot();
    for (const [service, method, path, body, field] of cases) {
      const label = `${service} ${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}`;
      const response = await send(service, method, path, body);
      assert.equal(response.status, 400, `${label}: ${JSON.stringify(response.body).slice(0, 400)}`);
      const messages = assertNamed(response.body, field, label);
      if (message) assert.ok(messages.some((m) => message.test(m)), `${label}: ${messages.join(' ')}`);
    }
    assert.deepEqual(await snapshot(), before, 'nothing was written');
  }

  it('finding 2: NUL characters and lone surrogates are a 400 naming the field, on both services', async () => {
    const cases: Case[] = [
      ['inspection', 'POST', '/v1/auth/token/', { username: NUL, password: 'x' }, ['username']],
      ['inspection', 'POST', '/v1/assets/', { name: NUL, type: 1 }, ['name']],
      ['inspection', 'POST', '/v1/assets/', { name: 'ok', type: 1, description: NUL }, ['description']],
      ['inspection', 'PATCH', '/v1/assets/:asset/', { description: NUL }, ['description']],
      ['inspection', 'PUT', '/v1/assets/:asset/', { name: NUL }, ['name']],
      ['inspection', 'POST', '/v1/inspections', { asset: assetId, name: NUL }, ['name']],
      ['inspection', 'POST', '/v1/inspections', { new_asset: true, asset: { name: NUL, type: 1 } }, ['asset', 'name']],
      ['inspection', 'PATCH', '/v1/inspections/:id/', { description: NUL }, ['description']],
      ['inspection', 'POST', '/v1/inspections/retry/', { inspection: 1, description: NUL }, ['description']],
      ['inspection', 'POST', '/v1/inspections/:id/report/', { extra_remarks: NUL }, ['extra_remarks']],
      ['inspection', 'POST', '/v1/annotations/', { type: NUL, inspection: 1, photo_id: 0, data: { coords_2d: SQUARE } }, ['type']],
      ['inspection', 'PATCH', '/v1/annotations/1/', { name: NUL }, ['name']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ properties: { name: NUL } }), ['annotations', '0', 'properties', 'name']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ properties: { note: { deep: NUL } } }), ['annotations', '0', 'properties', 'note', 'deep']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ properties: { [NUL]: 1 } }), ['annotations', '0', 'properties']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ tags: ['ok', NUL] }), ['annotations', '0', 'tags', '1']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ extension: { [NUL]: 'x' } }), ['annotations', '0', 'extension']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ extension: { k: 'x\ud800' } }), ['annotations', '0', 'extension', 'k']],
      ['inspection', 'POST', '/v1/assets/', { name: 'ok', type: 1, description: 'lone \udc00 surrogate' }, ['description']],
      ['inspection', 'GET', '/v1/assets/?search=a%00b', undefined, ['querystring', 'search']],
      ['cloud', 'POST', '/project/api/v3/projects/', { name: NUL }, ['name']],
      ['cloud', 'POST', '/project/api/v3/projects/', { name: 'ok', geoid_model: NUL }, ['geoid_model']],
      ['cloud', 'POST', '/project/api/v3/project-groups/', { name: NUL }, ['name']],
      ['cloud', 'POST', '/common/api/v4/drive/folders/', { name: NUL }, ['name']],
      ['cloud', 'POST', '/project/api/v3/projects/:project/gcp/register', { gcps: [{ name: NUL, x: 1, y: 2, z: 3 }] }, ['gcps', '0', 'name']],
      ['cloud', 'POST', '/project/api/v3/projects/:project/mtp/', { mtps: [{ name: NUL }] }, ['mtps', '0', 'name']],
      ['cloud', 'POST', '/project/api/v3/projects/:project/mark/register/', { marks: [{ gcp: NUL, photo: 'p.jpg', x: 1, y: 1 }] }, ['marks', '0', 'gcp']],
      ['cloud', 'POST', '/project/api/v3/projects/:project/inputs/bulk_register/', { input_file_keys: [NUL] }, ['input_file_keys', '0']],
      ['cloud', 'POST', '/project/api/v3/projects/:project/start_processing/', { tags: [NUL] }, ['tags', '0']],
    ];
    await run400(cases, /not allowed/);

    // The anonymous token calls, as a form (urlencoded and multipart) and in the query string.
    const tokenUrl = `${system.urls.cloud}/oauth2/token/`;
    const form = new FormData();
    for (const [k, v] of [['grant_type', 'client_credentials'], ['client_id', NUL], ['client_secret', 'x']]) form.set(k, v);
    for (const [label, init, field] of [
      ['urlencoded', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=a%00&client_secret=x' }, ['client_id']],
      ['multipart', { method: 'POST', body: form }, ['client_id']],
      ['json', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: 'x', client_secret: NUL }) }, ['client_secret']],
    ] as const) {
      const response = await fetch(tokenUrl, init as RequestInit);
      const body = await response.json();
      assert.equal(response.status, 400, `token ${label}: ${JSON.stringify(body)}`);
      assertNamed(body, [...field], `token ${label}`);
    }
    const query = await fetch(`${tokenUrl}?grant_type=client_credentials&client_id=a%00&client_secret=x`, { method: 'POST' });
    assert.equal(query.status, 400);
    assertNamed(await query.json(), ['querystring', 'client_id'], 'token query');
    assertNoServerErrors(system);
  });

  it('finding 3: "Infinity", "NaN", "1e400" and values beyond int4 in number fields are a 400 naming the field', async () => {
    const cases: Case[] = [];
    for (const value of ['Infinity', '-Infinity', 'NaN', '1e400', 2147483648, '99999999999']) {
      cases.push(['inspection', 'POST', '/v1/inspections/retry/', { inspection: value }, ['inspection']]);
      cases.push(['cloud', 'PATCH', '/project/api/v3/projects/:project/', { project_group_id: value }, ['project_group_id']]);
    }
    cases.push(
      ['inspection', 'POST', '/v1/assets/', { name: 'x', type: 'Infinity' }, ['type']],
      ['inspection', 'PATCH', '/v1/assets/:asset/', { type: '1e400' }, ['type']],
      ['inspection', 'POST', '/v1/assets/', { name: 'x', type: 1, latitude: 'Infinity' }, ['latitude']],
      ['inspection', 'POST', '/v1/inspections', { asset: 'Infinity' }, ['asset']],
      ['inspection', 'POST', '/v1/inspections', { asset: assetId, processing_parameters: { clipping_radius: 'Infinity' } }, ['processing_parameters', 'clipping_radius']],
      ['inspection', 'POST', '/v1/annotations/', { type: 'x', inspection: 'Infinity', photo_id: 0, data: { coords_2d: SQUARE } }, ['inspection']],
      ['inspection', 'POST', '/v1/annotations/', { type: 'x', inspection: inspectionId, photo_id: 'Infinity', data: { coords_2d: SQUARE } }, ['photo_id']],
      ['inspection', 'POST', '/v1/annotations/', { type: 'x', inspection: inspectionId, photo_id: 2147483648, data: { coords_2d: SQUARE } }, ['photo_id']],
      ['inspection', 'PATCH', '/v1/inspections/:id/', { status: 'Infinity' }, ['status']],
      ['inspection', 'PATCH', '/v1/inspections/:id/', { additional_statuses: { inventory: 'Infinity' } }, ['additional_statuses', 'inventory']],
      ['inspection', 'PATCH', '/v1/inspections/:id/', { base_plate_size: 'Infinity' }, ['base_plate_size']],
      ['inspection', 'PATCH', '/v1/inspections/:id/', { top_point_location: { x: 'Infinity', y: 0, z: 0 } }, ['top_point_location']],
      ['inspection', 'GET', '/v1/assets/?page=Infinity', undefined, ['querystring', 'page']],
      ['inspection', 'GET', '/v1/inspections/?page_size=1e400', undefined, ['querystring', 'page_size']],
      ['cloud', 'POST', '/project/api/v3/projects/', { name: 'x', project_group_id: 'Infinity' }, ['project_group_id']],
      ['cloud', 'GET', '/project/api/v3/projects/?page=Infinity', undefined, ['querystring', 'page']],
      ['cloud', 'GET', '/project/api/v3/project-groups/?page=Infinity', undefined, ['querystring', 'page']],
      ['cloud', 'POST', '/project/api/v3/projects/:project/gcp/register', { gcps: [{ name: 'g', x: 'Infinity', y: 2, z: 3 }] }, ['gcps', '0', 'x']],
      ['cloud', 'POST', '/project/api/v3/projects/:project/gcp/register', { gcps: [{ name: 'g', x: 1, y: 2, z: 3, xy_accuracy: '1e400' }] }, ['gcps', '0', 'xy_accuracy']],
    );
    await run400(cases);
    // Finite numbers written as strings are still accepted (coercion, as DRF does).
    const asset = await account.client.expect(201, 'POST', '/v1/assets/', { name: 'coerced', type: '3' });
    assert.equal(asset.type, 3);
    await account.client.expect(204, 'DELETE', `/v1/assets/${asset.id}/`);
    assertNoServerErrors(system);
  });

  it('finding 12: every text, list and free object has a documented bound (400 naming the field)', async () => {
    const long = (n: number) => 'x'.repeat(n);
    const manyKeys = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
    const cases: Case[] = [
      ['inspection', 'POST', '/v1/auth/token/', { username: long(256), password: 'x' }, ['username']],
      ['inspection', 'POST', '/v1/auth/token/', { username: 'x', password: long(1025) }, ['password']],
      ['inspection', 'POST', '/v1/assets/', { name: 'ok', type: 1, description: long(10_001) }, ['description']],
      ['inspection', 'POST', '/v1/assets/', { name: 'ok', type: 1, description: long(9 * 1024 * 1024) }, ['description']],
      ['inspection', 'PATCH', '/v1/assets/:asset/', { description: long(10_001) }, ['description']],
      ['inspection', 'POST', '/v1/inspections', { asset: assetId, description: long(10_001) }, ['description']],
      ['inspection', 'PATCH', '/v1/inspections/:id/', { description: long(10_001) }, ['description']],
      ['inspection', 'PATCH', '/v1/inspections/:id/', { inspection_date: `2024-01-01T10:00:00.${'1'.repeat(100)}Z` }, ['inspection_date']],
      ['inspection', 'POST', '/v1/inspections/retry/', { inspection: inspectionId, description: long(10_001) }, ['description']],
      ['inspection', 'POST', '/v1/annotations/', { type: 'x', inspection: inspectionId, photo_id: 0, description: long(10_001), data: { coords_2d: SQUARE } }, ['description']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ tags: Array.from({ length: 101 }, () => 't') }), ['annotations', '0', 'tags']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ geometry: { type: long(65), coordinates: [1, 2, 3] } }), ['annotations', '0', 'geometry', 'type']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ extension: manyKeys }), ['annotations', '0', 'extension']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ extension: { k: long(10_001) } }), ['annotations', '0', 'extension', 'k']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ extension: { k: Array.from({ length: 1001 }, () => 1) } }), ['annotations', '0', 'extension', 'k']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ extension: nested(5) }), ['annotations', '0', 'extension', 'k', 'k', 'k', 'k']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ properties: { ...manyKeys } }), ['annotations', '0', 'properties']],
      ['inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ properties: { note: long(10_001) } }), ['annotations', '0', 'properties', 'note']],
      ['cloud', 'POST', '/project/api/v3/projects/:project/start_processing/', { engine: long(65) }, ['engine']],
      ['cloud', 'POST', '/project/api/v3/projects/:project/start_processing/', { tags: Array.from({ length: 101 }, () => 'nadir') }, ['tags']],
      ['cloud', 'PUT', '/common/api/v4/drive/move_batch/', { owner_uuid: cloud.orgUuid, source_nodes: [{ type: long(65), uuid: crypto.randomUUID() }], target_type: 'organization', target_uuid: cloud.orgUuid }, ['source_nodes', '0', 'type']],
    ];
    await run400(cases);
    // The spec's 1..255 names keep their messages.
    const name = await send('inspection', 'POST', '/v1/assets/', { name: long(256), type: 1 });
    assert.deepEqual(name.body, { name: ['Must NOT have more than 255 characters.'] });
    const token = await fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'x', client_secret: long(1025) }) });
    assert.equal(token.status, 400);
    assertNamed(await token.json(), ['client_secret'], 'token secret');
    // Nesting beyond 32 levels of a free value (geometry.coordinates is free JSON) is a 400 too.
    const deep = await send('inspection', 'POST', '/v1/inspections/:id/measurements/', measurement({ geometry: { type: 'Point', coordinates: JSON.parse('['.repeat(40) + ']'.repeat(40)) } }));
    assert.equal(deep.status, 400, JSON.stringify(deep.body).slice(0, 300));
    assertNoServerErrors(system);
  });

  it('finding 15: only canonical decimal path ids address a record; the others are 404 on both services', async () => {
    const spare = await account.client.expect(201, 'POST', '/v1/assets/', { name: 'Spare', type: 1 });
    const forms = (id: number) => [
      `0x${id.toString(16)}`,
      `${id}e0`,
      `+${id}`,
      `${id}.0`,
      `0${id}`,
      `%20${id}`,
      `${id}%20`,
      `${id}abc`,
      `${id}%00`,
      '0',
      '-1',
      '2147483648',
      '99999999999',
      'Infinity',
    ];
    const paths: [Service, string, number, string][] = [
      ['inspection', 'GET', inspectionId, '/v1/inspections/{}/'],
      ['inspection', 'PATCH', inspectionId, '/v1/inspections/{}/'],
      ['inspection', 'GET', inspectionId, '/v1/inspections/{}/measurements/'],
      ['inspection', 'GET', assetId, '/v1/assets/{}/'],
      ['inspection', 'DELETE', spare.id, '/v1/assets/{}/'],
      ['inspection', 'GET', 1, '/v1/annotations/{}/'],
      ['cloud', 'GET', projectId, '/project/api/v3/projects/{}/'],
      ['cloud', 'DELETE', projectId, '/project/api/v3/projects/{}/'],
      ['cloud', 'GET', groupId, '/project/api/v3/project-groups/{}/'],
    ];
    for (const [service, method, id, template] of paths) {
      for (const form of forms(id)) {
        const path = template.replace('{}', form);
        const response = await send(service, method, path, method === 'PATCH' ? { name: 'renamed' } : undefined);
        assert.equal(response.status, 404, `${service} ${method} ${path}: ${JSON.stringify(response.body).slice(0, 300)}`);
        assert.equal(response.body.code, 'not_found', `${method} ${path}`);
      }
    }
    // A measurement's annotation_id is a UUID: anything else names nothing.
    for (const bad of ['x'.repeat(65), 'abc', '%00']) {
      const response = await send('inspection', 'DELETE', `/v1/inspections/:id/measurements/${bad}/`, undefined);
      assert.equal(response.status, 404, `measurement ${bad}: ${JSON.stringify(response.body)}`);
    }
    // Nothing was deleted or changed; the canonical ids still address the records.
    assert.equal((await account.client.expect(200, 'GET', `/v1/assets/${spare.id}/`)).name, 'Spare');
    assert.equal((await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}`)).name, 'Flight');
    assert.equal((await cloud.call('GET', `/project/api/v3/projects/${projectId}/`, undefined, { expect: 200 })).name, 'P');
    await cloud.call('GET', `/project/api/v3/project-groups/${groupId}/`, undefined, { expect: 200 });
    assertNoServerErrors(system);
  });
});
