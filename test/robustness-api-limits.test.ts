// Issue 27, findings 3 and 17 (DELETE part): the measurements list pages as every other list and
// an inspection holds a bounded number of measurements and annotations (a creation beyond is a 400
// naming the field and stores nothing, also when creations race); the cloud's GCP, MTP and mark
// lists, which answer everything at once, are bounded by caps per project; a DELETE that
// declares a JSON body and sends none is accepted by every DELETE route of both services.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { cloudClient } from './helpers/cloud-api.ts';
import { assertNoServerErrors, processedInspection } from './helpers/inspection-fixtures.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';

const P = '/project/api/v3/projects';
// The cloud's caps per project (docs/cloud-service.md, "Limits").
const MAX_POINTS_PER_PROJECT = 10_000;
const MAX_MARKS_PER_PROJECT = 100_000;
const MAX_MEASUREMENTS = 30;
const MAX_ANNOTATIONS = 3;
const points = (n: number) => ({ annotations: Array.from({ length: n }, (_, i) => ({ properties: { name: `p${i}` }, geometry: { type: 'Point', coordinates: [i, 0, 0] } })) });
const SQUARE = [
  [0.1, 0.1],
  [0.1, 0.2],
  [0.2, 0.2],
  [0.2, 0.1],
];

describe('robustness: list paging and record caps (issue 27)', () => {
  let system: TestSystem;
  let account: TestAccount;
  let inspectionId: number;

  before(async () => {
    system = await startTestSystem({ inspectionMaxMeasurements: MAX_MEASUREMENTS, inspectionMaxAnnotations: MAX_ANNOTATIONS } as never);
    account = await system.newAccount();
    const asset = await account.client.createAsset({ name: 'Tower', type: 2 });
    inspectionId = (await account.client.createInspection({ asset: asset.id, name: 'Flight' })).id;
  });
  after(async () => {
    await system?.stop();
  });

  const base = () => `/v1/inspections/${inspectionId}/measurements/`;
  const count = async () => (await account.client.expect(200, 'GET', base())).results.length;

  it('the measurements list pages as every other list: page/page_size give the envelope, beyond 1000 is a 400, past the last page a 404', async () => {
    await account.client.expect(201, 'POST', base(), points(25));
    const all = await account.client.expect(200, 'GET', base());
    assert.deepEqual(Object.keys(all), ['results'], 'unpaged: the spec\'s {results}');
    assert.equal(all.results.length, 25);

    const first = await account.client.expect(200, 'GET', `${base()}?page_size=10`);
    assert.equal(first.count, 25);
    assert.equal(first.results.length, 10);
    assert.equal(first.previous, null);
    assert.match(first.next, /page=2/);
    assert.deepEqual(
      first.results.map((m: any) => m.id),
      all.results.slice(0, 10).map((m: any) => m.id),
      'pages follow the order of the whole list',
    );
    const last = await account.client.expect(200, 'GET', `${base()}?page=3&page_size=10`);
    assert.deepEqual(
      last.results.map((m: any) => m.id),
      all.results.slice(20).map((m: any) => m.id),
    );
    assert.equal(last.next, null);
    const defaultSize = await account.client.expect(200, 'GET', `${base()}?page=1`);
    assert.deepEqual([defaultSize.count, defaultSize.results.length, defaultSize.next], [25, 25, null], 'page_size defaults to 100');

    const tooLarge = await account.client.request('GET', `${base()}?page_size=1001`);
    assert.equal(tooLarge.status, 400, JSON.stringify(tooLarge.body));
    assert.ok(tooLarge.body.querystring?.page_size, JSON.stringify(tooLarge.body));
    // The same refusal as another list of the inspection.
    assert.equal((await account.client.request('GET', `/v1/inspections/${inspectionId}/annotations/?page_size=1001`)).status, 400);
    const past = await account.client.request('GET', `${base()}?page=4&page_size=10`);
    assert.equal(past.status, 404);
    assert.equal(past.body.code, 'not_found');
  });

  it('the share tokens list, which grows with every report link, pages too', async () => {
    const tokens = `/v1/inspections/${inspectionId}/share_tokens/`;
    for (const label of ['a', 'b', 'c']) await account.client.expect(201, 'POST', tokens, { label });
    assert.equal((await account.client.expect(200, 'GET', tokens)).length, 3, 'unpaged: the plain array');
    const page = await account.client.expect(200, 'GET', `${tokens}?page=2&page_size=2`);
    assert.deepEqual([page.count, page.results.map((t: any) => t.label), page.next], [3, ['c'], null]);
    assert.equal((await account.client.request('GET', `${tokens}?page_size=1001`)).status, 400);
  });

  it('measurements beyond the cap are refused whole (400 on annotations), also when creations race', async () => {
    const held = await count(); // 25 from the test above
    const refused = await account.client.request('POST', base(), points(MAX_MEASUREMENTS - held + 1));
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(refused.body.annotations[0], new RegExp(`at most ${MAX_MEASUREMENTS} per inspection`));
    assert.equal(await count(), held, 'nothing of the refused body was stored');

    // Ten single creations at once for the room left: exactly that many pass.
    const room = MAX_MEASUREMENTS - held;
    const statuses = await Promise.all(Array.from({ length: 10 }, () => account.client.request('POST', base(), points(1)).then((r) => r.status)));
    assert.equal(statuses.filter((s) => s === 201).length, room, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 400).length, 10 - room, statuses.join(','));
    assert.equal(await count(), MAX_MEASUREMENTS);

    // A deletion makes room again.
    const [oldest] = (await account.client.expect(200, 'GET', `${base()}?page_size=1`)).results;
    await account.client.expect(204, 'DELETE', `${base()}${oldest.id}/`);
    await account.client.expect(201, 'POST', base(), points(1));
    assertNoServerErrors(system);
  });

  it('annotations beyond the cap are refused (400 on inspection), also when creations race', async () => {
    const { inspection, cameras } = await processedInspection(account);
    const annotation = () => ({ type: 'Rust', inspection: inspection.id, photo_id: cameras[0].photo_id, data: { coords_2d: SQUARE } });
    const listed = async () => (await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/annotations/`)).length;
    await account.client.expect(201, 'POST', '/v1/annotations/', annotation());
    const statuses = await Promise.all(Array.from({ length: 6 }, () => account.client.request('POST', '/v1/annotations/', annotation()).then((r) => r.status)));
    assert.equal(statuses.filter((s) => s === 201).length, MAX_ANNOTATIONS - 1, statuses.join(','));
    assert.equal(await listed(), MAX_ANNOTATIONS);
    const refused = await account.client.request('POST', '/v1/annotations/', annotation());
    assert.equal(refused.status, 400);
    assert.match(refused.body.inspection[0], new RegExp(`holds ${MAX_ANNOTATIONS} annotations; at most ${MAX_ANNOTATIONS} per inspection`));
    assert.equal(await listed(), MAX_ANNOTATIONS);
    assertNoServerErrors(system);
  });

  it('cloud: GCPs and MTPs beyond 10,000 per project, marks beyond 100,000, are refused whole (400 on the list)', async () => {
    const cloud = await cloudClient(system);
    const project = await cloud.call('POST', `${P}/`, { name: 'Points' }, { expect: 201 });
    const photos = await Promise.all(Array.from({ length: 11 }, (_, seed) => generateGeotaggedJpeg({ latitude: 46.5, longitude: 6.5, altitude: 400, seed, width: 64, height: 48 })));
    const keys = await Promise.all(photos.map((photo, i) => cloud.put(project, `p${i}.jpg`, photo)));
    await cloud.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: keys }, { expect: 200 });
    const gcp = (name: string) => ({ name, x: 1, y: 2, z: 3 });
    const names = Array.from({ length: MAX_POINTS_PER_PROJECT }, (_, i) => `G${i}`);
    await cloud.call('POST', `${P}/${project.id}/gcp/register`, { gcps: names.map(gcp) }, { expect: 201 });

    const gcps = await cloud.call('POST', `${P}/${project.id}/gcp/register`, { gcps: [gcp('G0'), gcp('one more')] }, { expect: 400 });
    assert.match(gcps.gcps[0], /at most 10000 GCPs and MTPs/);
    const mtps = await cloud.call('POST', `${P}/${project.id}/mtp/`, { mtps: [{ name: 'M1' }] }, { expect: 400 });
    assert.match(mtps.mtps[0], /at most 10000 GCPs and MTPs/);
    await cloud.call('POST', `${P}/${project.id}/gcp/register`, { gcps: [{ ...gcp('G0'), z: 9 }] }, { expect: 201 }); // replacing is fine
    const listed = await cloud.call('GET', `${P}/${project.id}/gcp/`, undefined, { expect: 200 });
    assert.equal(listed.gcps.length, MAX_POINTS_PER_PROJECT, 'nothing of the refused calls was stored');

    // Marks: every point in 10 photos fills the project; one more photo is refused whole.
    const marks = (photo: string) => names.map((name) => ({ gcp: name, photo, x: 1, y: 1 }));
    // At most 10,000 marks per call (issue 40 §5: the body of 100,000 held the event loop): a photo's per call.
    const tooMany = await cloud.call('POST', `${P}/${project.id}/mark/register/`, { marks: [...marks(keys[0]), ...marks(keys[1]).slice(0, 1)] }, { expect: 400 });
    assert.ok(JSON.stringify(tooMany).includes('marks'), JSON.stringify(tooMany).slice(0, 300));
    for (const key of keys.slice(0, 10)) await cloud.call('POST', `${P}/${project.id}/mark/register/`, { marks: marks(key) }, { expect: 201 });
    const refused = await cloud.call('POST', `${P}/${project.id}/mark/register/`, { marks: marks(keys[10]).slice(0, 2) }, { expect: 400 });
    assert.match(refused.marks[0], /at most 100000 marks/);
    assert.equal((await cloud.call('GET', `${P}/${project.id}/mark/`, undefined, { expect: 200 })).marks.length, MAX_MARKS_PER_PROJECT);
  });

  it('every DELETE route of both services accepts Content-Type: application/json with no body', async () => {
    const c = account.client;
    const asset = await c.createAsset({ name: 'Spare', type: 2 });
    const inspection = await c.createInspection({ asset: asset.id, name: 'Spare' });
    const [measurement] = (await c.expect(201, 'POST', `/v1/inspections/${inspection.id}/measurements/`, points(1))).annotations;
    const share = await c.expect(201, 'POST', `/v1/inspections/${inspection.id}/share_tokens/`, {});
    const cloud = await cloudClient(system);
    const project = await cloud.call('POST', `${P}/`, { name: 'P' }, { expect: 201 });
    const group = await cloud.call('POST', '/project/api/v3/project-groups/', { name: 'G' }, { expect: 201 });
    const inspectionDeletes = [
      `/v1/inspections/${inspection.id}/measurements/${measurement.id}/`,
      `/v1/inspections/${inspection.id}/share_tokens/${share.id}/`,
      `/v1/inspections/${inspection.id}/`,
      `/v1/assets/${asset.id}/`,
    ];
    // No body at all, and an announced empty one (Content-Length: 0), as clients send them.
    for (const [i, path] of inspectionDeletes.entries()) {
      const response = await c.request('DELETE', path, undefined, { 'content-type': 'application/json', ...(i % 2 ? { 'content-length': '0' } : {}) });
      assert.equal(response.status, 204, `DELETE ${path}: ${JSON.stringify(response.body)}`);
    }
    for (const path of [`/project/api/v3/projects/${project.id}/`, `/project/api/v3/project-groups/${group.id}/`]) {
      await cloud.call('DELETE', path, undefined, { expect: 204, headers: { 'content-type': 'application/json; charset=utf-8' } });
    }
    assertNoServerErrors(system);
  });
});
