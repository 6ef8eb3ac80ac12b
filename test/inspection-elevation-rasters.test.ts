// The inspection service uses the cloud's DTM and DSM (issue 28): ground_reference_altitude from the
// DTM (pipeline/ground-altitude.ts, method `dtm`) and measurement volumes over the DSM
// (measurements/dsm-volume.ts, `surface: "dsm"`), through the real interfaces: Float32 COGs written
// by the cloud's own writer (rasters/cog-writer.ts, gdal_translate) into the real object store, the
// reconstruction imported by the importer as processing runs it (the cloud's outputs and map layers
// stubbed), measurements through HTTP.
// The scene, in UTM 15N around the asset: ground on a tilted plane (5 % east, 2 % north) at 187.25 m
// under the asset; a 4 x 5 x 2 m box on it; the DSM in 0.1 m cells with two nodata patches (one on
// the ground, one on the box's top) and the DTM (the plane alone) in 0.5 m cells. The point cloud says
// something else on purpose (ground at 180 m, a 1 m box), so that which source was used shows.
// Then what must not break a measurement or the import: a DTM/DSM that is not a TIFF, an 8-bit
// image, a raster in another UTM zone, a polygon outside the DSM: the point cloud is used, never a 500.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { toolMissingReason } from './helpers/system-tools.ts';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { FAKE_ORIGIN } from './helpers/fake-nodeodm.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { GDAL_TRANSLATE, quadrantCog } from './helpers/ortho-fixtures.ts';
import { writeCog } from '../src/cloud/processing/rasters/cog-writer.ts';
import { ReconstructionImporter } from '../src/inspection/pipeline/reconstruction.ts';
import { projectorFrom } from '../src/shared/geo/projection.ts';
import { createPointCloud, writeLas } from '../src/shared/pointcloud/index.ts';
import { heightAt, openElevationRaster } from '../src/inspection/ortho/elevation-raster.ts';
import { RasterRefused } from '../src/inspection/ortho/stored-cog.ts';
import type { CloudClient } from '../src/inspection/cloud-client/cloud-client.ts';
import type { RasterLayer } from '../src/inspection/ortho/raster-layers.ts';

const UTM15N = { name: 'WGS 84 / UTM zone 15N', wkt: 'PROJCS["WGS 84 / UTM zone 15N"]', type: 'projected', horizontal_epsg: 32615, proj4: '+proj=utm +zone=15 +datum=WGS84 +units=m +no_defs', axis_order: ['east', 'north'], unit_factor: 1 };
const CENTRE = projectorFrom(UTM15N)!(FAKE_ORIGIN.latitude, FAKE_ORIGIN.longitude)!;
/** The rasters' north-west corner: whole metres, so that cells of 0.1 and 0.5 m have edges on whole metres. */
const WEST = Math.floor(CENTRE.x) - 30;
const NORTH = Math.floor(CENTRE.y) + 30;
/** Grid origin of the test's local coordinates (whole metres, near the asset). */
const X0 = Math.floor(CENTRE.x);
const Y0 = Math.floor(CENTRE.y);
const GROUND = 187.25;
const ground = (x: number, y: number) => GROUND + 0.05 * (x - CENTRE.x) + 0.02 * (y - CENTRE.y);
/** The box: x X0+2..X0+6, y Y0+3..Y0+8, 2 m high. */
const inBox = (x: number, y: number) => x > X0 + 2 && x < X0 + 6 && y > Y0 + 3 && y < Y0 + 8;
const NODATA = -9999;

/** A 60 x 60 m Float32 raster from WEST, NORTH in `cell` m cells; heights by `height(x, y)` at cell centres (NaN: nodata). */
async function elevationCog(file: string, cell: number, height: (x: number, y: number) => number, epsg = 32615): Promise<Buffer> {
  const side = Math.round(60 / cell);
  const data = new Float32Array(side * side);
  for (let r = 0; r < side; r++) for (let c = 0; c < side; c++) data[r * side + c] = height(WEST + (c + 0.5) * cell, NORTH - (r + 0.5) * cell);
  await writeCog(file, { width: side, height: side, bands: 1, data, nodata: NODATA }, { originX: WEST, originY: NORTH, cellSize: cell, wkt: UTM15N.wkt, epsg });
  return fs.readFileSync(file);
}

