// generate_mesh / generate_dsm / generate_ortho / generate_point_cloud act (issue 12): the
// inspection sends them as start_processing's `outputs` extension; the nodeodm engine turns them
// into ODM options (seen on a fake node); every engine lists what it was not asked to make, or
// cannot make, as `not available` with the reason (the exif engine here).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { startFakeNodeOdm, FAKE_ORIGIN, type FakeNodeOdm } from './helpers/fake-nodeodm.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { odmOptionsFor } from '../src/cloud/processing/nodeodm/odm-options.ts';
import { applyRequestedOutputs, resolveRequestedOutputs } from '../src/cloud/processing/requested-outputs.ts';
import { requestedOutputsOf } from '../src/inspection/pipeline/output-options.ts';
import { ValidationError } from '../src/infra/http/errors.ts';

const P = '/project/api/v3/projects';

describe('requested outputs: mapping', () => {
  it('onto ODM options, over the pipeline\'s and under NODEODM_OPTIONS', () => {
    assert.deepEqual(odmOptionsFor('nadir', [], {}, { mesh: false, dsm: false, ortho: false }), { 'auto-boundary': true, 'skip-3dmodel': true, 'skip-orthophoto': true });
    assert.deepEqual(odmOptionsFor('nadir', [], {}, { mesh: true, dsm: true, ortho: true }), { dsm: true, 'auto-boundary': true });
    assert.equal(odmOptionsFor('mobile', [], {}, { ortho: true })['skip-orthophoto'], undefined, 'asked for: the orthophoto is made even for a hand-held capture');
    assert.equal(odmOptionsFor('mobile', [], {}, {})['skip-orthophoto'], true, 'not said: the pipeline decides');
    assert.deepEqual(odmOptionsFor('nadir', [], {}, null), odmOptionsFor('nadir', []), 'no request: as before');
    assert.equal(odmOptionsFor('nadir', [], { 'skip-3dmodel': false }, { mesh: false })['skip-3dmodel'], false, 'NODEODM_OPTIONS last');
  });

  it('generate_* of the inspection, absent meaning false', () => {
    assert.deepEqual(requestedOutputsOf({ generate_point_cloud: true }), { point_cloud: true, mesh: false, dsm: false, ortho: false });
    assert.deepEqual(requestedOutputsOf({ generate_mesh: true, generate_dsm: true, generate_ortho: true }), { point_cloud: false, mesh: true, dsm: true, ortho: true });
  });

  it('the request is checked; not-available reasons say whether the output was asked for', () => {
    assert.equal(resolveRequestedOutputs(undefined), null);
    assert.deepEqual(resolveRequestedOutputs({ dsm: true }), { dsm: true });
    for (const bad of [[], 'dsm', { dsm: 'yes' }, { contours: true }]) assert.throws(() => resolveRequestedOutputs(bad), (err: unknown) => err instanceof ValidationError && 'outputs' in err.fields);
    const result = applyRequestedOutputs(
      { outputs: [], notAvailable: [{ outputType: 'dsm', reason: 'Needs dense reconstruction.' }, { outputType: 'ortho_rgb', reason: 'Needs dense reconstruction.' }, { outputType: 'project_thumb', reason: 'x' }] },
      { dsm: true, ortho: false },
      'colmap',
    );
    assert.deepEqual(result.notAvailable.map((o) => o.reason), ['Requested (outputs.dsm), but the colmap engine cannot make it: Needs dense reconstruction.', 'Not requested (outputs.ortho: false).', 'x']);
  });
});

