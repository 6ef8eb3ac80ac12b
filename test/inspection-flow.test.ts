// The typical flow of the inspection spec, end to end over real HTTP, with uploads through
// @aws-sdk/client-s3, on the database the environment names (PGlite by default).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { generateDemoImageSet } from '../scripts/generate-demo-images.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { requireTool } from './helpers/system-tools.ts';
import { tempDir } from './helpers/test-system.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';

describe('inspection flow', () => {
  let system: TestSystem;
  before(async () => {
    system = await startTestSystem();
  });
  after(async () => {
    await system?.stop();
  });

  it('token -> asset -> inspection -> upload -> register -> process -> status 7 -> cameras', async () => {
    const { client } = await system.newAccount({ projects: 3 });
    const asset = await client.createAsset({ name: 'Tower 17', type: 1, latitude: '46.51830000', longitude: '6.56190000' });
    assert.ok(asset.project_group_id > 0, 'a project group was created with the asset');
    assert.equal(asset.latitude, '46.51830000');

    const inspection = await client.createInspection({ asset: asset.id, name: 'First flight' });
    assert.equal(inspection.status, 1);
    assert.ok(inspection.project_id > 0);
    assert.match(inspection.project_uuid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(inspection.processing_parameters, { generate_point_cloud: true });

    const credentials = await client.storageCredentials(inspection.id);
    assert.ok(credentials.key.endsWith('/'));
    assert.ok(credentials.endpoint_override.startsWith('http://'));

    const images = await generateDemoImageSet(4, { latitude: 46.5183, longitude: 6.5619, altitude: 420 });
    const files = [
      ...images.map((i) => ({ name: i.filename, body: i.data })),
      { name: 'notes.txt', body: Buffer.from('not an image') },
    ];
    const keys = await client.upload(credentials, files);
    const first = await client.register(inspection.id, keys.slice(0, 2));
    assert.equal(first.nb_images_registered, 2);
    const second = await client.register(inspection.id, keys.slice(1));
    assert.equal(second.nb_images_registered, 5, 'repeated calls add up, repeats count once');
    assert.equal((await client.getInspection(inspection.id)).status, 2);

    const started = await client.process(inspection.id);
    assert.equal(started.status, 20);
    const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 60_000 });
    assert.equal(done.status, 7);

    const cameras = await client.cameras(inspection.id);
    assert.equal(cameras.length, 4, 'one camera per valid image; the text file is counted, not fatal');
    const byName = new Map(cameras.map((c) => [c.filename, c]));
    for (const image of images) {
      const camera = byName.get(image.filename);
      assert.ok(camera, `camera for ${image.filename}`);
      assert.deepEqual(camera.dimensions, { x: 640, y: 480 });
      assert.ok(Math.abs(camera.location.latitude - image.latitude) < 1e-6);
      assert.ok(Math.abs(camera.location.longitude - image.longitude) < 1e-6);
      assert.ok(Math.abs(camera.location.elevation - image.altitude) < 0.01);
      assert.equal(camera.quaternions.length, 4);
    }
    assert.equal(new Set(cameras.map((c) => c.photo_id)).size, 4, 'photo ids are unique');

    const balance = await client.expect(200, 'GET', '/v1/allowance/');
    assert.deepEqual(balance.find((b: any) => b.allowance_type === 'projects'), { allowance_type: 'projects', granted: 3, consumed: 1, balance: 2 });

    // The cloud project went through its own states and lists what it produced.
    const project = await system.cloud.projects.projects.findById(inspection.project_id);
    assert.equal(project?.public_status, 'DONE');
    assert.equal(project?.image_count, 5);
    const outputs = await system.cloud.projects.projects.listOutputs(inspection.project_id);
    const calibrated = outputs.find((o) => o.output_type === 'calibrated_camera_parameters_json');
    assert.equal(calibrated?.availability, 'done');
    assert.equal(outputs.find((o) => o.output_type === 'point_cloud')?.availability, 'not available');
  });

  it('the upload can be done by /usr/bin/aws s3 cp with nothing but the credential record', async (t) => {
    if (!requireTool(t, '/usr/bin/aws', 'awscli')) return;
    const { client } = await system.newAccount();
    const asset = await client.createAsset({ name: 'Silo', type: 6 });
    const inspection = await client.createInspection({ asset: asset.id });
    const c = await client.storageCredentials(inspection.id);
    const folder = tempDir();
    const images = await generateDemoImageSet(3, { latitude: 40.4, longitude: -3.7, altitude: 650 }, { width: 320, height: 240 });
    for (const image of images) fs.writeFileSync(path.join(folder, image.filename), image.data);
    // Only the record's fields; nothing from ~/.aws (HOME points at an empty folder).
    const env = {
      PATH: process.env.PATH,
      HOME: folder,
      AWS_ACCESS_KEY_ID: c.access_key,
      AWS_SECRET_ACCESS_KEY: c.secret_key,
      AWS_SESSION_TOKEN: c.session_token,
      AWS_DEFAULT_REGION: c.region,
    };
    await promisify(execFile)('/usr/bin/aws', ['s3', 'cp', folder, `s3://${c.bucket}/${c.key}`, '--recursive', '--endpoint-url', c.endpoint_override], { env });
    const keys = images.map((i) => `${c.key}${i.filename}`);
    assert.equal((await client.register(inspection.id, keys)).nb_images_registered, 3);
    await client.process(inspection.id);
    const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 60_000 });
    assert.equal(done.status, 7);
    assert.equal((await client.cameras(inspection.id)).length, 3);
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it('each service publishes its OpenAPI document and a docs page', async () => {
    for (const [base, doc] of [
      [system.urls.inspection, '/v1/openapi.json'],
      [system.urls.cloud, '/project/api/v3/openapi.json'],
    ]) {
      const openapi = (await (await fetch(`${base}${doc}`)).json()) as any;
      assert.match(openapi.openapi, /^3\./);
      assert.ok(Object.keys(openapi.paths).length > 5);
      const page = await fetch(`${base}/docs`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /swagger/i);
    }
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
