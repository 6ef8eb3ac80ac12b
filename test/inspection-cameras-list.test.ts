// GET /v1/inspections/{id}/cameras/ streamed page by page from the records' JSON texts that a trigger
// keeps (inspections/camera-list.ts, camera-list-json.ts): the body is the same, byte for byte, as
// the answer built whole was (one json_agg of every camera, parsed, then serialized by Fastify's
// compiled serializer of the route's response schema), after inserts and updates, across page
// boundaries, with another inspection's cameras interleaved, and with the values whose text is
// easy to get wrong (nulls, the default quaternion, tiny, huge and negative-zero floats, escapes).
// The paged answer is unchanged too.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import fastJsonStringify from 'fast-json-stringify';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { ListOf } from '../src/inspection/http/lists.ts';
import { Camera } from '../src/inspection/inspection.schemas.ts';
import { CAMERA_PAGE_ROWS } from '../src/inspection/inspections/camera-list.ts';

/** The answer as it was built before streaming: the whole list as one JSON text, parsed, serialized by the response schema. */
async function wholeListBody(db: Kysely<unknown>, inspectionId: number): Promise<string> {
  const { rows } = await sql<{ body: string }>`
    select coalesce(json_agg(json_build_object(
      'id', id, 'photo_id', id, 'filename', filename,
      'location', json_build_object('latitude', latitude, 'longitude', longitude, 'elevation', elevation),
      'mission', mission, 'dimensions', json_build_object('x', width, 'y', height),
      'quaternions', case when quaternion is null or jsonb_typeof(quaternion) = 'null' then '[1, 0, 0, 0]'::jsonb else quaternion end,
      'is_master', is_master, 'is_reviewed', is_reviewed, 'is_visible', is_visible
    ) order by id), '[]')::text as body
    from inspection.cameras where inspection_id = ${inspectionId}`.execute(db);
  return fastJsonStringify(ListOf(Camera) as object)(JSON.parse(rows[0].body));
}

