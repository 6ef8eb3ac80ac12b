// Rust analysis through the API (rust/rust-analysis.ts, spec additional statuses 11–14):
// - detect_rust: `additional_statuses.rust` is 11 from `process`, 13 once processing completed and
//   the photos were analysed; each finding is a "Corrosion" annotation on its photo, at the
//   rectangle the detector finds in that photo, with a severity and the inspection's user;
// - a photo that cannot be decoded is skipped and named with its reason in `rust_reason` (13);
//   when no photo can be analysed the analysis ends in 14 with the reason;
// - processing that fails (19) settles the pending analysis as 14 "did not run";
// - without detect_rust nothing changes: rust stays null, no annotations;
// - with a reconstruction (colmap, when installed): the findings' coords_3d, the same as
//   `?coords_3d=true` gives for the same rectangle.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, waitFor } from './helpers/inspection-fixtures.ts';
import { requireTool } from './helpers/system-tools.ts';
import { analysePhoto } from '../src/inspection/rust/rust-detector.ts';
import { iou } from '../src/inspection/rust/evaluation.ts';
import { compositeRustPatches, type TruthFile } from '../scripts/generate-rust-fixtures.ts';

const RUST = path.join(import.meta.dirname, 'fixtures', 'rust');
const LUND = path.join(import.meta.dirname, 'fixtures', 'lund', 'images');
const truth: TruthFile = JSON.parse(fs.readFileSync(path.join(RUST, 'truth.json'), 'utf8'));
const photo = (file: string) => ({ name: file, body: fs.readFileSync(path.join(RUST, 'images', file)) });
/** A JPEG whose headers are intact (the image analysis accepts it) but whose data is cut short. */
const truncated = (file: string, name: string) => {
  const body = fs.readFileSync(path.join(RUST, 'images', file));
  return { name, body: body.subarray(0, Math.floor(body.length * 0.6)) };
};

function rectOf(coords: [number, number][]) {
  const xs = coords.map((p) => p[0]);
  const ys = coords.map((p) => p[1]);
  return { left: Math.min(...xs), top: Math.min(...ys), right: Math.max(...xs), bottom: Math.max(...ys) };
}

