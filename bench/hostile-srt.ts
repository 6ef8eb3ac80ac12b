// Hostile .SRT benchmark (issue 27, finding 1): the API's latency while a video inspection's .SRT
// sidecar is processed. The server under test (src/main.ts serve, its own process and data
// folder, PGlite) gets a valid 4-second video DJI_0009.MP4 and beside it DJI_0009.SRT holding
// 250,000 "1" (the review's file), then `process`. Once the inspection shows 12 (extracting), 100
// `GET /v1/inspections/{id}/` are sent one every 20 ms whatever the answers (open loop: a frozen
// server delays every call sent meanwhile, as it would for every client) and each is timed from
// its scheduled send to its answer. The anchor is the same video processed without a sidecar: the
// API's usual latency while a video is processed (ffmpeg, the frames stored and analysed share the
// 2 cores); the same 100 calls on the idle server are shown too. Another line does the same with a
// valid 32 MB .SRT (130,000 DJI cues): what parsing a large legitimate file costs the API.
//
//   node --import tsx bench/hostile-srt.ts [--rounds N]     (standalone)
//   npm run bench -- --only hostile-srt                     (in the table of bench/run.ts)
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchOptions, BenchResult } from './lib/context.ts';
import { startServer } from './lib/processes.ts';
import { loginDemo, type BenchAccount } from './lib/account.ts';
import { fmt, log, renderTable, summarise } from './lib/stats.ts';

const run = promisify(execFile);
const CALLS = 100;
const SPACING_MS = 20;
const FFMPEG = process.env.FFMPEG_BINARY ?? '/usr/bin/ffmpeg';

/** p99 of the values: the value below which 99 % lie (nearest rank). */
function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.99 * sorted.length) - 1];
}

/**
 * CALLS timed GETs of the inspection, one sent every SPACING_MS (open loop): ms each, from the
 * scheduled send to the answer, or to the failure (a reset: the old code's frozen server closed
 * the connections it could not read in time) counted as failed.
 */
async function timedCalls(account: BenchAccount, url: string): Promise<{ ms: number[]; failed: number }> {
  const started = performance.now();
  let failed = 0;
  const ms = await Promise.all(
    Array.from({ length: CALLS }, async (_, i) => {
      const scheduled = started + i * SPACING_MS;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, scheduled - performance.now())));
      try {
        const response = await fetch(url, { headers: account.headers });
        await response.arrayBuffer();
        if (response.status !== 200) failed++;
      } catch {
        failed++;
      }
      return performance.now() - scheduled;
    }),
  );
  return { ms, failed };
}

/** A DJI sidecar of `cues` valid cues (~250 bytes each). */
function validSrt(cues: number): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < cues; i++) {
    const ms = i * 33;
    const time = (v: number) => `${String(Math.floor(v / 3_600_000)).padStart(2, '0')}:${String(Math.floor(v / 60_000) % 60).padStart(2, '0')}:${String(Math.floor(v / 1000) % 60).padStart(2, '0')},${String(v % 1000).padStart(3, '0')}`;
    parts.push(`${i + 1}\n${time(ms)} --> ${time(ms + 33)}\n<font size="28">FrameCnt: ${i + 1}, DiffTime: 33ms\n2024-06-01 10:00:00.000\n[iso: 100] [shutter: 1/1000.0] [fnum: 2.8] [ev: 0] [focal_len: 24.00] [latitude: 55.698166] [longitude: 13.195388] [rel_alt: 30.000 abs_alt: 67.000] [ct: 5500] </font>\n\n`);
  }
  return Buffer.from(parts.join(''));
}

