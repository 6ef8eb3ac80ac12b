// What this installation's engines can make (issue 29 §2): the cloud's GET
// /project/api/v3/capabilities/ says, per engine, whether the point cloud, mesh, DSM and orthophoto
// can be made and, if not, why, in the very words its runs list the output `not available` with;
// the inspection service reads it and the console settings' unavailable_options carry the outputs
// that no engine of its processing backends can make (clip_point_cloud too without a point cloud).
// A cloud it cannot read leaves the outputs enabled. The colmap engine is configured, never run.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { DENSE_SWITCHED_OFF } from '../src/cloud/processing/colmap/stages/dense-plan.ts';

const CAPABILITIES = '/project/api/v3/capabilities/';
const OUTPUT_OPTIONS = ['generate_point_cloud', 'generate_mesh', 'generate_dsm', 'generate_ortho', 'clip_point_cloud'];

async function consoleSettings(system: TestSystem): Promise<{ unavailable_options: Record<string, string> }> {
  const response = await fetch(`${system.urls.inspection}/v1/console/settings/`);
  assert.equal(response.status, 200);
  return (await response.json()) as { unavailable_options: Record<string, string> };
}

describe('capabilities with the exif engine (it reconstructs nothing)', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  before(async () => {
    system = await startTestSystem({ engine: 'exif' });
    api = await cloudClient(system);
  });
  after(async () => {
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  it('the route needs a token and lists the four outputs as not made, with the reason a run gives', async () => {
    assert.equal((await fetch(`${system.urls.cloud}${CAPABILITIES}`)).status, 401);
    const capabilities = await api.call('GET', CAPABILITIES, undefined, { expect: 200 });
    assert.equal(capabilities.engine, 'exif');
    assert.deepEqual(Object.keys(capabilities.outputs), ['point_cloud', 'mesh', 'dsm', 'ortho']);
    for (const [output, capability] of Object.entries<any>(capabilities.outputs)) {
      assert.equal(capability.available, false, output);
      assert.match(capability.reason, /^The exif engine does not reconstruct/, output);
      assert.equal(capability.note, null);
    }
    assert.deepEqual(capabilities.engines, [{ engine: 'exif', outputs: capabilities.outputs }]);

    // One source of truth: a run lists the outputs `not available` with the same words.
    const project = await api.call('POST', '/project/api/v3/projects/', { name: 'capabilities' }, { expect: 201 });
    const image = await generateGeotaggedJpeg({ latitude: 46.5, longitude: 6.6, altitude: 400, seed: 1, width: 160, height: 120 });
    const key = await api.put(project, 'DJI_0001.JPG', image);
    await api.call('POST', `/project/api/v3/projects/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
    await api.call('POST', `/project/api/v3/projects/${project.id}/start_processing/`, undefined, { expect: 202 });
    assert.equal((await api.waitFor(project.id, settled)).public_status, 'DONE');
    const { outputs } = await api.call('GET', `/project/api/v3/projects/${project.id}/outputs/`, undefined, { expect: 200 });
    for (const [output, type] of [['point_cloud', 'point_cloud'], ['mesh', '3d_mesh_obj_zip'], ['dsm', 'dsm'], ['ortho', 'ortho_rgb']]) {
      const listed = outputs.find((o: any) => o.output_type === type);
      assert.equal(listed.availability, 'not available', type);
      assert.equal(listed.note, capabilities.outputs[output].reason, type);
    }
  });

  it('a read-only token reads it too', async () => {
    const response = await fetch(`${system.urls.cloud}/oauth2/token/`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: api.clientId, client_secret: api.clientSecret, scope: 'read:cloud' }),
    });
    const { access_token: token } = (await response.json()) as { access_token: string };
    assert.equal((await fetch(`${system.urls.cloud}${CAPABILITIES}`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  });

  it('the console settings disable the four outputs, clipping and antenna detection, each with the engine\'s reason', async () => {
    const { unavailable_options: unavailable } = await consoleSettings(system);
    const capabilities = await api.call('GET', CAPABILITIES, undefined, { expect: 200 });
    assert.deepEqual(Object.keys(unavailable).sort(), ['roof_segmentation', 'detect_antennas', ...OUTPUT_OPTIONS].sort());
    assert.equal(unavailable.detect_antennas, `Antennas are found in the point cloud, and none can be made: ${capabilities.outputs.point_cloud.reason}`);
    assert.equal(unavailable.generate_mesh, capabilities.outputs.mesh.reason);
    assert.equal(unavailable.generate_ortho, capabilities.outputs.ortho.reason);
    assert.equal(unavailable.clip_point_cloud, `No point cloud to clip: ${capabilities.outputs.point_cloud.reason}`);
  });
});

describe('capabilities with the colmap engine (configured, not run)', () => {
  let dense: TestSystem;
  let sparseOnly: TestSystem;
  before(async () => {
    // colmap by default, exif offered and used for the vortex backend.
    dense = await startTestSystem({ engine: 'colmap', colmapDense: true, engines: ['exif'], processingBackendEngines: { vortex: 'exif' } });
    sparseOnly = await startTestSystem({ engine: 'colmap', colmapDense: false });
  });
  after(async () => {
    for (const system of [dense, sparseOnly]) if (system) assertNoServerErrors(system);
    await dense?.stop();
    await sparseOnly?.stop();
  });

  it('with the dense stages: all four made (the orthophoto for photos that look down); exif listed as offered', async () => {
    const api = await cloudClient(dense);
    const capabilities = await api.call('GET', CAPABILITIES, undefined, { expect: 200 });
    assert.equal(capabilities.engine, 'colmap');
    for (const capability of Object.values<any>(capabilities.outputs)) assert.equal(capability.available, true);
    assert.match(capabilities.outputs.ortho.note, /look down/);
    assert.deepEqual(capabilities.engines.map((e: any) => [e.engine, Object.values(e.outputs).map((o: any) => o.available)]), [
      ['colmap', [true, true, true, true]],
      ['exif', [false, false, false, false]],
    ]);
  });

  it('the console settings keep every output enabled while one backend\'s engine makes them (mapper: colmap, vortex: exif)', async () => {
    assert.deepEqual(Object.keys((await consoleSettings(dense)).unavailable_options), ['roof_segmentation']);
  });

  it('COLMAP_DENSE=off: the sparse point cloud only; mesh, DSM and orthophoto disabled with the reason its runs give', async () => {
    const api = await cloudClient(sparseOnly);
    const capabilities = await api.call('GET', CAPABILITIES, undefined, { expect: 200 });
    assert.equal(capabilities.outputs.point_cloud.available, true);
    for (const output of ['mesh', 'dsm', 'ortho']) assert.deepEqual(capabilities.outputs[output], { available: false, reason: DENSE_SWITCHED_OFF, note: null });
    const { unavailable_options: unavailable } = await consoleSettings(sparseOnly);
    assert.deepEqual(Object.keys(unavailable).sort(), ['generate_dsm', 'generate_mesh', 'generate_ortho', 'roof_segmentation']);
    assert.equal(unavailable.generate_dsm, DENSE_SWITCHED_OFF);
  });
});

describe('capabilities: a cloud the inspection service cannot read leaves the outputs enabled (the processing summary says what was not made)', () => {
  let refusing: TestSystem;
  let waiting: TestSystem;
  let silent: net.Server;
  const sockets = new Set<net.Socket>();
  before(async () => {
    // A port nothing listens on: every call of the inspection service to the cloud is refused.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    refusing = await startTestSystem({ engine: 'exif', cloudUrl: `http://127.0.0.1:${closedPort}` });
    // Accepts connections and never answers.
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    waiting = await startTestSystem({ engine: 'exif' });
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    await refusing?.stop();
    await waiting?.stop();
  });

  it('a cloud that refuses the connection', async () => {
    assert.deepEqual(Object.keys((await consoleSettings(refusing)).unavailable_options), ['roof_segmentation']);
  });

  it('a cloud that does not answer: the settings answer without waiting for it', async () => {
    // Started against its own cloud (its start hands records over to organizations, and would wait
    // for a silent cloud too), then pointed at the silent one: the client reads the URL at each call.
    waiting.config.cloudUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    assert.deepEqual(Object.keys((await consoleSettings(waiting)).unavailable_options), ['roof_segmentation']);
  });
});
