// Projects of the cloud service: creation (name required, coordinate_system checked), the fields of
// project details, lists (plain or paged), deletion, storage credentials, bulk registration, the
// inputs bundle, organization isolation, User-Agent logging and the CONTRACT's error format.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { freshDatabaseUrl, startTestSystem, tempDir, testConfig, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, CLOUD_UA, readZip, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { startSystem } from '../src/system.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { epsgByCode } from '../src/cloud/coordinate-systems/index.ts';

const P = '/project/api/v3/projects';

describe('cloud projects', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  let image: Buffer;
  before(async () => {
    system = await startTestSystem();
    api = await cloudClient(system);
    image = await generateGeotaggedJpeg({ latitude: 46.5, longitude: 6.5, altitude: 400, width: 96, height: 64 });
  });
  after(async () => {
    await system?.stop();
  });

  describe('create and get', () => {
    it('201 with every field of the project details; storage prefix and bucket assigned', async () => {
      const created = await api.call('POST', `${P}/`, { name: 'Bridge 4' }, { expect: 201 });
      const got = await api.call('GET', `${P}/${created.id}/`, undefined, { expect: 200 });
      assert.deepEqual(got, created);
      const expected: Record<string, string> = {
        id: 'number',
        uuid: 'string',
        name: 'string',
        display_name: 'string',
        is_demo: 'boolean',
        is_geolocalized: 'boolean',
        never_delete: 'boolean',
        under_trial: 'boolean',
        create_date: 'string',
        acquisition_date: 'string',
        public_status: 'string',
        display_detailed_status: 'string',
        error_reason: 'string',
        user_display_name: 'string',
        project_thumb: 'string',
        detail_url: 'string',
        project_type: 'string',
        image_count: 'number',
        bucket_name: 'string',
        s3_bucket_region: 'string',
        s3_base_path: 'string',
        coordinate_system: 'string',
        min_zoom: 'number',
        max_zoom: 'number',
        proj_pipeline: 'string',
        outputs: 'object',
      };
      for (const [field, type] of Object.entries(expected)) assert.equal(typeof got[field], type, field);
      for (const field of ['project_group_id', 'error_code', 'last_datetime_processing_started', 'last_datetime_processing_ended']) {
        assert.ok(field in got, field);
        assert.equal(got[field], null, field);
      }
      assert.match(got.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(got.public_status, 'NEW');
      assert.equal(got.error_reason, '');
      assert.equal(got.image_count, 0);
      assert.equal(got.bucket_name, system.config.storageBucket);
      assert.equal(got.s3_bucket_region, system.config.storageRegion);
      assert.equal(got.s3_base_path, `uploads/org-${api.orgUuid}/project-${got.id}`);
      assert.equal(got.detail_url, `${system.urls.cloud}${P}/${got.id}/`);
      assert.ok(!Number.isNaN(Date.parse(got.create_date)));
      assert.deepEqual(got.outputs.mesh, { texture_res: null });
      assert.deepEqual(got.outputs.images.project_thumb, { status: 'not available', name: 'project_thumb', s3_key: null, s3_bucket: null });
      assert.deepEqual(got.outputs.images.reflectance, []);
      assert.deepEqual(got.outputs.map, { layers: [], bounds: null });
      assert.equal(got.outputs.bundles.inputs.status, 'requestable');
      assert.equal(got.outputs.bundles.inputs.request_url, `${system.urls.cloud}${P}/${got.id}/inputs/zip/`);
      assert.deepEqual(got.outputs.reports, {});
    });

    it('400 without a name; the only required field', async () => {
      const missing = await api.call('POST', `${P}/`, {}, { expect: 400 });
      assert.deepEqual(Object.keys(missing), ['name']);
      assert.ok(Array.isArray(missing.name));
      await api.call('POST', `${P}/`, { name: '' }, { expect: 400 });
      await api.call('POST', `${P}/`, { name: 42 }, { expect: 201 }); // coerced, as DRF's CharField does
    });

    it('coordinate_system: WKT of an EPSG-registered system, else 400 on the field', async () => {
      const ok = await api.call('POST', `${P}/`, { name: 'LV95', coordinate_system: epsgByCode(2056)!.wkt }, { expect: 201 });
      assert.equal(ok.coordinate_system, epsgByCode(2056)!.wkt);
      for (const bad of ['EPSG:2056', 'not wkt at all', `${epsgByCode(2056)!.wkt}]`, epsgByCode(2056)!.wkt!.replace('"2056"]]', '"9999999"]]'), 'LOCAL_CS["My grid",LOCAL_DATUM["x",0],UNIT["metre",1]]']) {
        const body = await api.call('POST', `${P}/`, { name: 'bad', coordinate_system: bad }, { expect: 400 });
        assert.deepEqual(Object.keys(body), ['coordinate_system'], bad);
        assert.equal(typeof body.coordinate_system[0], 'string');
      }
      await api.call('POST', `${P}/`, { name: 'bad', coordinate_system: 12 }, { expect: 400 });
      // Empty means "not given".
      assert.equal((await api.call('POST', `${P}/`, { name: 'none', coordinate_system: '' }, { expect: 201 })).coordinate_system, '');
      const geoid = await api.call('POST', `${P}/`, { name: 'geoid', geoid_height: 'high' }, { expect: 400 });
      assert.ok(geoid.geoid_height);
    });

    it('project_group_id at creation must be a group of the organization', async () => {
      const group = await api.call('POST', '/project/api/v3/project-groups/', { name: 'Site', project_group_type: 'bim' }, { expect: 201 });
      const inGroup = await api.call('POST', `${P}/`, { name: 'In site', project_group_id: group.id }, { expect: 201 });
      assert.equal(inGroup.project_group_id, group.id);
      const other = await cloudClient(system, 'Group thief');
      const body = await other.call('POST', `${P}/`, { name: 'x', project_group_id: group.id }, { expect: 400 });
      assert.ok(body.project_group_id);
    });
  });

  describe('lists', () => {
    it('a plain array of the organization’s projects; the {count, next, previous, results} envelope when paged', async () => {
      const org = await cloudClient(system, 'Lister');
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await org.call('POST', `${P}/`, { name: `p${i}` }, { expect: 201 })).id);
      const all = await org.call('GET', `${P}/`, undefined, { expect: 200 });
      assert.ok(Array.isArray(all));
      assert.deepEqual(all.map((p: any) => p.id), ids);
      const page1 = await org.call('GET', `${P}/?page_size=2`, undefined, { expect: 200 });
      assert.equal(page1.count, 5);
      assert.deepEqual(page1.results.map((p: any) => p.id), ids.slice(0, 2));
      assert.equal(page1.previous, null);
      assert.match(page1.next, /page=2/);
      const page3 = await org.call('GET', page1.next.replace('page=2', 'page=3'), undefined, { expect: 200 });
      assert.deepEqual(page3.results.map((p: any) => p.id), ids.slice(4));
      assert.equal(page3.next, null);
      assert.match(page3.previous, /page=2/);
      await org.call('GET', `${P}/?page_size=1001`, undefined, { expect: 400 });
      await org.call('GET', `${P}/?page=0`, undefined, { expect: 400 });
    });
  });

  describe('isolation: another organization’s projects are never shown (404)', () => {
    it('every project endpoint answers 404 and the list leaves them out', async () => {
      const owner = await cloudClient(system, 'Owner');
      const project = await owner.call('POST', `${P}/`, { name: 'Secret' }, { expect: 201 });
      const key = await owner.put(project, 'a.jpg', image);
      await owner.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
      const intruder = await cloudClient(system, 'Intruder');
      const calls: [string, string, unknown?][] = [
        ['GET', `${P}/${project.id}/`],
        ['PATCH', `${P}/${project.id}/`, { project_group_id: null }],
        ['DELETE', `${P}/${project.id}/`],
        ['GET', `${P}/${project.id}/s3_credentials/`],
        ['POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }],
        ['POST', `${P}/${project.id}/start_processing/`, {}],
        ['GET', `${P}/${project.id}/outputs/`],
        ['POST', `${P}/${project.id}/inputs/zip/`],
        ['GET', `${P}/${project.id}/inputs/zip/`],
        ['GET', `${P}/${project.id}/mtp/`],
      ];
      for (const [method, path, body] of calls) {
        const answer = await intruder.call(method, path, body, { expect: 404 });
        assert.deepEqual(answer, { detail: 'Project not found.', code: 'not_found' }, `${method} ${path}`);
      }
      const nowhere = await intruder.call('GET', `${P}/999999/`, undefined, { expect: 404 });
      assert.deepEqual(nowhere, { detail: 'Project not found.', code: 'not_found' }, 'the same answer as for a project that does not exist');
      assert.ok(!(await intruder.call('GET', `${P}/`)).some((p: any) => p.id === project.id));
      const still = await owner.call('GET', `${P}/${project.id}/`, undefined, { expect: 200 });
      assert.equal(still.public_status, 'UPLOADING');
    });
  });

  describe('delete', () => {
    it('204, then 404; its uploads and results are removed', async () => {
      const project = await api.call('POST', `${P}/`, { name: 'Doomed' }, { expect: 201 });
      const key = await api.put(project, 'a.jpg', image);
      await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
      await api.call('POST', `${P}/${project.id}/start_processing/`, {}, { expect: 202 });
      await api.waitFor(project.id, settled);
      const response = await fetch(`${system.urls.cloud}${P}/${project.id}/`, { method: 'DELETE', headers: { authorization: `Bearer ${api.token}` } });
      assert.equal(response.status, 204);
      assert.equal(await response.text(), '');
      await api.call('GET', `${P}/${project.id}/`, undefined, { expect: 404 });
      await api.call('DELETE', `${P}/${project.id}/`, undefined, { expect: 404 });
      assert.equal(await system.store.headObject(project.bucket_name, key), undefined);
      const results = await system.store.listObjects(project.bucket_name, { prefix: `results/${project.uuid}/` });
      assert.equal(results.objects.length, 0);
    });
  });

  describe('uploads', () => {
    it('storage credentials: prefix-scoped, not accelerated, endpoint override for stock clients', async () => {
      const project = await api.call('POST', `${P}/`, { name: 'Creds' }, { expect: 201 });
      const c = await api.call('GET', `${P}/${project.id}/s3_credentials/`, undefined, { expect: 200 });
      for (const field of ['access_key', 'secret_key', 'session_token', 'bucket', 'key', 'region', 'endpoint_override']) assert.equal(typeof c[field], 'string', field);
      assert.equal(c.is_bucket_accelerated, false);
      assert.equal(c.key, `${project.s3_base_path}/`);
      assert.equal(c.bucket, project.bucket_name);
      assert.ok(Date.parse(c.expiration) > Date.parse(c.server_time));
      const s3 = new S3Client({
        region: c.region,
        endpoint: c.endpoint_override,
        forcePathStyle: true,
        credentials: { accessKeyId: c.access_key, secretAccessKey: c.secret_key, sessionToken: c.session_token },
      });
      await s3.send(new PutObjectCommand({ Bucket: c.bucket, Key: `${c.key}ok.jpg`, Body: image }));
      await assert.rejects(s3.send(new PutObjectCommand({ Bucket: c.bucket, Key: `uploads/elsewhere/x.jpg`, Body: image })), /Access ?Denied/i);
      s3.destroy();
    });

    it('bulk register: keys under the prefix and present in storage; repeats are idempotent; all or nothing', async () => {
      const project = await api.call('POST', `${P}/`, { name: 'Register' }, { expect: 201 });
      const a = await api.put(project, 'a.jpg', image);
      const b = await api.put(project, 'sub/b.jpg', image);
      const outside = await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [a, 'uploads/other/x.jpg'] }, { expect: 400 });
      assert.match(outside.input_file_keys[0], /prefix/);
      const prefixOnly = await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [`${project.s3_base_path}/`] }, { expect: 400 });
      assert.ok(prefixOnly.input_file_keys);
      const missing = await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [a, `${project.s3_base_path}/missing.jpg`] }, { expect: 400 });
      assert.match(missing.input_file_keys[0], /Not found in storage/);
      await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [] }, { expect: 400 });
      assert.equal((await api.call('GET', `${P}/${project.id}/`)).image_count, 0, 'nothing registered by refused calls');
      assert.equal((await api.call('GET', `${P}/${project.id}/`)).public_status, 'NEW');
      assert.deepEqual(await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [a, a] }, { expect: 200 }), { nb_images_registered: 1 });
      assert.deepEqual(await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [a, b] }, { expect: 200 }), { nb_images_registered: 2 });
      assert.deepEqual(await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [b] }, { expect: 200 }), { nb_images_registered: 2 });
      const after = await api.call('GET', `${P}/${project.id}/`);
      assert.equal(after.image_count, 2);
      assert.equal(after.public_status, 'UPLOADING');
    });
  });

  describe('inputs bundle', () => {
    it('409 before any input; one build per request; registering more inputs makes it requestable again', async () => {
      const project = await api.call('POST', `${P}/`, { name: 'Bundle' }, { expect: 201 });
      const url = `${P}/${project.id}/inputs/zip/`;
      assert.equal((await api.call('POST', url, undefined, { expect: 409 })).code, 'conflict');
      assert.equal((await api.call('GET', url, undefined, { expect: 200 })).status, 'requestable');
      const a = await api.put(project, 'a.jpg', image);
      await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [a] }, { expect: 200 });
      const first = await api.call('POST', url, undefined, { expect: 202 });
      assert.ok(['in_progress', 'done'].includes(first.status));
      const waitDone = async () => {
        for (let i = 0; i < 300; i++) {
          const state = await api.call('GET', url, undefined, { expect: 200 });
          if (state.status === 'done') return state;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.fail('the bundle was not built');
      };
      const done = await waitDone();
      assert.equal(typeof done.url, 'string');
      assert.ok(done.size > 0);
      const again = await api.call('POST', url, undefined, { expect: 202 });
      assert.equal(again.status, 'done', 'a built bundle is not built again');
      const outputs = (await api.call('GET', `${P}/${project.id}/outputs/`)).outputs.filter((o: any) => o.output_type === 'input_zip');
      assert.equal(outputs.length, 1);

      const b = await api.put(project, 'b.jpg', image);
      await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [b] }, { expect: 200 });
      assert.equal((await api.call('GET', url)).status, 'requestable', 'a bundle without the new input is stale');
      await api.call('POST', url, undefined, { expect: 202 });
      const rebuilt = await waitDone();
      const entries = readZip(Buffer.from(await (await fetch(rebuilt.url)).arrayBuffer()));
      assert.deepEqual(entries.map((e) => e.name).sort(), ['a.jpg', 'b.jpg']);
    });
  });

  describe('errors in the CONTRACT format, never a 5xx for what a client sends', () => {
    it('401, 404, 400 bodies', async () => {
      const none = await fetch(`${system.urls.cloud}${P}/`);
      assert.equal(none.status, 401);
      assert.deepEqual(Object.keys((await none.json()) as object).sort(), ['code', 'detail']);
      const bad = await fetch(`${system.urls.cloud}${P}/`, { headers: { authorization: 'Bearer not.a.jwt' } });
      assert.equal(bad.status, 401);
      assert.equal(((await bad.json()) as any).code, 'authentication_failed');
      const noRoute = await api.call('GET', '/project/api/v3/nothing-here/', undefined, { expect: 404 });
      assert.equal(noRoute.code, 'not_found');
      const parse = await api.call('POST', `${P}/`, undefined, { expect: 400, raw: '{"name": ', headers: { 'content-type': 'application/json' } });
      assert.equal(parse.code, 'parse_error');
      assert.ok(typeof parse.detail === 'string');
      const method = await api.call('PUT', `${P}/`, { name: 'x' }, { expect: 405 });
      assert.equal(method.code, 'method_not_allowed');
      assert.equal(method.$response.headers.get('allow'), 'GET, POST');
      assert.equal((await api.call('POST', `${P}/1/s3_credentials/`, undefined, { expect: 405 })).code, 'method_not_allowed');
      assert.equal((await fetch(`${system.urls.cloud}/oauth2/token/`)).status, 405);
      // A path id that is not a canonical decimal names no project (issue 10, finding 15).
      const id = await api.call('GET', `${P}/abc/`, undefined, { expect: 404 });
      assert.equal(id.code, 'not_found', JSON.stringify(id));
    });

    it('garbage to every endpoint answers below 500, errors as JSON objects', async () => {
      const project = await api.call('POST', `${P}/`, { name: 'Fuzz' }, { expect: 201 });
      const paths = [
        ['POST', `${P}/`],
        ['PATCH', `${P}/${project.id}/`],
        ['POST', `${P}/${project.id}/inputs/bulk_register/`],
        ['POST', `${P}/${project.id}/start_processing/`],
        ['POST', `${P}/${project.id}/inputs/zip/`],
        ['POST', `${P}/${project.id}/gcp/register`],
        ['POST', `${P}/${project.id}/mtp/`],
        ['POST', `${P}/${project.id}/mark/register/`],
        ['POST', '/project/api/v3/project-groups/'],
        ['POST', '/common/api/v4/drive/folders/'],
        ['PUT', '/common/api/v4/drive/move_batch/'],
        ['GET', `${P}/99999999999999999999/`],
        ['GET', `${P}/-1/`],
      ];
      const bodies: [string | undefined, string | undefined][] = [
        ['[1, 2, 3]', 'application/json'],
        ['"text"', 'application/json'],
        ['{"name": {"$gt": ""}, "tags": {"a": 1}, "input_file_keys": "x", "gcps": [null], "marks": [{}], "source_nodes": [{"type": "project", "uuid": "not-a-uuid"}], "owner_uuid": "x", "target_type": "folder", "target_uuid": "y"}', 'application/json'],
        ['\u0000\u0001binary', 'application/octet-stream'],
        ['name=x&tags=oblique&tags=building', 'application/x-www-form-urlencoded'],
        ['plain', 'text/plain'],
        [undefined, undefined],
      ];
      for (const [method, path] of paths) {
        for (const [body, type] of bodies) {
          const response = await fetch(`${system.urls.cloud}${path}`, {
            method,
            headers: { authorization: `Bearer ${api.token}`, ...(type ? { 'content-type': type } : {}) },
            body: method === 'GET' ? undefined : body,
          });
          const text = await response.text();
          assert.ok(response.status < 500, `${method} ${path} ${type}: ${response.status} ${text}`);
          if (response.status >= 400) {
            const parsed = JSON.parse(text);
            assert.ok(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed), text);
            if (response.status !== 400) assert.deepEqual(Object.keys(parsed).sort(), ['code', 'detail'], text);
          }
        }
      }
    });
  });
});

