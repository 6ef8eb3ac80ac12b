// What the inspection takes from a reconstruction (pipeline/reconstruction.ts, clipping.ts,
// annotations/coords-3d.ts), without COLMAP: the nodeodm engine against a fake NodeODM node (its
// all.zip has shots, cameras and a LAZ point cloud, see helpers/fake-nodeodm.ts), and the clipper
// on a LAS file written here. The same on real data: engine-colmap-lund.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { startFakeNodeOdm, FAKE_ORIGIN, type FakeNodeOdm } from './helpers/fake-nodeodm.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { PointCloudClipper, ClippingError } from '../src/inspection/pipeline/clipping.ts';
import { projectorFrom } from '../src/shared/geo/projection.ts';
import { createPointCloud, readLas, writeLas } from '../src/shared/pointcloud/index.ts';

const UTM15N = { name: 'WGS 84 / UTM zone 15N', wkt: 'PROJCS["WGS 84 / UTM zone 15N"]', type: 'projected', proj4: '+proj=utm +zone=15 +datum=WGS84 +units=m +no_defs', axis_order: ['east', 'north'], unit_factor: 1 };

async function download(url: string): Promise<Buffer> {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  return Buffer.from(await response.arrayBuffer());
}

describe('inspection: reconstruction imported from the cloud (nodeodm engine for processing_backend vortex, fake node)', () => {
  let node: FakeNodeOdm;
  let system: TestSystem;
  let account: TestAccount;
  let asset: any;
  let images: { name: string; body: Buffer }[];

  before(async () => {
    node = await startFakeNodeOdm({ pollsToFinish: 2 });
    // The cloud's default engine is exif; it also offers nodeodm, which the inspection service asks
    // for when an inspection's processing_backend is vortex (PROCESSING_BACKEND_ENGINES).
    system = await startTestSystem({ engine: 'exif', engines: ['nodeodm'], nodeodmUrl: node.url, nodeodmPollSeconds: 0, processingBackendEngines: { vortex: 'nodeodm' } });
    account = await system.newAccount({ projects: 5 });
    asset = await account.client.createAsset({ name: 'Mast', type: 1, latitude: FAKE_ORIGIN.latitude.toFixed(8), longitude: FAKE_ORIGIN.longitude.toFixed(8) });
    images = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => ({
        name: `img${i}.jpg`,
        body: await generateGeotaggedJpeg({ latitude: FAKE_ORIGIN.latitude + i * 0.0001, longitude: FAKE_ORIGIN.longitude + i * 0.0001, altitude: FAKE_ORIGIN.altitude, seed: i + 1, width: 160, height: 120 }),
      })),
    );
  });
  after(async () => {
    assertNoServerErrors(system);
    await system?.stop();
    await node?.close();
  });

  async function processed(processingParameters: Record<string, unknown>, backend = 'vortex') {
    const client = account.client;
    const inspection = await client.createInspection({ asset: asset.id, processing_parameters: processingParameters, processing_backend: backend });
    const keys = await client.upload(await client.storageCredentials(inspection.id), images);
    await client.register(inspection.id, keys);
    await client.process(inspection.id);
    const statuses: number[] = [];
    const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 120_000, onStatus: (s) => statuses.push(s) });
    return { inspection: done, statuses };
  }

  it('processing_backend chooses the engine: mapper -> the cloud default (exif), vortex -> nodeodm', async () => {
    const before = node.tasks.size;
    const mapper = await processed({ generate_point_cloud: true }, 'mapper');
    assert.equal(mapper.inspection.status, 7);
    assert.equal(node.tasks.size, before, 'no task on the node for mapper');
    assert.equal((await (await system.inspection.cloudFor(mapper.inspection.id)).getProject(mapper.inspection.project_id) as any).engine, 'exif');
    const extras = await account.client.expect(200, 'GET', `/v1/inspections/${mapper.inspection.id}/extras/`);
    // One format whatever the engine (OGC WKT): exif names the cloud's system though it reconstructs nothing.
    assert.match(extras.coordinate_system, /^COMPD_CS\["WGS 84 \/ UTM zone 15N \+ EGM96 height",PROJCS\[/, 'exif: nothing reconstructed, the photos\' UTM zone');
    const vortex = await processed({ generate_point_cloud: true }, 'vortex');
    assert.equal(vortex.inspection.status, 7);
    assert.equal(node.tasks.size, before + 1, 'one task on the node for vortex');
    assert.equal((await (await system.inspection.cloudFor(vortex.inspection.id)).getProject(vortex.inspection.project_id) as any).engine, 'nodeodm');
  });

  it('calibrated cameras, extras and outputs come from the cloud; coords_3d is null when the cloud cannot be read', async () => {
    const { inspection } = await processed({ generate_point_cloud: true });
    assert.equal(inspection.status, 7, inspection.processing_error);
    const outputs = new Map<string, string>((await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/outputs/`)).map((o: any) => [o.output_type, o.url]));
    const calibrated = JSON.parse((await download(outputs.get('calibrated_camera_parameters_json')!)).toString('utf8'));
    assert.equal(calibrated.reconstructed, true);
    assert.equal(calibrated.cameras.length, 4);

    const cameras = await account.client.cameras(inspection.id);
    assert.equal(cameras.length, 4);
    for (const camera of cameras) {
      const c = calibrated.cameras.find((x: any) => x.key.endsWith(`/${camera.filename}`));
      assert.ok(c, camera.filename);
      // The fake's shots look straight down: a half turn about the camera's x axis (w near 0).
      assert.deepEqual(camera.quaternions, c.quaternion);
      assert.ok(Math.abs(camera.quaternions[0]) < 0.01 && Math.abs(Math.abs(camera.quaternions[1]) - 1) < 0.01, JSON.stringify(camera.quaternions));
      assert.equal(camera.location.latitude, c.position_wgs84.latitude);
      assert.equal(camera.location.longitude, c.position_wgs84.longitude);
    }

    const extras = await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/extras/`);
    assert.match(extras.coordinate_system, /^PROJCS\["WGS 84 \/ UTM zone 15N"/, 'nodeodm: WKT too (ODM\'s UTM zone, no vertical component)');
    assert.deepEqual(extras.offset_3d_xyz, calibrated.offset_3d_xyz);

    // The fake node's point cloud is not a real LAZ file: the annotation is created, coords_3d is null.
    const annotation = await account.client.expect(201, 'POST', '/v1/annotations/?coords_3d=true', {
      type: 'Corrosion',
      inspection: inspection.id,
      photo_id: cameras[0].photo_id,
      data: { coords_2d: [[0.4, 0.4], [0.6, 0.4], [0.6, 0.6], [0.4, 0.6]] },
    });
    assert.equal(annotation.coords_3d, null);
  });

  it('clipping a point cloud that cannot be read ends in 17 with the reason; nothing else is lost', async () => {
    const { inspection, statuses } = await processed({ generate_point_cloud: true, clip_point_cloud: true, clipping_radius: 30 });
    assert.equal(inspection.status, 17, JSON.stringify(inspection));
    assert.ok(statuses.includes(4), statuses.join(' '));
    const detail = await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/`);
    assert.equal(detail.status, 17);
    // The cameras were imported before clipping; the cloud's outputs are still listed.
    const cameras = await account.client.cameras(inspection.id);
    assert.ok(cameras.every((c: any) => Array.isArray(c.quaternions)));
    const outputs = (await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/outputs/`)).map((o: any) => o.output_type);
    assert.ok(outputs.includes('point_cloud') && outputs.includes('calibrated_camera_parameters_json'), outputs.join(' '));
    const row = await system.inspection.db.selectFrom('inspection.inspections').select('processing_error').where('id', '=', inspection.id).executeTakeFirstOrThrow();
    assert.match(row.processing_error ?? '', /The point cloud cannot be read for clipping: not a LAS file/);
  });
});

