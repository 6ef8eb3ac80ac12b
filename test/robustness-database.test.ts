// Robustness of the database layer (issue 10):
//   finding 1: a lost PostgreSQL connection (pg_terminate_backend) neither ends the server nor an
//     inspection being processed; requests in flight may answer 503 `unavailable`, never 500;
//   finding 11: the data folder and everything in it are private to the service's user.
//
// The lost-connection tests run the server as a separate process (test/helpers/server-process.ts),
// as deployed: through main.ts, with its own event loop. A server that dies of an unhandled 'error'
// event shows up as an exit with the stack in its output, and this test process does not share the
// server's fate, so the test can report it (and check the rest of its output) instead of the whole
// test file crashing. The data-folder test runs startSystem in-process, where main.ts's umask does
// not apply: the start itself must leave nothing readable by others.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { sql } from 'kysely';
import { freshDatabaseUrl, tempDir, testConfig } from './helpers/test-system.ts';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { startSystem } from '../src/system.ts';
import { openDatabase } from '../src/infra/database/database.ts';
import { isDatabaseUnavailable } from '../src/infra/database/connection-errors.ts';
import { createHttpServer } from '../src/infra/http/http-server.ts';
import { InspectionClient } from '../src/sdk/inspection-client.ts';
import { generateDemoImageSet } from '../scripts/generate-demo-images.ts';
import type { DemoCredentials } from '../src/admin/bootstrap.ts';

