// The nodeodm engine against a fake NodeODM node that follows NodeODM's documented API
// (helpers/fake-nodeodm.ts): the whole flow through the cloud service's public API with an upload
// cut halfway and retried, all.zip unpacked into the outputs, the token on every call; then, on
// the engine itself, a FAILED task mapped to its error code, a cancel, and the time limit.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { engineInput, ENGINE_TEST_BUCKET } from './helpers/engine-input.ts';
import { cloudClient, readZip, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { startFakeNodeOdm, FAKE_ORIGIN, type FakeNodeOdm } from './helpers/fake-nodeodm.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { NodeOdmEngine } from '../src/cloud/processing/nodeodm/nodeodm-engine.ts';
import { EngineError, type EngineInput } from '../src/cloud/processing/engine.ts';
import { odmOptionsFor } from '../src/cloud/processing/nodeodm/odm-options.ts';

const P = '/project/api/v3/projects';
const TOKEN = 'node-token-1';

async function read(system: TestSystem, bucket: string, key: string): Promise<Buffer> {
  const { body } = await system.store.getObject(bucket, key);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

describe('nodeodm engine (fake NodeODM node)', () => {
  let node: FakeNodeOdm;
  let system: TestSystem;
  let api: CloudTestClient;
  let images: Buffer[];

  before(async () => {
    node = await startFakeNodeOdm({ token: TOKEN, pollsToFinish: 3 });
    system = await startTestSystem({ engine: 'nodeodm', nodeodmUrl: node.url, nodeodmToken: TOKEN, nodeodmPollSeconds: 0 });
    api = await cloudClient(system);
    images = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        generateGeotaggedJpeg({ latitude: FAKE_ORIGIN.latitude + i * 0.0001, longitude: FAKE_ORIGIN.longitude + i * 0.0001, altitude: FAKE_ORIGIN.altitude, seed: i + 1, width: 160, height: 120 }),
      ),
    );
  });
  after(async () => {
    await system?.stop();
    await node?.close();
  });

  /** An EngineInput for the engine alone, with the images stored under a fresh prefix. */
  async function storedInput(signal: AbortSignal, count = 4): Promise<EngineInput & { progress: number[] }> {
    const prefix = `engine-test/${crypto.randomUUID()}/`;
    const list = [];
    for (let i = 0; i < count; i++) {
      const key = `${prefix}inputs/img${i}.jpg`;
      await system.store.putObject(ENGINE_TEST_BUCKET, key, images[i]);
      list.push({ key, size: images[i].length, ok: true as const, width: 160, height: 120, latitude: FAKE_ORIGIN.latitude + i * 0.0001, longitude: FAKE_ORIGIN.longitude + i * 0.0001, altitude: FAKE_ORIGIN.altitude, make: null, model: null, focal_length_35mm: null, captured_at: null, quaternion: null, format: 'jpeg' });
    }
    return engineInput(system.store, prefix, list, signal);
  }

  it('processes a project through the cloud API: uploads retried after a cut, progress mirrored, all.zip unpacked into the outputs', async () => {
    node.dropUploads = 1; // the first upload request is cut halfway
    node.nextOutcome = { kind: 'complete' };
    const project = await api.call('POST', `${P}/`, { name: 'nodeodm' }, { expect: 201 });
    const keys: string[] = [];
    for (const [i, image] of images.entries()) keys.push(await api.put(project, `DJI_${String(i).padStart(4, '0')}.JPG`, image));
    await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: keys }, { expect: 200 });
    await api.call('POST', `${P}/${project.id}/start_processing/`, { tags: ['nadir', 'flat'] }, { expect: 202 });
    const done = await api.waitFor(project.id, settled, 60_000);
    assert.equal(done.public_status, 'DONE', `${done.error_code}: ${done.error_reason}`);

    // The node saw: init with our set-uuid, uploads (one cut, retried), commit, polls, download, remove; the token every time.
    assert.equal(node.droppedUploads, 1);
    const task = [...node.tasks.values()].at(-1)!;
    assert.equal(task.images.length, 12, 'every image arrived once the cut upload was retried');
    assert.ok(task.removed, 'the node\'s copy is removed after download');
    const init = node.requests.find((r) => r.path === '/task/new/init')!;
    assert.equal(init.headers['set-uuid'], task.uuid);
    assert.ok(node.requests.every((r) => r.query.get('token') === TOKEN), 'token on every call');
    assert.deepEqual(Object.fromEntries(task.options.map((o) => [o.name, o.value])), odmOptionsFor('nadir', ['nadir', 'flat']));

    const { outputs } = await api.call('GET', `${P}/${project.id}/outputs/`, undefined, { expect: 200 });
    const byType = new Map<string, any>(outputs.map((o: any) => [o.output_type, o]));
    for (const type of ['ortho_rgb', 'dsm', 'point_cloud', '3d_mesh_obj_zip', 'calibrated_camera_parameters_json', 'quality_report', 'processing_log']) {
      assert.equal(byType.get(type)?.availability, 'done', type);
    }
    const file = (type: string) => read(system, byType.get(type).s3_bucket ?? project.bucket_name, byType.get(type).s3_key);
    assert.equal((await file('ortho_rgb')).subarray(0, 4).toString('latin1'), 'II*\0', 'the node\'s GeoTIFF, as it was');
    assert.equal((await file('point_cloud')).toString(), 'LASF fake laz');
    // Its PLY copy for the 3D view (point-cloud-ply.ts): this node's cloud is not a real LAZ, so
    // none, listed not available with why (the tower tests' real cloud gets one).
    assert.equal(byType.get('point_cloud_ply')?.availability, 'not available');
    assert.match(byType.get('point_cloud_ply')?.note ?? '', /could not be read to copy it as PLY/);
    assert.deepEqual(readZip(await file('3d_mesh_obj_zip')).map((e) => e.name).sort(), ['odm_textured_model_geo.mtl', 'odm_textured_model_geo.obj']);
    const calibrated = JSON.parse((await file('calibrated_camera_parameters_json')).toString());
    assert.equal(calibrated.engine, 'nodeodm');
    assert.equal(calibrated.coordinate_system_epsg, 32615);
    assert.equal(calibrated.cameras.length, 12);
    const first = calibrated.cameras.find((c: any) => c.key === keys[0]);
    assert.ok(first, 'cameras carry the storage keys of the inputs');
    assert.ok(Math.abs(first.intrinsics.fx - 0.85 * 160) < 1e-9);
    // Looking straight down (Rodrigues [pi, 0, 0]): the optical axis maps to -up.
    const [w, x, y, z] = first.quaternion;
    const axisUp = 1 - 2 * (x * x + y * y);
    assert.ok(axisUp < -0.999, `optical axis up component ${axisUp} (q = ${first.quaternion})`);
    void w;
    void z;
    const report = JSON.parse((await file('quality_report')).toString());
    assert.equal(report.images.registered, 12);
    assert.ok(report.report_pdf);
  });

  it('a FAILED task gives the error code of its cause: out of memory 10003, anything else 10410', async () => {
    const engine = new NodeOdmEngine({ url: node.url, token: TOKEN, workDir: `${system.dataDir}/work`, pollIntervalMs: 5, retryDelayMs: 5 });
    node.nextOutcome = { kind: 'fail', errorMessage: 'Cannot process dataset', log: ['[ERROR] Not enough overlap: reconstruction failed'] };
    await assert.rejects(engine.run(await storedInput(new AbortController().signal)), (err) => {
      assert.ok(err instanceof EngineError);
      assert.equal(err.errorCode, 10410);
      assert.match(err.reason, /Cannot process dataset.*Not enough overlap/);
      return true;
    });
    node.nextOutcome = { kind: 'fail', errorMessage: 'Not enough memory' };
    await assert.rejects(engine.run(await storedInput(new AbortController().signal)), (err) => err instanceof EngineError && err.errorCode === 10003);
    node.nextOutcome = { kind: 'complete' };
  });

  it('a cancel cancels and removes the task on the node', async () => {
    const engine = new NodeOdmEngine({ url: node.url, token: TOKEN, workDir: `${system.dataDir}/work`, pollIntervalMs: 5 });
    node.nextOutcome = { kind: 'hang' };
    const controller = new AbortController();
    const input = await storedInput(controller.signal);
    const run = engine.run(input);
    // Cancel once the task runs on the node.
    for (let i = 0; i < 400 && ![...node.tasks.values()].some((t) => t.name === input.projectUuid && t.polls > 1); i++) await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error('canceled by the user'));
    await assert.rejects(run, /canceled by the user/);
    const task = [...node.tasks.values()].find((t) => t.name === input.projectUuid)!;
    assert.equal(task.status, 50, 'CANCELED on the node');
    assert.ok(task.removed);
    assert.ok(input.progress.every((p, i) => i === 0 || p >= input.progress[i - 1]), 'progress never goes backwards');
    assert.ok(input.progress.at(-1)! > 10, 'progress mirrored from the node');
    node.nextOutcome = { kind: 'complete' };
  });

  it('the time limit fails the run with 10002 and cancels the task', async () => {
    const engine = new NodeOdmEngine({ url: node.url, token: TOKEN, workDir: `${system.dataDir}/work`, pollIntervalMs: 20, timeLimitSeconds: 1 });
    node.nextOutcome = { kind: 'hang' };
    const input = await storedInput(new AbortController().signal);
    await assert.rejects(engine.run(input), (err) => err instanceof EngineError && err.errorCode === 10002);
    const task = [...node.tasks.values()].find((t) => t.name === input.projectUuid)!;
    assert.equal(task.status, 50);
    node.nextOutcome = { kind: 'complete' };
  });

  it('an unreachable node is 10001 with a reason', async () => {
    const engine = new NodeOdmEngine({ url: 'http://127.0.0.1:9', workDir: `${system.dataDir}/work`, retryDelayMs: 5, uploadRetries: 2 });
    await assert.rejects(engine.run(await storedInput(new AbortController().signal)), (err) => err instanceof EngineError && err.errorCode === 10001 && /processing node/.test(err.reason));
  });
});