describe('cloud User-Agent logging', () => {
  it('each request is logged with the client id and its User-Agent; the project records it', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        callback();
      },
    });
    const dataDir = tempDir();
    const database = await freshDatabaseUrl();
    const config = testConfig(dataDir, { databaseUrl: database?.url, logLevel: 'info' });
    const system = await startSystem(config, 'serve', pino({ level: 'info' }, sink));
    try {
      const api = await cloudClient({ ...system, dataDir, newAccount: async () => assert.fail(), stop: system.stop } as TestSystem);
      const project = await api.call('POST', `${P}/`, { name: 'UA' }, { expect: 201 });
      await api.call('GET', `${P}/${project.id}/`, undefined, { expect: 200 });
      const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.userAgent === CLOUD_UA);
      assert.ok(logged.some((entry) => entry.msg === 'create project' && entry.clientId === api.clientId), 'creation logged with the User-Agent');
      assert.ok(logged.some((entry) => entry.msg === 'request completed' && entry.req === undefined && entry.clientId === api.clientId), 'every request logged with it');
      const row = await system.cloud.projects.projects.findById(project.id);
      assert.equal(row?.user_agent, CLOUD_UA);
      assert.ok(!lines.some((line) => line.includes(api.token)), 'the token is never logged');
    } finally {
      await system.stop();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
