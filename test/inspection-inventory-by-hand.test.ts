// Inventory by hand (issue 30 §4; inventory/inventory.service.ts, inventory-geometry.ts,
// inventory-statuses.ts), through the API:
// - a synthetic panel antenna (a box 1.4 x 0.3 x 0.15 m with known azimuth, downtilt and lean)
//   on a tower in absolute UTM coordinates, photographed by three synthetic calibrated cameras
//   (gimbal poses as test/helpers/ray-cast-scene.ts builds them, with radial distortion); its
//   front face's corners projected into each photo are the marks. The computed azimuth,
//   downtilt and plumb must be within ANGLE_TOLERANCE degrees of the truth, coords_3d and height
//   within 1 cm: a broken formula (swapped atan2, wrong sign of the normal, height above the wrong
//   reference) is off by far more;
// - CRUD: 201/200/204, `number` per inspection, 400s in the CONTRACT's format (one photo, an
//   uncalibrated photo, another inspection's photo, angles beside marks, an unknown model_type,
//   coordinates outside 0..1, nearly the same viewpoint), another organization's 404;
// - the review statuses: null -> 4 on creation, review_done -> 5, a change reopens (4), every
//   item deleted then review_done -> 6, review_done again -> 409.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { requireTool } from './helpers/system-tools.ts';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, waitFor } from './helpers/inspection-fixtures.ts';
import { cameraFromCalibrated } from '../src/shared/pointcloud/index.ts';
import { seededRandom } from '../src/shared/seeded-random.ts';

/** A 1 px error on a corner of a 0.3 m face seen from 15 m (about 64 px across) turns it by up to ~1°. */
const NOISY_TOLERANCE = 2;
import { add, ANGLE_TOLERANCE, BASE, CALIBRATIONS, calibrationLookingAt, E, faceCorners, marksOn, N, rad, trueAzimuthAtFixtureAsset, TRUTH, Z } from './helpers/synthetic-antenna.ts';

/** The synthetic antenna's azimuth from true north: the scene is built in grid coordinates. */
const TRUE_AZIMUTH = trueAzimuthAtFixtureAsset(TRUTH.azimuth);
import { itemGeometry, triangulate, type Vec3 } from '../src/inspection/inventory/inventory-geometry.ts';
import { itemViews } from '../src/inspection/inventory/inventory-views.ts';

describe('inventory geometry (pure)', () => {
  it('triangulates two rays to their crossing, and the synthetic antenna to its truth', () => {
    const p = triangulate([
      { origin: [0, 0, 0], direction: [1, 0, 0] },
      { origin: [5, -3, 0], direction: [0, 1, 0] },
    ]);
    assert.deepEqual(p.map((v) => Math.round(v * 1e9) / 1e9), [5, 0, 0]);
    const g = itemGeometry(CALIBRATIONS.map((c, i) => ({ photoId: i + 1, camera: cameraFromCalibrated(c)!, corners: marksOn(c) as never })));
    assert.ok(Math.abs(g.azimuth - TRUTH.azimuth) < ANGLE_TOLERANCE, `azimuth ${g.azimuth}`);
    assert.ok(Math.abs(g.downtilt - TRUTH.downtilt) < ANGLE_TOLERANCE, `downtilt ${g.downtilt}`);
    assert.ok(Math.abs(g.plumb - TRUTH.plumb) < ANGLE_TOLERANCE, `plumb ${g.plumb}`);
    assert.ok(g.residual < 0.001, `residual ${g.residual}`);
  });
});

describe('inventory geometry with marking error', () => {
  it('corners clicked within ±1 px (of 4000) still give the azimuth and downtilt within NOISY_TOLERANCE, and a residual that shows it', () => {
    const random = seededRandom(30);
    const worst = { azimuth: 0, downtilt: 0 };
    for (let trial = 0; trial < 20; trial++) {
      const g = itemGeometry(
        CALIBRATIONS.map((c, i) => ({
          photoId: i + 1,
          camera: cameraFromCalibrated(c)!,
          corners: marksOn(c).map(([x, y]) => [x + (random() * 2 - 1) / c.width, y + (random() * 2 - 1) / c.height]) as never,
        })),
      );
      assert.ok(Math.abs(g.azimuth - TRUTH.azimuth) < NOISY_TOLERANCE, `azimuth ${g.azimuth}`);
      assert.ok(Math.abs(g.downtilt - TRUTH.downtilt) < NOISY_TOLERANCE, `downtilt ${g.downtilt}`);
      assert.ok(g.residual > 0 && g.residual < 0.01, `residual ${g.residual}`);
      worst.azimuth = Math.max(worst.azimuth, Math.abs(g.azimuth - TRUTH.azimuth));
      worst.downtilt = Math.max(worst.downtilt, Math.abs(g.downtilt - TRUTH.downtilt));
    }
    console.log(`# ±1 px on every corner, 20 trials: azimuth off by ${worst.azimuth.toFixed(2)}° at most, downtilt by ${worst.downtilt.toFixed(2)}° (truth ${TRUTH.azimuth}°, ${TRUTH.downtilt}°)`);
  });
});

