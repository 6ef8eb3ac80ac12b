// The cloud spec's typical flow, exactly as it lists it, over real HTTP: token -> create project ->
// storage credentials -> upload with @aws-sdk/client-s3 -> bulk register -> start processing ->
// poll until public_status DONE -> read outputs and bundles, request the inputs ZIP through the
// bundle's request_url and download it. Run once per way of sending the token parameters.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { S3Client, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { readZip } from './helpers/cloud-api.ts';
import { generateDemoImageSet } from '../scripts/generate-demo-images.ts';

const ORDER = ['NEW', 'UPLOADING', 'WAITING', 'PROCESSING', 'DONE'];

describe('cloud typical flow', () => {
  let system: TestSystem;
  let client: { clientId: string; clientSecret: string };
  let orgUuid: string;
  before(async () => {
    system = await startTestSystem({ engineSimulatedSeconds: 1 });
    orgUuid = crypto.randomUUID();
    const org = await system.cloud.ensureOrganization('Flow org', orgUuid);
    client = await system.cloud.oauth.createClient(org.id, 'flow');
  });
  after(async () => {
    await system?.stop();
  });

  const params = () => ({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, token_format: 'jwt' });
  const tokenWays: Record<string, () => Promise<Response>> = {
    urlencoded: () => fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', body: new URLSearchParams(params()) }),
    multipart: () => {
      const form = new FormData();
      for (const [k, v] of Object.entries({ ...params(), token_type: 'access_token' })) form.append(k, v);
      return fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', body: form });
    },
    json: () => fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params()) }),
    'query string': () => fetch(`${system.urls.cloud}/oauth2/token/?${new URLSearchParams(params())}`, { method: 'POST' }),
  };

  for (const [way, getToken] of Object.entries(tokenWays)) {
    it(`runs from token (${way}) to DONE, outputs and the inputs ZIP`, async () => {
      // 1. Get token.
      const tokenResponse = await getToken();
      const token = (await tokenResponse.json()) as any;
      assert.equal(tokenResponse.status, 200, JSON.stringify(token));
      assert.equal(token.token_type, 'Bearer');
      assert.equal(token.scope, 'read:cloud write:cloud');
      assert.equal(token.expires_in, 172800, 'the default validity, the spec example');
      const headers = { authorization: `Bearer ${token.access_token}`, 'user-agent': `flow-test/1.0 (${way})` };
      const api = async (method: string, path: string, body?: unknown, expect = 200) => {
        const response = await fetch(path.startsWith('http') ? path : `${system.urls.cloud}${path}`, {
          method,
          headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        assert.equal(response.status, expect, `${method} ${path}: ${text}`);
        return text ? JSON.parse(text) : undefined;
      };

      // 2. Create project (201; storage prefix and bucket assigned).
      const created = await api('POST', '/project/api/v3/projects/', { name: `Flow ${way}` }, 201);
      assert.equal(created.public_status, 'NEW');
      assert.ok(created.bucket_name);
      assert.match(created.s3_base_path, /^uploads\//);
      const seen = [created.public_status];

      // 3. Storage credentials.
      const credentials = await api('GET', `/project/api/v3/projects/${created.id}/s3_credentials/`);
      assert.equal(credentials.key, `${created.s3_base_path}/`);
      assert.equal(credentials.is_bucket_accelerated, false);
      assert.ok(credentials.endpoint_override.startsWith('http'));

      // 4. Upload images under the returned prefix with a stock S3 client.
      const s3 = new S3Client({
        region: credentials.region,
        endpoint: credentials.endpoint_override,
        forcePathStyle: true,
        credentials: { accessKeyId: credentials.access_key, secretAccessKey: credentials.secret_key, sessionToken: credentials.session_token },
      });
      const images = await generateDemoImageSet(4, { latitude: 46.5183, longitude: 6.5619, altitude: 420 });
      const keys: string[] = [];
      for (const image of images) {
        const key = `${credentials.key}${image.filename}`;
        await s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: key, Body: image.data, ContentType: 'image/jpeg' }));
        keys.push(key);
      }
      s3.destroy();

      // 5. Bulk-register the keys.
      assert.deepEqual(await api('POST', `/project/api/v3/projects/${created.id}/inputs/bulk_register/`, { input_file_keys: keys }), { nb_images_registered: 4 });
      const registered = await api('GET', `/project/api/v3/projects/${created.id}/`);
      assert.equal(registered.public_status, 'UPLOADING');
      assert.equal(registered.image_count, 4);
      seen.push(registered.public_status);

      // 6. Start processing.
      const started = await api('POST', `/project/api/v3/projects/${created.id}/start_processing/`, { tags: ['nadir'] }, 202);
      assert.equal(started.public_status, 'WAITING');
      assert.match(started.display_detailed_status, /Waiting for processing/);
      seen.push(started.public_status);

      // Uploads close once processing has started (issue 40 §8, as the inspection spec's rule 4):
      // the credentials of step 3 read on but write no more, and credentials asked for now only read.
      const again = await api('GET', `/project/api/v3/projects/${created.id}/s3_credentials/`);
      for (const c of [credentials, again]) {
        const late = new S3Client({ region: c.region, endpoint: c.endpoint_override, forcePathStyle: true, credentials: { accessKeyId: c.access_key, secretAccessKey: c.secret_key, sessionToken: c.session_token } });
        await assert.rejects(late.send(new PutObjectCommand({ Bucket: c.bucket, Key: keys[0], Body: Buffer.from('overwritten') })), (err: Error) => err.name === 'AccessDenied');
        const photo = await late.send(new GetObjectCommand({ Bucket: c.bucket, Key: keys[0] }));
        assert.equal((await photo.Body!.transformToByteArray()).length, images[0].data.length, 'the photo stays as registered');
        late.destroy();
      }

      // 7. Poll project details until public_status goes from PROCESSING to DONE.
      let project = started;
      const deadline = Date.now() + 60_000;
      while (project.public_status !== 'DONE' && project.public_status !== 'ERROR') {
        assert.ok(Date.now() < deadline, `still ${project.public_status}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        project = await api('GET', `/project/api/v3/projects/${created.id}/`);
        if (seen.at(-1) !== project.public_status) seen.push(project.public_status);
        if (project.public_status === 'PROCESSING') assert.match(project.display_detailed_status, /\(\d{1,3}%\)$/);
      }
      assert.equal(project.public_status, 'DONE', JSON.stringify(project));
      assert.ok(seen.includes('PROCESSING'), `statuses seen: ${seen.join(' -> ')}`);
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b)),
        `statuses in order: ${seen.join(' -> ')}`,
      );
      assert.equal(project.error_code, null);
      assert.equal(project.error_reason, '');
      assert.ok(project.last_datetime_processing_started && project.last_datetime_processing_ended);
      assert.equal(project.acquisition_date, '2024-06-01T10:00:00.000Z');
      assert.equal(project.is_geolocalized, true);
      assert.equal(project.pipeline, 'nadir');
      assert.equal(project.output_coordinate_system.horizontal_epsg, 32632);
      assert.equal(project.output_coordinate_system.vertical_epsg, 5773);
      assert.match(project.coordinate_system, /^COMPD_CS\["WGS 84 \/ UTM zone 32N \+ EGM96 height"/);

      // 8. Read outputs: each done output downloads; the image output is `processed`.
      const { outputs } = await api('GET', `/project/api/v3/projects/${created.id}/outputs/`);
      const byType = new Map(outputs.map((o: any) => [o.output_type, o]));
      const cameras = byType.get('calibrated_camera_parameters_json') as any;
      assert.equal(cameras.availability, 'done');
      assert.equal(cameras.s3_bucket, created.bucket_name);
      const document = (await (await fetch(cameras.url)).json()) as any;
      assert.equal(document.cameras.length, 4);
      assert.equal(document.reconstructed, false);
      assert.ok(document.cameras.every((c: any) => c.position_output_crs && c.position_output_crs.x > 200_000 && c.position_output_crs.x < 800_000));
      const thumb = byType.get('project_thumb') as any;
      assert.equal(thumb.availability, 'done');
      const thumbBytes = Buffer.from(await (await fetch(thumb.url)).arrayBuffer());
      assert.equal(thumbBytes.readUInt16BE(0), 0xffd8, 'the thumbnail is a JPEG');
      assert.equal(project.outputs.images.project_thumb.status, 'processed');
      assert.equal((byType.get('point_cloud') as any).availability, 'not available');

      // 9. Bundles: request the inputs ZIP through request_url, follow it, download it.
      const bundle = project.outputs.bundles.inputs;
      assert.equal(bundle.status, 'requestable');
      assert.equal(bundle.request_url, `${system.urls.cloud}/project/api/v3/projects/${created.id}/inputs/zip/`);
      const requested = await api('POST', bundle.request_url, undefined, 202);
      assert.ok(['in_progress', 'done'].includes(requested.status));
      let state = requested;
      while (state.status !== 'done') {
        assert.ok(Date.now() < deadline + 30_000, `bundle still ${state.status}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        state = await api('GET', bundle.request_url);
      }
      const zip = Buffer.from(await (await fetch(state.url)).arrayBuffer());
      const entries = readZip(zip);
      assert.deepEqual(entries.map((e) => e.name).sort(), images.map((i) => i.filename).sort());
      for (const image of images) assert.ok(entries.find((e) => e.name === image.filename)!.data.equals(image.data), `${image.filename} round-trips`);
      const after = await api('GET', `/project/api/v3/projects/${created.id}/`);
      assert.equal(after.outputs.bundles.inputs.status, 'done');
      assert.equal(typeof after.outputs.bundles.inputs.url, 'string');
      const zipOutput = (await api('GET', `/project/api/v3/projects/${created.id}/outputs/`)).outputs.find((o: any) => o.output_type === 'input_zip');
      assert.equal(zipOutput.availability, 'done');
      assert.equal(zipOutput.result_type, 'input_zip', 'as the real API groups it');
    });
  }
});
