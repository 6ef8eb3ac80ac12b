// What a measurement measures, in its record (`extension.computed`, measurements/quantities.ts and
// volume.ts) and in the report: a line of known length, a polygon of known area and perimeter,
// and the volume above a polygon's plane over a synthetic point cloud (ground with a 4 x 5 x 2 m
// box on it, and a pit), stored as the reconstruction's point cloud the way processing records it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, waitFor } from './helpers/inspection-fixtures.ts';
import { createPointCloud, writeLas } from '../src/shared/pointcloud/index.ts';

const X = 500_000;
const Y = 5_000_000;
const Z = 100;
const UTM15N = { name: 'WGS 84 / UTM zone 15N', wkt: 'PROJCS["WGS 84 / UTM zone 15N"]', type: 'projected', proj4: '+proj=utm +zone=15 +datum=WGS84 +units=m +no_defs', axis_order: ['east', 'north'], unit_factor: 1 };

/**
 * Ground at Z, one point at the centre of every 10 cm square from -5 to 15 m in x and y (each
 * point stands for 1 dm2), a 4 x 5 x 2 m box on it at x 2..6, y 3..8, and a 2 x 2 x 1 m pit at
 * x 11..13, y 11..13.
 */
function scene() {
  const points: [number, number, number][] = [];
  for (let i = 0; i < 200; i++) {
    for (let j = 0; j < 200; j++) {
      const x = -5 + (i + 0.5) * 0.1;
      const y = -5 + (j + 0.5) * 0.1;
      const box = x >= 2 && x <= 6 && y >= 3 && y <= 8 ? 2 : 0;
      const pit = x > 11 && x < 13 && y > 11 && y < 13 ? -1 : 0;
      points.push([X + x, Y + y, Z + box + pit]);
    }
  }
  const cloud = createPointCloud(points.length, false);
  points.forEach((p, i) => cloud.positions.set(p, 3 * i));
  return cloud;
}

const at = (x: number, y: number, z = Z): [number, number, number] => [X + x, Y + y, z];
const square = (x0: number, y0: number, x1: number, y1: number, z = Z) => [[at(x0, y0, z), at(x1, y0, z), at(x1, y1, z), at(x0, y1, z), at(x0, y0, z)]];