describe('inventory by hand', () => {
  let system: TestSystem;
  let account: TestAccount;
  let stranger: TestAccount;
  let inspectionId: number;
  let photoIds: number[];

  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    stranger = await system.newAccount();
    const processed = await processedInspection(account);
    inspectionId = processed.inspection.id;
    photoIds = processed.cameras.map((c: { photo_id: number }) => c.photo_id).sort((a: number, b: number) => a - b);
    assert.ok(photoIds.length >= 3, 'the demo has at least three photos');
    // The first three photos calibrated as the synthetic cameras.
    await sql`update inspection.cameras set calibration = null where inspection_id = ${inspectionId}`.execute(system.inspection.db);
    for (const [i, calibration] of CALIBRATIONS.entries()) {
      await sql`update inspection.cameras set calibration = ${JSON.stringify(calibration)}::jsonb where id = ${photoIds[i]}`.execute(system.inspection.db);
    }
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspectionId}/`, { base_plate_location: BASE });
  });
  after(async () => {
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  const marks = (n: number) => Object.fromEntries(CALIBRATIONS.slice(0, n).map((c, i) => [String(photoIds[i]), marksOn(c)]));
  const inventoryStatus = async () => (await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/`)).additional_statuses.inventory;

  it('places an antenna marked on two photos at its synthetic azimuth, downtilt, plumb and height', async () => {
    assert.equal(await inventoryStatus(), null);
    for (const n of [2, 3]) {
      const item = await account.client.expect(201, 'POST', `/v1/inspections/${inspectionId}/inventory/`, { model_type: 'panel_antenna', name: `Sector ${n}`, coords_2d: marks(n) });
      console.log(`# ${n} photos: azimuth ${item.azimuth}° (truth ${TRUE_AZIMUTH.toFixed(2)}° from true north), downtilt ${item.downtilt}° (${TRUTH.downtilt}°), plumb ${item.plumb}° (${TRUTH.plumb}°), height ${item.height} m (${(TRUTH.centre[2] - BASE.z).toFixed(2)} m)`);
      assert.ok(Math.abs(item.azimuth - TRUE_AZIMUTH) < ANGLE_TOLERANCE, `azimuth ${item.azimuth} from ${n} photos`);
      assert.ok(Math.abs(item.downtilt - TRUTH.downtilt) < ANGLE_TOLERANCE, `downtilt ${item.downtilt}`);
      assert.ok(Math.abs(item.plumb - TRUTH.plumb) < ANGLE_TOLERANCE, `plumb ${item.plumb}`);
      assert.ok(Math.abs(item.height - (TRUTH.centre[2] - BASE.z)) < 0.01, `height ${item.height}`);
      assert.ok(Math.abs(item.width - TRUTH.width) < 0.01, `width ${item.width}`);
      item.coords_3d.forEach((v: number, i: number) => assert.ok(Math.abs(v - TRUTH.centre[i]) < 0.01, `coords_3d ${item.coords_3d}`));
      assert.equal(item.source, 'manual');
      assert.equal(item.photo_id, photoIds[0]);
      assert.equal(item.computation.method, 'triangulation');
      assert.equal(item.computation.photos, n);
      assert.equal(item.computation.height_reference, 'base_plate_location');
      assert.match(item.computation.azimuth_reference, /^true north \(the output system's grid north turned by the meridian convergence at the asset, 1\.77\d°\)$/);
      assert.ok(item.computation.residual_m < 0.002, `residual ${item.computation.residual_m}`);
      assert.ok(Math.abs(item.computation.vertical_size_m - TRUTH.tall) < 0.01);
    }
    const listed = await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/inventory/`);
    assert.deepEqual(
      listed.map((i: { number: number }) => i.number),
      [1, 2],
    );
    assert.equal(await inventoryStatus(), 4);
  });

  it('photo_projection: the face on every calibrated photo that sees it (marked or not); point_of_view: the most head-on camera; offset_xyz: from the base plate', async () => {
    const item = await account.client.expect(201, 'POST', `/v1/inspections/${inspectionId}/inventory/`, { model_type: 'panel_antenna', name: 'Views', coords_2d: marks(2) });
    try {
      // Photos 1 and 2 marked, photo 3 not: all three see the front; the others are not calibrated.
      assert.deepEqual(Object.keys(item.photo_projection).map(Number).sort((a, b) => a - b), photoIds.slice(0, 3));
      for (const [i, c] of CALIBRATIONS.entries()) {
        const projected = item.photo_projection[String(photoIds[i])];
        marksOn(c).forEach(([x, y], k) => assert.ok(Math.abs(projected[k][0] - x) < 2e-4 && Math.abs(projected[k][1] - y) < 2e-4, `photo ${i + 1} corner ${k}: ${projected[k]} against ${[x, y]}`));
      }
      // Camera 2 stands 5° off the face's azimuth and near its downtilt: the most head-on.
      const p = CALIBRATIONS[1].position_output_crs;
      assert.deepEqual(item.point_of_view, [p.x, p.y, p.z].map((v) => Number(v.toFixed(3))));
      const expected = [TRUTH.centre[0] - BASE.x, TRUTH.centre[1] - BASE.y, TRUTH.centre[2] - BASE.z];
      [item.offset_xyz.x, item.offset_xyz.y, item.offset_xyz.z].forEach((v: number, i: number) => assert.ok(Math.abs(v - expected[i]) < 0.01, `offset_xyz ${JSON.stringify(item.offset_xyz)}`));
      // Cleared marks clear what they decided.
      const cleared = await account.client.expect(200, 'PATCH', `/v1/inspections/${inspectionId}/inventory/${item.id}/`, { coords_2d: {} });
      assert.deepEqual([cleared.photo_projection, cleared.point_of_view, cleared.offset_xyz], [{}, [], {}]);
    } finally {
      await account.client.expect(204, 'DELETE', `/v1/inspections/${inspectionId}/inventory/${item.id}/`);
    }
  });

  it('photo_projection leaves out a camera behind the face and one that frames only part of it', () => {
    const corners = faceCorners();
    const az = rad(TRUTH.azimuth);
    const normal: [number, number, number] = [Math.sin(az), Math.cos(az), 0];
    const front = cameraFromCalibrated(CALIBRATIONS[1])!;
    const behind = cameraFromCalibrated(calibrationLookingAt(add(TRUTH.centre, normal, -15), TRUTH.centre))!;
    // Looking 1.1 m right of the face's top-right corner from 2 m: the face's left part falls outside the frame.
    const partial = cameraFromCalibrated(calibrationLookingAt(add(TRUTH.centre, normal, 2), add(corners[1], [Math.cos(az) * -1.1, Math.sin(az) * 1.1, 0]) as never))!;
    const views = itemViews({ centre: TRUTH.centre, corners, normal }, [{ photoId: 1, camera: front }, { photoId: 2, camera: behind }, { photoId: 3, camera: partial }], null);
    assert.deepEqual(Object.keys(views.photo_projection), ['1']);
    assert.deepEqual(views.offset_xyz, {}, 'no base plate: no offset');
    assert.deepEqual(itemViews({ centre: TRUTH.centre, corners, normal }, [{ photoId: 2, camera: behind }], null).point_of_view, []);
  });

  it("the report lists the items with their geometry and how it was found, and sketches them from above", async (t) => {
    await account.client.expect(202, 'POST', `/v1/inspections/${inspectionId}/report/`, { include_2d_plans: true });
    await waitFor('report', async () => {
      const i = await account.client.getInspection(inspectionId);
      assert.notEqual(i.report_status, 'error');
      return i.report_status === 'available';
    });
    const outputs = await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/outputs/`);
    const json = (await (await fetch(outputs.find((o: { output_type: string }) => o.output_type === 'report_json').url)).json()) as {
      inventory_items: { number: number; azimuth: number; computation: { photos: number } }[];
      plans_2d: { items_drawn: { inventory_items: number[] }; raster: unknown; no_raster_reason: string | null }[];
    };
    // The 2D plan (report-plan.ts) draws both items; this inspection has no orthomosaic: a plain background, said why.
    assert.deepEqual(json.plans_2d[0].items_drawn.inventory_items, json.inventory_items.map((i) => i.number));
    assert.equal(json.plans_2d[0].raster, null);
    assert.match(json.plans_2d[0].no_raster_reason ?? '', /no orthomosaic/);
    assert.deepEqual(
      json.inventory_items.map((i) => i.computation.photos),
      [2, 3],
    );
    assert.ok(Math.abs(json.inventory_items[0].azimuth - TRUE_AZIMUTH) < ANGLE_TOLERANCE);
    if (!requireTool(t, '/usr/bin/pdftoppm', 'poppler-utils')) return;
    // INVENTORY_REPORT_DIR=/some/folder keeps the PDF and its rendered pages for a person to look at.
    const dir = process.env.INVENTORY_REPORT_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'inventory-report-'));
    fs.mkdirSync(dir, { recursive: true });
    const pdfPath = path.join(dir, 'inventory-report.pdf');
    fs.writeFileSync(pdfPath, Buffer.from(await (await fetch(outputs.find((o: { output_type: string }) => o.output_type === 'report_pdf').url)).arrayBuffer()));
    const text = (await promisify(execFile)('/usr/bin/pdftotext', ['-layout', pdfPath, '-'])).stdout.replace(/\s+/g, ' ');
    for (const expected of ['Inventory (2)', 'Sector 2', 'triangulated from 2 photos', 'triangulated from 3 photos', `${TRUE_AZIMUTH.toFixed(1)}°`, '6.0°', '31.50 m', "the asset's base plate", 'Plan view (from above)', 'Top-down plan around the asset', '#1, #2']) {
      assert.ok(text.includes(expected), `PDF text has "${expected}"`);
    }
    await promisify(execFile)('/usr/bin/pdftoppm', ['-png', '-r', '80', pdfPath, path.join(dir, 'page')]);
    if (!process.env.INVENTORY_REPORT_DIR) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a different antenna (azimuth 250°, uptilt 3°, upright) from the same photos keeps its own truth', async () => {
    const other = { ...TRUTH, azimuth: 250, downtilt: -3, plumb: 0, centre: [E - 0.5, N + 0.4, Z + 28] as Vec3 };
    const cams = [-30, 0, 35].map((d, i) => calibrationLookingAt(add(other.centre, [Math.sin(rad(other.azimuth + d)) * 12, Math.cos(rad(other.azimuth + d)) * 12, i - 1]), other.centre));
    for (const [i, c] of cams.entries()) await sql`update inspection.cameras set calibration = ${JSON.stringify(c)}::jsonb where id = ${photoIds[i]}`.execute(system.inspection.db);
    try {
      const coords = Object.fromEntries(cams.map((c, i) => [String(photoIds[i]), marksOn(c, faceCorners(other))]));
      const item = await account.client.expect(201, 'POST', `/v1/inspections/${inspectionId}/inventory/`, { model_type: 'panel_antenna', coords_2d: coords });
      assert.ok(Math.abs(item.azimuth - trueAzimuthAtFixtureAsset(250)) < ANGLE_TOLERANCE, `azimuth ${item.azimuth}`);
      assert.ok(Math.abs(item.downtilt + 3) < ANGLE_TOLERANCE, `downtilt ${item.downtilt}`);
      assert.ok(item.plumb < ANGLE_TOLERANCE, `plumb ${item.plumb}`);
      // Without a base plate, and no ground found by processing (the fixture's engine reconstructs
      // nothing): no height rather than one above an unknown zero.
      await account.client.expect(200, 'PATCH', `/v1/inspections/${inspectionId}/`, { base_plate_location: null });
      const unreferenced = await account.client.expect(200, 'PATCH', `/v1/inspections/${inspectionId}/inventory/${item.id}/`, { coords_2d: coords });
      assert.equal(unreferenced.height, null);
      assert.equal(unreferenced.computation.height_reference, null);
      assert.ok(Math.abs(unreferenced.azimuth - trueAzimuthAtFixtureAsset(250)) < ANGLE_TOLERANCE);
      await account.client.expect(200, 'PATCH', `/v1/inspections/${inspectionId}/`, { base_plate_location: BASE });
      await account.client.expect(204, 'DELETE', `/v1/inspections/${inspectionId}/inventory/${item.id}/`);
    } finally {
      for (const [i, c] of CALIBRATIONS.entries()) await sql`update inspection.cameras set calibration = ${JSON.stringify(c)}::jsonb where id = ${photoIds[i]}`.execute(system.inspection.db);
    }
  });

  it('refuses bad input with 400 in the CONTRACT format, never a 5xx', async () => {
    const path = `/v1/inspections/${inspectionId}/inventory/`;
    const one = { [String(photoIds[0])]: marks(1)[String(photoIds[0])] };
    const cases: [Record<string, unknown>, string][] = [
      [{ model_type: 'panel_antenna', coords_2d: one }, 'coords_2d'],
      [{ model_type: 'panel_antenna', coords_2d: { ...marks(1), [String(photoIds[2])]: marks(1)[String(photoIds[0])] } }, `coords_2d.${photoIds[2]}`],
      [{ model_type: 'panel_antenna', coords_2d: { ...marks(1), '999999': marks(1)[String(photoIds[0])] } }, 'coords_2d.999999'],
      [{ model_type: 'panel_antenna', coords_2d: marks(2), azimuth: 90 }, 'azimuth'],
      // By hand, the ranges the computed values take: azimuth 0 <= a < 360, downtilt -90..90, plumb 0..90.
      [{ model_type: 'panel_antenna', downtilt: 95 }, 'downtilt'],
      [{ model_type: 'panel_antenna', downtilt: -90.5 }, 'downtilt'],
      [{ model_type: 'panel_antenna', azimuth: -10 }, 'azimuth'],
      [{ model_type: 'panel_antenna', azimuth: 360 }, 'azimuth'],
      [{ model_type: 'panel_antenna', plumb: -1 }, 'plumb'],
      [{ model_type: 'panel_antenna', plumb: 91 }, 'plumb'],
      [{ model_type: 'dish', name: 'x' }, 'model_type'],
      [{ name: 'no type' }, 'model_type'],
      [{ model_type: 'mount', coords_2d: { [String(photoIds[0])]: [[0, 0], [1.5, 0], [1, 1], [0, 1]], [String(photoIds[1])]: [[0, 0], [1, 0], [1, 1], [0, 1]] } }, 'coords_2d'],
    ];
    // The third photo uncalibrated for this test (as a photo the reconstruction did not place).
    await sql`update inspection.cameras set calibration = null where id = ${photoIds[2]}`.execute(system.inspection.db);
    try {
      for (const [body, field] of cases) {
        const res = await account.client.request('POST', path, body);
        assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)} -> ${res.status} ${JSON.stringify(res.body)}`);
        // CONTRACT: {"<field>": ["message", ...]}, nested fields as nested objects.
        const named = field.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], res.body);
        assert.ok(named !== undefined, `${field} named in ${JSON.stringify(res.body)}`);
        if (!field.includes('.') && field !== 'coords_2d') assert.ok(Array.isArray(named), `${field} -> list of messages: ${JSON.stringify(res.body)}`);
      }
    } finally {
      await sql`update inspection.cameras set calibration = ${JSON.stringify(CALIBRATIONS[2])}::jsonb where id = ${photoIds[2]}`.execute(system.inspection.db);
    }
    // Two photos taken from the same place: the rays cannot fix the item.
    await sql`update inspection.cameras set calibration = ${JSON.stringify(CALIBRATIONS[0])}::jsonb where id = ${photoIds[1]}`.execute(system.inspection.db);
    try {
      const same = { [String(photoIds[0])]: marksOn(CALIBRATIONS[0]), [String(photoIds[1])]: marksOn(CALIBRATIONS[0]) };
      const res = await account.client.request('POST', path, { model_type: 'panel_antenna', coords_2d: same });
      assert.equal(res.status, 400);
      assert.match(res.body.coords_2d[0], /nearly the same direction|parallel/);
    } finally {
      await sql`update inspection.cameras set calibration = ${JSON.stringify(CALIBRATIONS[1])}::jsonb where id = ${photoIds[1]}`.execute(system.inspection.db);
    }
  });

  it("another organization's client gets 404 on every inventory route", async () => {
    const [item] = await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/inventory/`);
    await stranger.client.expect(404, 'GET', `/v1/inspections/${inspectionId}/inventory/`);
    await stranger.client.expect(404, 'POST', `/v1/inspections/${inspectionId}/inventory/`, { model_type: 'mount' });
    await stranger.client.expect(404, 'PATCH', `/v1/inspections/${inspectionId}/inventory/${item.id}/`, { name: 'mine' });
    await stranger.client.expect(404, 'DELETE', `/v1/inspections/${inspectionId}/inventory/${item.id}/`);
    await stranger.client.expect(404, 'POST', `/v1/inspections/${inspectionId}/inventory/review_done/`, {});
    // An item id of this inspection under another of the owner's inspections is not found either.
    const otherInspection = await account.client.createInspection({ asset: (await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/`)).asset, name: 'Other' });
    await account.client.expect(404, 'PATCH', `/v1/inspections/${otherInspection.id}/inventory/${item.id}/`, { name: 'x' });
    assert.equal((await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/inventory/`)).length, 2);
  });

  it('a share token (read-only) reaches no inventory route; a blocking status (8, no tower) is not moved and refuses review_done', async () => {
    const share = await account.client.expect(201, 'POST', `/v1/inspections/${inspectionId}/share_tokens/`, { label: 'viewer' });
    const path = `/v1/inspections/${inspectionId}/inventory/`;
    for (const [method, url, body] of [
      ['GET', path, undefined],
      ['POST', path, { model_type: 'mount' }],
      ['POST', `${path}review_done/`, {}],
    ] as const) {
      const res = await fetch(`${system.urls.inspection}${url}?share_token=${encodeURIComponent(share.token)}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
      assert.ok(res.status === 403 || res.status === 401, `${method} ${url} with a share token: ${res.status}`);
    }
    const before = await inventoryStatus();
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspectionId}/`, { additional_statuses: { inventory: 8 } });
    const mount = await account.client.expect(201, 'POST', path, { model_type: 'mount', name: 'Pole' });
    assert.equal(await inventoryStatus(), 8, 'no review moves an inspection whose tower was not found');
    await account.client.expect(409, 'POST', `${path}review_done/`, {});
    await account.client.expect(204, 'DELETE', `${path}${mount.id}/`);
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspectionId}/`, { additional_statuses: { inventory: before } });
  });

  it('edits: new marks recompute, clearing them allows values by hand; the review moves 4 -> 5 -> 4 -> 6', async () => {
    const path = `/v1/inspections/${inspectionId}/inventory/`;
    const [first, second] = await account.client.expect(200, 'GET', path);
    const renamed = await account.client.expect(200, 'PATCH', `${path}${first.id}/`, { name: 'Sector A', device_status: 'installed' });
    assert.equal(renamed.name, 'Sector A');
    assert.equal(renamed.azimuth, first.azimuth, 'geometry unchanged without new marks');
    await account.client.expect(400, 'PATCH', `${path}${first.id}/`, { downtilt: 2 });
    const byHand = await account.client.expect(200, 'PATCH', `${path}${first.id}/`, { coords_2d: {}, azimuth: 118, downtilt: 4 });
    assert.equal(byHand.azimuth, 118);
    const edges = await account.client.expect(200, 'PATCH', `${path}${first.id}/`, { azimuth: 359.99, downtilt: -90, plumb: 90 });
    assert.deepEqual([edges.azimuth, edges.downtilt, edges.plumb], [359.99, -90, 90]);
    const outOfRange = await account.client.expect(400, 'PATCH', `${path}${first.id}/`, { azimuth: -10, downtilt: 95 });
    assert.ok(Array.isArray(outOfRange.azimuth) && Array.isArray(outOfRange.downtilt), JSON.stringify(outOfRange));
    await account.client.expect(200, 'PATCH', `${path}${first.id}/`, { azimuth: 118, downtilt: 4, plumb: null });
    assert.equal(byHand.height, null, 'the computed height went with the marks');
    assert.equal(byHand.computation.method, 'entered');
    assert.deepEqual(byHand.coords_3d, []);

    assert.deepEqual(await account.client.expect(200, 'POST', `${path}review_done/`, {}), { inventory: 5 });
    assert.equal(await inventoryStatus(), 5);
    await account.client.expect(409, 'POST', `${path}review_done/`, {});
    const again = await account.client.expect(200, 'PATCH', `${path}${first.id}/`, { coords_2d: marks(3) });
    assert.ok(Math.abs(again.azimuth - TRUE_AZIMUTH) < ANGLE_TOLERANCE);
    assert.equal(await inventoryStatus(), 4, 'a change reopens the review');
    await account.client.expect(204, 'DELETE', `${path}${first.id}/`);
    await account.client.expect(204, 'DELETE', `${path}${second.id}/`);
    await account.client.expect(404, 'DELETE', `${path}${second.id}/`);
    assert.deepEqual(await account.client.expect(200, 'POST', `${path}review_done/`, {}), { inventory: 6 });
    const statuses = await account.client.expect(200, 'GET', '/v1/inspections/additional_statuses/');
    assert.equal(statuses.find((s: { id: number }) => s.id === 6).description, 'Inventory review completed without compatible inventory');
  });
});
