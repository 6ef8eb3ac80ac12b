// GCPs, MTPs and marks (cloud spec: their resources, Processing tags rules 3 and 4, Limit 2).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { epsgByCode } from '../src/cloud/coordinate-systems/index.ts';

const P = '/project/api/v3/projects';
const WIDTH = 160;
const HEIGHT = 120;

describe('cloud GCPs, MTPs and marks', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  let images: Buffer[];
  before(async () => {
    system = await startTestSystem();
    api = await cloudClient(system);
    images = await Promise.all([1, 2, 3].map((seed) => generateGeotaggedJpeg({ latitude: 46.5, longitude: 6.5, altitude: 400, seed, width: WIDTH, height: HEIGHT })));
  });
  after(async () => {
    await system?.stop();
  });

  /** A project with three registered images (a.jpg, b.jpg, c.jpg) and a text file. */
  async function project(body: Record<string, unknown> = {}) {
    const created = await api.call('POST', `${P}/`, { name: 'GCP test', ...body }, { expect: 201 });
    const keys = [
      await api.put(created, 'a.jpg', images[0]),
      await api.put(created, 'b.jpg', images[1]),
      await api.put(created, 'c.jpg', images[2]),
      await api.put(created, 'notes.txt', Buffer.from('text')),
    ];
    await api.call('POST', `${P}/${created.id}/inputs/bulk_register/`, { input_file_keys: keys }, { expect: 200 });
    return { ...created, keys };
  }

  const gcp = (name: string, extra: Record<string, unknown> = {}) => ({ name, point_type: 'GCP', x: 2535000.5, y: 1152000.25, z: 432.1, ...extra });

  it('registers GCPs (with or without the trailing slash): 201 with what was stored, point_type upper case', async () => {
    const p = await project();
    const first = await api.call(
      'POST',
      `${P}/${p.id}/gcp/register`,
      { gcps: [gcp('G1', { point_type: 'gcp', xy_accuracy: 0.01, z_accuracy: 0.03 }), gcp('C1', { point_type: 'checkpoint' })] },
      { expect: 201 },
    );
    assert.deepEqual(first.gcps, [
      { name: 'G1', point_type: 'GCP', x: 2535000.5, y: 1152000.25, z: 432.1, xy_accuracy: 0.01, z_accuracy: 0.03 },
      { name: 'C1', point_type: 'CHECKPOINT', x: 2535000.5, y: 1152000.25, z: 432.1, xy_accuracy: 0.02, z_accuracy: 0.02 },
    ]);
    const second = await api.call('POST', `${P}/${p.id}/gcp/register/`, { gcps: [{ name: 'G2', point_type: 'Checkpoint', x: 1, y: 2, z: 3 }] }, { expect: 201 });
    assert.equal(second.gcps[0].point_type, 'CHECKPOINT');
    const noType = await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [{ name: 'G3', x: 1, y: 2, z: 3 }] }, { expect: 201 });
    assert.equal(noType.gcps[0].point_type, 'GCP');
    // Registering a name again replaces that point.
    await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('G1', { z: 500 })] }, { expect: 201 });
    const listed = await api.call('GET', `${P}/${p.id}/gcp/`, undefined, { expect: 200 });
    assert.deepEqual(listed.gcps.map((g: any) => [g.name, g.point_type, g.z]), [
      ['C1', 'CHECKPOINT', 432.1],
      ['G1', 'GCP', 500],
      ['G2', 'CHECKPOINT', 3],
      ['G3', 'GCP', 3],
    ]);
  });

  it('400 for invalid GCPs, naming the item and field', async () => {
    const p = await project();
    const badType = await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('A'), gcp('B', { point_type: 'TIEPOINT' })] }, { expect: 400 });
    assert.ok(badType.gcps['1'].point_type, JSON.stringify(badType));
    const missing = await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [{ name: 'A', x: 1, y: 2 }] }, { expect: 400 });
    assert.ok(missing.gcps['0'].z, JSON.stringify(missing));
    const notNumber = await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('A', { x: 'east' })] }, { expect: 400 });
    assert.ok(notNumber.gcps['0'].x, JSON.stringify(notNumber));
    const twice = await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('A'), gcp('A')] }, { expect: 400 });
    assert.ok(twice.gcps['1'].name);
    const badAccuracy = await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('A', { xy_accuracy: 0 })] }, { expect: 400 });
    assert.ok(badAccuracy.gcps['0'].xy_accuracy);
    await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [] }, { expect: 400 });
    await api.call('POST', `${P}/${p.id}/gcp/register`, {}, { expect: 400 });
    assert.deepEqual((await api.call('GET', `${P}/${p.id}/gcp/`)).gcps, [], 'nothing was stored');
  });

  it('registers MTPs: 201 with what was stored; GCP and MTP names do not collide', async () => {
    const p = await project();
    const stored = await api.call('POST', `${P}/${p.id}/mtp/`, { mtps: [{ name: 'T1', is_checkpoint: true }, { name: 'T2' }] }, { expect: 201 });
    assert.deepEqual(stored.mtps, [
      { name: 'T1', is_checkpoint: true },
      { name: 'T2', is_checkpoint: false },
    ]);
    await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('G1')] }, { expect: 201 });
    const clash = await api.call('POST', `${P}/${p.id}/mtp/`, { mtps: [{ name: 'G1' }] }, { expect: 400 });
    assert.ok(clash.mtps['0'].name);
    const clash2 = await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('T1')] }, { expect: 400 });
    assert.ok(clash2.gcps['0'].name);
    assert.deepEqual((await api.call('GET', `${P}/${p.id}/mtp/`)).mtps.map((m: any) => m.name), ['T1', 'T2']);
  });

  it('marks: after their points, on registered images, inside the image; 201 with what was stored', async () => {
    const p = await project();
    const [a, b, , text] = p.keys;
    // Before its GCP exists, a mark is refused.
    const early = await api.call('POST', `${P}/${p.id}/mark/register/`, { marks: [{ gcp: 'G1', photo: a, x: 10, y: 10 }] }, { expect: 400 });
    assert.ok(early.marks['0'].gcp, JSON.stringify(early));
    await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('G1')] }, { expect: 201 });
    await api.call('POST', `${P}/${p.id}/mtp/`, { mtps: [{ name: 'T1' }] }, { expect: 201 });

    const bad = await api.call(
      'POST',
      `${P}/${p.id}/mark/register/`,
      {
        marks: [
          { gcp: 'G1', photo: `${p.s3_base_path}/unregistered.jpg`, x: 1, y: 1 },
          { gcp: 'G1', photo: text, x: 1, y: 1 },
          { gcp: 'G1', photo: a, x: WIDTH, y: 1 },
          { gcp: 'G1', photo: a, x: 1, y: -0.5 },
          { gcp: 'G1', photo: a, x: 1, y: HEIGHT + 3 },
          { gcp: 'NOPE', photo: a, x: 1, y: 1 },
        ],
      },
      { expect: 400 },
    );
    assert.match(bad.marks['0'].photo[0], /not a registered input/);
    assert.match(bad.marks['1'].photo[0], /not a readable image/);
    assert.match(bad.marks['2'].x[0], /0 <= x < 160/);
    assert.match(bad.marks['3'].y[0], /0 <= y < 120/);
    assert.ok(bad.marks['4'].y);
    assert.match(bad.marks['5'].gcp[0], /No GCP or MTP named "NOPE"/);
    assert.deepEqual((await api.call('GET', `${P}/${p.id}/mark/`)).marks, [], 'all or nothing');

    const stored = await api.call(
      'POST',
      `${P}/${p.id}/mark/register/`,
      {
        marks: [
          { gcp: 'G1', photo: a, x: 0, y: 0 },
          { gcp: 'G1', photo: 'b.jpg', x: WIDTH - 0.5, y: HEIGHT - 0.5 },
          { gcp: 'T1', photo: b, x: 80, y: 60 },
        ],
      },
      { expect: 201 },
    );
    assert.deepEqual(stored.marks, [
      { gcp: 'G1', photo: a, x: 0, y: 0 },
      { gcp: 'G1', photo: b, x: WIDTH - 0.5, y: HEIGHT - 0.5 },
      { gcp: 'T1', photo: b, x: 80, y: 60 },
    ]);
    // Marking a point again in the same photo replaces the mark.
    await api.call('POST', `${P}/${p.id}/mark/register`, { marks: [{ gcp: 'T1', photo: b, x: 81, y: 61 }] }, { expect: 201 });
    const marks = (await api.call('GET', `${P}/${p.id}/mark/`)).marks;
    assert.equal(marks.length, 3);
    assert.deepEqual(marks.find((m: any) => m.gcp === 'T1'), { gcp: 'T1', photo: b, x: 81, y: 61 });
  });

  it('Limit 2: processing refuses to start (409) while a GCP or MTP is marked in fewer than two photos', async () => {
    const p = await project();
    const [a, b] = p.keys;
    await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('G1')] }, { expect: 201 });
    await api.call('POST', `${P}/${p.id}/mtp/`, { mtps: [{ name: 'T1' }] }, { expect: 201 });
    const zero = await api.call('POST', `${P}/${p.id}/start_processing/`, undefined, { expect: 409 });
    assert.match(zero.detail, /GCP "G1" has no marks/);
    assert.match(zero.detail, /MTP "T1" is marked in 0 photo/);
    await api.call('POST', `${P}/${p.id}/mark/register/`, { marks: [{ gcp: 'G1', photo: a, x: 1, y: 1 }, { gcp: 'T1', photo: a, x: 2, y: 2 }] }, { expect: 201 });
    const one = await api.call('POST', `${P}/${p.id}/start_processing/`, undefined, { expect: 409 });
    assert.match(one.detail, /GCP "G1" is marked in 1 photo/);
    assert.match(one.detail, /MTP "T1" is marked in 1 photo/);
    await api.call('POST', `${P}/${p.id}/mark/register/`, { marks: [{ gcp: 'G1', photo: b, x: 1, y: 1 }] }, { expect: 201 });
    const mtpOnly = await api.call('POST', `${P}/${p.id}/start_processing/`, undefined, { expect: 409 });
    assert.doesNotMatch(mtpOnly.detail, /G1/);
    assert.match(mtpOnly.detail, /MTP "T1"/);
    assert.equal((await api.call('GET', `${P}/${p.id}/`)).public_status, 'UPLOADING');
    await api.call('POST', `${P}/${p.id}/mark/register/`, { marks: [{ gcp: 'T1', photo: b, x: 2, y: 2 }] }, { expect: 201 });
    await api.call('POST', `${P}/${p.id}/start_processing/`, undefined, { expect: 202 });
    const done = await api.waitFor(p.id, settled);
    assert.equal(done.public_status, 'DONE', done.error_reason);

    // Rule 3: after processing has started, GCPs, MTPs and marks are refused (409).
    assert.equal((await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('G9')] }, { expect: 409 })).code, 'conflict');
    await api.call('POST', `${P}/${p.id}/mtp/`, { mtps: [{ name: 'T9' }] }, { expect: 409 });
    await api.call('POST', `${P}/${p.id}/mark/register/`, { marks: [{ gcp: 'G1', photo: a, x: 5, y: 5 }] }, { expect: 409 });

    // The engine receives them: they are in its camera document.
    const { outputs } = await api.call('GET', `${P}/${p.id}/outputs/`);
    const document = (await (await fetch(outputs.find((o: any) => o.output_type === 'calibrated_camera_parameters_json').url)).json()) as any;
    assert.deepEqual(document.control_points.gcps.map((g: any) => g.name), ['G1']);
    assert.equal(document.control_points.marks.length, 4);
  });

  it('rule 4, automatic GCP marking: GCPs without marks start when the project has a coordinate_system', async () => {
    const p = await project({ coordinate_system: epsgByCode(2056)!.wkt });
    await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('G1'), gcp('G2')] }, { expect: 201 });
    await api.call('POST', `${P}/${p.id}/start_processing/`, undefined, { expect: 202 });
    // ...but not a GCP marked in one photo only.
    const q = await project({ coordinate_system: epsgByCode(2056)!.wkt });
    await api.call('POST', `${P}/${q.id}/gcp/register`, { gcps: [gcp('G1')] }, { expect: 201 });
    await api.call('POST', `${P}/${q.id}/mark/register/`, { marks: [{ gcp: 'G1', photo: q.keys[0], x: 1, y: 1 }] }, { expect: 201 });
    await api.call('POST', `${P}/${q.id}/start_processing/`, undefined, { expect: 409 });
    await api.waitFor(p.id, settled);
  });

  it('thousands of marks: written in short steps the other requests pass between, every one listed back (page by page) as registered', async () => {
    const p = await project();
    const names = Array.from({ length: 1200 }, (_, i) => `P${String(i).padStart(4, '0')}`);
    await api.call('POST', `${P}/${p.id}/gcp/register`, { gcps: names.map((name) => gcp(name)) }, { expect: 201 });
    const photos: string[] = p.keys.slice(0, 3);
    const marks = photos.flatMap((photo, j) => names.map((name, i) => ({ gcp: name, photo, x: (i % WIDTH) + j / 4, y: (i % HEIGHT) + 0.5 })));
    // A registration of 3,600 marks, and meanwhile a cheap read of the same project, again and again.
    let registered = false;
    const registration = api.call('POST', `${P}/${p.id}/mark/register/`, { marks }, { expect: 201 }).finally(() => (registered = true));
    const seenWhileRegistering: number[] = [];
    while (!registered) {
      const listed = (await api.call('GET', `${P}/${p.id}/mark/`, undefined, { expect: 200 })).marks.length;
      if (!registered) seenWhileRegistering.push(listed);
    }
    const answer = await registration;
    assert.equal(answer.marks.length, marks.length);
    assert.deepEqual(answer.marks, marks, 'the answer lists what was stored, in the order sent');
    const byKey = (m: { gcp: string; photo: string }) => `${m.gcp} ${m.photo}`;
    const listed = (await api.call('GET', `${P}/${p.id}/mark/`, undefined, { expect: 200 })).marks;
    assert.deepEqual(listed, [...marks].sort((a, b) => (byKey(a) < byKey(b) ? -1 : 1)), 'every mark round-trips, in (point, photo) order');
    assert.ok(seenWhileRegistering.length > 0, 'reads were answered while the registration ran');
    if (system.database.kind === 'pglite') {
      // The embedded database writes in chunks: some read came between two of them.
      assert.ok(seenWhileRegistering.some((n) => n > 0 && n < marks.length), `reads during the registration saw ${seenWhileRegistering.join(', ')} marks`);
    }
  });

  it("another organization's project: 404 for every control-point call", async () => {
    const p = await project();
    const other = await cloudClient(system, 'Other');
    await other.call('POST', `${P}/${p.id}/gcp/register`, { gcps: [gcp('G1')] }, { expect: 404 });
    await other.call('POST', `${P}/${p.id}/mtp/`, { mtps: [{ name: 'T1' }] }, { expect: 404 });
    await other.call('POST', `${P}/${p.id}/mark/register/`, { marks: [{ gcp: 'G1', photo: p.keys[0], x: 1, y: 1 }] }, { expect: 404 });
    await other.call('GET', `${P}/${p.id}/gcp/`, undefined, { expect: 404 });
    assert.deepEqual((await api.call('GET', `${P}/${p.id}/gcp/`)).gcps, []);
  });
});
