// Automatic antenna detection through the API (issue 36 §3; inventory/antenna-detection.ts,
// detected-items.ts, inventory-statuses.ts; spec additional statuses 1–10, allowance rules 3, 5, 6).
// No reconstruction runs: the cloud service's nodeodm engine talks to the fake NodeODM node
// (helpers/fake-nodeodm.ts), whose all.zip carries a tower site of the tower-flight generator
// (helpers/tower-scene.ts): its scene's surfaces sampled as the dense point cloud (UTM + EGM96, as
// a NodeODM node delivers it), and the generator's flight at its true poses as ODM's shots and
// cameras, which the engine turns into calibrated cameras and the inspection imports. So the
// detection runs on a cloud whose truth is known, in the service's real frames.
// - allowance: detect_antennas refused (403, CONTRACT's format) without a Tower inventory unit;
//   one unit spent with processing, none again by a retry (which re-runs the detection);
// - statuses 1 (from process) -> 2 (read through the API while the detector runs on its worker
//   thread: the request is answered before the detection ends) -> 3, with one
//   item per detected box: the panel antennas matched to the truth by position, their azimuths
//   within 3° of it; the fields as items by hand carry them (source, name, coords_3d, the best
//   photo and its projection, point_of_view, computation);
// - the review from 3: edit (4; the corrected angle kept with the detected geometry), delete (4),
//   review done (5); on the retry, review done straight from 3 (5);
// - in words, never a 5xx and the inspection's other results kept: a park without a tower (8), a
//   cloud of 1,000 points (10 or 8), brighton_beach's reference cloud when ../shared/datasets has
//   it (8), no point cloud from the node (7, and the cloud was asked for one), a detector that
//   throws (7), processing that fails (7 "did not run").
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import proj4 from 'proj4';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, waitFor } from './helpers/inspection-fixtures.ts';
import { FAKE_ORIGIN, startFakeNodeOdm, type FakeNodeOdm, type FakeNodeResults } from './helpers/fake-nodeodm.ts';
import { odmShots, parkCloud, sampledCloud, scenePhotos, towerScene, type TowerScene } from './helpers/tower-scene.ts';
import { runAntennaDetection, type DetectionRun, type DetectionRunner } from '../src/inspection/inventory/detection-runner.ts';
import { ApiError } from '../src/infra/http/errors.ts';
import { sql } from 'kysely';

/** Degrees a detected panel's azimuth may be off the truth. */
const AZIMUTH_TOLERANCE = 3;
/** Metres between a detected item's centre and the truth's for them to be the same item. */
const MATCH_DISTANCE_M = 0.75;
/** A monopole of 30 m with two levels of three sectors, two panels each, RRUs and a dish. */
/** OpenDroneMap's reference model of brighton_beach (a beach park in UTM 15N; outside the repository: skipped when absent). */
const BRIGHTON_CLOUD = path.resolve(import.meta.dirname, '..', '..', 'shared', 'datasets', 'brighton_beach', 'reference_model.laz');
const SCENE = { tower: { type: 'monopole', height_m: 30 }, antennas: { levels: 2, sectors_per_level: 3, panels_per_sector: 2, dishes: 1 } };

const angleBetween = (a: number, b: number) => Math.abs(((a - b + 540) % 360) - 180);
const balanceOf = async (account: TestAccount, type: string) => (await account.client.expect(200, 'GET', '/v1/allowance/')).find((b: any) => b.allowance_type === type);
const egress = async (account: TestAccount) => (await account.client.expect(200, 'GET', '/v1/allowance/history/')).filter((h: any) => h.direction === 'egress');