function layerOf(bucket: string, key: string, resolution: number): RasterLayer {
  return { bucket, key, etag: null, bounds: { sw: [FAKE_ORIGIN.latitude - 0.001, FAKE_ORIGIN.longitude - 0.001], ne: [FAKE_ORIGIN.latitude + 0.001, FAKE_ORIGIN.longitude + 0.001] }, min_zoom: 16, max_zoom: 20, resolution_m: resolution, width: null, height: null, epsg: 32615 };
}

/** The point cloud: ground at 180 m (0.2 m grid, +-30 m), a 1 m box where the DSM's is 2 m. */
function cloudScene() {
  const points: [number, number, number][] = [];
  for (let x = -30; x < 30; x += 0.2) for (let y = -30; y < 30; y += 0.2) points.push([X0 + x + 0.1, Y0 + y + 0.1, 180 + (inBox(X0 + x + 0.1, Y0 + y + 0.1) ? 1 : 0)]);
  const cloud = createPointCloud(points.length, false);
  points.forEach((p, i) => cloud.positions.set(p, 3 * i));
  return cloud;
}

describe('inspection: ground altitude from the DTM, volumes over the DSM', { skip: toolMissingReason(GDAL_TRANSLATE, 'gdal-bin') }, () => {
  let system: TestSystem;
  let account: TestAccount;
  let bucket: string;
  const work = tempDir('oi-elevation-');
  const keys = { dsm: 'elevation-test/dsm.tif', dtm: 'elevation-test/dtm.tif', cloud: 'elevation-test/cloud.las', garbage: 'elevation-test/garbage.tif', rgb: 'elevation-test/rgb.tif', zone16: 'elevation-test/dsm-zone16.tif', calibrated: 'elevation-test/calibrated.json' };

  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    bucket = system.config.storageBucket;
    const dsm = (x: number, y: number) => {
      // Nodata: a 1 x 1 m patch of ground and a 0.5 x 0.5 m patch of the box's top, both inside the measured polygon.
      if ((x > X0 + 7 && x < X0 + 8 && y > Y0 + 1 && y < Y0 + 2) || (x > X0 + 3 && x < X0 + 3.5 && y > Y0 + 5 && y < Y0 + 5.5)) return NaN;
      return ground(x, y) + (inBox(x, y) ? 2 : 0);
    };
    await system.store.putObject(bucket, keys.dsm, await elevationCog(path.join(work, 'dsm.tif'), 0.1, dsm));
    await system.store.putObject(bucket, keys.dtm, await elevationCog(path.join(work, 'dtm.tif'), 0.5, ground));
    await system.store.putObject(bucket, keys.zone16, await elevationCog(path.join(work, 'zone16.tif'), 0.1, dsm, 32616));
    await system.store.putObject(bucket, keys.rgb, await quadrantCog(work));
    await system.store.putObject(bucket, keys.garbage, Buffer.concat([Buffer.from('II*\0'), Buffer.alloc(4000, 7)]));
    await system.store.putObject(bucket, keys.cloud, writeLas(cloudScene(), { horizontalEpsg: 32615, wkt: UTM15N.wkt }));
    await system.store.putObject(bucket, keys.calibrated, Buffer.from(JSON.stringify({ engine: 'test', reconstructed: true, output_coordinate_system: UTM15N, offset_3d_xyz: [0, 0, 0], images_registered: 0, cameras: [] })));
  });
  after(async () => {
    assertNoServerErrors(system);
    await system?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('the reader: bilinear heights between cell centres, nodata left out, positions outside the raster null; an 8-bit image and a file that is not a TIFF refused', async () => {
    const dtm = await openElevationRaster(system.store, layerOf(bucket, keys.dtm, 0.5), UTM15N as never);
    for (const [dx, dy] of [[0, 0], [0.13, -0.37], [-12.3, 7.9]]) {
      const h = (await heightAt(dtm, CENTRE.x + dx, CENTRE.y + dy))!;
      assert.ok(Math.abs(h - ground(CENTRE.x + dx, CENTRE.y + dy)) < 1e-3, `${h} at ${dx}, ${dy}`);
    }
    assert.equal(await heightAt(dtm, WEST - 1, NORTH - 10), null);
    const dsm = await openElevationRaster(system.store, layerOf(bucket, keys.dsm, 0.1), UTM15N as never);
    // In the nodata patch of the ground: the nearest cells with data, still on the plane within a few mm.
    const x = X0 + 7.04;
    const y = Y0 + 1.5;
    assert.ok(Math.abs((await heightAt(dsm, x, y))! - ground(x, y)) < 0.01);
    for (const key of [keys.rgb, keys.garbage]) {
      await assert.rejects(openElevationRaster(system.store, layerOf(bucket, key, 0.1), UTM15N as never), (err) => err instanceof RasterRefused, key);
    }
    await assert.rejects(openElevationRaster(system.store, layerOf(bucket, keys.zone16, 0.1), UTM15N as never), /EPSG:32616/);
  });

  it('ground_reference_altitude is the DTM\'s height at the asset (method dtm), not the point cloud\'s percentile; a broken DTM falls back to the points', async () => {
    const { client } = account;
    const asset = await client.createAsset({ name: 'Mast', type: 1, latitude: FAKE_ORIGIN.latitude.toFixed(8), longitude: FAKE_ORIGIN.longitude.toFixed(8) });
    const inspection = await client.createInspection({ asset: asset.id });
    const stubCloud = (dtmKey: string) =>
      ({
        as() {
          return this; // the importer acts for the inspection's organization (CloudClient.as)
        },
        outputs: async () => [
          { output_type: 'calibrated_camera_parameters_json', availability: 'done', s3_key: keys.calibrated, s3_bucket: bucket },
          { output_type: 'point_cloud', availability: 'done', s3_key: keys.cloud, s3_bucket: bucket },
          { output_type: 'dtm', result_type: 'dtm', availability: 'done', s3_key: dtmKey, s3_bucket: bucket },
        ],
        getProject: async () => ({ outputs: { map: { layers: [{ name: 'DTM', layer_type: 'dtm', s3_key: dtmKey, s3_bucket: bucket, ...layerOf(bucket, dtmKey, 0.5) }] } } }),
      }) as unknown as CloudClient;
    const importer = (cloud: CloudClient) => new ReconstructionImporter(system.inspection.db, system.inspection.inspectionRows, cloud, { store: system.store, bucket }, pino({ level: 'silent' }));
    const row = async () => (await system.inspection.inspectionRows.find(inspection.id))!;

    const reconstruction = (await importer(stubCloud(keys.dtm)).import(await row()))!;
    assert.equal(reconstruction.rasters?.dtm?.key, keys.dtm);
    const reference = reconstruction.ground_reference as any;
    assert.equal(reference.method, 'dtm');
    assert.deepEqual(reference.raster, { bucket, key: keys.dtm, resolution_m: 0.5 });
    assert.equal(reference.radius_m, 5);
    // A disc of 5 m in 0.5 m cells: about pi x 10^2 = 314 cells.
    assert.ok(reference.cells > 280 && reference.cells < 340, String(reference.cells));
    const record = await client.getInspection(inspection.id);
    assert.ok(Math.abs(Number(record.ground_reference_altitude) - GROUND) <= 0.01, `${record.ground_reference_altitude}: the DTM plane's ${GROUND} m at the asset (the points say 180)`);

    // A DTM that is not a TIFF, or an 8-bit image: the points' 5th percentile (180 m), and no failure.
    for (const key of [keys.garbage, keys.rgb]) {
      const fallback = (await importer(stubCloud(key)).import(await row()))!;
      assert.equal(fallback.ground_reference?.method, 'points_around_asset', key);
      assert.ok(Math.abs(Number((await client.getInspection(inspection.id)).ground_reference_altitude) - 180) < 0.01, key);
    }
  });

  it('a polygon over the DSM: the box\'s volume from the DSM cells (surface dsm, the DSM\'s cell size), nodata cells filled from their neighbours', async () => {
    const { client } = account;
    const asset = await client.createAsset({ name: 'Yard', type: 2 });
    const inspection = await client.createInspection({ asset: asset.id });
    const rasters = { orthomosaic: null, dsm: layerOf(bucket, keys.dsm, 0.1), dtm: layerOf(bucket, keys.dtm, 0.5), orthomosaic_missing_reason: null };
    await system.inspection.inspectionRows.recordReconstruction(inspection.id, { engine: 'test', reconstructed: true, coordinate_system: UTM15N, offset_3d_xyz: [0, 0, 0], images_registered: 0, point_cloud: { bucket, key: keys.cloud }, clipped_point_cloud: null, rasters } as never);
    // Squares drawn on the (tilted) ground: their plane is the ground's.
    const at = (dx: number, dy: number): [number, number, number] => [X0 + dx, Y0 + dy, ground(X0 + dx, Y0 + dy)];
    const square = (x0: number, y0: number, x1: number, y1: number) => [[at(x0, y0), at(x1, y0), at(x1, y1), at(x0, y1), at(x0, y0)]];
    const created = await client.expect(201, 'POST', `/v1/inspections/${inspection.id}/measurements/`, {
      annotations: [
        { properties: { name: 'Box' }, geometry: { type: 'Polygon', coordinates: square(0, 0, 10, 10) } },
        // Reaching past the DSM's east edge (30 m from the asset), drawn on the cloud's ground: the cloud's 1 m box.
        { properties: { name: 'Over the edge' }, geometry: { type: 'Polygon', coordinates: [[[X0, Y0, 180], [X0 + 40, Y0, 180], [X0 + 40, Y0 + 10, 180], [X0, Y0 + 10, 180], [X0, Y0, 180]]] } },
        // Over the DSM's nodata patch of ground (1 x 1 m, plus a cell's margin): too little data, the point cloud.
        { properties: { name: 'Nodata' }, geometry: { type: 'Polygon', coordinates: square(6.9, 0.9, 8.1, 2.1) } },
      ],
    });
    const [box, edge, hole] = created.annotations.map((m: any) => m.extension.computed);
    assert.equal(hole.volume.surface, 'point_cloud', JSON.stringify(hole));
    // 4 x 5 x 2 = 40 m3: the box's edges fall on cell edges and its top and the ground are planes, so
    // only the float32 heights and the filled nodata patches stand between the sum and 40 (within 0.1 %).
    assert.equal(box.volume.surface, 'dsm', JSON.stringify(box));
    assert.ok(Math.abs(box.volume_m3 - 40) <= 0.04, JSON.stringify(box));
    assert.ok(box.volume.below_m3 < 0.01, JSON.stringify(box));
    assert.equal(box.volume.cell_size_m, 0.1);
    assert.equal(box.volume.base, 'polygon_plane');
    // 100 x 100 cells inside, 100 + 25 of them nodata.
    assert.equal(box.volume.coverage, Math.round((1 - 125 / 10_000) * 1000) / 1000, JSON.stringify(box));
    assert.equal(edge.volume.surface, 'point_cloud', JSON.stringify(edge));
    assert.ok(Math.abs(edge.volume_m3 - 20) < 0.8, JSON.stringify(edge));
  });

  it('a DSM that cannot be used (not a TIFF, 8-bit, another UTM zone, gone from the store): the point cloud\'s volume, 201, never a 500', async () => {
    const { client } = account;
    const asset = await client.createAsset({ name: 'Yard 2', type: 2 });
    for (const key of [keys.garbage, keys.rgb, keys.zone16, 'elevation-test/missing.tif']) {
      const inspection = await client.createInspection({ asset: asset.id });
      const rasters = { orthomosaic: null, dsm: layerOf(bucket, key, 0.1), dtm: null, orthomosaic_missing_reason: null };
      await system.inspection.inspectionRows.recordReconstruction(inspection.id, { engine: 'test', reconstructed: true, coordinate_system: UTM15N, offset_3d_xyz: [0, 0, 0], images_registered: 0, point_cloud: { bucket, key: keys.cloud }, clipped_point_cloud: null, rasters } as never);
      const at = (dx: number, dy: number): [number, number, number] => [X0 + dx, Y0 + dy, 180];
      const created = await client.expect(201, 'POST', `/v1/inspections/${inspection.id}/measurements/`, {
        annotations: [{ geometry: { type: 'Polygon', coordinates: [[at(0, 0), at(10, 0), at(10, 10), at(0, 10), at(0, 0)]] } }],
      });
      const computed = created.annotations[0].extension.computed;
      assert.equal(computed.volume.surface, 'point_cloud', key);
      assert.ok(Math.abs(computed.volume_m3 - 20) < 0.8, `${key}: ${JSON.stringify(computed)}`);
    }
  });
});
