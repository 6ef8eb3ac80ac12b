// Whole-process behaviour: the data folder lock, and an inspection that survives a SIGKILL of the
// server in the middle of processing (durable jobs), charged once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { freshDatabaseUrl, tempDir } from './helpers/test-system.ts';
import { demoClient, startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { generateDemoImageSet } from '../scripts/generate-demo-images.ts';

describe('server process', () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  const running: ServerProcess[] = [];
  before(async () => {
    dataDir = tempDir();
    database = await freshDatabaseUrl();
  });
  after(async () => {
    for (const server of running) server.child.kill('SIGKILL');
    await Promise.all(running.map((s) => s.exited));
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a second process opening the same embedded data folder is refused', { skip: process.env.DATABASE_URL ? 'the lock guards the embedded database only' : false }, async () => {
    const dir = tempDir();
    const first = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: '' });
    running.push(first);
    const second = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: '' }).then(
      () => assert.fail('the second server started'),
      (err: Error) => err.message,
    );
    assert.match(second, /exited with 1/);
    assert.match(second, /in use by another process \(pid \d+\)/);
    // The first one still works.
    assert.equal((await fetch(`${first.urls.inspection}/v1/openapi.json`)).status, 200);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('SIGKILL while processing: after a restart the inspection still reaches 7, charged once', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', ENGINE_SIMULATED_SECONDS: '6', JOB_HEARTBEAT_SECONDS: '10' };
    const server = await startServerProcess(env);
    running.push(server);
    const client = await demoClient(dataDir, server);
    // The first start's demo user administers its organization (issue 40 §1: it can remove members).
    const { organization_uuid } = JSON.parse(fs.readFileSync(path.join(dataDir, 'bootstrap-credentials.json'), 'utf8'));
    const members = await client.request('GET', `/v1/organizations/${organization_uuid}/members/`);
    assert.deepEqual(members.body.map((m: { username: string; role: string }) => [m.username, m.role]), [['demo', 'admin']], JSON.stringify(members.body));
    const asset = await client.createAsset({ name: 'Mast', type: 9 });
    const inspection = await client.createInspection({ asset: asset.id });
    const credentials = await client.storageCredentials(inspection.id);
    const images = await generateDemoImageSet(4, { latitude: 59.33, longitude: 18.06, altitude: 30 }, { width: 320, height: 240 });
    const keys = await client.upload(credentials, images.map((i) => ({ name: i.filename, body: i.data })));
    await client.register(inspection.id, keys);
    const before = (await client.expect(200, 'GET', '/v1/allowance/')).find((b: any) => b.allowance_type === 'projects');
    await client.process(inspection.id);

    // Wait until the cloud engine is running (status 4), then kill the whole server hard.
    const deadline = Date.now() + 30_000;
    while ((await client.getInspection(inspection.id)).status !== 4) {
      assert.ok(Date.now() < deadline, 'never reached status 4');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    server.child.kill('SIGKILL');
    await server.exited;

    const restarted = await startServerProcess(env);
    running.push(restarted);
    const again = await demoClient(dataDir, restarted);
    assert.equal((await again.getInspection(inspection.id)).status, 4, 'the restarted server finds the inspection mid-processing');
    const done = await again.waitUntilSettled(inspection.id, { timeoutMs: 90_000 });
    assert.equal(done.status, 7);
    assert.equal((await again.cameras(inspection.id)).length, 4);
    const history = await again.expect(200, 'GET', '/v1/allowance/history/');
    assert.equal(history.filter((h: any) => h.direction === 'egress' && h.inspection === inspection.id).length, 1);
    const after = (await again.expect(200, 'GET', '/v1/allowance/')).find((b: any) => b.allowance_type === 'projects');
    assert.equal(after.consumed, before.consumed + 1);
  });

  it('a separate worker process runs the jobs of a server started without workers', { skip: process.env.DATABASE_URL ? false : 'workers in another process need a PostgreSQL server (DATABASE_URL); the embedded database is single-process' }, async () => {
    const dir = tempDir();
    const db = await freshDatabaseUrl();
    try {
      const server = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: db!.url, RUN_WORKERS: 'false' });
      running.push(server);
      const client = await demoClient(dir, server);
      const asset = await client.createAsset({ name: 'Chimney', type: 6 });
      const inspection = await client.createInspection({ asset: asset.id });
      const credentials = await client.storageCredentials(inspection.id);
      const images = await generateDemoImageSet(3, { latitude: 48.85, longitude: 2.35, altitude: 60 }, { width: 320, height: 240 });
      await client.register(inspection.id, await client.upload(credentials, images.map((i) => ({ name: i.filename, body: i.data }))));
      await client.process(inspection.id);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal((await client.getInspection(inspection.id)).status, 20, 'nothing runs the job without a worker');
      const worker = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: db!.url, CLOUD_URL: server.urls.cloud }, 'worker');
      running.push(worker);
      assert.equal((await client.waitUntilSettled(inspection.id, { timeoutMs: 60_000 })).status, 7);
      for (const p of [server, worker]) p.child.kill('SIGTERM');
      await Promise.all([server.exited, worker.exited]);
    } finally {
      await db?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
