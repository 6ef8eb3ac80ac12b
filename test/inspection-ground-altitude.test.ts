// ground_reference_altitude from the reconstruction (pipeline/ground-altitude.ts): the 5th
// percentile of the heights of the point cloud's points around the asset, instead of "0.000".
// A synthetic scene (ground at 100 m, a mast on it, a hill further away, a few points
// mismatched below the ground) checked on the function and through the importer, as processing
// runs it (the cloud's outputs stubbed, the files in the real object store).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { FAKE_ORIGIN } from './helpers/fake-nodeodm.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { groundReference, percentile } from '../src/inspection/pipeline/ground-altitude.ts';
import { ReconstructionImporter } from '../src/inspection/pipeline/reconstruction.ts';
import { projectorFrom } from '../src/shared/geo/projection.ts';
import { createPointCloud, writeLas, type PointCloud } from '../src/shared/pointcloud/index.ts';
import type { CloudClient } from '../src/inspection/cloud-client/cloud-client.ts';

const UTM15N = { name: 'WGS 84 / UTM zone 15N', wkt: 'PROJCS["WGS 84 / UTM zone 15N"]', type: 'projected', proj4: '+proj=utm +zone=15 +datum=WGS84 +units=m +no_defs', axis_order: ['east', 'north'], unit_factor: 1 };

/** Ground at `ground` m on a 2 m grid (±60 m), a 40 m mast at the centre, a 30 m hill 80 m east, 3 mismatched points 15 m below. */
function scene(centre: { x: number; y: number }, ground: number): PointCloud {
  const points: [number, number, number][] = [];
  for (let dx = -60; dx <= 60; dx += 2) for (let dy = -60; dy <= 60; dy += 2) points.push([dx, dy, ground + Math.sin(dx * 7 + dy) * 0.05]);
  for (let h = 0; h <= 40; h += 0.25) for (const [dx, dy] of [[0.5, 0.5], [-0.5, 0.5], [0.5, -0.5], [-0.5, -0.5]]) points.push([dx, dy, ground + h]);
  for (let dx = 70; dx <= 90; dx += 1) for (let dy = -10; dy <= 10; dy += 1) points.push([dx, dy, ground + 30]);
  for (const [dx, dy] of [[3, 3], [-4, 2], [1, -5]]) points.push([dx, dy, ground - 15]);
  const cloud = createPointCloud(points.length, false);
  points.forEach(([dx, dy, z], i) => cloud.positions.set([centre.x + dx, centre.y + dy, z], 3 * i));
  return cloud;
}

describe('ground reference altitude', () => {
  it('percentile: nearest rank', () => {
    assert.equal(percentile([5, 1, 4, 2, 3], 0), 1);
    assert.equal(percentile([5, 1, 4, 2, 3], 40), 2);
    assert.equal(percentile([5, 1, 4, 2, 3], 100), 5);
    assert.ok(Number.isNaN(percentile([], 5)));
  });

  it('the ground under the asset, not the mast, the hill or a few points reconstructed below the ground', () => {
    const centre = { x: 500_000, y: 5_000_000 };
    const ground = groundReference(scene(centre, 100), centre)!;
    assert.equal(ground.method, 'points_around_asset');
    assert.equal(ground.radius_m, 20);
    assert.ok(Math.abs(ground.altitude_m - 100) < 0.1, String(ground.altitude_m));
    // Few points near the asset: the radius widens; no asset position: the whole cloud.
    const far = groundReference(scene(centre, 100), { x: centre.x + 150, y: centre.y })!;
    assert.equal(far.radius_m, 100);
    assert.ok(Math.abs(far.altitude_m - 100) < 0.1);
    const whole = groundReference(scene(centre, 100), null)!;
    assert.equal(whole.method, 'whole_point_cloud');
    assert.ok(Math.abs(whole.altitude_m - 100) < 0.1);
    // A system in feet: metres out.
    assert.ok(Math.abs(groundReference(scene(centre, 100), centre, 0.3048)!.altitude_m - 30.48) < 0.05);
    assert.equal(groundReference(createPointCloud(0, false), centre), null);
  });
});

describe('ground reference altitude through the reconstruction import', () => {
  let system: TestSystem;
  before(async () => {
    system = await startTestSystem();
  });
  after(async () => {
    assertNoServerErrors(system);
    await system?.stop();
  });

  it('a reconstructed point cloud sets ground_reference_altitude; none leaves "0.000"', async () => {
    const { client } = await system.newAccount();
    const asset = await client.createAsset({ name: 'Mast', type: 1, latitude: FAKE_ORIGIN.latitude.toFixed(8), longitude: FAKE_ORIGIN.longitude.toFixed(8) });
    const inspection = await client.createInspection({ asset: asset.id });
    assert.equal(inspection.ground_reference_altitude, '0.000');
    const centre = projectorFrom(UTM15N)!(FAKE_ORIGIN.latitude, FAKE_ORIGIN.longitude)!;
    const bucket = 'inspection-data';
    await system.store.putObject(bucket, 'ground-test/cloud.las', writeLas(scene(centre, 187.25), { horizontalEpsg: 32615, wkt: UTM15N.wkt }));
    const calibrated = (reconstructed: boolean) => Buffer.from(JSON.stringify({ engine: 'test', reconstructed, output_coordinate_system: UTM15N, offset_3d_xyz: [0, 0, 0], images_registered: 0, cameras: [] }));
    await system.store.putObject(bucket, 'ground-test/calibrated.json', calibrated(true));
    await system.store.putObject(bucket, 'ground-test/not-reconstructed.json', calibrated(false));
    const stubCloud = (calibratedKey: string, withCloud: boolean) =>
      ({
        as() {
          return this; // the importer acts for the inspection's organization (CloudClient.as)
        },
        outputs: async () => [
          { output_type: 'calibrated_camera_parameters_json', availability: 'done', s3_key: calibratedKey, s3_bucket: bucket },
          ...(withCloud ? [{ output_type: 'point_cloud', availability: 'done', s3_key: 'ground-test/cloud.las', s3_bucket: bucket }] : []),
        ],
      }) as unknown as CloudClient;
    const importer = (cloud: CloudClient) => new ReconstructionImporter(system.inspection.db, system.inspection.inspectionRows, cloud, { store: system.store, bucket }, pino({ level: 'silent' }));
    const row = async () => (await system.inspection.inspectionRows.find(inspection.id))!;

    // Not reconstructed (exif), or no point cloud: the value stays.
    await importer(stubCloud('ground-test/not-reconstructed.json', true)).import(await row());
    assert.equal((await client.getInspection(inspection.id)).ground_reference_altitude, '0.000');
    await importer(stubCloud('ground-test/calibrated.json', false)).import(await row());
    assert.equal((await client.getInspection(inspection.id)).ground_reference_altitude, '0.000');

    const reconstruction = await importer(stubCloud('ground-test/calibrated.json', true)).import(await row());
    assert.equal(reconstruction?.ground_reference?.method, 'points_around_asset');
    const record = await client.getInspection(inspection.id);
    assert.ok(Math.abs(Number(record.ground_reference_altitude) - 187.25) < 0.1, record.ground_reference_altitude);
    assert.match(record.ground_reference_altitude, /^\d+\.\d{3}$/);
  });
});
