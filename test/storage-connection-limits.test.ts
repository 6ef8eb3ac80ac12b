// Issue 27, finding 2: idle connections to the embedded S3 endpoint exhausted the process's file
// descriptors (19,950 connections, no byte sent, each held ~74 s), and the inspection and cloud
// APIs then reset every connection. Now: caps in all and per client address (one more is closed
// at once), a 10 s headers timeout checked often, a cut for stalled bodies, and the APIs answer
// while the S3 port is flooded, on the defaults derived from the open-file limit.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { SignatureV4 } from '@smithy/signature-v4';
import { startEmbeddedS3, type EmbeddedS3 } from '../src/infra/storage/embedded-s3.ts';
import { defaultConnectionCaps, openFileLimit, trustedProxies } from '../src/infra/http/connection-limits.ts';
import { Sha256 } from '../src/infra/storage/sigv4-common.ts';
import { openIdleConnections, type Flood } from './helpers/connection-flood.ts';
import { waitFor } from './helpers/inspection-fixtures.ts';
import { demoClient, startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { startTestSystem, tempDir, type TestSystem } from './helpers/test-system.ts';

const BUCKET = 'inspections';

/** The embedded endpoint in this process, its warnings kept. */
async function endpoint(options: Partial<Parameters<typeof startEmbeddedS3>[0]>): Promise<{ s3: EmbeddedS3; port: number; warnings: string[]; stop(): Promise<void> }> {
  const rootDir = tempDir('oi-s3-conn-');
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
  const s3 = await startEmbeddedS3({ rootDir, buckets: [BUCKET], masterKey: randomBytes(32), logger, ...options });
  return {
    s3,
    port: new URL(s3.url).port as unknown as number,
    warnings,
    async stop() {
      await s3.close();
      fs.rmSync(rootDir, { recursive: true, force: true });
    },
  };
}

/** Writes `text` on the socket and resolves with what comes back before the server closes it. */
function exchange(socket: net.Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (/\r\n\r\n/.test(answer)) resolve(answer);
    });
    socket.once('close', () => resolve(answer));
    socket.write(text);
  });
}

describe('S3 endpoint connection caps (issue 27, finding 2)', () => {
  let server: Awaited<ReturnType<typeof endpoint>>;
  const floods: Flood[] = [];
  before(async () => {
    // Headers timeout left at its default (10 s): the refusals below must come at once, not from it.
    server = await endpoint({ connections: { max: 12, perAddress: 4 } });
  });
  after(async () => {
    for (const flood of floods) await flood.end();
    await server?.stop();
  });

  it('closes at once the connections beyond the cap per address and beyond the global cap; those held still work', async () => {
    const one = await openIdleConnections(Number(server.port), 6, { addresses: 1 });
    floods.push(one);
    await one.closedCount(2, 5_000); // old code: none closed (they would be held ~74 s)
    assert.equal(one.open().length, 4, 'four held from 127.0.0.1, its cap');

    // Three more addresses, four each: 16 in all, the global cap is 12.
    const more = await openIdleConnections(Number(server.port), 12, { addresses: 3, firstAddress: 2 });
    floods.push(more);
    await more.closedCount(4, 5_000);
    assert.equal(one.open().length + more.open().length, 12, 'the global cap is held, not exceeded');

    // A held connection is a real one: it gets an answer (no credentials: 403).
    const answer = await exchange(one.open()[0], `GET /${BUCKET}/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 403 /);
    assert.ok(server.warnings.some((line) => /connections refused/.test(line)), 'the refusals are logged');

    // Slots come back once the connections close.
    await one.end();
    await more.end();
    await waitFor('a new connection to be served', async () => (await fetch(`${server.s3.url}/${BUCKET}/`).catch(() => undefined))?.status === 403, 10_000);
  });
});

describe('S3 endpoint timeouts for connections that send nothing (issue 27, finding 2)', () => {
  let server: Awaited<ReturnType<typeof endpoint>>;
  const floods: Flood[] = [];
  before(async () => {
    server = await endpoint({ connections: { max: 0 }, headersTimeoutMs: 1_000, bodyIdleTimeoutMs: 1_000 });
  });
  after(async () => {
    for (const flood of floods) await flood.end();
    await server?.stop();
  });

  it('closes a silent connection, and one that stops half-way through its headers, after the headers timeout', async () => {
    const silent = await openIdleConnections(Number(server.port), 5);
    floods.push(silent);
    const half = await openIdleConnections(Number(server.port), 1);
    floods.push(half);
    half.sockets[0].write(`PUT /${BUCKET}/k HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
    // 1 s plus a check every 250 ms; the old code took 60 s plus up to 30 s.
    await silent.closedCount(5, 8_000);
    await half.closedCount(1, 8_000);
  });

  it('cuts an upload whose body stops arriving', async () => {
    // A signed PutObject (root credential) that the endpoint accepts and starts to store.
    const url = new URL(`${server.s3.url}/${BUCKET}/stalled.bin`);
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: server.s3.issuer.rootCredentials(), sha256: Sha256, uriEscapePath: false });
    const signed = await signer.sign({
      method: 'PUT',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: {},
      headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'content-length': '100000' },
    });
    const head = Object.entries(signed.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const stalled = await openIdleConnections(Number(server.port), 1);
    floods.push(stalled);
    stalled.sockets[0].write(`PUT ${url.pathname} HTTP/1.1\r\n${head}\r\n` + 'x'.repeat(1000));
    await stalled.closedCount(1, 8_000); // old code: held for as long as the client likes
  });
});

