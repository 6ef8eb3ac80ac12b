// Annotations: creation rules (photo_id a camera of the inspection, the coords_2d rules, links,
// severity, generated number), get, PUT, PATCH, DELETE, list per inspection, types, ?coords_3d=true.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection } from './helpers/inspection-fixtures.ts';

const RECT = [
  [0.1, 0.2],
  [0.4, 0.2],
  [0.4, 0.6],
  [0.1, 0.6],
];

describe('inspection service: annotations', () => {
  let system: TestSystem;
  let account: TestAccount;
  let inspectionId: number;
  let photoId: number;
  let otherInspectionId: number;
  let otherPhotoId: number;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    const [one, two] = await Promise.all([processedInspection(account), processedInspection(account)]);
    inspectionId = one.inspection.id;
    photoId = one.cameras[0].photo_id;
    otherInspectionId = two.inspection.id;
    otherPhotoId = two.cameras[0].photo_id;
  });
  after(async () => {
    await system?.stop();
  });

  const body = (extra: Record<string, unknown> = {}) => ({ type: 'Corrosion', inspection: inspectionId, photo_id: photoId, data: { coords_2d: RECT }, ...extra });
  const create = (extra: Record<string, unknown> = {}, query = '') => account.client.request('POST', `/v1/annotations/${query}`, body(extra));

  it('creates with defaults (severity 0, no links, visible, not public) and numbers 1, 2, 3 per inspection', async () => {
    const first = await create();
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const a = first.body;
    assert.equal(a.number, 1);
    assert.equal(a.severity_level, 0);
    assert.deepEqual(a.data, { coords_2d: RECT, links: [] });
    assert.equal(a.user, account.userId);
    assert.equal(a.photo_id, photoId);
    assert.equal(a.inspection, inspectionId);
    assert.equal(a.public, false);
    assert.equal(a.is_visible, true);
    assert.equal(a.coords_3d, null);
    assert.equal(a.name, null);
    assert.equal((await create({ name: 'second', severity_level: 5 })).body.number, 2);
    assert.equal((await create()).body.number, 3);
    const elsewhere = await account.client.request('POST', '/v1/annotations/', { ...body(), inspection: otherInspectionId, photo_id: otherPhotoId });
    assert.equal(elsewhere.body.number, 1, 'numbers are per inspection');
    const list = await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/annotations/`);
    assert.deepEqual(
      list.map((x: any) => x.number),
      [1, 2, 3],
    );
  });

  it('photo_id must be the photo_id of a camera of the inspection', async () => {
    const foreign = await create({ photo_id: otherPhotoId });
    assert.equal(foreign.status, 400);
    assert.ok(foreign.body.photo_id, JSON.stringify(foreign.body));
    assert.equal((await create({ photo_id: 2147483647 })).status, 400);
    const unknownInspection = await create({ inspection: 999999 });
    assert.equal(unknownInspection.status, 400);
    assert.ok(unknownInspection.body.inspection);
  });

  // The four coords_2d rules, then the other limits of the annotation.
  const invalid: [string, Record<string, unknown>, string][] = [
    ['rule 1: three points', { data: { coords_2d: RECT.slice(0, 3) } }, 'data'],
    ['rule 1: five points', { data: { coords_2d: [...RECT, RECT[0]] } }, 'data'],
    ['rule 1: a point of three numbers', { data: { coords_2d: [[0.1, 0.2, 0], ...RECT.slice(1)] } }, 'data'],
    ['rule 1: a point that is not numbers', { data: { coords_2d: [['a', 'b'], ...RECT.slice(1)] } }, 'data'],
    ['rule 1: coords_2d missing', { data: {} }, 'data'],
    ['rule 2: a value below 0', { data: { coords_2d: [[-0.1, 0.2], [0.4, 0.2], [0.4, 0.6], [-0.1, 0.6]] } }, 'data'],
    ['rule 2: a value above 1', { data: { coords_2d: [[0.1, 0.2], [1.01, 0.2], [1.01, 0.6], [0.1, 0.6]] } }, 'data'],
    ['rule 2: not a rectangle (trapezoid)', { data: { coords_2d: [[0.1, 0.2], [0.4, 0.2], [0.5, 0.6], [0.1, 0.6]] } }, 'data'],
    ['rule 2: a corner twice', { data: { coords_2d: [[0.1, 0.2], [0.4, 0.2], [0.4, 0.2], [0.1, 0.6]] } }, 'data'],
    ['rule 2: zero width', { data: { coords_2d: [[0.1, 0.2], [0.1, 0.2], [0.1, 0.6], [0.1, 0.6]] } }, 'data'],
    ['rule 2: a rotated square', { data: { coords_2d: [[0.5, 0.1], [0.9, 0.5], [0.5, 0.9], [0.1, 0.5]] } }, 'data'],
    ['rule 3: a link that is not a URL', { data: { coords_2d: RECT, links: [{ link: 'not a url', description: 'x' }] } }, 'data'],
    ['rule 3: a javascript: link', { data: { coords_2d: RECT, links: [{ link: 'javascript:alert(1)', description: 'x' }] } }, 'data'],
    ['rule 3: a link without link', { data: { coords_2d: RECT, links: [{ description: 'x' }] } }, 'data'],
    ['severity_level 6', { severity_level: 6 }, 'severity_level'],
    ['severity_level -1', { severity_level: -1 }, 'severity_level'],
    ['severity_level 2.5', { severity_level: 2.5 }, 'severity_level'],
    ['empty type', { type: '' }, 'type'],
    ['type of 256 characters', { type: 'x'.repeat(256) }, 'type'],
    ['empty name', { name: '' }, 'name'],
    ['name of 256 characters', { name: 'x'.repeat(256) }, 'name'],
    ['photo_id -1', { photo_id: -1 }, 'photo_id'],
    ['photo_id 2147483648', { photo_id: 2147483648 }, 'photo_id'],
    ['photo_id missing', { photo_id: undefined }, 'photo_id'],
  ];
  for (const [label, change, field] of invalid) {
    it(`refuses ${label} (400 naming ${field})`, async () => {
      const response = await create(change);
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.ok(response.body[field], `names ${field}: ${JSON.stringify(response.body)}`);
    });
  }

  it('accepts the corners in any order, the limits themselves, links, and type/name of 255 characters', async () => {
    const ok = await create({
      data: {
        coords_2d: [
          [1, 1],
          [0, 0],
          [1, 0],
          [0, 1],
        ],
        links: [{ link: 'https://example.org/ticket/1', description: 'ticket' }],
      },
      severity_level: 5,
      type: 't'.repeat(255),
      name: 'n'.repeat(255),
      description: 'whole photo',
      public: true,
      is_visible: false,
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.data.links, [{ link: 'https://example.org/ticket/1', description: 'ticket' }]);
    assert.equal(ok.body.public, true);
    assert.equal(ok.body.is_visible, false);
    assert.equal((await create({ photo_id: 0 })).status, 400, 'photo_id 0 is in range but not a camera');
  });

  it('gets, PUTs (all fields overwritten), PATCHes and deletes; numbers are not reused', async () => {
    const created = (await create({ name: 'n', severity_level: 3, description: 'd', public: true, data: { coords_2d: RECT, links: [{ link: 'http://a.example', description: 'a' }] } })).body;
    assert.deepEqual(await account.client.expect(200, 'GET', `/v1/annotations/${created.id}/`), created);
    const put = await account.client.expect(200, 'PUT', `/v1/annotations/${created.id}/`, { type: 'Crack', inspection: inspectionId, data: { coords_2d: [[0, 0], [0.5, 0], [0.5, 0.5], [0, 0.5]] } });
    assert.equal(put.type, 'Crack');
    assert.equal(put.name, null, 'reset');
    assert.equal(put.severity_level, 0, 'reset');
    assert.equal(put.description, null, 'reset');
    assert.equal(put.public, false, 'reset');
    assert.deepEqual(put.data.links, [], 'links reset with data');
    assert.equal(put.number, created.number, 'number kept');
    assert.equal(put.photo_id, photoId, 'photo kept');
    const missing = await account.client.request('PUT', `/v1/annotations/${created.id}/`, { type: 'Crack', inspection: inspectionId });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.data, ['This field is required.']);
    const moved = await account.client.request('PUT', `/v1/annotations/${created.id}/`, { type: 'Crack', inspection: otherInspectionId, data: { coords_2d: RECT } });
    assert.equal(moved.status, 400);
    assert.ok(moved.body.inspection);
    const badRect = await account.client.request('PATCH', `/v1/annotations/${created.id}/`, { data: { coords_2d: [[0, 0], [1, 1], [0, 1], [1, 0.5]] } });
    assert.equal(badRect.status, 400);
    const patched = await account.client.expect(200, 'PATCH', `/v1/annotations/${created.id}/`, { severity_level: 4, is_visible: false, coords_3d: { x: 1, y: 2, z: 3 } });
    assert.equal(patched.severity_level, 4);
    assert.equal(patched.is_visible, false);
    assert.deepEqual(patched.coords_3d, { x: 1, y: 2, z: 3 });
    assert.equal(patched.type, 'Crack', 'untouched');
    assert.equal((await account.client.request('PATCH', `/v1/annotations/${created.id}/`, { severity_level: 9 })).status, 400);
    const removed = await account.client.request('DELETE', `/v1/annotations/${created.id}/`);
    assert.equal(removed.status, 204);
    assert.equal((await account.client.request('GET', `/v1/annotations/${created.id}/`)).status, 404);
    assert.equal((await account.client.request('DELETE', `/v1/annotations/${created.id}/`)).status, 404);
    assert.equal((await create()).body.number, created.number + 1, 'numbers keep counting');
  });

  it('?coords_3d=true stores the computed coords_3d: null until the inspection has a point cloud', async () => {
    const computed = await create({ coords_3d: { x: 9, y: 9, z: 9 } }, '?coords_3d=true');
    assert.equal(computed.status, 201);
    assert.equal(computed.body.coords_3d, null, 'no engine produces a point cloud yet');
    const given = await create({ coords_3d: { x: 9, y: 9, z: 9 } });
    assert.deepEqual(given.body.coords_3d, { x: 9, y: 9, z: 9 }, 'without the flag the body value is stored');
    assert.equal((await create({}, '?coords_3d=maybe')).status, 400);
  });

  it('lists types: the user\'s distinct types plus the defaults', async () => {
    await create({ type: 'Bird nest' });
    await create({ type: 'Bird nest' });
    const types = await account.client.expect(200, 'GET', '/v1/annotations/types/');
    const names = types.map((t: any) => t.type);
    assert.ok(names.includes('Bird nest'));
    assert.equal(names.filter((n: string) => n === 'Bird nest').length, 1, 'distinct');
    for (const d of ['Corrosion', 'Crack', 'Other']) assert.ok(names.includes(d), d);
    const stranger = await system.newAccount();
    const theirs = (await stranger.client.expect(200, 'GET', '/v1/annotations/types/')).map((t: any) => t.type);
    assert.ok(!theirs.includes('Bird nest'), "another account's types are not listed");
    assert.ok(theirs.includes('Corrosion'));
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
