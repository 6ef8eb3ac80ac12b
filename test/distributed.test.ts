// The distributed deployment (issue 13): PostgreSQL, one `storage` process, one `serve` process
// without workers and two `worker` processes, each process with an empty data folder of its own.
// aws-cli uploads lund's first 12 photos to the store with the inspection's temporary credentials;
// the worker running COLMAP is killed with SIGKILL (its COLMAP dies with it) and the other one finishes the job; exactly one
// allowance unit is spent; the outputs download through presigned URLs of the store. The test
// prints the timeline: which process did which step.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freshDatabaseUrl, tempDir } from './helpers/test-system.ts';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { bootstrapFile, type DemoCredentials } from '../src/admin/bootstrap.ts';
import { InspectionClient } from '../src/sdk/inspection-client.ts';

const LUND = path.resolve(import.meta.dirname, '../../shared/datasets/lund/images');
const BUCKET = 'oi-distributed';
const ROOT = { accessKeyId: 'OIDISTROOT0000000001', secretAccessKey: crypto.randomBytes(30).toString('base64url') };

/** The pid and command line of a `colmap` process whose parent is `pid` (read from /proc), if one runs. */
function colmapChildOf(pid: number): { pid: number; command: string } | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      const command = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (/\bcolmap\b/.test(command)) return { pid: Number(entry), command };
    } catch {
      // the process ended while being read
    }
  }
  return undefined;
}

/** Whether `pid` still computes: it exists and is not a zombie (an orphan may wait for a PID 1 that never reaps it). */
function computing(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

interface TimelineEvent {
  at: number;
  process: string;
  event: string;
}

/** "job started" / "job done" / "job failed" lines of a process (LOG_LEVEL=debug), with their time. */
function jobEvents(name: string, output: string): TimelineEvent[] {
  const events: TimelineEvent[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { time: number; msg: string; job?: string };
      if (entry.job && /^job (started|done|failed)/.test(entry.msg)) events.push({ at: entry.time, process: name, event: `${entry.msg.split(';')[0]}: ${entry.job}` });
    } catch {
      // not a log line
    }
  }
  return events;
}