describe('the API servers cap their connections too (HTTP_MAX_CONNECTIONS)', () => {
  let system: TestSystem;
  before(async () => {
    system = await startTestSystem({ httpMaxConnections: 5 });
  });
  after(() => system?.stop());

  it('closes at once the connections beyond the cap; new ones are served once the crowd leaves', async () => {
    const crowd = await openIdleConnections(Number(new URL(system.urls.inspection).port), 8);
    try {
      await crowd.closedCount(3, 5_000); // old code: no cap, all eight held
      assert.equal(crowd.open().length, 5);
    } finally {
      await crowd.end();
    }
    await waitFor('the inspection API to answer again', async () => (await fetch(`${system.urls.inspection}/v1/openapi.json`).catch(() => undefined))?.status === 200, 10_000);
  });
});

/** A GET on a connection of its own from `localAddress`: its status (or error code) and how long it took, ms. */
function timedGet(url: string, localAddress: string): Promise<{ status: number | string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, localAddress, timeout: 30_000 }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }));
    });
    request.on('timeout', () => request.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    request.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? 'error', ms: performance.now() - started }));
  });
}

describe('the API servers cap connections per address, a trusted proxy excepted (issue 40 §4)', () => {
  // Measured on main: 2,048 idle connections from one address, each with an unfinished request,
  // took the inspection API's whole cap and every other client was reset for ~30 s (the headers
  // timeout). Here the cap is 64, 8 per address; the headers timeout is left at its default.
  const PER_ADDRESS = 8;
  const FLOOD = 200;
  let system: TestSystem;
  const floods: Flood[] = [];
  before(async () => {
    system = await startTestSystem({ httpMaxConnections: 64, httpMaxConnectionsPerAddress: PER_ADDRESS, trustProxy: ['127.0.0.3'] });
  });
  after(async () => {
    for (const flood of floods) await flood.end();
    await system?.stop();
  });

  it('which peers count as trusted proxies, and the default caps', () => {
    assert.equal(trustedProxies(false), undefined);
    assert.equal(trustedProxies(true)?.('192.0.2.1'), true, 'true: any peer may be the proxy');
    assert.equal(trustedProxies(1)?.('192.0.2.1'), true, 'a number of hops: likewise');
    const listed = trustedProxies(['10.0.0.0/8', '192.0.2.7', 'fd00::/8'])!;
    assert.deepEqual(
      ['10.1.2.3', '::ffff:10.1.2.3', '192.0.2.7', '192.0.2.8', 'fd12::1', '2001:db8::1', '127.0.0.1'].map(listed),
      [true, true, true, false, true, false, false],
    );
    assert.deepEqual(defaultConnectionCaps(1024), { ...defaultConnectionCaps(1024), api: 128, apiPerAddress: 32 });
    assert.equal(defaultConnectionCaps(1 << 20).apiPerAddress, 256);
  });

  it('one address floods with unfinished requests: it holds its share, others are served, a trusted proxy is not capped, the timeout closes the rest', async () => {
    const port = Number(new URL(system.urls.inspection).port);
    const flood = await openIdleConnections(port, FLOOD, { addresses: 1 });
    floods.push(flood);
    for (const socket of flood.open()) socket.write('GET /v1/inspections/ HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // no blank line: unfinished
    await flood.closedCount(FLOOD - PER_ADDRESS, 5_000); // old code: the first 64 held, every later client refused
    assert.equal(flood.open().length, PER_ADDRESS);

    // Another client, a new connection per call, during the flood.
    const calls = [];
    for (let i = 0; i < 100; i++) calls.push(await timedGet(`${system.urls.inspection}/v1/inspections/`, '127.0.0.2'));
    assert.deepEqual([...new Set(calls.map((c) => c.status))], [401], 'every call answered (no key: 401)');
    const sorted = calls.map((c) => c.ms).sort((a, b) => a - b);
    console.log(`inspection API during a flood of ${FLOOD} idle connections from one address (${PER_ADDRESS} held): p50 ${sorted[49].toFixed(1)} ms, p99 ${sorted[98].toFixed(1)} ms over ${calls.length} calls, each on a new connection`);

    // The cloud API has the same cap.
    const cloud = await openIdleConnections(Number(new URL(system.urls.cloud).port), 20, { firstAddress: 4 });
    floods.push(cloud);
    await cloud.closedCount(20 - PER_ADDRESS, 5_000);
    assert.equal((await timedGet(`${system.urls.cloud}/project/api/v3/openapi.json`, '127.0.0.2')).status, 200);

    // The proxy TRUST_PROXY names carries every client's connections: more than the cap per address, all served.
    const proxy = await openIdleConnections(port, 3 * PER_ADDRESS, { firstAddress: 3 });
    floods.push(proxy);
    const answers = await Promise.all(proxy.sockets.map((socket) => exchange(socket, 'GET /v1/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')));
    assert.deepEqual([...new Set(answers.map((a) => a.split('\r\n')[0]))], ['HTTP/1.1 404 Not Found']);

    // The connections held with unfinished requests are closed by the headers timeout (10 s, checked
    // every 2.5 s; old default: 30 s).
    await flood.closedCount(FLOOD, 20_000);
  });
});

describe('the inspection and cloud APIs answer while the S3 port is flooded (issue 27, finding 2)', () => {
  // The server runs with a limit of 1,024 open files (soft and hard): the caps are its defaults,
  // derived from that limit. 1,100 idle connections from 40 addresses would take every descriptor
  // without them.
  const LIMIT = 1024;
  const FLOOD = 1100;
  let server: ServerProcess | undefined;
  let dataDir: string;
  let flood: Flood | undefined;
  before(async () => {
    dataDir = tempDir();
  });
  after(async () => {
    await flood?.end();
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('GET /v1/inspections/{id}/ and the cloud API answer during a flood of idle S3 connections', async (t) => {
    const own = openFileLimit();
    if (own !== undefined && own < FLOOD + 500) return t.skip(`this test process may open only ${own} files; the flood needs ${FLOOD + 500}`);
    // PGlite whatever DATABASE_URL says: what is measured is the process's own descriptors.
    server = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: '' }, 'serve', { openFileLimit: LIMIT });
    const client = await demoClient(dataDir, server);
    const asset = await client.createAsset({ name: 'Mast', type: 9 });
    const inspection = await client.createInspection({ asset: asset.id });

    flood = await openIdleConnections(Number(new URL(server.urls.storage).port), FLOOD, { addresses: 40 });

    const headers = { 'x-api-key': client.options.apiKey, authorization: `Bearer ${client.token}`, 'vendor-organization-uuid': client.options.organizationUuid ?? '' };
    for (let i = 0; i < 20; i++) {
      // Bounded: on the old code each call is reset (or never answered) while the flood holds.
      const response: Response = await fetch(`${server.urls.inspection}/v1/inspections/${inspection.id}/`, { headers, signal: AbortSignal.timeout(30_000) });
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { id: number }).id, inspection.id);
    }
    const cloud = await fetch(`${server.urls.cloud}/project/api/v3/openapi.json`, { signal: AbortSignal.timeout(30_000) });
    assert.equal(cloud.status, 200);
    assert.doesNotMatch(server.output(), /EMFILE|too many open files/i);
    // The connections the endpoint does not hold are closed (some waited in the kernel's queue first).
    const held = flood;
    await waitFor('the flood to be cut down to the cap', async () => held.open().length <= LIMIT / 8, 15_000);
  });
});
