// `npm run demo`: the typical inspection flow against a running server (`npm start`), printing
// each step. Reads the demo account that the first start wrote to DATA_DIR/bootstrap-credentials.json.
// The photos: the 29 lund street photos of test/fixtures/lund (real photos, which the colmap
// engine, the default where COLMAP is installed, reconstructs in a few minutes: refined cameras,
// point cloud, clipping, ground reference altitude); DEMO_IMAGES=N uses N generated geotagged
// photos instead (seconds, but only the exif engine can process them: they are not a real scene).
//   INSPECTION_URL (default http://127.0.0.1:8000), DATA_DIR (default ./data), DEMO_IMAGES (default: lund)
import fs from 'node:fs';
import path from 'node:path';
import { InspectionClient } from '../src/sdk/inspection-client.ts';
import { generateDemoImageSet } from './generate-demo-images.ts';
import { bootstrapFile, type DemoCredentials } from '../src/admin/bootstrap.ts';
import exifr from 'exifr';
import { fileURLToPath } from 'node:url';

const LUND = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/lund/images');

const STATUS_NAMES: Record<number, string> = { 1: 'New', 2: 'Uploading input files', 3: 'Analyzing input images', 4: 'Photogrammetry processing', 5: 'Clipping point cloud', 7: 'Processing completed', 16: 'ERROR - Photogrammetry processing', 19: 'ERROR - Not enough valid images', 20: 'Waiting for processing' };

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

  const generated = process.env.DEMO_IMAGES !== undefined;
  const count = Number(process.env.DEMO_IMAGES ?? 6);
  const images = generated
    ? (await generateDemoImageSet(count, { latitude: 46.5183, longitude: 6.5619, altitude: 420 })).map((image) => ({ name: image.filename, body: image.data }))
    : fs.readdirSync(LUND).filter((f) => f.endsWith('.jpg')).sort().map((name) => ({ name, body: fs.readFileSync(path.join(LUND, name)) }));
  // The asset stands at the photos' GPS centroid (lund: the building in the middle of the walk).
  const positions = generated ? [{ latitude: 46.5183, longitude: 6.5619 }] : await Promise.all(images.map(async (i) => (await exifr.gps(i.body))!));
  const centroid = { latitude: positions.reduce((a, p) => a + p.latitude, 0) / positions.length, longitude: positions.reduce((a, p) => a + p.longitude, 0) / positions.length };

  step('POST /v1/assets/');
  const asset = await client.createAsset({ name: generated ? 'Demo tower' : 'Lund building', type: 1, latitude: centroid.latitude.toFixed(8), longitude: centroid.longitude.toFixed(8) });
  console.log(`asset ${asset.id}, project group ${asset.project_group_id}`);

  step('POST /v1/inspections');
  const created = await client.createInspection({ asset: asset.id, name: 'Demo inspection', processing_parameters: { generate_point_cloud: true, clip_point_cloud: true, clipping_radius: 40 } });
  console.log(`inspection ${created.id}: status ${created.status}, project ${created.project_id} (${created.project_uuid})`);

  step(`GET /v1/inspections/${created.id}/s3_credentials/`);
  const credentials = await client.storageCredentials(created.id);
  console.log(`bucket ${credentials.bucket}, prefix ${credentials.key}, endpoint ${credentials.endpoint_override}, expires ${credentials.expiration}`);

  step(`Upload ${images.length} ${generated ? 'generated geotagged' : 'lund'} photos with @aws-sdk/client-s3`);
  const keys = await client.upload(credentials, images);
  for (const key of keys) console.log(`  ${key}`);

  step(`POST /v1/inspections/${created.id}/register_images/`);
  console.log(await client.register(created.id, keys));

  step(`POST /v1/inspections/${created.id}/process/`);
  const started = await client.process(created.id);
  console.log(`status ${started.status}`);

  step('Polling the inspection');
  const done = await client.waitUntilSettled(created.id, { timeoutMs: 60 * 60_000, onStatus: (s) => console.log(`  status ${s} ${STATUS_NAMES[s] ?? ''}`) });
  const extras = await client.request('GET', `/v1/inspections/${created.id}/extras/`);
  console.log(`ground_reference_altitude ${done.ground_reference_altitude} m; coordinate system ${/^[A-Z_]+\["([^"]*)"/.exec(extras.body.coordinate_system)?.[1] ?? extras.body.coordinate_system}; offset ${JSON.stringify(extras.body.offset_3d_xyz)}`);

  step(`GET /v1/inspections/${created.id}/cameras/`);
  const cameras = await client.cameras(created.id);
  for (const c of cameras) {
    console.log(`  photo ${c.photo_id} ${c.filename} ${c.dimensions.x}x${c.dimensions.y} at ${c.location.latitude.toFixed(6)}, ${c.location.longitude.toFixed(6)}, ${c.location.elevation} m`);
  }
  const refined = cameras.filter((c: { quaternions?: number[] | null }) => c.quaternions && Math.abs(c.quaternions[0]) < 0.999);
  console.log(`${refined.length} of ${cameras.length} cameras with orientations refined by the reconstruction; the first: ${refined[0] ? `${refined[0].filename} quaternion [${refined[0].quaternions.map((q: number) => q.toFixed(4)).join(', ')}]` : 'none'}`);

  step(`GET /v1/inspections/${created.id}/outputs/`);
  const outputs = (await client.expect(200, 'GET', `/v1/inspections/${created.id}/outputs/`)) as { output_type: string; url: string }[];
  console.log(outputs.map((o) => o.output_type).join(', '));
  const cloud = outputs.find((o) => o.output_type === 'point_cloud');
  if (cloud) {
    const las = Buffer.from(await (await fetch(cloud.url)).arrayBuffer());
    // LAS 1.2 header: the number of point records at byte 107.
    console.log(`point_cloud: ${las.length} bytes, ${las.readUInt32LE(107)} points${created.processing_parameters?.clip_point_cloud ? ` (clipped to ${created.processing_parameters.clipping_radius} m around the asset)` : ''}`);
  }

  // An annotation in the middle of the first refined photo: coords_3d from the point cloud.
  if (refined[0]) {
    step('POST /v1/annotations/?coords_3d=true (a rectangle in the middle of a photo)');
    const annotation = await client.expect(201, 'POST', '/v1/annotations/?coords_3d=true', {
      type: 'Crack',
      inspection: created.id,
      photo_id: refined[0].photo_id,
      data: { coords_2d: [[0.45, 0.45], [0.55, 0.45], [0.55, 0.55], [0.45, 0.55]] },
    });
    console.log(`annotation ${annotation.id} on ${refined[0].filename}: coords_3d ${JSON.stringify(annotation.coords_3d)}`);
  }
  console.log(`\nDone: inspection ${done.id} in status ${done.status} with ${cameras.length} cameras.`);
  if (done.status !== 7) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