describe('distributed: storage, serve without workers, two workers, each with its own data folder', () => {
  let database: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  const processes: { name: string; process: ServerProcess; dataDir: string }[] = [];

  before(async () => {
    database = await freshDatabaseUrl();
  });
  after(async () => {
    for (const p of processes.reverse()) {
      if (p.process.child.exitCode === null && p.process.child.signalCode === null) p.process.child.kill('SIGTERM');
      await p.process.exited;
      fs.rmSync(p.dataDir, { recursive: true, force: true });
    }
    await database?.drop();
  });

  it('aws-cli upload, COLMAP on 12 lund photos, kill -9 of the worker running it: the other finishes, one spend, outputs from the store', async (t) => {
    if (!database) return t.skip('needs PostgreSQL (DATABASE_URL): workers in other processes share the database');
    for (const tool of ['/usr/bin/colmap', '/usr/bin/aws']) {
      if (process.env.CI === 'true') assert.ok(fs.existsSync(tool), `CI must install ${tool}`);
      else if (!fs.existsSync(tool)) return t.skip(`${tool} is not installed`);
    }
    const start = async (name: string, env: Record<string, string>, command: 'serve' | 'worker' | 'storage') => {
      const dataDir = tempDir(`oi-${name}-`);
      const started = await startServerProcess({ DATA_DIR: dataDir, ...env }, command);
      processes.push({ name, process: started, dataDir });
      return started;
    };
    const t0 = Date.now();
    const storage = await start('storage', { STORAGE_BUCKET: BUCKET, STORAGE_ROOT_ACCESS_KEY: ROOT.accessKeyId, STORAGE_ROOT_SECRET_KEY: ROOT.secretAccessKey }, 'storage');
    const shared = {
      DATABASE_URL: database.url,
      S3_ENDPOINT: storage.urls.storage,
      S3_BUCKET: BUCKET,
      S3_ACCESS_KEY_ID: ROOT.accessKeyId,
      S3_SECRET_ACCESS_KEY: ROOT.secretAccessKey,
      ENGINE: 'colmap',
      // The sparse model is the point cloud: what is tested is the run surviving its worker, not
      // the dense stages (engine-colmap-lund and engine-colmap-dense run those, once).
      COLMAP_DENSE: 'false',
      JOB_HEARTBEAT_SECONDS: '3',
    };
    const serve = await start('serve', { ...shared, RUN_WORKERS: 'false' }, 'serve');
    const workerEnv = { ...shared, CLOUD_URL: serve.urls.cloud, LOG_LEVEL: 'debug' };
    const workers = [await start('worker-1', workerEnv, 'worker'), await start('worker-2', workerEnv, 'worker')];

    const demo = JSON.parse(fs.readFileSync(bootstrapFile(processes.find((p) => p.name === 'serve')!.dataDir), 'utf8')) as DemoCredentials;
    const client = new InspectionClient({ baseUrl: serve.urls.inspection, apiKey: demo.api_key, organizationUuid: demo.organization_uuid });
    await client.login(demo.username, demo.password);
    const asset = await client.createAsset({ name: 'Lund street', type: 2, latitude: '55.69822000', longitude: '13.19520000' });
    const inspection = await client.createInspection({ asset: asset.id, name: 'Distributed', processing_parameters: { generate_point_cloud: true } });

    // aws-cli, as a stock client: the credentials' endpoint is the storage process, not the services.
    const credentials = await client.storageCredentials(inspection.id);
    assert.equal(credentials.endpoint_override, storage.urls.storage);
    const photos = fs.readdirSync(LUND).filter((f) => /\.jpe?g$/i.test(f)).sort().slice(0, 12);
    const upload = tempDir('oi-upload-');
    for (const photo of photos) fs.copyFileSync(path.join(LUND, photo), path.join(upload, photo));
    await promisify(execFile)('/usr/bin/aws', ['s3', 'cp', upload, `s3://${credentials.bucket}/${credentials.key}`, '--recursive', '--endpoint-url', credentials.endpoint_override!, '--only-show-errors'], {
      env: { ...process.env, AWS_ACCESS_KEY_ID: credentials.access_key, AWS_SECRET_ACCESS_KEY: credentials.secret_key, AWS_SESSION_TOKEN: credentials.session_token, AWS_DEFAULT_REGION: credentials.region ?? 'us-east-1' },
    });
    fs.rmSync(upload, { recursive: true, force: true });
    assert.equal((await client.register(inspection.id, photos.map((p) => `${credentials.key}${p}`))).nb_images_registered, 12);
    const uploadedAt = Date.now();
    await client.process(inspection.id);

    // The worker that takes the COLMAP run is killed while COLMAP runs.
    let victim = -1;
    const deadline = Date.now() + 120_000;
    while (victim < 0 && Date.now() < deadline) {
      victim = workers.findIndex((w) => /"job":"cloud\.process-project"[^\n]*"msg":"job started"|"msg":"job started"[^\n]*"job":"cloud\.process-project"/.test(w.output()));
      if (victim < 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(victim >= 0, 'a worker started the processing job');
    // Killed while COLMAP runs: wait for the victim's own `colmap` child process (the event), not a fixed time.
    const colmapDeadline = Date.now() + 120_000;
    let colmap: { pid: number; command: string } | undefined;
    while (!(colmap = colmapChildOf(workers[victim].child.pid!)) && Date.now() < colmapDeadline) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(colmap, 'the worker started COLMAP');
    const killedAt = Date.now();
    workers[victim].child.kill('SIGKILL');
    // Its COLMAP dies with it (the parent-death signal of colmap-process.ts), instead of computing
    // for nobody beside the worker that takes the job over.
    const orphanDeadline = Date.now() + 3_000; // the signal is immediate: 3 s even on a loaded machine
    while (computing(colmap.pid) && Date.now() < orphanDeadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(!computing(colmap.pid), `the killed worker's COLMAP still runs: ${colmap.command}`);
    const survivor = workers[1 - victim];

    const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 20 * 60_000 });
    if (done.status !== 7) {
      // What the cloud project says, and the end of each worker's log, to tell why.
      const detail = await client.request('GET', `/v1/inspections/${inspection.id}/processing/`).catch((e: unknown) => String(e));
      console.log(`# processing: ${JSON.stringify(detail)}`);
      for (const [i, w] of workers.entries()) console.log(`# worker-${i + 1} log (end):\n${w.output().split('\n').filter((l) => !l.includes('track-photogrammetry')).slice(-40).join('\n')}`);
    }
    assert.equal(done.status, 7, JSON.stringify(done));
    assert.match(survivor.output(), /"job":"cloud\.process-project"[^\n]*"msg":"job done"|"msg":"job done"[^\n]*"job":"cloud\.process-project"/, 'the other worker finished the COLMAP run');

    // Exactly one unit spent for the inspection, though the run started twice.
    const history = await client.expect(200, 'GET', '/v1/allowance/history/?page_size=100');
    const spends = (history.results ?? history).filter((e: { inspection: number | null; direction: string }) => e.inspection === inspection.id && e.direction === 'egress');
    assert.equal(spends.length, 1, JSON.stringify(spends));

    // Outputs through presigned URLs of the store.
    const outputs = (await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/outputs/`)) as { output_type: string; url: string }[];
    const cloud = outputs.find((o) => o.output_type === 'point_cloud');
    assert.ok(cloud?.url.startsWith(`${storage.urls.storage}/${BUCKET}/`), cloud?.url);
    const las = Buffer.from(await (await fetch(cloud!.url)).arrayBuffer());
    assert.equal(las.subarray(0, 4).toString('latin1'), 'LASF');
    assert.ok(las.readUInt32LE(107) > 100, `points in the cloud (LAS header): ${las.readUInt32LE(107)}`);
    const cameras = await client.cameras(inspection.id);
    assert.ok(cameras.length >= 9, `cameras of the reconstruction: ${cameras.length}`);

    // No process kept objects or signing keys in its own folder: the store and the database hold them.
    for (const p of processes.filter((p) => p.name !== 'storage')) {
      const entries = fs.readdirSync(p.dataDir);
      assert.ok(!entries.includes('objects') && !entries.includes('pglite'), `${p.name}: ${entries.join(', ')}`);
      const secrets = fs.existsSync(path.join(p.dataDir, 'secrets')) ? fs.readdirSync(path.join(p.dataDir, 'secrets')) : [];
      assert.deepEqual(secrets.filter((s) => /jwt|cloud-client/.test(s)), [], `${p.name} keeps no signing key or client secret on disk`);
    }

    const timeline = [
      { at: uploadedAt, process: 'test', event: 'aws-cli uploaded 12 photos to the storage process; registered' },
      { at: killedAt, process: 'test', event: `kill -9 worker-${victim + 1}` },
      // The polls of the cloud project (every 2.5 s) are counted, not listed.
      ...workers.flatMap((w, i) => jobEvents(`worker-${i + 1}`, w.output())).filter((e) => !e.event.endsWith('inspection.track-photogrammetry')),
    ].sort((a, b) => a.at - b.at);
    const polls = workers.map((w, i) => `worker-${i + 1}: ${jobEvents('', w.output()).filter((e) => e.event === 'job done: inspection.track-photogrammetry').length}`);
    console.log(`# distributed timeline (s since the storage process started):\n${timeline.map((e) => `#   ${((e.at - t0) / 1000).toFixed(1).padStart(6)}  ${e.process.padEnd(8)}  ${e.event}`).join('\n')}`);
    console.log(`# polls of the cloud project by worker: ${polls.join(', ')}`);
    console.log(`# data folders: ${processes.map((p) => `${p.name}: [${fs.readdirSync(p.dataDir).join(' ')}]`).join('; ')}`);
  });
});