export async function runHostileSrt(options: Pick<BenchOptions, 'rounds'>): Promise<BenchResult> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oi-bench-srt-'));
  const videoFile = path.join(folder, 'video.mp4');
  await run(FFMPEG, ['-nostdin', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=10', '-t', '4', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-metadata', 'location=+55.6982+013.1953+037.000/', '-y', videoFile]);
  const video = fs.readFileSync(videoFile);
  fs.rmSync(folder, { recursive: true, force: true });
  const sidecars = [
    { name: 'video without .SRT', body: null },
    { name: '250,000-digit .SRT', body: Buffer.from('1'.repeat(250_000)) },
    { name: 'valid 32 MB .SRT', body: validSrt(130_000) },
  ];
  // ENGINE exif: the frames of a test pattern are not a model COLMAP could reconstruct.
  const server = await startServer({ name: 'hostile-srt', database: 'pglite', entry: 'main', env: { FFMPEG_BINARY: FFMPEG, ENGINE: 'exif' } });
  const idle: number[] = [];
  const during = sidecars.map(() => [] as number[]);
  const failures = sidecars.map(() => [] as number[]);
  const settleSeconds = sidecars.map(() => [] as number[]);
  const notes: string[] = [];
  try {
    const account = await loginDemo(server);
    const asset = await account.client.createAsset({ name: 'SRT bench', type: 1, latitude: '55.69820000', longitude: '13.19530000' });
    for (let round = 0; round < options.rounds; round++) {
      for (const [s, sidecar] of sidecars.entries()) {
        const inspection = await account.client.createInspection({ asset: asset.id, processing_parameters: { is_video: true } });
        const url = `${server.urls.inspection}/v1/inspections/${inspection.id}/`;
        const keys = await account.client.upload(await account.client.storageCredentials(inspection.id), [
          { name: 'DJI_0009.MP4', body: video },
          ...(sidecar.body ? [{ name: 'DJI_0009.SRT', body: sidecar.body }] : []),
        ]);
        await account.client.register(inspection.id, keys);
        if (s === 0) {
          if (round === 0) await timedCalls(account, url); // warm-up, never measured: the JIT, connections, caches
          idle.push(p99((await timedCalls(account, url)).ms));
        }
        const started = performance.now();
        await account.client.process(inspection.id);
        while ((await account.client.getInspection(inspection.id)).status === 20) await new Promise((resolve) => setTimeout(resolve, 10));
        const calls = await timedCalls(account, url);
        during[s].push(p99(calls.ms));
        failures[s].push(calls.failed);
        const done = await account.client.waitUntilSettled(inspection.id, { timeoutMs: 30 * 60_000 });
        settleSeconds[s].push((performance.now() - started) / 1000);
        if (round === 0) notes.push(`hostile-srt: ${sidecar.name}: the inspection settled in ${done.status} after ${fmt(settleSeconds[s][0], 1)} s`);
        log(`hostile-srt: round ${round + 1}, ${sidecar.name}: p99 ${fmt(during[s].at(-1)!, 1)} ms while processed, ${calls.failed} failed (idle ${fmt(idle.at(-1)!, 1)} ms)`);
      }
    }
  } finally {
    await server.dispose();
  }
  const rows: BenchResult['rows'] = [
    { benchmark: 'hostile-srt', metric: `GET inspection p99 of ${CALLS}, idle`, unit: 'ms', summary: summarise(idle) },
    { benchmark: 'hostile-srt', metric: `anchor: GET inspection p99 of ${CALLS} while a video without .SRT is processed`, unit: 'ms', summary: summarise(during[0]) },
    { benchmark: 'hostile-srt', metric: `time to settle, video without .SRT`, unit: 's', summary: summarise(settleSeconds[0]) },
  ];
  for (const [s, sidecar] of sidecars.entries()) {
    if (s === 0) continue;
    const ratio = summarise(during[s].map((v, i) => v / during[0][i]));
    rows.push({
      benchmark: 'hostile-srt',
      metric: `GET inspection p99 of ${CALLS} while a video with a ${sidecar.name} is processed`,
      unit: 'ms',
      summary: summarise(during[s]),
      ratio,
      anchor: 'no .SRT',
      target: '≤ 2× anchor',
      met: ratio.median <= 2 && failures[s].every((n) => n === 0),
      note: `${failures[s].reduce((a, b) => a + b, 0)} of ${CALLS * failures[s].length} calls failed`,
    });
    rows.push({ benchmark: 'hostile-srt', metric: `time to settle, ${sidecar.name}`, unit: 's', summary: summarise(settleSeconds[s]) });
  }
  notes.push(`hostile-srt: ${CALLS} calls one every ${SPACING_MS} ms from status 12, each timed from its scheduled send (open loop); server src/main.ts serve on PGlite, ffmpeg ${FFMPEG}`);
  return { rows, memory: [], notes };
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const at = process.argv.indexOf('--rounds');
  const result = await runHostileSrt({ rounds: at > 0 ? Number(process.argv[at + 1]) : 1 });
  console.log(`\n${renderTable(result.rows)}\n`);
  for (const note of result.notes) console.log(`- ${note}`);
}