describe('inspection: clipping without a point cloud (exif engine)', () => {
  let system: TestSystem;
  before(async () => {
    // vortex is mapped to an engine this cloud does not offer (only exif).
    system = await startTestSystem({ processingBackendEngines: { vortex: 'colmap' } });
  });
  after(async () => {
    assertNoServerErrors(system);
    await system?.stop();
  });

  /** A new account's inspection of a mast with 3 geotagged photos, processed until it settles. */
  async function processedMast(inspectionBody: Record<string, unknown>) {
    const { client } = await system.newAccount({ projects: 1 });
    const asset = await client.createAsset({ name: 'Mast', type: 1, latitude: '46.84260000', longitude: '-91.99400000' });
    const inspection = await client.createInspection({ asset: asset.id, ...inspectionBody });
    const images = await Promise.all(
      Array.from({ length: 3 }, async (_, i) => ({ name: `img${i}.jpg`, body: await generateGeotaggedJpeg({ latitude: 46.8426 + i * 1e-4, longitude: -91.994, altitude: 200, seed: i + 1, width: 160, height: 120 }) })),
    );
    await client.register(inspection.id, await client.upload(await client.storageCredentials(inspection.id), images));
    await client.process(inspection.id);
    return { client, inspection, done: await client.waitUntilSettled(inspection.id) };
  }

  it('clip_point_cloud with an engine that makes no point cloud: processing completes (7), nothing to clip', async () => {
    const { client, inspection, done } = await processedMast({ processing_parameters: { clip_point_cloud: true, clipping_radius: 10 } });
    assert.equal(done.status, 7);
    const extras = await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/extras/`);
    assert.match(extras.coordinate_system, /^COMPD_CS\["WGS 84 \/ UTM zone 15N \+ EGM96 height",PROJCS\[/, 'not reconstructed: the UTM zone of the photos, as WKT');
  });

  it('a processing_backend mapped to an engine the cloud does not offer: 16 with the cloud\'s reason, not a stuck inspection', async () => {
    const { inspection, done } = await processedMast({ processing_backend: 'vortex' });
    assert.equal(done.status, 16);
    const row = await system.inspection.db.selectFrom('inspection.inspections').select('processing_error').where('id', '=', inspection.id).executeTakeFirstOrThrow();
    assert.match(row.processing_error ?? '', /engine "colmap".*not offered/);
  });

  it('the clipper keeps the points within the radius of the asset, horizontally, at any height', async () => {
    const project = projectorFrom(UTM15N)!;
    const centre = project(FAKE_ORIGIN.latitude, FAKE_ORIGIN.longitude)!;
    // Points on a horizontal grid 2 m apart around the asset, each at two heights (0 and 80 m: a mast's foot and top).
    const offsets: [number, number, number][] = [];
    for (let dx = -40; dx <= 40; dx += 2) for (let dy = -40; dy <= 40; dy += 2) for (const z of [0, 80]) offsets.push([dx, dy, z]);
    const cloud = createPointCloud(offsets.length, true);
    offsets.forEach(([dx, dy, z], i) => cloud.positions.set([centre.x + dx, centre.y + dy, 200 + z], 3 * i));
    const files = { store: system.store, bucket: 'inspection-data' };
    await files.store.putObject(files.bucket, 'clip-test/cloud.las', writeLas(cloud, { horizontalEpsg: 32615, wkt: UTM15N.wkt }));
    const clipper = new PointCloudClipper(files, pino({ level: 'silent' }));
    const reconstruction = { engine: 'test', reconstructed: true, coordinate_system: UTM15N, offset_3d_xyz: [0, 0, 0], images_registered: 0, point_cloud: { bucket: files.bucket, key: 'clip-test/cloud.las' }, clipped_point_cloud: null };
    const clipped = await clipper.clip({ inspectionId: 999_999, reconstruction, asset: FAKE_ORIGIN, radiusMetres: 11 });
    const expected = offsets.filter(([dx, dy]) => Math.hypot(dx, dy) <= 11).length;
    assert.equal(clipped.points_before, offsets.length);
    assert.equal(clipped.points_after, expected);
    const { body } = await files.store.getObject(clipped.bucket, clipped.key);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    const las = readLas(Buffer.concat(chunks));
    assert.equal(las.count, expected);
    assert.equal(las.header.horizontalEpsg, 32615);
    let tops = 0;
    for (let i = 0; i < las.count; i++) {
      assert.ok(Math.hypot(las.positions[3 * i] - centre.x, las.positions[3 * i + 1] - centre.y) <= 11 + 1e-3);
      if (las.positions[3 * i + 2] > 250) tops++;
    }
    assert.equal(tops, expected / 2, 'the top of the mast is kept: the radius is horizontal');
    // Default radius (50 m) when clipping_radius is not given; an asset without a position is a clear error.
    assert.equal((await clipper.clip({ inspectionId: 999_999, reconstruction, asset: FAKE_ORIGIN, radiusMetres: undefined })).radius_m, 50);
    await assert.rejects(clipper.clip({ inspectionId: 999_999, reconstruction, asset: { latitude: null, longitude: null }, radiusMetres: 5 }), ClippingError);
    await assert.rejects(clipper.clip({ inspectionId: 999_999, reconstruction: { ...reconstruction, coordinate_system: { ...UTM15N, type: 'arbitrary' } }, asset: FAKE_ORIGIN, radiusMetres: 5 }), ClippingError);
  });
});