describe('inspection service: measurement quantities', () => {
  let system: TestSystem;
  let account: TestAccount;
  let inspectionId: number;
  let base: string;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    const asset = await account.client.createAsset({ name: 'Yard', type: 2 });
    inspectionId = (await account.client.createInspection({ asset: asset.id })).id;
    base = `/v1/inspections/${inspectionId}/measurements/`;
  });
  after(async () => {
    assertNoServerErrors(system);
    await system?.stop();
  });

  it('a line carries its length, a polygon its area and perimeter, in metres; a point nothing', async () => {
    const created = await account.client.expect(201, 'POST', base, {
      annotations: [
        // 3-4-5 then 12 up: 17 m.
        { properties: { name: 'Line' }, geometry: { type: 'LineString', coordinates: [[0, 0, 0], [3, 4, 0], [3, 4, 12]] } },
        // A 4 m x 3 m rectangle rising 2 m across its 3 m side: 4 x sqrt(13) m2, perimeter 8 + 2 sqrt(13) m; a 1 x 1 m hole (area only).
        {
          properties: { name: 'Roof' },
          geometry: { type: 'Polygon', coordinates: [[[0, 0, 10], [4, 0, 10], [4, 3, 12], [0, 3, 12], [0, 0, 10]], [[1, 1, 10 + 2 / 3], [2, 1, 10 + 2 / 3], [2, 2, 10 + 4 / 3], [1, 2, 10 + 4 / 3], [1, 1, 10 + 2 / 3]]] },
          extension: { mine: 1, computed: { area_m2: 999 } },
        },
        { properties: { name: 'Spot' }, geometry: { type: 'Point', coordinates: [1, 2, 3] } },
      ],
    });
    const [line, roof, spot] = created.annotations;
    assert.deepEqual(line.extension.computed, { length_m: 17, perimeter_m: null, area_m2: null, volume_m3: null, volume: null });
    const slope = Math.sqrt(13);
    assert.equal(roof.extension.computed.area_m2, Math.round((4 * slope - slope / 3) * 1000) / 1000);
    assert.equal(roof.extension.computed.perimeter_m, Math.round((8 + 2 * slope) * 1000) / 1000);
    assert.equal(roof.extension.computed.length_m, null);
    assert.equal(roof.extension.computed.volume_m3, null, 'no point cloud yet');
    assert.equal(roof.extension.mine, 1, 'the client\'s keys are kept; its computed is replaced');
    assert.deepEqual(spot.extension.computed, { length_m: null, perimeter_m: null, area_m2: null, volume_m3: null, volume: null });
    // Read back as written; a PATCH of the extension keeps the numbers, a new geometry recomputes them.
    const listed = (await account.client.expect(200, 'GET', base)).results;
    assert.deepEqual(listed[0].extension, line.extension);
    const patched = await account.client.expect(200, 'PATCH', `${base}${line.id}/`, { extension: { note: 'x', computed: null } });
    assert.deepEqual(patched.extension, { note: 'x', computed: line.extension.computed });
    const moved = await account.client.expect(200, 'PATCH', `${base}${line.id}/`, { geometry: { type: 'LineString', coordinates: [[0, 0, 0], [6, 8, 0]] } });
    assert.equal(moved.extension.computed.length_m, 10);
    assert.equal(moved.extension.note, 'x');
    const put = await account.client.expect(200, 'PUT', `${base}${spot.id}/`, { properties: {}, tags: [], geometry: { type: 'LineString', coordinates: [[0, 0, 0], [0, 0, 2.5]] } });
    assert.equal(put.extension.computed.length_m, 2.5);
  });

  it('a polygon over the point cloud carries the volume above its plane (and below it)', async () => {
    const bucket = system.config.storageBucket;
    await system.store.putObject(bucket, 'quantities-test/cloud.las', writeLas(scene(), { horizontalEpsg: 32615, wkt: UTM15N.wkt }));
    const reconstruction = { engine: 'test', reconstructed: true, coordinate_system: UTM15N, offset_3d_xyz: [0, 0, 0], images_registered: 0, point_cloud: { bucket, key: 'quantities-test/cloud.las' }, clipped_point_cloud: null };
    await system.inspection.inspectionRows.recordReconstruction(inspectionId, reconstruction as never);

    const created = await account.client.expect(201, 'POST', base, {
      annotations: [
        { properties: { name: 'Box' }, geometry: { type: 'Polygon', coordinates: square(0, 0, 10, 10) } },
        { properties: { name: 'Pit' }, geometry: { type: 'Polygon', coordinates: square(10, 10, 14, 14) } },
        { properties: { name: 'Lifted base' }, geometry: { type: 'Polygon', coordinates: square(0, 0, 10, 10, Z + 1) } },
        { properties: { name: 'Away' }, geometry: { type: 'Polygon', coordinates: square(100, 100, 110, 110) } },
      ],
    });
    const [box, pit, lifted, away] = created.annotations.map((m: any) => m.extension.computed);
    // The box: 4 x 5 x 2 = 40 m3 (within 2 %: the cells along its edges are averaged).
    assert.ok(Math.abs(box.volume_m3 - 40) < 0.8, JSON.stringify(box));
    assert.equal(box.area_m2, 100);
    assert.equal(box.perimeter_m, 40);
    assert.equal(box.volume.base, 'polygon_plane');
    assert.ok(box.volume.below_m3 < 0.5, JSON.stringify(box));
    assert.ok(box.volume.points === 10_000 && box.volume.coverage === 1, JSON.stringify(box));
    assert.ok(box.volume.cell_size_m > 0.1 && box.volume.cell_size_m < 0.3, JSON.stringify(box));
    // The pit: nothing above, 2 x 2 x 1 = 4 m3 below.
    assert.ok(pit.volume_m3 < 0.2, JSON.stringify(pit));
    assert.ok(Math.abs(pit.volume.below_m3 - 4) < 0.3, JSON.stringify(pit));
    // A base 1 m up: 4 x 5 x 1 above it, the rest of the ground (80 m2 x 1 m) below.
    assert.ok(Math.abs(lifted.volume_m3 - 20) < 0.8, JSON.stringify(lifted));
    assert.ok(Math.abs(lifted.volume.below_m3 - 80) < 1.6, JSON.stringify(lifted));
    // No point over it: no volume (not 0).
    assert.equal(away.volume_m3, null);
    assert.equal(away.volume, null);
    assert.equal(away.area_m2, 100);

    // The report prints the same numbers.
    await account.client.expect(202, 'POST', `/v1/inspections/${inspectionId}/report/`, { include_sharetoken: false });
    await waitFor('report', async () => (await account.client.getInspection(inspectionId)).report_status === 'available');
    const outputs = await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/outputs/`);
    const json = (await (await fetch(outputs.find((o: any) => o.output_type === 'report_json').url)).json()) as any;
    const reported = json.measurements.find((m: any) => m.name === 'Box');
    assert.equal(reported.volume, box.volume_m3);
    assert.equal(reported.area, 100);
    assert.equal(reported.perimeter, 40);
    assert.equal(reported.length, 40, 'a polygon\'s length is its perimeter, as before');
    assert.equal(json.measurements.find((m: any) => m.name === 'Line').length, 10);
  });
});
