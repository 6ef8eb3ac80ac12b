// API benchmark: authenticated GET /v1/inspections/{id}/ (X-Api-Key + Bearer JWT +
// vendor-organization-uuid, the record read from the database on every request) with autocannon at
// 64 connections, on PGlite and on PostgreSQL, alternating round by round with the anchor: a bare
// Fastify route in its own process answering the same JSON body.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon, { type Result } from 'autocannon';
import { loginDemo, newInspection } from './lib/account.ts';
import { memoryRecord, rssSampler, type BenchOptions, type BenchResult } from './lib/context.ts';
import { spawnNode, startServer, type Child } from './lib/processes.ts';
import { alternate, log, summarise } from './lib/stats.ts';

const CONNECTIONS = 64;
const WARMUP_SECONDS = 3;

interface Target {
  name: string;
  child: Child;
  url: string;
  headers: Record<string, string>;
  dispose(): Promise<void>;
}

async function load(target: Target, seconds: number): Promise<Result> {
  const result = await autocannon({ url: target.url, connections: CONNECTIONS, duration: seconds, headers: target.headers, timeout: 10 });
  if (result.errors || result.timeouts || result.non2xx) {
    throw new Error(`${target.name}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers of ${result.requests.total}`);
  }
  return result;
}

export async function runApi(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = { rows: [], memory: [], notes: [] };
  const targets: Target[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oi-bench-api-'));
  try {
    let body: unknown;
    for (const database of options.databases) {
      const server = await startServer({ name: `api-${database}`, database, cpuProfDir: options.profileDir });
      const account = await loginDemo(server);
      const inspection = await newInspection(account, `API benchmark ${database}`);
      body = await account.client.getInspection(inspection.id);
      targets.push({ name: database, child: server, url: `${server.urls.inspection}/v1/inspections/${inspection.id}/`, headers: account.headers, dispose: () => server.dispose() });
    }
    const bodyFile = path.join(tmp, 'inspection.json');
    fs.writeFileSync(bodyFile, JSON.stringify(body));
    const anchor = await spawnNode({ name: 'api-anchor-fastify', args: ['bench/anchors/fastify-anchor.ts'], env: { ANCHOR_BODY_FILE: bodyFile }, ready: (o) => /Listening: /.test(o) });
    const anchorUrl = /Listening: (\S+)/.exec(anchor.output())![1];
    const id = /\/v1\/inspections\/(\d+)\//.exec(targets[0].url)![1];
    targets.unshift({ name: 'anchor', child: anchor, url: `${anchorUrl}/v1/inspections/${id}/`, headers: targets[0].headers, dispose: () => anchor.stop() });

    for (const t of targets) {
      result.memory.push(memoryRecord('api', t.child, 'idle'));
      log(`api: warm-up ${t.name} (${WARMUP_SECONDS} s, not measured)`);
      await load(t, WARMUP_SECONDS);
    }
    const rps = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const p99 = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const peaks = new Map<string, number>();
    await alternate(
      options.rounds,
      targets.map((t) => t.name),
      async (name, round) => {
        const t = targets.find((x) => x.name === name)!;
        const sampler = rssSampler(t.child);
        const r = await t.child.measured(() => load(t, options.apiSeconds));
        peaks.set(name, Math.max(peaks.get(name) ?? 0, sampler.stop()));
        rps.get(name)!.push(r.requests.average);
        p99.get(name)!.push(r.latency.p99);
        log(`api: round ${round + 1} ${name}: ${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms`);
      },
    );
    const anchorRps = rps.get('anchor')!;
    result.rows.push({ benchmark: 'api', metric: 'anchor: bare Fastify', unit: 'req/s', summary: summarise(anchorRps) });
    result.rows.push({ benchmark: 'api', metric: 'anchor: bare Fastify p99', unit: 'ms', summary: summarise(p99.get('anchor')!) });
    for (const t of targets.filter((x) => x.name !== 'anchor')) {
      const values = rps.get(t.name)!;
      const ratio = summarise(values.map((v, i) => v / anchorRps[i]));
      const latency = summarise(p99.get(t.name)!);
      result.rows.push({
        benchmark: 'api',
        metric: `GET inspection on ${t.name}`,
        unit: 'req/s',
        summary: summarise(values),
        ratio,
        anchor: 'bare Fastify',
        target: '≥ 0.5× anchor',
        met: ratio.median >= 0.5,
      });
      result.rows.push({ benchmark: 'api', metric: `GET inspection on ${t.name} p99`, unit: 'ms', summary: latency, target: '< 20 ms', met: latency.median < 20 });
    }
    for (const t of targets) result.memory.push(memoryRecord('api', t.child, 'end', { sampledPeakMb: peaks.get(t.name) }));
    result.notes.push(
      `api: autocannon ${CONNECTIONS} connections, ${options.apiSeconds} s per run after a ${WARMUP_SECONDS} s warm-up per target; the load generator runs in the bench process, each server in its own.`,
    );
  } finally {
    for (const t of targets) await t.dispose().catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return result;
}
