// `npm run bench [-- options]`: every benchmark against the project and its anchor, alternating,
// median of the rounds with the min–max range, ratios to the anchor of the same round. Prints the
// table and writes it as JSON to bench/results/. See bench/README.md.
//
//   --only api,upload,analysis,scale,rust,connection-flood,hostile-srt,image-memory
//                                      run these benchmarks only (default: all)
//   --rounds N                         rounds per benchmark (default 3; fewer than 3 is for development)
//   --db pglite,postgres               databases of the API and scale benchmarks (default both)
//   --api-seconds S                    seconds per measured API run (default 8)
//   --scale 1000,10000,100000          scale sizes (default 1000,10000,100000)
//   --uploads N                        PutObjects per upload run (default 100)
//   --multipart-mib N                  size of the multipart upload, MiB (default 1024; 0 skips it)
//   --profile                          run the servers under test with node --cpu-prof and print
//                                      their hottest functions (profiles in bench/results/profiles/)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runApi } from './api.ts';
import { runUpload } from './upload.ts';
import { runAnalysis } from './analysis.ts';
import { runScale } from './scale.ts';
import { runRustDetection } from './rust-detection.ts';
import { runConnectionFlood } from './connection-flood.ts';
import { runHostileSrt } from './hostile-srt.ts';
import { runImageMemory } from './image-memory.ts';
import { summariseProfiles } from './profile-summary.ts';
import type { BenchOptions, BenchResult, MemoryRecord } from './lib/context.ts';
import { ROOT } from './lib/processes.ts';
import { buildServer } from '../scripts/build.ts';
import { fmt, log, renderTable, type Row } from './lib/stats.ts';

const BENCHMARKS = { api: runApi, upload: runUpload, analysis: runAnalysis, scale: runScale, rust: runRustDetection, 'connection-flood': runConnectionFlood, 'hostile-srt': runHostileSrt, 'image-memory': runImageMemory } as const;
type Name = keyof typeof BENCHMARKS;

function parseArgs(argv: string[]): { only: Name[]; options: BenchOptions; profile: boolean } {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const [name, inline] = a.slice(2).split('=', 2);
    if (name === 'profile') args.set(name, 'true');
    else args.set(name, inline ?? argv[++i] ?? '');
  }
  const list = (name: string, fallback: string) => (args.get(name) ?? fallback).split(',').map((s) => s.trim()).filter(Boolean);
  const only = list('only', Object.keys(BENCHMARKS).join(',')) as Name[];
  for (const n of only) if (!(n in BENCHMARKS)) throw new Error(`unknown benchmark ${n}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
  const profile = args.has('profile');
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    only,
    profile,
    options: {
      rounds: Number(args.get('rounds') ?? 3),
      databases: list('db', 'pglite,postgres') as BenchOptions['databases'],
      scaleSizes: list('scale', '1000,10000,100000').map(Number),
      apiSeconds: Number(args.get('api-seconds') ?? 8),
      uploadCount: Number(args.get('uploads') ?? 100),
      uploadMiB: 4,
      multipartMiB: Number(args.get('multipart-mib') ?? 1024),
      profileDir: profile ? path.join(ROOT, 'bench/results/profiles', stamp) : undefined,
    },
  };
}

function renderMemory(records: MemoryRecord[]): string {
  const header = ['benchmark', 'process', 'when', 'VmRSS MB', 'VmHWM MB', 'sampled peak MB'];
  const lines = records.map((r) => [r.benchmark, r.process, r.when, fmt(r.rssMb, 0), fmt(r.hwmMb, 0), r.sampledPeakMb === undefined ? '' : fmt(r.sampledPeakMb, 0)]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...lines.map(line)].join('\n');
}

async function main(): Promise<void> {
  const { only, options, profile } = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const rows: Row[] = [];
  const memory: MemoryRecord[] = [];
  const notes: string[] = [];
  const failures: string[] = [];
  log(`benchmarks ${only.join(', ')}; ${options.rounds} rounds; node ${process.version}; ${os.cpus().length} CPUs`);
  // The API and upload servers run dist/ as `npm start` does (processes.ts, npmStartArgs).
  if (only.includes('api') || only.includes('upload')) buildServer();
  for (const name of only) {
    log(`== ${name}`);
    const t0 = Date.now();
    const loadBefore = os.loadavg()[0];
    try {
      const result: BenchResult = await BENCHMARKS[name](options);
      rows.push(...result.rows);
      memory.push(...result.memory);
      notes.push(...result.notes);
    } catch (err) {
      failures.push(`${name}: ${(err as Error).stack ?? err}`);
      log(`${name} failed: ${(err as Error).stack ?? err}`);
    }
    const loadAfter = os.loadavg()[0];
    notes.push(`${name}: ${Math.round((Date.now() - t0) / 1000)} s; 1-minute load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (2 CPUs: above ~2, other work shares the machine)`);
    log(`${name} took ${Math.round((Date.now() - t0) / 1000)} s`);
  }
  const minutes = (Date.now() - started) / 60000;
  const table = renderTable(rows);
  const memoryTable = renderMemory(memory);
  console.log(`\n${table}\n\nServer memory (VmRSS/VmHWM from /proc/<pid>/status)\n${memoryTable}\n`);
  for (const note of notes) console.log(`- ${note}`);
  let hot: unknown;
  if (profile && options.profileDir) {
    hot = summariseProfiles(options.profileDir, 15);
    console.log(`\nCPU profiles: ${options.profileDir}`);
    for (const [file, top] of Object.entries(hot as Record<string, string[]>)) console.log(`\n${path.relative(options.profileDir, file)}\n${top.join('\n')}`);
  }
  const unmet = rows.filter((r) => r.met === false);
  console.log(`\n${rows.filter((r) => r.met).length} targets met, ${unmet.length} not met${failures.length ? `, ${failures.length} benchmark(s) failed` : ''}; ${minutes.toFixed(1)} min.`);
  const dir = path.join(ROOT, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `bench-${new Date(started).toISOString().replace(/[:.]/g, '-')}.json`);
  const json = {
    started: new Date(started).toISOString(),
    minutes,
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    options,
    rows,
    memory,
    notes,
    failures,
    hot,
    table,
  };
  fs.writeFileSync(file, JSON.stringify(json, null, 2));
  fs.writeFileSync(path.join(dir, 'latest.json'), JSON.stringify(json, null, 2));
  console.log(`Results: ${path.relative(ROOT, file)}`);
  if (failures.length) {
    for (const f of failures) console.error(f);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
