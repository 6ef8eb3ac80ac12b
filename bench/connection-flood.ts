// Connection flood benchmark (issue 27, finding 2): the inspection API's latency while ~20,000 idle
// TCP connections, no byte sent, hold the embedded S3 port. The server under test (src/main.ts
// serve, its own process and data folder, PGlite, the defaults: caps derived from its open-file
// limit) gets the flood from two attacker processes (this script with --attack, 10,000 connections
// each from 20 loopback addresses: one process may not hold 20,000 descriptors where the limit is
// 20,000) that open their connections once and keep what the server keeps. Then 100
// `GET /v1/inspections/{id}/` are sent one every 20 ms (open loop), each on a new connection, as a
// browser or a script arriving during the flood would (a connection opened before it would hide
// the descriptor shortage), each timed from its scheduled send to its answer. The anchor is the
// same 100 calls on the same server before the flood. A call that fails (reset, refused) is
// counted, and the API's downtime is the time from the flood until a call answers again.
// `--target api` (issue 40 §4): the flood is the audit's instead, 2,048 connections from one
// address (127.0.0.2) to the inspection API's own port, each with an unfinished request head; the
// calls come from 127.0.0.1.
//
//   node --import tsx bench/connection-flood.ts [--rounds N] [--connections N] [--target api]   (standalone)
//   npm run bench -- --only connection-flood                                     (bench/run.ts)
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { BenchOptions, BenchResult } from './lib/context.ts';
import { spawnNode, startServer, type Child } from './lib/processes.ts';
import { loginDemo, newInspection, type BenchAccount } from './lib/account.ts';
import { fmt, log, renderTable, summarise } from './lib/stats.ts';
import { openIdleConnections } from '../test/helpers/connection-flood.ts';

const CALLS = 100;
const SPACING_MS = 20;

/** Who floods which port: the S3 port from many addresses (issue 27), or the API port from one (issue 40). */
interface Scenario {
  target: 'storage' | 'api';
  attackers: number;
  addressesPerAttacker: number;
  /** Each connection sends a request line and a header, never the blank line that ends the head. */
  unfinished: boolean;
}
const SCENARIOS: Record<Scenario['target'], Scenario> = {
  storage: { target: 'storage', attackers: 2, addressesPerAttacker: 20, unfinished: false },
  api: { target: 'api', attackers: 1, addressesPerAttacker: 1, unfinished: true },
};
/** The audit's flood of the API port (issue 40 §4): the default cap of 2,048 connections. */
const API_FLOOD = 2048;

/** p99 of the values: the value below which 99 % lie (nearest rank). */
function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.99 * sorted.length) - 1];
}

