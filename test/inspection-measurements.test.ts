// Measurements: GET {results}, POST {annotations: [...]} (201), PUT and PATCH on
// /v1/inspections/{id}/measurements/{annotation_id}/, DELETE, geometry validation, computed bbox,
// string (UUID) ids.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';

const POLYGON = {
  type: 'Polygon',
  coordinates: [
    [
      [0, 0, 10],
      [4, 0, 10],
      [4, 3, 12],
      [0, 3, 12],
      [0, 0, 10],
    ],
  ],
};
const LINE = {
  type: 'LineString',
  coordinates: [
    [1, 2, 3],
    [4, 6, 3],
  ],
};
const POINT = { type: 'Point', coordinates: [5, -1, 2.5] };
const PROPERTIES = { name: 'Base', description: 'plate', color: '#ff0000', color_fill: '#00ff0080', visible: true, camera_position: [1, 2, 3] };

describe('inspection service: measurements', () => {
  let system: TestSystem;
  let account: TestAccount;
  let inspectionId: number;
  let base: string;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    const asset = await account.client.createAsset({ name: 'M', type: 3 });
    inspectionId = (await account.client.createInspection({ asset: asset.id })).id;
    base = `/v1/inspections/${inspectionId}/measurements/`;
  });
  after(async () => {
    await system?.stop();
  });

  it('creates several at once (201 {annotations}) with string ids and computed bboxes; lists them as {results}', async () => {
    assert.deepEqual(await account.client.expect(200, 'GET', base), { results: [] });
    const created = await account.client.expect(201, 'POST', base, {
      annotations: [
        { properties: PROPERTIES, tags: ['area'], geometry: { ...POLYGON, bbox: [9, 9, 9, 9, 9, 9] } },
        { properties: { name: 'Height' }, tags: [], geometry: LINE },
        { properties: {}, tags: ['spot'], geometry: POINT },
      ],
    });
    assert.equal(created.annotations.length, 3);
    const [polygon, line, point] = created.annotations;
    assert.match(polygon.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(polygon.geometry.bbox, [0, 0, 10, 4, 3, 12], 'computed, not the client\'s');
    assert.deepEqual(line.geometry.bbox, [1, 2, 3, 4, 6, 3]);
    assert.deepEqual(point.geometry.bbox, [5, -1, 2.5, 5, -1, 2.5]);
    assert.deepEqual(polygon.properties, PROPERTIES);
    assert.deepEqual(polygon.tags, ['area']);
    assert.equal(polygon.entity_type, 'inspection');
    assert.equal(polygon.entity_id, inspectionId);
    assert.deepEqual(Object.keys(polygon.extension), ['computed'], 'only the service\'s numbers (inspection-measurement-quantities.test.ts)');
    assert.ok(polygon.created && polygon.modified);
    const listed = await account.client.expect(200, 'GET', base);
    assert.deepEqual(
      listed.results.map((m: any) => m.id),
      [polygon.id, line.id, point.id],
    );
  });

  const invalid: [string, unknown, RegExp][] = [
    ['an unknown geometry type', { type: 'Circle', coordinates: [0, 0, 0] }, /type/],
    ['a Point of two numbers', { type: 'Point', coordinates: [1, 2] }, /coordinates/],
    ['a Point with a string', { type: 'Point', coordinates: [1, 2, 'x'] }, /coordinates/],
    ['a LineString of one point', { type: 'LineString', coordinates: [[1, 2, 3]] }, /coordinates/],
    ['a LineString with a 2D point', { type: 'LineString', coordinates: [[1, 2, 3], [4, 5]] }, /coordinates/],
    ['a Polygon whose ring is open', { type: 'Polygon', coordinates: [[[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]] }, /coordinates/],
    ['a Polygon ring of 3 points', { type: 'Polygon', coordinates: [[[0, 0, 0], [1, 0, 0], [0, 0, 0]]] }, /coordinates/],
    ['a Polygon without rings', { type: 'Polygon', coordinates: [] }, /coordinates/],
    ['a geometry without coordinates', { type: 'Point' }, /coordinates/],
  ];
  for (const [label, geometry, field] of invalid) {
    it(`refuses ${label} (400, nothing created)`, async () => {
      const before = (await account.client.expect(200, 'GET', base)).results.length;
      const response = await account.client.request('POST', base, { annotations: [{ properties: {}, tags: [], geometry: POINT }, { properties: {}, tags: [], geometry }] });
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.match(JSON.stringify(response.body.annotations['1'].geometry), field);
      assert.equal((await account.client.expect(200, 'GET', base)).results.length, before, 'all or nothing');
    });
  }

  it('refuses invalid properties and bodies', async () => {
    for (const [bodyValue, fieldPath] of [
      [{}, 'annotations'],
      [{ annotations: [] }, 'annotations'],
      [{ annotations: [{ properties: {}, tags: [] }] }, 'geometry'],
      [{ annotations: [{ properties: { color: 'red' }, tags: [], geometry: POINT }] }, 'color'],
      [{ annotations: [{ properties: { visible: 'perhaps' }, tags: [], geometry: POINT }] }, 'visible'],
      [{ annotations: [{ properties: { camera_position: [1, 2] }, tags: [], geometry: POINT }] }, 'camera_position'],
      [{ annotations: [{ properties: {}, tags: { one: 1 }, geometry: POINT }] }, 'tags'],
      [{ annotations: [{ properties: {}, tags: [{}], geometry: POINT }] }, 'tags'],
    ] as const) {
      const response = await account.client.request('POST', base, bodyValue);
      assert.equal(response.status, 400, JSON.stringify(bodyValue));
      assert.match(JSON.stringify(response.body), new RegExp(fieldPath), JSON.stringify(response.body));
    }
  });

  it('PUT needs properties, tags and geometry; PATCH any of them; DELETE answers 204', async () => {
    const [m] = (await account.client.expect(201, 'POST', base, { annotations: [{ properties: { name: 'x' }, tags: ['a'], geometry: LINE }] })).annotations;
    const put = await account.client.expect(200, 'PUT', `${base}${m.id}/`, { properties: { name: 'y' }, tags: [], geometry: POINT });
    assert.deepEqual(put.properties, { name: 'y' });
    assert.deepEqual(put.tags, []);
    assert.equal(put.geometry.type, 'Point');
    assert.ok(new Date(put.modified) >= new Date(m.modified));
    assert.equal(put.created, m.created);
    const incomplete = await account.client.request('PUT', `${base}${m.id}/`, { properties: {} });
    assert.equal(incomplete.status, 400);
    assert.ok(incomplete.body.tags && incomplete.body.geometry, JSON.stringify(incomplete.body));
    const patched = await account.client.expect(200, 'PATCH', `${base}${m.id}/`, { tags: ['b'] });
    assert.deepEqual(patched.tags, ['b']);
    assert.equal(patched.geometry.type, 'Point', 'untouched');
    const badGeometry = await account.client.request('PATCH', `${base}${m.id}/`, { geometry: { type: 'Polygon', coordinates: [[[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]] } });
    assert.equal(badGeometry.status, 400);
    assert.ok(badGeometry.body.geometry.coordinates);
    assert.equal((await account.client.request('DELETE', `${base}${m.id}/`)).status, 204);
    assert.equal((await account.client.request('PATCH', `${base}${m.id}/`, { tags: [] })).status, 404);
    assert.equal((await account.client.request('DELETE', `${base}${m.id}/`)).status, 404);
    assert.equal((await account.client.request('DELETE', `${base}not-a-uuid/`)).status, 404);
    // A measurement is reached only through its own inspection.
    const other = await account.client.createInspection({ asset: (await account.client.createAsset({ name: 'N', type: 2 })).id });
    const [kept] = (await account.client.expect(201, 'POST', base, { annotations: [{ geometry: POINT }] })).annotations;
    assert.equal((await account.client.request('PATCH', `/v1/inspections/${other.id}/measurements/${kept.id}/`, { tags: [] })).status, 404);
    assert.deepEqual(kept.properties, {}, 'properties default to {}');
    assert.deepEqual(kept.tags, [], 'tags default to []');
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