describe('antenna detection (detect_antennas) through the API, on a generated tower site', () => {
  let scene: TowerScene;
  let photos: { name: string; body: Buffer }[];
  let node: FakeNodeOdm;
  let system: TestSystem;
  let account: TestAccount;
  let asset: any;
  /** The point cloud the node's next all.zip carries (undefined: the tower's; null: none), or all its results. */
  let nextCloud: Buffer | null | undefined;
  let nextResults: FakeNodeResults | undefined;
  /** The inventory statuses read through the API while the detector ran, and the runs' figures. */
  const during: number[] = [];
  const runs: DetectionRun[] = [];
  const answeredWhileRunning: boolean[] = [];
  let detector: DetectionRunner;
  let detected: { inspection: any; items: any[] };
  /** The inspection whose status the watched runner reads. */
  let watched: number | undefined;

  before(async () => {
    scene = towerScene({ seed: 3, scene: SCENE });
    photos = await scenePhotos(scene);
    node = await startFakeNodeOdm({
      pollsToFinish: 1,
      results: (task) => nextResults ?? { pointCloud: nextCloud === undefined ? scene.cloud : nextCloud, shots: odmShots(scene, task.images), cameras: scene.odmCameras },
    });
    system = await startTestSystem({ engine: 'nodeodm', nodeodmUrl: node.url, nodeodmPollSeconds: 0 });
    account = await system.newAccount({ projects: 20, towerInventory: 10 });
    const [latitude, longitude] = scene.truth.tower.base;
    asset = await account.client.createAsset({ name: 'Monopole', type: 1, latitude: latitude.toFixed(8), longitude: longitude.toFixed(8) });
    // The real detector on its worker thread, watched: the status read through the API while it
    // runs, and whether that request was answered before the detection ended (the event loop free).
    const detection = system.inspection.antennaDetection;
    detector = async (input) => {
      let finished = false;
      const running = runAntennaDetection(input).finally(() => (finished = true));
      const id = watched;
      if (id !== undefined) {
        during.push((await account.client.getInspection(id)).additional_statuses.inventory);
        answeredWhileRunning.push(!finished);
      }
      const run = await running;
      runs.push(run);
      return run;
    };
    detection.runner = detector;
  });
  after(async () => {
    if (system) assertNoServerErrors(system);
    await system?.stop();
    await node?.close();
  });

  /** A new inspection of the asset with the flight's photos, processed; returns it once the detection settled. */
  async function detect(parameters: Record<string, unknown>, cloud?: Buffer | null, who = account, assetId = asset.id) {
    nextCloud = cloud;
    const { client } = who;
    const inspection = await client.createInspection({ asset: assetId, name: 'tower flight', processing_parameters: parameters });
    assert.deepEqual(inspection.additional_statuses, { inventory: null, rust: null });
    await client.register(inspection.id, await client.upload(await client.storageCredentials(inspection.id), photos));
    watched = inspection.id;
    const started = await client.process(inspection.id);
    const settled = await client.waitUntilSettled(inspection.id, { timeoutMs: 120_000 });
    assert.equal(settled.status, 7, `processed (${settled.processing_error})`);
    const done = await waitFor(
      'the detection to settle',
      async () => {
        const now = await client.getInspection(inspection.id);
        return [1, 2].includes(now.additional_statuses.inventory) ? null : now;
      },
      180_000,
    );
    watched = undefined;
    return { started, done, items: await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/inventory/`) };
  }

  it('allowance rule 3: detect_antennas without a Tower inventory unit is refused (403 insufficient_allowance) at creation and update', async () => {
    const broke = await system.newAccount({ projects: 2 });
    const ownAsset = await broke.client.createAsset({ name: 'T', type: 1, latitude: '55.7', longitude: '13.19' });
    const refused = await broke.client.request('POST', '/v1/inspections', { asset: ownAsset.id, processing_parameters: { detect_antennas: true } });
    assert.equal(refused.status, 403);
    assert.deepEqual(Object.keys(refused.body).sort(), ['code', 'detail']);
    assert.equal(refused.body.code, 'insufficient_allowance');
    assert.match(refused.body.detail, /tower_inventory/);
    const plain = await broke.client.createInspection({ asset: ownAsset.id });
    const patch = await broke.client.request('PATCH', `/v1/inspections/${plain.id}/`, { processing_parameters: { detect_antennas: true } });
    assert.equal(patch.status, 403);
    assert.equal(patch.body.code, 'insufficient_allowance');
  });

  it('1 from process, 2 while detecting, 3 with the detected items: the panels where the truth has them, azimuths within 3°; one Tower inventory unit spent', async () => {
    const started = Date.now();
    const { started: record, done, items } = await detect({ detect_antennas: true });
    assert.equal(record.additional_statuses.inventory, 1, 'pending from process on');
    assert.deepEqual(during, [2], 'the API shows 2 while the detector runs');
    assert.deepEqual(answeredWhileRunning, [true], 'and answers while the detector runs (on its worker thread)');
    assert.equal(done.additional_statuses.inventory, 3, `review pending (${done.additional_statuses.inventory_reason})`);
    assert.equal(done.status, 7, 'processing results untouched');
    const [run] = runs;
    console.log(`# detection: ${run.points} points read in ${run.readSeconds.toFixed(2)} s, detected in ${run.detectSeconds.toFixed(2)} s (${((Date.now() - started) / 1000).toFixed(1)} s from create to 3)`);

    // Allowance: Projects and Tower inventory, once each, for this inspection.
    assert.deepEqual((await egress(account)).map((h: any) => [h.allowance_type, h.inspection]).sort(), [['projects', done.id], ['tower_inventory', done.id]].sort());

    // Every item as items by hand carry their fields.
    const cameras = await account.client.cameras(done.id);
    const photoIds = new Set(cameras.map((c: any) => c.photo_id));
    assert.ok(items.length > 0, 'items written');
    for (const item of items) {
      assert.equal(item.source, 'automatic_detection');
      assert.ok(['panel_antenna', 'microwave_antenna', 'ancillary_box'].includes(item.model_type), item.model_type);
      assert.match(item.name, /^(Panel antenna|Microwave antenna|Ancillary box) \d+ \((L\d+|\d+\.\d m), \d+°\)$/);
      assert.equal(item.coords_3d.length, 3);
      assert.ok(item.azimuth >= 0 && item.azimuth < 360 && item.plumb >= 0 && item.width > 0 && item.depth > 0, JSON.stringify(item));
      assert.equal(item.computation.method, 'detection');
      assert.equal(item.computation.corners_3d.length, 4);
      assert.equal(item.computation.box_corners_3d.length, 8);
      assert.deepEqual(item.coords_2d, {});
      if (item.photo_id !== null) {
        assert.ok(photoIds.has(item.photo_id), 'the best photo is a camera of the inspection');
        assert.deepEqual(Object.keys(item.photo_projection), [String(item.photo_id)]);
        const outline = item.photo_projection[String(item.photo_id)];
        assert.equal(outline.length, 4);
        assert.ok(outline.every(([x, y]: number[]) => x >= 0 && x <= 1 && y >= 0 && y <= 1));
        assert.equal(item.point_of_view.length, 3);
      }
    }
    assert.deepEqual(
      items.map((i: any) => i.number),
      items.map((_: unknown, k: number) => k + 1),
    );

    // Against the truth: each true panel antenna matched to the nearest detected one.
    const truthPanels = scene.truth.antennas.filter((a) => a.type === 'panel_antenna');
    const panels = items.filter((i: any) => i.model_type === 'panel_antenna');
    const matches = truthPanels.flatMap((t) => {
      const [e, n] = scene.toUtm(t.center[0], t.center[1]);
      const nearest = panels
        .map((p: any) => ({ p, d: Math.hypot(p.coords_3d[0] - e, p.coords_3d[1] - n, p.coords_3d[2] - t.center[2]) }))
        .sort((a: any, b: any) => a.d - b.d)[0];
      return nearest && nearest.d < MATCH_DISTANCE_M ? [{ truth: t, item: nearest.p, distance: nearest.d, off: angleBetween(nearest.p.azimuth, t.azimuth_deg) }] : [];
    });
    const byType = (list: { model_type?: string; type?: string }[]) => Object.entries(list.reduce<Record<string, number>>((m, x) => ({ ...m, [x.model_type ?? x.type!]: (m[x.model_type ?? x.type!] ?? 0) + 1 }), {})).map(([k, v]) => `${v} ${k}`).join(', ');
    console.log(`# truth: ${byType(scene.truth.antennas)}; detected: ${byType(items)}; panels matched within ${MATCH_DISTANCE_M} m: ${matches.length}/${truthPanels.length}`);
    for (const m of matches) console.log(`#   ${m.truth.id}: azimuth ${m.item.azimuth}° (truth ${m.truth.azimuth_deg.toFixed(2)}°, off ${m.off.toFixed(2)}°), downtilt ${m.item.downtilt}° (truth ${m.truth.downtilt_deg.toFixed(1)}°), centre ${m.distance.toFixed(2)} m off, "${m.item.name}", photo ${m.item.photo_id}`);
    assert.ok(matches.length >= Math.ceil(truthPanels.length / 2), `at least half the panels found where the truth has them (${matches.length}/${truthPanels.length})`);
    for (const m of matches) assert.ok(m.off <= AZIMUTH_TOLERANCE, `${m.truth.id}: azimuth ${m.item.azimuth} vs truth ${m.truth.azimuth_deg}`);
    detected = { inspection: done, items };
  });

  it('the review from 3: an edit moves to 4 and keeps the detected geometry, a delete too, review done gives 5', async () => {
    const { inspection, items } = detected;
    const [first, second] = items;
    const edited = await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/inventory/${first.id}/`, { downtilt: 4.5, model_name: 'AAHF' });
    assert.equal(edited.downtilt, 4.5);
    assert.equal(edited.model_name, 'AAHF');
    assert.deepEqual([edited.coords_3d, edited.azimuth, edited.photo_id, edited.computation.method], [first.coords_3d, first.azimuth, first.photo_id, 'detection'], 'the detected geometry stays');
    assert.equal((await account.client.getInspection(inspection.id)).additional_statuses.inventory, 4);
    await account.client.expect(204, 'DELETE', `/v1/inspections/${inspection.id}/inventory/${second.id}/`);
    const done = await account.client.expect(200, 'POST', `/v1/inspections/${inspection.id}/inventory/review_done/`, {});
    assert.deepEqual(done, { inventory: 5 });
    const after = await account.client.getInspection(inspection.id);
    assert.equal(after.additional_statuses.inventory, 5);
    assert.equal(after.additional_statuses.inventory_reason, undefined);
    assert.equal((await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/inventory/`)).length, items.length - 1);
  });

  it('a retry re-runs the detection with the recycled unit (nothing spent), and its review can be completed straight from 3', async () => {
    const { inspection } = detected;
    const spent = await egress(account);
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/?skip_email=true`, { status: 16 });
    const retry = await account.client.expect(201, 'POST', '/v1/inspections/retry/', { inspection: inspection.id });
    assert.equal(retry.processing_parameters.detect_antennas, true);
    nextCloud = undefined;
    await account.client.waitUntilSettled(retry.id, { timeoutMs: 120_000 });
    const done = await waitFor('the retry\'s detection', async () => {
      const now = await account.client.getInspection(retry.id);
      return [3, 7, 8, 9, 10].includes(now.additional_statuses.inventory) ? now : null;
    }, 180_000);
    assert.equal(done.additional_statuses.inventory, 3, done.additional_statuses.inventory_reason);
    const items = await account.client.expect(200, 'GET', `/v1/inspections/${retry.id}/inventory/`);
    assert.equal(items.length, detected.items.length, 'the same items again');
    assert.deepEqual(await egress(account), spent, 'no unit spent by the retry');
    assert.equal((await balanceOf(account, 'tower_inventory')).consumed, 1);
    assert.deepEqual(await account.client.expect(200, 'POST', `/v1/inspections/${retry.id}/inventory/review_done/`, {}), { inventory: 5 });
  });

  it('a park without a tower: 8 "No tower" in words, no item, the inspection otherwise processed', async () => {
    const { done, items } = await detect({ detect_antennas: true, generate_point_cloud: true }, parkCloud(scene));
    assert.equal(done.additional_statuses.inventory, 8, done.additional_statuses.inventory_reason);
    assert.match(done.additional_statuses.inventory_reason, /^No tower was found in the point cloud around the asset: .{8,}\.$/);
    console.log(`# park: ${done.additional_statuses.inventory_reason}`);
    assert.deepEqual(items, []);
    assert.equal(done.status, 7);
    assert.ok((await account.client.cameras(done.id)).length > 0);
  });

  it('brighton_beach (a beach park, OpenDroneMap\'s reference model of it, UTM 15N): 8 "No tower" in words', async (t) => {
    if (!fs.existsSync(BRIGHTON_CLOUD)) return t.skip(`${BRIGHTON_CLOUD} is not present (the dataset lives outside the repository)`);
    // The node's own generated shots are at brighton (FAKE_ORIGIN); the asset in the middle of the model.
    const [longitude, latitude] = proj4('EPSG:4326', '+proj=utm +zone=15 +datum=WGS84 +units=m +no_defs').inverse([576_715, 5_188_163]);
    assert.ok(Math.hypot(latitude - FAKE_ORIGIN.latitude, longitude - FAKE_ORIGIN.longitude) < 0.01);
    const beach = await account.client.createAsset({ name: 'Brighton Beach', type: 1, latitude: latitude.toFixed(8), longitude: longitude.toFixed(8) });
    nextResults = { pointCloud: fs.readFileSync(BRIGHTON_CLOUD) };
    try {
      const { done, items } = await detect({ detect_antennas: true }, undefined, account, beach.id);
      assert.equal(done.additional_statuses.inventory, 8, done.additional_statuses.inventory_reason);
      assert.match(done.additional_statuses.inventory_reason, /^No tower was found in the point cloud around the asset: .{8,}\.$/);
      console.log(`# brighton_beach (${runs.at(-1)!.points} points, detected in ${runs.at(-1)!.detectSeconds.toFixed(2)} s): ${done.additional_statuses.inventory_reason}`);
      assert.deepEqual(items, []);
    } finally {
      nextResults = undefined;
    }
  });

  it('a cloud of 1,000 points: 10 (insufficient) or 8 (no tower), in words', async () => {
    const { done, items } = await detect({ detect_antennas: true }, sampledCloud(scene.cloud, 1000));
    assert.ok([8, 10].includes(done.additional_statuses.inventory), `${done.additional_statuses.inventory}: ${done.additional_statuses.inventory_reason}`);
    assert.ok(done.additional_statuses.inventory_reason.length > 20, done.additional_statuses.inventory_reason);
    console.log(`# 1,000 points: ${done.additional_statuses.inventory}, ${done.additional_statuses.inventory_reason}`);
    assert.deepEqual(items, []);
  });

  it('no point cloud from the node: 7 in words (the cloud was asked for one: detect_antennas implies it)', async () => {
    const { done } = await detect({ detect_antennas: true }, null);
    assert.equal(done.additional_statuses.inventory, 7);
    assert.match(done.additional_statuses.inventory_reason, /^The automatic antenna detection failed: the cloud project has no dense point cloud to search: its point_cloud output is not available \(Requested \(outputs\.point_cloud\)/);
    assert.equal(done.status, 7);
  });

  it('a detector that throws: 7 with its message; the inspection\'s other results kept', async () => {
    system.inspection.antennaDetection.runner = (input) => runAntennaDetection(input, { detectorModule: new URL('./helpers/throwing-detector.ts', import.meta.url) });
    try {
      const { done, items } = await detect({ detect_antennas: true });
      assert.equal(done.additional_statuses.inventory, 7);
      assert.equal(done.additional_statuses.inventory_reason, 'The automatic antenna detection failed: the detector failed: the fit did not converge (test detector).');
      assert.deepEqual(items, []);
      assert.equal(done.status, 7);
      assert.ok((await account.client.cameras(done.id)).length > 0);
      const outputs = await account.client.expect(200, 'GET', `/v1/inspections/${done.id}/outputs/`);
      assert.ok(outputs.some((o: any) => o.output_type === 'point_cloud'), 'the point cloud stays an output');
    } finally {
      system.inspection.antennaDetection.runner = detector;
    }
  });

  it('a cloud that stays unreachable: the job is retried (2 kept), and its last attempt ends in 7 in words, not 2 for good', async () => {
    // The detection of an inspection processed above, run again as pg-boss runs the job: a first
    // attempt and a last one, failing as an outage of the cloud service does (a 503).
    const { inspection } = detected;
    const outage = new ApiError(503, 'service_unavailable', 'The cloud processing service is unreachable (fetch failed).');
    system.inspection.antennaDetection.runner = async () => {
      throw outage;
    };
    const status = (await account.client.getInspection(inspection.id)).status;
    try {
      await sql`update inspection.inspections set additional_statuses = jsonb_set(additional_statuses, '{inventory}', '2') where id = ${inspection.id}`.execute(system.inspection.db);
      await assert.rejects(system.inspection.antennaDetection.run(inspection.id, { retryCount: 0, last: false }), (err) => err === outage, 'thrown for pg-boss to retry');
      assert.equal((await account.client.getInspection(inspection.id)).additional_statuses.inventory, 2, 'still detecting while a retry is due');
      await system.inspection.antennaDetection.run(inspection.id, { retryCount: 5, last: true });
      const after = await account.client.getInspection(inspection.id);
      assert.equal(after.additional_statuses.inventory, 7);
      assert.equal(after.additional_statuses.inventory_reason, 'The automatic antenna detection failed: the cloud service or the storage could not be reached after 6 attempts (The cloud processing service is unreachable (fetch failed)); retry the inspection to run it again.');
      assert.equal(after.status, status, 'the inspection\'s own status untouched');
    } finally {
      system.inspection.antennaDetection.runner = detector;
    }
  });

  it('processing that fails settles the pending detection as 7 "did not run" (and a pending rust analysis as 14, in the same statement)', async () => {
    node.nextOutcome = { kind: 'fail', errorMessage: 'Not enough images with GPS' };
    try {
      const inspection = await account.client.createInspection({ asset: asset.id, processing_parameters: { detect_antennas: true, detect_rust: true } });
      await account.client.register(inspection.id, await account.client.upload(await account.client.storageCredentials(inspection.id), photos));
      await account.client.process(inspection.id);
      const done = await account.client.waitUntilSettled(inspection.id, { timeoutMs: 120_000 });
      assert.equal(done.status, 16);
      assert.equal(done.additional_statuses.inventory, 7);
      assert.match(done.additional_statuses.inventory_reason, /did not run: processing ended in status 16/);
      assert.equal(done.additional_statuses.rust, 14);
      assert.match(done.additional_statuses.rust_reason, /did not run: processing ended in status 16/);
    } finally {
      node.nextOutcome = { kind: 'complete' };
    }
  });
});