// Nothing in this test process may leave a promise rejection unhandled.
const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));
after(() => assert.deepEqual(unhandled, [], 'unhandled rejections in the test process'));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Entries under `root` (itself included) with any group or other permission bit. */
function notPrivate(root: string): { path: string; mode: string }[] {
  const found: { path: string; mode: string }[] = [];
  const walk = (p: string) => {
    const stat = fs.lstatSync(p);
    if (stat.isSymbolicLink()) return;
    if (stat.mode & 0o077) found.push({ path: path.relative(root, p) || '.', mode: (stat.mode & 0o777).toString(8) });
    if (stat.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(root);
  return found;
}

function countEntries(root: string): number {
  let n = 1;
  if (fs.lstatSync(root).isDirectory()) for (const name of fs.readdirSync(root)) n += countEntries(path.join(root, name));
  return n;
}

describe('data folder permissions (finding 11)', () => {
  it('a system started on a fresh data folder leaves it 0700 and nothing inside readable by group or others; an older folder is fixed', async () => {
    const parent = tempDir();
    const dataDir = path.join(parent, 'data'); // created by the system itself
    const database = await freshDatabaseUrl();
    const config = testConfig(dataDir, { databaseUrl: database?.url });
    try {
      let system = await startSystem(config, 'serve', pino({ level: config.logLevel }));
      try {
        assert.equal((fs.statSync(dataDir).mode & 0o777).toString(8), '700', 'the data folder');
        const open = notPrivate(dataDir);
        console.log(`fresh data folder after start: ${countEntries(dataDir)} entries, ${open.length} with group/other bits`, open.slice(0, 5));
        assert.deepEqual(open, []);
      } finally {
        await system.stop();
      }
      assert.deepEqual(notPrivate(dataDir), [], 'after stop');

      // A folder written by an older version: open modes everywhere, no marker of a completed walk.
      fs.rmSync(path.join(dataDir, '.permissions-private'));
      fs.chmodSync(dataDir, 0o755);
      fs.mkdirSync(path.join(dataDir, 'old'), { mode: 0o777 });
      fs.chmodSync(path.join(dataDir, 'old'), 0o777);
      fs.writeFileSync(path.join(dataDir, 'old', 'file'), 'x');
      fs.chmodSync(path.join(dataDir, 'old', 'file'), 0o666);
      const pgliteFile = process.env.DATABASE_URL ? undefined : path.join(dataDir, 'pglite', 'PG_VERSION');
      if (pgliteFile) fs.chmodSync(pgliteFile, 0o666);
      const before = notPrivate(dataDir).length;
      system = await startSystem(config, 'serve', pino({ level: config.logLevel }));
      try {
        const open = notPrivate(dataDir);
        console.log(`older data folder: ${before} entries with group/other bits before the start, ${open.length} after`);
        assert.ok(before >= 3);
        assert.deepEqual(open, []);
      } finally {
        await system.stop();
      }
    } finally {
      await database?.drop();
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });
});

const postgresOnly = process.env.DATABASE_URL ? false : 'needs a PostgreSQL server (DATABASE_URL): PGlite runs in-process, it has no connection to lose';

/** Ends every connection to `databaseName` but the caller's, as `pg_terminate_backend` by an administrator (57P01). */
async function terminateBackends(databaseName: string, onlyQueriesLike?: string): Promise<number> {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND ($2::text IS NULL OR query LIKE $2)`,
      [databaseName, onlyQueriesLike ?? null],
    );
    return rows[0].n as number;
  } finally {
    await admin.end();
  }
}

describe('a query cut by a lost connection (finding 1)', { skip: postgresOnly }, () => {
  it('answers 503 unavailable with Retry-After, and the pool serves the next request on a new connection', async () => {
    const database = (await freshDatabaseUrl())!;
    const databaseName = new URL(database.url).pathname.slice(1);
    const dataDir = tempDir();
    const db = await openDatabase({ dataDir, databaseUrl: database.url });
    const app = await createHttpServer({ logger: pino({ level: 'silent' }), title: 't', description: 't', version: '1', openapiPath: '/openapi.json' });
    app.get('/slow', async () => (await sql`select pg_sleep(30) as slept`.execute(db.db)).rows);
    app.get('/fast', async () => (await sql<{ one: number }>`select 1 as one`.execute(db.db)).rows[0]);
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address() as { port: number };
      const base = `http://127.0.0.1:${address.port}`;
      assert.equal((await fetch(`${base}/fast`)).status, 200);
      const slow = fetch(`${base}/slow`);
      let ended = 0;
      for (let attempt = 0; ended === 0; attempt++) {
        assert.ok(attempt < 100, 'the slow query never showed up');
        await sleep(50);
        ended = await terminateBackends(databaseName, '%pg_sleep%');
      }
      const response = await slow;
      assert.equal(response.status, 503);
      assert.equal(response.headers.get('retry-after'), '2');
      const body = (await response.json()) as { detail: string; code: string };
      assert.equal(body.code, 'unavailable');
      assert.equal(typeof body.detail, 'string');
      // The idle connections go too; the next request gets a new one.
      await terminateBackends(databaseName);
      await sleep(200);
      const next = await fetch(`${base}/fast`);
      assert.equal(next.status, 200);
      assert.deepEqual(await next.json(), { one: 1 });
    } finally {
      await app.close();
      await db.close();
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('isDatabaseUnavailable: lost and refused connections yes, a query error no', async () => {
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })), true);
    assert.equal(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect')), true);
    assert.equal(isDatabaseUnavailable(new AggregateError([Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })])), true);
    assert.equal(isDatabaseUnavailable(new Error('outer', { cause: Object.assign(new Error('x'), { code: '08006' }) })), true);
    const refused = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:9/none', connectionTimeoutMillis: 2000 });
    const err = await refused.connect().then(() => assert.fail('connected'), (e: unknown) => e);
    assert.equal(isDatabaseUnavailable(err), true, String(err));
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('invalid input syntax for type integer'), { code: '22P02' })), false);
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' })), false);
    assert.equal(isDatabaseUnavailable(undefined), false);
  });
});