describe('rust analysis (detect_rust) through the API', () => {
  let system: TestSystem;
  let account: TestAccount;
  let asset: any;

  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount({ projects: 10 });
    asset = await account.client.createAsset({ name: 'Lund', type: 1, latitude: '55.69816667', longitude: '13.19538889' });
  });
  after(async () => {
    assertNoServerErrors(system);
    await system.stop();
  });

  async function run(files: { name: string; body: Buffer }[], parameters: Record<string, unknown>) {
    const { client } = account;
    const inspection = await client.createInspection({ asset: asset.id, name: 'rust', processing_parameters: parameters });
    assert.deepEqual([inspection.additional_statuses.rust, inspection.additional_statuses.rust_reason], [null, undefined]);
    await client.register(inspection.id, await client.upload(await client.storageCredentials(inspection.id), files));
    const started = await client.process(inspection.id);
    const settled = await client.waitUntilSettled(inspection.id, { timeoutMs: 90_000 });
    return { inspection, started, settled };
  }

  const rustSettled = (id: number) =>
    waitFor(`rust analysis of ${id}`, async () => {
      const record = await account.client.getInspection(id);
      return [13, 14].includes(record.additional_statuses.rust) ? record : undefined;
    });

  it('11 from process, 13 after processing: findings are Corrosion annotations where the detector finds rust; an undecodable photo is skipped with its reason', async () => {
    const { client } = account;
    const files = [photo('01-rust-lund01.jpg'), photo('03-rust-lund05.jpg'), photo('12-clean-lund08.jpg'), truncated('13-clean-lund11.jpg', 'zz-broken.jpg')];
    const { inspection, started, settled } = await run(files, { detect_rust: true });
    assert.equal(started.additional_statuses.rust, 11, 'pending from the start of processing');
    assert.equal(settled.status, 7);
    const done = await rustSettled(inspection.id);
    assert.equal(done.additional_statuses.rust, 13, JSON.stringify(done.additional_statuses));
    assert.match(done.additional_statuses.rust_reason, /^1 photo\(s\) skipped: zz-broken\.jpg: the photo cannot be decoded \(.+\)\.$/);

    const cameras = await client.cameras(inspection.id);
    assert.equal(cameras.length, 4, 'the broken photo passed the image analysis (its headers are intact)');
    const annotations = await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/annotations/`);
    assert.ok(annotations.length > 0);
    assert.deepEqual(
      annotations.map((a: any) => a.number),
      annotations.map((_: unknown, i: number) => i + 1),
    );
    for (const a of annotations) {
      assert.equal(a.type, 'Corrosion');
      assert.equal(a.name, 'Rust');
      assert.equal(a.user, account.userId, "the inspection's user");
      assert.ok(a.severity_level >= 1 && a.severity_level <= 5, `severity ${a.severity_level}`);
      assert.match(a.description, /automatic rust analysis.*% of the photo/);
      assert.equal(a.coords_3d, null, 'the exif engine reconstructs nothing');
      assert.equal(a.is_visible, true);
      assert.equal(a.data.coords_2d.length, 4);
    }
    // Per photo: exactly the detector's rectangles on that photo (as fractions of the photo), and
    // the labelled rust found where it was painted.
    for (const camera of cameras) {
      const mine = annotations.filter((a: any) => a.photo_id === camera.photo_id).map((a: any) => rectOf(a.data.coords_2d));
      if (camera.filename === 'zz-broken.jpg') {
        assert.deepEqual(mine, []);
        continue;
      }
      const expected = (await analysePhoto(fs.readFileSync(path.join(RUST, 'images', camera.filename)))).findings;
      assert.equal(mine.length, expected.length, camera.filename);
      for (const [i, f] of expected.entries()) {
        for (const side of ['left', 'top', 'right', 'bottom'] as const) assert.ok(Math.abs(mine[i][side] - f[side]) < 1e-5, `${camera.filename} ${side}`);
      }
      const labelled = truth.photos.find((p) => p.file === camera.filename)!;
      const labels = labelled.rust.map((r) => ({ left: r.left / labelled.width, top: r.top / labelled.height, right: r.right / labelled.width, bottom: r.bottom / labelled.height }));
      const hits = labels.filter((label) => mine.some((m: any) => iou(m, label) >= 0.5));
      assert.ok(labels.length === 0 || hits.length > 0, `${camera.filename}: some of its labelled rust found`);
    }
    // The annotations are the client's like any other: the types list has them, they can be edited.
    const edited = await client.expect(200, 'PATCH', `/v1/annotations/${annotations[0].id}/`, { severity_level: 0, description: 'checked: paint' });
    assert.equal(edited.severity_level, 0);
  });

  it('no photo can be decoded: 14 with the reason', async () => {
    const files = [truncated('01-rust-lund01.jpg', 'a.jpg'), truncated('02-rust-lund03.jpg', 'b.jpg'), truncated('03-rust-lund05.jpg', 'c.jpg')];
    const { inspection, settled } = await run(files, { detect_rust: true });
    assert.equal(settled.status, 7, 'processing itself completes (the exif engine reads the headers)');
    const done = await rustSettled(inspection.id);
    assert.equal(done.additional_statuses.rust, 14);
    assert.match(done.additional_statuses.rust_reason, /^No photo could be analysed\. 3 photo\(s\) skipped: a\.jpg: the photo cannot be decoded/);
    assert.deepEqual(await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/annotations/`), []);
  });

  it('processing fails (19): the pending analysis ends in 14, it never ran', async () => {
    const { settled } = await run([photo('01-rust-lund01.jpg'), photo('03-rust-lund05.jpg')], { detect_rust: true });
    assert.equal(settled.status, 19);
    assert.equal(settled.additional_statuses.rust, 14);
    assert.equal(settled.additional_statuses.rust_reason, 'The rust analysis did not run: processing ended in status 19 (ERROR - Not enough valid images).');
    assert.deepEqual(await account.client.expect(200, 'GET', `/v1/inspections/${settled.id}/annotations/`), []);
  });

  it('without detect_rust: rust stays null and no annotation is made', async () => {
    const { inspection, started, settled } = await run([photo('01-rust-lund01.jpg'), photo('03-rust-lund05.jpg'), photo('04-rust-lund07.jpg')], {});
    assert.equal(started.additional_statuses.rust, null);
    assert.equal(settled.status, 7);
    // Null, not 11, is what keeps the analysis from running: its job is queued only for 11, and
    // would find nothing to do from any other value (rust-statuses.ts).
    assert.equal(settled.additional_statuses.rust, null);
    assert.deepEqual(await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/annotations/`), []);
  });
});

describe('rust analysis with a reconstruction (colmap)', () => {
  let system: TestSystem | undefined;
  let account: TestAccount;

  before(async () => {
    if (!fs.existsSync('/usr/bin/colmap')) return;
    // The sparse model is the point cloud (on lund at the tests' depth-map size the dense one holds
    // about as many points): the dense stages run once, in engine-colmap-lund and -dense.
    system = await startTestSystem({ engine: 'colmap', colmapDense: false });
    account = await system.newAccount({ projects: 2 });
  });
  after(async () => {
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  it("findings get coords_3d, the same as ?coords_3d=true computes for their rectangle", async (t) => {
    if (!requireTool(t, '/usr/bin/colmap', 'colmap')) return;
    const { client } = account;
    // lund's first 12 photos (1024 x 768, GPS; with 8, COLMAP's mapper now and then places none),
    // three rust patches painted on each (the generator's, seeds 3..14): enough findings that some
    // lie where other photos saw the surface in 3D.
    const files = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const name = `${String(i + 1).padStart(2, '0')}.jpg`;
        return { name, body: await compositeRustPatches(fs.readFileSync(path.join(LUND, name)), 3 + i, 3) };
      }),
    );
    const asset = await client.createAsset({ name: 'Lund', type: 1, latitude: '55.69816667', longitude: '13.19538889' });
    const inspection = await client.createInspection({ asset: asset.id, name: 'rust 3d', processing_parameters: { detect_rust: true } });
    await client.register(inspection.id, await client.upload(await client.storageCredentials(inspection.id), files));
    await client.process(inspection.id);
    const settled = await client.waitUntilSettled(inspection.id, { timeoutMs: 20 * 60_000 });
    if (settled.status !== 7) assert.fail(`status ${settled.status}: ${JSON.stringify(await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/processing/`))}`);
    const done = await waitFor('rust analysis', async () => {
      const record = await client.getInspection(inspection.id);
      return [13, 14].includes(record.additional_statuses.rust) ? record : undefined;
    });
    assert.equal(done.additional_statuses.rust, 13, JSON.stringify(done.additional_statuses));
    const annotations = await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/annotations/`);
    assert.ok(annotations.length >= 8, `${annotations.length} findings`);
    let located = 0;
    for (const a of annotations) {
      const same = await client.expect(201, 'POST', '/v1/annotations/?coords_3d=true', { type: 'Check', inspection: inspection.id, photo_id: a.photo_id, data: { coords_2d: a.data.coords_2d } });
      assert.deepEqual(a.coords_3d, same.coords_3d, `annotation ${a.number}`);
      if (a.coords_3d) located++;
    }
    assert.ok(located > 0, 'at least one finding lies on the point cloud');
    console.log(`# rust with colmap: ${annotations.length} findings, ${located} with coords_3d`);
  });
});