describe('inspection service: the cameras list, streamed', () => {
  let system: TestSystem;
  let account: TestAccount;
  let inspection: number;
  let other: number;
  let empty: number;
  const db = () => system.database.db as Kysely<unknown>;

  async function get(path: string) {
    const response = await fetch(`${system.urls.inspection}${path}`, {
      headers: { 'x-api-key': account.apiKey, authorization: `Bearer ${account.client.token}`, 'vendor-organization-uuid': account.organizationUuid! },
    });
    return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
  }

  async function insertCameras(inspectionId: number, from: number, to: number) {
    await sql`
      insert into inspection.cameras (inspection_id, image_key, filename, latitude, longitude, elevation, width, height, quaternion, mission, is_master, is_reviewed, is_visible)
      select ${inspectionId}, 'uploads/k/' || ${inspectionId} || '/' || g, 'IMG_' || lpad(g::text, 6, '0') || '.JPG',
             case when g % 7 = 0 then null else 55.7 + g * 1e-6 end,
             case when g % 11 = 0 then null else -13.19 - g * 1.5e-7 end,
             case when g % 13 = 0 then null when g % 5 = 0 then 1e-7 * g else 120.25 + (g % 50) end,
             4000, 2250,
             case when g % 3 = 0 then null when g % 3 = 1 then 'null'::jsonb else '[0.5, -0.5, 1e-7, 0.30000000000000004]'::jsonb end,
             case when g % 4 = 0 then 'm' || g else '' end, g % 2 = 0, g % 3 = 0, g % 5 <> 0
      from generate_series(${from}::int, ${to}::int) g`.execute(db());
  }

  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    const asset = await account.client.createAsset({ name: 'Tower', type: 1, latitude: '55.70000000', longitude: '13.19000000' });
    inspection = (await account.client.createInspection({ asset: asset.id, name: 'Many cameras' })).id;
    other = (await account.client.createInspection({ asset: asset.id, name: 'Other cameras' })).id;
    empty = (await account.client.createInspection({ asset: asset.id, name: 'No cameras' })).id;
    // Ids interleave with another inspection's, and the list spans pages: 2 full pages and a bit.
    await insertCameras(inspection, 1, CAMERA_PAGE_ROWS - 3);
    await insertCameras(other, 1, 50);
    await insertCameras(inspection, CAMERA_PAGE_ROWS - 2, 2 * CAMERA_PAGE_ROWS + 7);
    await insertCameras(other, 51, 60);
    // Values whose text is easy to get wrong.
    await sql`
      insert into inspection.cameras (inspection_id, image_key, filename, latitude, longitude, elevation, width, height, quaternion, mission)
      values (${inspection}, 'uploads/k/odd-1', ${'quote " backslash \\ newline \n tab \t ünïcödé 🛰 </script>'}, -0.0, 1e21, 1e-300, 1, 1, '[-0.0, 1e21, 123456789012345680000, 5e-324]'::jsonb, ${'\u2028\u2029\u0001'}),
             (${inspection}, 'uploads/k/odd-2', '', 0.1, 0.2, 0.30000000000000004, 2147483647, 0, '[1, 0, 0, 7]'::jsonb, ''),
             (${inspection}, 'uploads/k/odd-3', 'e', 1e-5, -2.5e-6, 1.5e15, 1, 1, '[1e-7, 9.999999999999999e-5, 1e20, -1e-300]'::jsonb, ''),
             (${inspection}, 'uploads/k/odd-4', 'f', 0.0001, 999999999999999.9, 1e-6, 1, 1, '[123456789012345.6, 1e15, 1e-4, 0.000001]'::jsonb, '')`.execute(db());
  });
  after(async () => {
    await system?.stop();
  });

  it('answers the whole list, byte for byte as the list built whole', async () => {
    const expected = await wholeListBody(db(), inspection);
    const answer = await get(`/v1/inspections/${inspection}/cameras/`);
    assert.equal(answer.status, 200);
    assert.equal(answer.type, 'application/json; charset=utf-8');
    const cameras = JSON.parse(answer.text) as { id: number }[];
    assert.equal(cameras.length, 2 * CAMERA_PAGE_ROWS + 7 + 4);
    assert.ok(cameras.every((c, i) => i === 0 || c.id > cameras[i - 1].id), 'ordered by id, no repeat');
    assert.equal(answer.text, expected);
    assert.equal((await get(`/v1/inspections/${other}/cameras/`)).text, await wholeListBody(db(), other));
  });

  it('shows a camera as it is after an update (the reconstruction rewrites positions and quaternions)', async () => {
    await sql`
      update inspection.cameras set latitude = 1e-7, longitude = null, elevation = 42.5, quaternion = '[0.25, -0.5, 0.75, 1e-5]'::jsonb, filename = 'renamed "x"', is_reviewed = true
       where inspection_id = ${inspection} and image_key = 'uploads/k/odd-2'`.execute(db());
    const answer = await get(`/v1/inspections/${inspection}/cameras/`);
    assert.equal(answer.text, await wholeListBody(db(), inspection));
    const camera = (JSON.parse(answer.text) as { filename: string; location: object; quaternions: number[]; is_reviewed: boolean }[]).find((c) => c.filename === 'renamed "x"')!;
    assert.deepEqual(camera.location, { latitude: 1e-7, longitude: null, elevation: 42.5 });
    assert.deepEqual(camera.quaternions, [0.25, -0.5, 0.75, 1e-5]);
    assert.equal(camera.is_reviewed, true);
    assert.match(answer.text, /"latitude":1e-7,/, 'as JavaScript prints it');
  });

  it('answers null for positions that are not numbers in JSON (NaN, ±Infinity) and the default for a malformed quaternion, never invalid JSON', async () => {
    const asset = await account.client.createAsset({ name: 'Odd', type: 1, latitude: '1.00000000', longitude: '1.00000000' });
    const odd = (await account.client.createInspection({ asset: asset.id, name: 'Odd numbers' })).id;
    await sql`
      insert into inspection.cameras (inspection_id, image_key, filename, latitude, longitude, elevation, width, height, quaternion)
      values (${odd}, 'uploads/k/nan', 'nan', 'NaN', 'Infinity', '-Infinity', 1, 1, '[1, 0, 0, 0.5]'::jsonb),
             (${odd}, 'uploads/k/q-text', 'q', 1, 2, 3, 1, 1, '[1, "x", 0, 0]'::jsonb),
             (${odd}, 'uploads/k/q-three', 'r', 1, 2, 3, 1, 1, '[1, 0, 0]'::jsonb),
             (${odd}, 'uploads/k/q-object', 's', 1, 2, 3, 1, 1, '{"w": 1}'::jsonb)`.execute(db());
    // A session that prints floats rounded to 15 digits (extra_float_digits = 0) still writes exact records.
    await db().transaction().execute(async (trx) => {
      await sql`set local extra_float_digits = 0`.execute(trx);
      await sql`insert into inspection.cameras (inspection_id, image_key, filename, latitude, longitude, elevation, width, height, quaternion)
                values (${odd}, 'uploads/k/rounded', 't', 0.30000000000000004, 1, 2, 1, 1, '[0.1, 0.2, 0.30000000000000004, 1]'::jsonb)`.execute(trx);
    });
    const answer = await get(`/v1/inspections/${odd}/cameras/`);
    assert.equal(answer.status, 200);
    const cameras = JSON.parse(answer.text) as { location: { latitude: number }; quaternions: number[] }[];
    const rounded = cameras.pop()!;
    assert.equal(rounded.location.latitude, 0.30000000000000004);
    assert.deepEqual(rounded.quaternions, [0.1, 0.2, 0.30000000000000004, 1]);
    assert.deepEqual(cameras[0].location, { latitude: null, longitude: null, elevation: null });
    assert.deepEqual(cameras[0].quaternions, [1, 0, 0, 0.5]);
    // A quaternion that is not 4 numbers is shown as the default, as a missing one is.
    assert.deepEqual(cameras.slice(1).map((c) => c.quaternions), [[1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]]);
  });

  it('answers [] for an inspection without cameras, as before', async () => {
    const answer = await get(`/v1/inspections/${empty}/cameras/`);
    assert.equal(answer.status, 200);
    assert.equal(answer.text, '[]');
    assert.equal(answer.text, await wholeListBody(db(), empty));
  });

  it('pages as before: the envelope of the same records, 404 past the last page', async () => {
    const whole = JSON.parse(await wholeListBody(db(), inspection)) as unknown[];
    const page = JSON.parse((await get(`/v1/inspections/${inspection}/cameras/?page=2&page_size=1000`)).text) as { count: number; next: string | null; previous: string | null; results: unknown[] };
    assert.equal(page.count, whole.length);
    assert.deepEqual(page.results, whole.slice(1000, 2000));
    assert.match(page.next!, /page=3/);
    assert.match(page.previous!, /page=1/);
    const last = JSON.parse((await get(`/v1/inspections/${inspection}/cameras/?page=5&page_size=1000`)).text) as { next: string | null; results: unknown[] };
    assert.deepEqual(last.results, whole.slice(4000));
    assert.equal(last.next, null);
    assert.equal((await get(`/v1/inspections/${inspection}/cameras/?page=6&page_size=1000`)).status, 404);
  });

  it('answers 404 for an inspection the request may not see, before any body', async () => {
    const stranger = await system.newAccount();
    const response = await fetch(`${system.urls.inspection}/v1/inspections/${inspection}/cameras/`, {
      headers: { 'x-api-key': stranger.apiKey, authorization: `Bearer ${stranger.client.token}`, 'vendor-organization-uuid': stranger.organizationUuid! },
    });
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as { code: string }).code, 'not_found');
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