describe('lost PostgreSQL connections (finding 1)', { skip: postgresOnly }, () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let server: ServerProcess;
  let client: InspectionClient;
  let databaseName: string;

  before(async () => {
    dataDir = tempDir();
    database = await freshDatabaseUrl();
    databaseName = new URL(database!.url).pathname.slice(1);
    // The exif engine takes at least 8 s, so that connections are cut while the inspection is in status 4.
    server = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: database!.url, ENGINE_SIMULATED_SECONDS: '8', JOB_HEARTBEAT_SECONDS: '10' });
    const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'bootstrap-credentials.json'), 'utf8')) as DemoCredentials;
    client = new InspectionClient({ baseUrl: server.urls.inspection, apiKey: demo.api_key, organizationUuid: demo.organization_uuid });
    await client.login(demo.username, demo.password);
  });
  after(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Requests answered while connections are cut: 200, or 503 in the CONTRACT's format; never anything else. */
  const answers = new Map<number, number>();
  async function checkedGet(pathname: string): Promise<{ status: number; body: any }> {
    const response = await client.request('GET', pathname);
    answers.set(response.status, (answers.get(response.status) ?? 0) + 1);
    if (response.status === 503) {
      assert.equal(response.body.code, 'unavailable', JSON.stringify(response.body));
      assert.equal(typeof response.body.detail, 'string');
    } else {
      assert.equal(response.status, 200, `GET ${pathname}: ${response.status} ${JSON.stringify(response.body)}`);
    }
    return response;
  }

  function assertServerAlive(): void {
    assert.equal(server.child.exitCode, null, `the server exited:\n${server.output().slice(-3000)}`);
    assert.doesNotMatch(server.output(), /Unhandled|unhandledRejection|ERR_UNHANDLED_ERROR/i, 'nothing unhandled in the server');
  }

  /** A request that succeeds within a few retries, the server still running. */
  async function answersAgain(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      assertServerAlive();
      if ((await checkedGet('/v1/assets/')).status === 200) return;
      assert.ok(attempt < 10, 'no successful request after 10 tries');
      await sleep(500);
    }
  }

  it('idle: the server keeps answering after every connection of its database is ended', async () => {
    await checkedGet('/v1/assets/');
    const ended = await terminateBackends(databaseName);
    assert.ok(ended > 0, 'some connections were ended');
    await sleep(500); // the server reads the news of its dead connections
    await answersAgain();
    // Requests in flight while the connections are cut: 200 or 503, never a 500 or a crash.
    const inFlight = Array.from({ length: 20 }, () => checkedGet('/v1/assets/'));
    const endedInFlight = await terminateBackends(databaseName);
    await Promise.all(inFlight);
    await answersAgain();
    console.log(`idle: ${ended} connection(s) ended, then ${endedInFlight} with 20 requests in flight; answers ${JSON.stringify(Object.fromEntries(answers))}`);
    assertServerAlive();
  });

  it('mid-processing: connections ended in status 4 (a progress report in flight, three rounds 1 s apart, a 3 s storm); the inspection still reaches 7, charged once', async () => {
    const asset = await client.createAsset({ name: 'Mast', type: 9 });
    const inspection = await client.createInspection({ asset: asset.id });
    const credentials = await client.storageCredentials(inspection.id);
    const images = await generateDemoImageSet(4, { latitude: 59.33, longitude: 18.06, altitude: 30 }, { width: 320, height: 240 });
    await client.register(inspection.id, await client.upload(credentials, images.map((i) => ({ name: i.filename, body: i.data }))));
    const consumedBefore = (await client.expect(200, 'GET', '/v1/allowance/')).find((b: any) => b.allowance_type === 'projects').consumed;
    await client.process(inspection.id);

    const statusOf = async () => {
      const { status, body } = await checkedGet(`/v1/inspections/${inspection.id}/`);
      return status === 200 ? (body.status as number) : undefined;
    };
    let deadline = Date.now() + 30_000;
    while ((await statusOf()) !== 4) {
      assert.ok(Date.now() < deadline, 'never reached status 4');
      await sleep(100);
    }
    // First a statement cut in flight, for certain: with the cloud project's row locked here, the
    // engine's next progress report waits on the lock; its connection is then ended under it. The
    // run must be retried, not recorded as failed (the project in ERROR, the inspection in 16).
    const locker = new pg.Client({ connectionString: database!.url });
    await locker.connect();
    let cutInFlight = 0;
    try {
      const { rows } = await locker.query('SELECT project_id FROM inspection.inspections WHERE id = $1', [inspection.id]);
      for (const until = Date.now() + 20_000; (await locker.query('SELECT public_status FROM cloud.projects WHERE id = $1', [rows[0].project_id])).rows[0].public_status !== 'PROCESSING'; ) {
        assert.ok(Date.now() < until, 'the cloud project never started processing');
        await sleep(50);
      }
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM cloud.projects WHERE id = $1 FOR UPDATE', [rows[0].project_id]);
      const waitUntil = Date.now() + 20_000;
      while (cutInFlight === 0) {
        if (Date.now() > waitUntil) {
          const activity = await locker.query(`SELECT state, wait_event_type, left(query, 80) AS query FROM pg_stat_activity WHERE datname = $1`, [databaseName]);
          assert.fail(`no progress report waited on the locked project: ${JSON.stringify(activity.rows)}`);
        }
        await sleep(100);
        const waiting = await locker.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query ILIKE 'update%cloud%projects%'`, [databaseName]);
        // Only that connection: the others stay usable, so the run's error handling can still write.
        if (waiting.rows[0].n > 0) cutInFlight = (await locker.query(`SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query ILIKE 'update%cloud%projects%'`, [databaseName])).rows[0].n;
      }
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }
    const ended: number[] = [cutInFlight];
    const seen: (number | undefined)[] = [];
    for (let round = 0; round < 3; round++) {
      ended.push(await terminateBackends(databaseName));
      await sleep(1000);
      assertServerAlive();
      seen.push(await statusOf());
    }
    assert.ok(seen.some((s) => s === 4), `connections were cut while the inspection was in status 4 (statuses seen: ${seen.join(', ')})`);
    // Then a storm: every 50 ms for 3 s, so that statements in flight (progress reports of the
    // running engine, job fetches, pg-boss's own writes) are cut too, not only idle connections.
    let storm = 0;
    assertServerAlive();
    for (const stop = Date.now() + 3000; Date.now() < stop; ) {
      storm += await terminateBackends(databaseName);
      await sleep(50);
    }
    assertServerAlive();

    deadline = Date.now() + 120_000;
    let status: number | undefined;
    while ((status = await statusOf()) === undefined || [3, 4, 5, 20].includes(status)) {
      assert.ok(Date.now() < deadline, `inspection still in status ${status}`);
      assertServerAlive();
      await sleep(300);
    }
    assert.equal(status, 7, `final status: ${JSON.stringify((await client.request('GET', `/v1/inspections/${inspection.id}/`)).body)}`);
    assert.equal((await client.cameras(inspection.id)).length, 4);
    const history = await client.expect(200, 'GET', '/v1/allowance/history/');
    assert.equal(history.filter((h: any) => h.direction === 'egress' && h.inspection === inspection.id).length, 1, 'exactly one allowance spend');
    const consumedAfter = (await client.expect(200, 'GET', '/v1/allowance/')).find((b: any) => b.allowance_type === 'projects').consumed;
    assert.equal(consumedAfter, consumedBefore + 1);
    const count = (pattern: RegExp) => (server.output().match(pattern) ?? []).length;
    assert.ok(count(/database unavailable while processing/g) >= 1, 'the processing run cut in flight was interrupted, and retried');
    console.log(
      `mid-processing: connections ended per round ${ended.join(', ')} (the first: the progress report in flight), in the storm ${storm}; statuses seen ${seen.join(', ')}; server warnings: lost connections ${count(/database connection lost/g)}, ` +
        `jobs failed and retried ${count(/job failed; pg-boss retries it/g)}, processing interrupted ${count(/database unavailable while processing/g)}; answers ${JSON.stringify(Object.fromEntries(answers))}`,
    );
    assertServerAlive();
  });
});