/** One GET on a connection of its own; resolves with the status, or the error's code. */
function getOnNewConnection(url: string, headers: Record<string, string>): Promise<number | string> {
  return new Promise((resolve) => {
    const request = http.get(url, { headers, agent: false, timeout: 60_000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    request.on('timeout', () => request.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    request.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

/** CALLS timed GETs, one sent every SPACING_MS (open loop): latency of each (Infinity: failed), and the failures. */
async function timedCalls(account: BenchAccount, url: string): Promise<{ ms: number[]; failed: string[] }> {
  const started = performance.now();
  const failed: string[] = [];
  const ms = await Promise.all(
    Array.from({ length: CALLS }, async (_, i) => {
      const scheduled = started + i * SPACING_MS;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, scheduled - performance.now())));
      const outcome = await getOnNewConnection(url, account.headers);
      if (outcome === 200) return performance.now() - scheduled;
      failed.push(String(outcome));
      return Infinity; // no answer: a p99 with failures prints as "-"
    }),
  );
  return { ms, failed };
}

/** Seconds from `since` until a GET answers 200 (one try every 100 ms, at most 10 minutes). */
async function secondsUntilAnswered(account: BenchAccount, url: string, since: number): Promise<number> {
  while ((await getOnNewConnection(url, account.headers)) !== 200) {
    if (performance.now() - since > 600_000) return Infinity;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (performance.now() - since) / 1000;
}

/** Starts the attackers; resolves once every connection has been opened (or refused). */
async function flood(port: number, connections: number, scenario: Scenario): Promise<{ attackers: Child[]; held: number }> {
  const each = Math.ceil(connections / scenario.attackers);
  // Addresses from 127.0.0.2: the calls measured come from 127.0.0.1, which must not share a per-address cap with the attack.
  const attackers = await Promise.all(
    Array.from({ length: scenario.attackers }, (_, a) =>
      spawnNode({
        name: `attacker-${a + 1}`,
        args: ['bench/connection-flood.ts', '--attack', String(port), String(each), String(2 + a * scenario.addressesPerAttacker), String(scenario.addressesPerAttacker), scenario.unfinished ? 'unfinished' : 'silent'],
        ready: (output) => /flood: \d+ open/.test(output),
        timeoutMs: 300_000,
      }),
    ),
  );
  const held = attackers.reduce((sum, attacker) => sum + Number(/flood: (\d+) open/.exec(attacker.output())![1]), 0);
  return { attackers, held };
}

/** This process's open-file limit (the attackers inherit it), from /proc/self/limits. */
function ownOpenFileLimit(): number {
  const soft = /^Max open files\s+(\S+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'))?.[1];
  return soft === undefined ? 1024 : soft === 'unlimited' ? Infinity : Number(soft);
}

export async function runConnectionFlood(options: Pick<BenchOptions, 'rounds'> & { connections?: number; target?: Scenario['target'] }): Promise<BenchResult> {
  const scenario = SCENARIOS[options.target ?? 'storage'];
  const ATTACKERS = scenario.attackers;
  // ~20,000, or what the attackers may hold: a few descriptors of each are not sockets.
  const connections = options.connections ?? (scenario.target === 'api' ? API_FLOOD : Math.min(20_000, ATTACKERS * (ownOpenFileLimit() - 100)));
  const flooded = scenario.target === 'api' ? `${connections} idle API connections with unfinished requests from one address` : `${connections} idle S3 connections`;
  const server = await startServer({ name: 'connection-flood', database: 'pglite', entry: 'main', env: { ENGINE: 'exif' } });
  const idle: number[] = [];
  const during: number[] = [];
  const failures: number[] = [];
  const downtime: number[] = [];
  const notes: string[] = [];
  // The server's own limit (Node raises its soft limit to the hard one at start).
  const openFiles = /^Max open files\s+(\S+)/m.exec(fs.readFileSync(`/proc/${server.pid}/limits`, 'utf8'))?.[1] ?? 'unknown';
  try {
    const account = await loginDemo(server);
    const inspection = await newInspection(account, 'flood');
    const url = `${server.urls.inspection}/v1/inspections/${inspection.id}/`;
    const port = Number(new URL(scenario.target === 'api' ? server.urls.inspection : server.urls.storage).port);
    await timedCalls(account, url); // warm-up, never measured
    for (let round = 0; round < options.rounds; round++) {
      idle.push(p99((await timedCalls(account, url)).ms));
      const { attackers, held } = await flood(port, connections, scenario);
      const floodedAt = performance.now();
      try {
        const calls = await timedCalls(account, url);
        during.push(p99(calls.ms));
        failures.push(calls.failed.length);
        downtime.push(calls.failed.length ? await secondsUntilAnswered(account, url, floodedAt) : 0);
        const kinds = [...new Set(calls.failed)].join(', ');
        log(
          `connection-flood: round ${round + 1}: ${held} of ${ATTACKERS * Math.ceil(connections / ATTACKERS)} connections open after the flood; p99 ${fmt(during.at(-1)!, 1)} ms, ` +
            `${calls.failed.length} of ${CALLS} failed${kinds ? ` (${kinds})` : ''}, API down ${fmt(downtime.at(-1)!, 1)} s (idle p99 ${fmt(idle.at(-1)!, 1)} ms)`,
        );
        if (round === 0) notes.push(`connection-flood: ${held} connections still open once the flood settled (the rest closed by the server)`);
      } finally {
        await Promise.all(attackers.map((attacker) => attacker.stop()));
      }
      // The server closes what the attackers held; wait until it answers normally again.
      await secondsUntilAnswered(account, url, performance.now());
    }
  } finally {
    await server.dispose();
  }
  const rows: BenchResult['rows'] = [
    { benchmark: 'connection-flood', metric: `anchor: GET inspection p99 of ${CALLS}, no flood`, unit: 'ms', summary: summarise(idle) },
    {
      benchmark: 'connection-flood',
      metric: `GET inspection p99 of ${CALLS} during ${flooded}`,
      unit: 'ms',
      summary: summarise(during),
      ratio: summarise(during.map((v, i) => v / idle[i])),
      anchor: 'no-flood p99',
      target: '≤ 250 ms, no failure',
      met: summarise(during).median <= 250 && failures.every((f) => f === 0),
    },
    { benchmark: 'connection-flood', metric: `calls failed of ${CALLS} (reset or refused)`, unit: 'calls', summary: summarise(failures) },
    { benchmark: 'connection-flood', metric: 'API unreachable after the flood began', unit: 's', summary: summarise(downtime) },
  ];
  notes.push(
    `connection-flood: server src/main.ts serve on PGlite, open-file limit ${openFiles}; ${ATTACKERS} attacker process(es) × ${Math.ceil(connections / ATTACKERS)} connections to the ${scenario.target} port from ${scenario.addressesPerAttacker} address(es) each${scenario.unfinished ? ', each with an unfinished request head' : ', nothing sent'}; ${CALLS} calls one every ${SPACING_MS} ms, each on a new connection, timed from its scheduled send (open loop)`,
  );
  return { rows, memory: [], notes };
}

/** The attacker: opens `count` idle connections (`unfinished`: each sends an unfinished request head), reports how many stay open, holds them until killed. */
async function attack(port: number, count: number, firstAddress: number, addresses: number, unfinished: boolean): Promise<void> {
  const connections = await openIdleConnections(port, count, { addresses, firstAddress, batch: 500 });
  if (unfinished) for (const socket of connections.open()) socket.write('GET /v1/inspections/ HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  // Connections waiting in the kernel's accept queue look open until the server takes and drops them.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  console.log(`flood: ${connections.open().length} open, ${connections.closed().length} closed`);
  await new Promise(() => {}); // held until the runner kills this process
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const arg = (name: string) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? process.argv[at + 1] : undefined;
  };
  const at = process.argv.indexOf('--attack');
  if (at > 0) {
    await attack(Number(process.argv[at + 1]), Number(process.argv[at + 2]), Number(process.argv[at + 3]), Number(process.argv[at + 4]), process.argv[at + 5] === 'unfinished');
  } else {
    const target = arg('--target') === 'api' ? 'api' : 'storage';
    const result = await runConnectionFlood({ rounds: Number(arg('--rounds') ?? 1), connections: arg('--connections') ? Number(arg('--connections')) : undefined, target });
    console.log(`\n${renderTable(result.rows)}\n`);
    for (const note of result.notes) console.log(`- ${note}`);
  }
}