describe('requested outputs through the services (exif default, nodeodm on a fake node)', () => {
  let node: FakeNodeOdm;
  let system: TestSystem;
  let api: CloudTestClient;
  let account: TestAccount;
  let images: { name: string; body: Buffer }[];

  before(async () => {
    node = await startFakeNodeOdm({ pollsToFinish: 1 });
    system = await startTestSystem({ engine: 'exif', engines: ['nodeodm'], nodeodmUrl: node.url, nodeodmPollSeconds: 0, processingBackendEngines: { vortex: 'nodeodm' } });
    api = await cloudClient(system);
    account = await system.newAccount({ projects: 5 });
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

  async function cloudProject(): Promise<any> {
    const project = await api.call('POST', `${P}/`, { name: 'outputs' }, { expect: 201 });
    const keys = [];
    for (const image of images) keys.push(await api.put(project, image.name, image.body));
    await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: keys }, { expect: 200 });
    return project;
  }

  const notes = async (projectId: number) =>
    new Map<string, any>((await api.call('GET', `${P}/${projectId}/outputs/`, undefined, { expect: 200 })).outputs.map((o: any) => [o.output_type, o]));

  it('cloud API: `outputs` checked (400 on the field); with exif, asked-for outputs are not available with the engine\'s reason, the others as not requested', async () => {
    const project = await cloudProject();
    const bad = await api.call('POST', `${P}/${project.id}/start_processing/`, { outputs: { dsm: 'yes', contours: true } }, { expect: 400 });
    assert.deepEqual(Object.keys(bad), ['outputs']);
    await api.call('POST', `${P}/${project.id}/start_processing/`, { outputs: { dsm: true, mesh: false } }, { expect: 202 });
    const done = await api.waitFor(project.id, settled, 60_000);
    assert.equal(done.public_status, 'DONE');
    const outputs = await notes(project.id);
    assert.equal(outputs.get('dsm').availability, 'not available');
    assert.match(outputs.get('dsm').note, /^Requested \(outputs\.dsm\), but the exif engine cannot make it: /);
    assert.equal(outputs.get('3d_mesh_obj_zip').note, 'Not requested (outputs.mesh: false).');
    assert.doesNotMatch(outputs.get('ortho_rgb').note, /requested/i, 'not said: the engine\'s own reason');
  });

  it('cloud API: the nodeodm engine sends them as ODM options; what it was asked not to make is not available, not requested', async () => {
    const project = await cloudProject();
    await api.call('POST', `${P}/${project.id}/start_processing/`, { engine: 'nodeodm', outputs: { mesh: false, dsm: true, ortho: false } }, { expect: 202 });
    const done = await api.waitFor(project.id, settled, 60_000);
    assert.equal(done.public_status, 'DONE', `${done.error_code} ${done.error_reason}`);
    const task = [...node.tasks.values()].at(-1)!;
    const options = Object.fromEntries(task.options.map((o) => [o.name, o.value]));
    assert.equal(options['skip-3dmodel'], true);
    assert.equal(options.dsm, true);
    assert.equal(options['skip-orthophoto'], true);
    const outputs = await notes(project.id);
    assert.equal(outputs.get('dsm').availability, 'done');
    assert.equal(outputs.get('point_cloud').availability, 'done');
    for (const [type, key] of [['3d_mesh_obj_zip', 'mesh'], ['ortho_rgb', 'ortho']]) {
      assert.equal(outputs.get(type).availability, 'not available', type);
      assert.equal(outputs.get(type).note, `Not requested (outputs.${key}: false).`);
    }
  });

  it('an inspection\'s generate_* reach the engine: nodeodm options on the node, the request on the cloud project', async () => {
    const { client } = account;
    const asset = await client.createAsset({ name: 'Mast', type: 1, latitude: FAKE_ORIGIN.latitude.toFixed(8), longitude: FAKE_ORIGIN.longitude.toFixed(8) });
    const run = async (parameters: Record<string, unknown>, backend: string) => {
      const inspection = await client.createInspection({ asset: asset.id, processing_parameters: parameters, processing_backend: backend });
      await client.register(inspection.id, await client.upload(await client.storageCredentials(inspection.id), images));
      await client.process(inspection.id);
      const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 120_000 });
      assert.equal(done.status, 7, JSON.stringify(done));
      return done;
    };
    const before = node.tasks.size;
    const vortex = await run({ generate_point_cloud: true, generate_mesh: true, generate_dsm: false, generate_ortho: true }, 'vortex');
    assert.equal(node.tasks.size, before + 1);
    const options = Object.fromEntries([...node.tasks.values()].at(-1)!.options.map((o) => [o.name, o.value]));
    assert.equal(options['skip-3dmodel'], undefined, 'mesh asked for');
    assert.equal(options.dsm, undefined, 'no DSM asked for');
    assert.equal(options['skip-orthophoto'], undefined, 'orthophoto asked for');
    const vortexOutputs = await (await system.inspection.cloudFor(vortex.id)).outputs(vortex.project_id);
    assert.equal(vortexOutputs.find((o) => o.output_type === 'dsm')?.availability, 'not available');
    assert.equal(vortexOutputs.find((o) => o.output_type === '3d_mesh_obj_zip')?.availability, 'done');

    const mapper = await run({ generate_point_cloud: true, generate_ortho: true }, 'mapper');
    const row = await system.cloud.db.selectFrom('cloud.projects').select('requested_outputs').where('id', '=', mapper.project_id).executeTakeFirstOrThrow();
    assert.deepEqual(row.requested_outputs, { point_cloud: true, mesh: false, dsm: false, ortho: true });
    const mapperOutputs = await (await system.inspection.cloudFor(mapper.id)).outputs(mapper.project_id);
    const ortho: any = mapperOutputs.find((o) => o.output_type === 'ortho_rgb');
    assert.equal(ortho?.availability, 'not available');
    assert.match(ortho?.note ?? '', /^Requested \(outputs\.ortho\), but the exif engine cannot make it/);
    assert.match((mapperOutputs.find((o) => o.output_type === 'point_cloud') as any)?.note ?? '', /^Requested \(outputs\.point_cloud\)/);
  });
});
