// `npm run demo`: the typical inspection flow against a running server (`npm start`), on a few
// generated geotagged photos, printing each step. Reads the demo account that the first start
// wrote to DATA_DIR/bootstrap-credentials.json.
//   INSPECTION_URL (default http://127.0.0.1:8000), DATA_DIR (default ./data), DEMO_IMAGES (default 6)
import fs from 'node:fs';
import path from 'node:path';
import { InspectionClient } from '../src/sdk/inspection-client.ts';
import { generateDemoImageSet } from './generate-demo-images.ts';
import { bootstrapFile, type DemoCredentials } from '../src/admin/bootstrap.ts';

const STATUS_NAMES: Record<number, string> = { 1: 'New', 2: 'Uploading input files', 3: 'Analyzing input images', 4: 'Photogrammetry processing', 7: 'Processing completed', 16: 'ERROR - Photogrammetry processing', 19: 'ERROR - Not enough valid images', 20: 'Waiting for processing' };

async function main(): Promise<void> {
  const baseUrl = process.env.INSPECTION_URL ?? 'http://127.0.0.1:8000';
  const file = bootstrapFile(path.resolve(process.env.DATA_DIR ?? './data'));
  if (!fs.existsSync(file)) throw new Error(`${file} not found: start the server once with \`npm start\` (it creates the demo account).`);
  const demo = JSON.parse(fs.readFileSync(file, 'utf8')) as DemoCredentials;
  const step = (text: string) => console.log(`\n== ${text}`);
  const client = new InspectionClient({ baseUrl, apiKey: demo.api_key, organizationUuid: demo.organization_uuid });

  step(`POST /v1/auth/token/ as ${demo.username}`);
  const token = await client.login(demo.username, demo.password);
  console.log(`token valid for ${token.expires_in} s`);

  step('POST /v1/assets/');
  const asset = await client.createAsset({ name: 'Demo tower', type: 1, latitude: '46.51830000', longitude: '6.56190000' });
  console.log(`asset ${asset.id}, project group ${asset.project_group_id}`);

  step('POST /v1/inspections');
  const created = await client.createInspection({ asset: asset.id, name: 'Demo inspection', processing_parameters: { generate_point_cloud: true } });
  console.log(`inspection ${created.id}: status ${created.status}, project ${created.project_id} (${created.project_uuid})`);

  step(`GET /v1/inspections/${created.id}/s3_credentials/`);
  const credentials = await client.storageCredentials(created.id);
  console.log(`bucket ${credentials.bucket}, prefix ${credentials.key}, endpoint ${credentials.endpoint_override}, expires ${credentials.expiration}`);

  const count = Number(process.env.DEMO_IMAGES ?? 6);
  step(`Upload ${count} generated geotagged photos with @aws-sdk/client-s3`);
  const images = await generateDemoImageSet(count, { latitude: 46.5183, longitude: 6.5619, altitude: 420 });
  const keys = await client.upload(credentials, images.map((image) => ({ name: image.filename, body: image.data })));
  for (const key of keys) console.log(`  ${key}`);

  step(`POST /v1/inspections/${created.id}/register_images/`);
  console.log(await client.register(created.id, keys));

  step(`POST /v1/inspections/${created.id}/process/`);
  const started = await client.process(created.id);
  console.log(`status ${started.status}`);

  step('Polling the inspection');
  const done = await client.waitUntilSettled(created.id, { onStatus: (s) => console.log(`  status ${s} ${STATUS_NAMES[s] ?? ''}`) });

  step(`GET /v1/inspections/${created.id}/cameras/`);
  const cameras = await client.cameras(created.id);
  for (const c of cameras) {
    console.log(`  photo ${c.photo_id} ${c.filename} ${c.dimensions.x}x${c.dimensions.y} at ${c.location.latitude.toFixed(6)}, ${c.location.longitude.toFixed(6)}, ${c.location.elevation} m`);
  }
  console.log(`\nDone: inspection ${done.id} in status ${done.status} with ${cameras.length} cameras.`);
  if (done.status !== 7) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
