// The engine chosen per processing request (an extension: `engine` beside `tags` in
// start_processing, among the default ENGINE and the ENGINES a deployment offers), and real
// cancellation: deleting a project while it processes stops the engine run (the NodeODM task
// canceled on a fake node, a stand-in COLMAP process killed) and records nothing more for it;
// the engine time limit still fails a run with 10002.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestSystem, tempDir, type TestSystem } from './helpers/test-system.ts';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { startFakeNodeOdm, FAKE_ORIGIN, type FakeNodeOdm } from './helpers/fake-nodeodm.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { loadConfig } from '../src/config.ts';
import { createEngines } from '../src/cloud/processing/engines.ts';

const P = '/project/api/v3/projects';

/** Waits until `check` answers true; fails with `what` after `timeoutMs`. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** A stand-in colmap: answers `colmap -h` with a version; `body` is bash run for any other command. */
function fakeColmap(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/bash\nif [ "$1" = -h ]; then echo "COLMAP 3.8 -- stand-in"; exit 0; fi\n${body}\n`, { mode: 0o755 });
  return file;
}

async function testImages(): Promise<Buffer[]> {
  return Promise.all(
    [0, 1, 2, 3].map((i) =>
      generateGeotaggedJpeg({ latitude: FAKE_ORIGIN.latitude + i * 0.0001, longitude: FAKE_ORIGIN.longitude + i * 0.0001, altitude: FAKE_ORIGIN.altitude, seed: i + 1, width: 160, height: 120 }),
    ),
  );
}

/** A project with the images uploaded and registered (UPLOADING). */
async function projectWith(api: CloudTestClient, images: Buffer[], name = 'engines'): Promise<any> {
  const project = await api.call('POST', `${P}/`, { name }, { expect: 201 });
  const keys = [];
  for (const [i, image] of images.entries()) keys.push(await api.put(project, `DJI_${String(i).padStart(4, '0')}.JPG`, image));
  await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: keys }, { expect: 200 });
  return api.call('GET', `${P}/${project.id}/`, undefined, { expect: 200 });
}

/** The project's row as the database keeps it after deletion (the API answers 404 then). */
function row(system: TestSystem, id: number) {
  return system.cloud.db
    .selectFrom('cloud.projects')
    .select(['public_status', 'error_code', 'error_reason', 'engine', 'deleted_at', 'detailed_status'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

async function objectsUnder(system: TestSystem, bucket: string, prefix: string): Promise<string[]> {
  const listed = await system.store.listObjects(bucket, { prefix });
  return listed.objects.map((o) => o.key);
}

describe('engines offered by a deployment (ENGINE, ENGINES)', () => {
  it('ENGINES is a comma-separated list: trimmed, lower case, without repeats', () => {
    assert.deepEqual(loadConfig({ ENGINES: ' Colmap, nodeodm,,colmap ' }).engines, ['colmap', 'nodeodm']);
    assert.deepEqual(loadConfig({}).engines, []);
  });

  it('an engine that cannot be configured stops the start, naming it', () => {
    assert.throws(() => createEngines('exif', ['nodeodm'], { simulatedSeconds: 0 }), /ENGINES lists "nodeodm", which cannot be configured: .*NODEODM_URL/);
    assert.throws(() => createEngines('exif', ['pix4d'], { simulatedSeconds: 0 }), /ENGINES lists "pix4d".*Unknown engine.*exif, colmap, nodeodm/);
    assert.throws(() => createEngines('nodeodm', [], { simulatedSeconds: 0 }), /ENGINE is "nodeodm".*NODEODM_URL/);
    const set = createEngines('exif', ['nodeodm', 'exif'], { simulatedSeconds: 0, nodeodmUrl: 'http://127.0.0.1:1' });
    assert.deepEqual(set.names, ['exif', 'nodeodm']);
    assert.equal(set.get('nodeodm')?.name, 'nodeodm');
  });
});

describe('engine per request and cancellation by deletion (fake NodeODM, stand-in COLMAP)', () => {
  let node: FakeNodeOdm;
  let system: TestSystem;
  let api: CloudTestClient;
  let images: Buffer[];
  let scripts: string;
  let pidFile: string;

  before(async () => {
    scripts = tempDir('oi-engines-');
    pidFile = path.join(scripts, 'colmap.pid');
    // Records its pid, then becomes `sleep` (exec: the same pid, a direct child of the service).
    const colmap = fakeColmap(scripts, 'colmap', `echo $$ > ${pidFile}\nexec sleep 300`);
    node = await startFakeNodeOdm({ pollsToFinish: 3 });
    system = await startTestSystem({ engine: 'exif', engines: ['nodeodm', 'colmap'], nodeodmUrl: node.url, nodeodmPollSeconds: 1, colmapBinary: colmap });
    api = await cloudClient(system);
    images = await testImages();
  });
  after(async () => {
    await system?.stop();
    await node?.close();
    fs.rmSync(scripts, { recursive: true, force: true });
  });

  /** The worker is free again (one processing job at a time): a new exif project gets processed. */
  async function workerFree(): Promise<void> {
    const next = await projectWith(api, images.slice(0, 1), 'next');
    await api.call('POST', `${P}/${next.id}/start_processing/`, {}, { expect: 202 });
    const done = await api.waitFor(next.id, settled);
    assert.equal(done.public_status, 'DONE', `${done.error_code}: ${done.error_reason}`);
    assert.equal(done.engine, 'exif');
  }

  it('an engine not offered: 400 on `engine` listing the offered ones; nothing starts', async () => {
    const project = await projectWith(api, images);
    for (const engine of ['pix4d', 'odm', 42]) {
      const body = await api.call('POST', `${P}/${project.id}/start_processing/`, { tags: ['nadir'], engine }, { expect: 400 });
      assert.deepEqual(Object.keys(body), ['engine'], JSON.stringify(body));
      assert.match(body.engine[0], /not offered.*Offered: exif, nodeodm, colmap \(default exif\)/);
    }
    // As a form field too; and a bad tag is reported beside it.
    const form = await api.call('POST', `${P}/${project.id}/start_processing/`, undefined, { raw: new URLSearchParams('tags=nadir&engine=bogus'), expect: 400 });
    assert.match(form.engine[0], /"bogus" is not offered/);
    const both = await api.call('POST', `${P}/${project.id}/start_processing/`, { tags: ['sideways'], engine: 'bogus' }, { expect: 400 });
    assert.deepEqual(Object.keys(both).sort(), ['engine', 'tags']);

    const after = await api.call('GET', `${P}/${project.id}/`, undefined, { expect: 200 });
    assert.equal(after.public_status, 'UPLOADING');
    assert.equal(after.engine, null);
    assert.deepEqual(after.tags, []);
    assert.equal(after.last_datetime_processing_started, null);
    assert.equal(node.tasks.size, 0, 'no task reached the node');

    // The OpenAPI description names the extension and this deployment's engines.
    const openapi: any = await (await fetch(`${system.urls.cloud}/project/api/v3/openapi.json`)).json();
    const route = openapi.paths['/project/api/v3/projects/{id}/start_processing/'].post;
    assert.match(route.description, /Extension: `engine`.*\(exif, nodeodm, colmap\).*without it `exif` runs/);
  });

  it('without `engine` the default runs; with one, that engine runs and is recorded', async () => {
    const plain = await projectWith(api, images);
    assert.equal((await api.call('POST', `${P}/${plain.id}/start_processing/`, { tags: ['nadir'] }, { expect: 202 })).engine, 'exif');
    const exif = await api.waitFor(plain.id, settled);
    assert.equal(exif.public_status, 'DONE', `${exif.error_code}: ${exif.error_reason}`);
    assert.equal(exif.engine, 'exif');
    assert.equal(node.tasks.size, 0);

    node.nextOutcome = { kind: 'complete' };
    const project = await projectWith(api, images);
    // Case-insensitive, as tags are; from a form as well as JSON (here a form).
    const started = await api.call('POST', `${P}/${project.id}/start_processing/`, undefined, { raw: new URLSearchParams('tags=nadir&engine=NodeODM'), expect: 202 });
    assert.equal(started.engine, 'nodeodm');
    const done = await api.waitFor(project.id, settled);
    assert.equal(done.public_status, 'DONE', `${done.error_code}: ${done.error_reason}`);
    assert.equal(done.engine, 'nodeodm');
    const task = [...node.tasks.values()].find((t) => t.name === project.uuid);
    assert.ok(task, 'the fake NodeODM received the task');
    assert.equal(task.images.length, images.length);
    const { outputs } = await api.call('GET', `${P}/${project.id}/outputs/`, undefined, { expect: 200 });
    assert.equal(outputs.find((o: any) => o.output_type === 'ortho_rgb')?.availability, 'done');
  });

  it('deleting a project processing on NodeODM cancels the task on the node; nothing is recorded', async () => {
    node.nextOutcome = { kind: 'hang' };
    const project = await projectWith(api, images);
    await api.call('POST', `${P}/${project.id}/start_processing/`, { engine: 'nodeodm' }, { expect: 202 });
    const task = () => [...node.tasks.values()].find((t) => t.name === project.uuid);
    await until('the task runs on the node', () => task()?.committed === true && task()!.polls > 0);
    assert.equal((await api.call('GET', `${P}/${project.id}/`, undefined, { expect: 200 })).public_status, 'PROCESSING');

    await api.call('DELETE', `${P}/${project.id}/`, undefined, { expect: 204 });
    await api.call('GET', `${P}/${project.id}/`, undefined, { expect: 404 });
    await until('the node receives /task/cancel', () => task()!.status === 50, 15_000);
    assert.ok(node.requests.some((r) => r.path === '/task/cancel'));
    await until('the task is removed from the node', () => task()!.removed, 15_000);
    await workerFree(); // the canceled run has ended

    const stored = await row(system, project.id);
    assert.ok(stored.deleted_at);
    assert.equal(stored.public_status, 'CANCELED');
    assert.equal(stored.error_code, null, 'no failure was written back');
    assert.equal(stored.error_reason, '');
    assert.equal(stored.engine, 'nodeodm');
    assert.deepEqual(await objectsUnder(system, project.bucket_name, `results/${project.uuid}/`), []);
    assert.deepEqual(fs.readdirSync(path.join(system.dataDir, 'work')).filter((d) => d.includes(project.uuid)), [], 'work folder removed');
  });

  it('deleting a project processing with COLMAP kills the COLMAP process; nothing is recorded', async () => {
    fs.rmSync(pidFile, { force: true });
    const project = await projectWith(api, images);
    await api.call('POST', `${P}/${project.id}/start_processing/`, { engine: 'colmap' }, { expect: 202 });
    await until('COLMAP runs', () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '');
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    assert.ok(alive(pid), 'the stand-in COLMAP is running');

    await api.call('DELETE', `${P}/${project.id}/`, undefined, { expect: 204 });
    await until(`COLMAP (pid ${pid}) is killed`, () => !alive(pid), 10_000);
    await workerFree();

    const stored = await row(system, project.id);
    assert.equal(stored.public_status, 'CANCELED');
    assert.equal(stored.error_code, null, 'no failure was written back');
    assert.equal(stored.engine, 'colmap');
    // The engine keeps the log of a failed run; a canceled run's folder is removed.
    assert.deepEqual(await objectsUnder(system, project.bucket_name, `results/${project.uuid}/`), []);
  });

  it('deleting a queued project: nothing runs for it', async () => {
    // Hold the worker with a hanging NodeODM run, queue a second project behind it, delete both.
    node.nextOutcome = { kind: 'hang' };
    const first = await projectWith(api, images);
    await api.call('POST', `${P}/${first.id}/start_processing/`, { engine: 'nodeodm' }, { expect: 202 });
    await until('the first project processes', async () => (await api.call('GET', `${P}/${first.id}/`, undefined, { expect: 200 })).public_status === 'PROCESSING');
    const queued = await projectWith(api, images);
    await api.call('POST', `${P}/${queued.id}/start_processing/`, { engine: 'colmap' }, { expect: 202 });
    fs.rmSync(pidFile, { force: true });
    await api.call('DELETE', `${P}/${queued.id}/`, undefined, { expect: 204 });
    await api.call('DELETE', `${P}/${first.id}/`, undefined, { expect: 204 });
    await workerFree();
    assert.equal(fs.existsSync(pidFile), false, 'COLMAP never ran for the deleted queued project');
    const stored = await row(system, queued.id);
    assert.equal(stored.public_status, 'CANCELED');
    assert.equal(stored.error_code, null);
  });
});

describe('cancellation of a run in another worker process', { skip: process.env.DATABASE_URL ? false : 'workers in another process need a PostgreSQL server (DATABASE_URL); the embedded database is single-process' }, () => {
  let system: TestSystem;
  let worker: ServerProcess | undefined;
  let scripts: string;
  let colmap: string;
  let pidFile: string;

  before(async () => {
    scripts = tempDir('oi-engines-worker-');
    pidFile = path.join(scripts, 'colmap.pid');
    colmap = fakeColmap(scripts, 'colmap', `echo $$ > ${pidFile}\nexec sleep 300`);
    // The API server without workers: the run happens in the worker process only.
    system = await startTestSystem({ runWorkers: false, engines: ['colmap'], colmapBinary: colmap });
  });
  after(async () => {
    if (worker) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await system?.stop();
    fs.rmSync(scripts, { recursive: true, force: true });
  });

  it('deleting the project through the API kills COLMAP run by a worker process', async () => {
    worker = await startServerProcess(
      { DATA_DIR: system.dataDir, DATABASE_URL: system.config.databaseUrl, CLOUD_URL: system.urls.cloud, ENGINES: 'colmap', COLMAP_BINARY: colmap, LOG_LEVEL: 'info' },
      'worker',
      { timeoutMs: 60_000 },
    );
    const api = await cloudClient(system);
    const project = await projectWith(api, await testImages());
    await api.call('POST', `${P}/${project.id}/start_processing/`, { engine: 'colmap' }, { expect: 202 });
    await until('COLMAP runs in the worker process', () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', 60_000);
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    assert.ok(alive(pid));
    await api.call('DELETE', `${P}/${project.id}/`, undefined, { expect: 204 });
    await until(`COLMAP (pid ${pid}) is killed`, () => !alive(pid), 10_000);
    await until('the worker ends the run', () => worker!.output().includes('"msg":"processing canceled"'), 10_000);
    assert.doesNotMatch(worker.output(), /processing crashed|processing failed/);
    // The worker logs the cancellation before it removes the run's folder (project-processing.ts):
    // under load the listing could come first (CI saw processing_log.txt still there once).
    await until('the canceled run removed what it wrote', async () => (await objectsUnder(system, project.bucket_name, `results/${project.uuid}/`)).length === 0, 10_000);
    const stored = await row(system, project.id);
    assert.equal(stored.public_status, 'CANCELED');
    assert.equal(stored.error_code, null, 'nothing written back');
  });
});

describe('the engine time limit with a chosen engine', () => {
  let system: TestSystem;
  let api: CloudTestClient;
  let scripts: string;

  before(async () => {
    scripts = tempDir('oi-engines-limit-');
    system = await startTestSystem({ engine: 'exif', engines: ['colmap'], colmapBinary: fakeColmap(scripts, 'colmap', 'exec sleep 300'), engineTimeLimitSeconds: 1 });
    api = await cloudClient(system);
  });
  after(async () => {
    await system?.stop();
    fs.rmSync(scripts, { recursive: true, force: true });
  });

  it('a run over ENGINE_TIME_LIMIT_SECONDS fails with 10002; an engine this deployment does not offer is refused', async () => {
    const images = await testImages();
    const project = await projectWith(api, images);
    const refused = await api.call('POST', `${P}/${project.id}/start_processing/`, { engine: 'nodeodm' }, { expect: 400 });
    assert.match(refused.engine[0], /Offered: exif, colmap \(default exif\)/);

    await api.call('POST', `${P}/${project.id}/start_processing/`, { engine: 'colmap' }, { expect: 202 });
    const failed = await api.waitFor(project.id, settled);
    assert.equal(failed.public_status, 'ERROR');
    assert.equal(failed.error_code, 10002, failed.error_reason);
    assert.match(failed.error_reason, /allotted time of 1 s/);
    assert.equal(failed.engine, 'colmap');
  });
});
