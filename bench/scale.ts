// Scale benchmark, per size (default 1k, 10k, 100k):
//   - register: N keys into one inspection through the API, N/500 sequential
//     POST /v1/inspections/{id}/register_images/ calls of 500 keys (each one checks every key in
//     storage through the cloud service). Target at 100k: under 60 s.
//   - cameras: GET /v1/inspections/{id}/cameras/ of an inspection with N cameras. Targets: 10k
//     under 300 ms, 100k under 1 s; the server's RSS just before the listings of each size and its
//     peak while serving them (a 50 ms sampler), to show that the list is streamed, not built.
// Untimed setup: the objects are written straight through the ObjectStore (16-byte bodies) in the
// server process; between rounds the same objects are moved under the next inspection's prefix with
// one directory rename (the disk layout keeps "uploads/org-…/project-…/" as plain folders). Camera
// rows are inserted with one SQL statement. No anchor: these are absolute targets and growth.
import fs from 'node:fs';
import path from 'node:path';
import { loginDemo, newInspection, type BenchAccount } from './lib/account.ts';
import { memoryRecord, rssSampler, type BenchOptions, type BenchResult } from './lib/context.ts';
import { startServer, type DatabaseKind, type Server } from './lib/processes.ts';
import { log, summarise, type Row } from './lib/stats.ts';
import { CAMERA_STATISTICS_ROWS } from '../src/inspection/inspections/camera-list.ts';

const BATCH = 500;

function sizeLabel(n: number): string {
  return n >= 1000 ? `${n / 1000}k` : String(n);
}

async function registration(server: Server, account: BenchAccount, n: number, rounds: number): Promise<number[]> {
  const seconds: number[] = [];
  let previousDir: string | undefined;
  for (let round = 0; round < rounds; round++) {
    const inspection = await newInspection(account, `Scale register ${n} #${round}`);
    const c = await account.client.storageCredentials(inspection.id);
    const dir = path.join(server.dataDir, 'objects', c.bucket, c.key);
    if (previousDir) {
      fs.mkdirSync(path.dirname(dir), { recursive: true });
      fs.renameSync(previousDir, dir);
    } else {
      const r = await server.call<{ ms: number }>({ cmd: 'putObjects', bucket: c.bucket, prefix: c.key, count: n, size: 16 });
      log(`scale: ${n} objects written through the ObjectStore in ${(r.ms / 1000).toFixed(1)} s (untimed)`);
    }
    previousDir = dir;
    const keys = Array.from({ length: n }, (_, i) => `${c.key}${String(i).padStart(6, '0')}.jpg`);
    const started = performance.now();
    let registered = 0;
    await server.measured(async () => {
      for (let i = 0; i < keys.length; i += BATCH) {
        registered = (await account.client.register(inspection.id, keys.slice(i, i + BATCH))).nb_images_registered;
      }
    });
    const s = (performance.now() - started) / 1000;
    if (registered !== n) throw new Error(`registered ${registered} of ${n}`);
    seconds.push(s);
    log(`scale: register ${n} keys (${n / BATCH} calls) round ${round + 1}: ${s.toFixed(2)} s`);
  }
  if (previousDir) fs.rmSync(previousDir, { recursive: true, force: true });
  return seconds;
}

async function cameraListing(server: Server, account: BenchAccount, n: number, rounds: number): Promise<{ ms: number[]; rssBeforeMb: number; rssPeakMb: number }> {
  const inspection = await newInspection(account, `Scale cameras ${n}`);
  log(`scale: inserting ${n} camera rows (untimed)`);
  await server.call({
    cmd: 'sql',
    text: `insert into inspection.cameras (inspection_id, image_key, filename, latitude, longitude, elevation, width, height, quaternion, make, model)
           select $1, 'uploads/x/IMG_' || lpad(g::text, 6, '0') || '.JPG', 'IMG_' || lpad(g::text, 6, '0') || '.JPG',
                  55.7 + g * 1e-6, 13.19 + g * 1e-6, 120 + (g % 50), 4000, 2250, '[0.5, 0.5, -0.5, 0.5]'::jsonb, 'DJI', 'FC6310'
           from generate_series(1, $2::int) g`,
    params: [inspection.id, n],
  });
  // What the analysis does after writing this many cameras (refreshCameraStatistics, camera-list.ts).
  if (n >= CAMERA_STATISTICS_ROWS) await server.call({ cmd: 'sql', text: 'analyze inspection.cameras', params: [] });
  const url = `${account.client.options.baseUrl}/v1/inspections/${inspection.id}/cameras/`;
  const get = async () => {
    const started = performance.now();
    const response = await fetch(url, { headers: account.headers });
    const body = await response.text(); // the whole body is received; parsing is the client's business
    const ms = performance.now() - started;
    if (response.status !== 200) throw new Error(`cameras answered ${response.status}`);
    return { ms, bytes: body.length, count: (JSON.parse(body) as unknown[]).length };
  };
  await get(); // warm-up, not measured
  const ms: number[] = [];
  const rssBeforeMb = server.memory().rssMb;
  const sampler = rssSampler(server, 50);
  for (let round = 0; round < rounds; round++) {
    const r = await server.measured(get);
    if (r.count !== n) throw new Error(`listed ${r.count} of ${n} cameras`);
    ms.push(r.ms);
    log(`scale: list ${n} cameras round ${round + 1}: ${r.ms.toFixed(0)} ms (${(r.bytes / 1e6).toFixed(1)} MB)`);
  }
  const rssPeakMb = sampler.stop();
  log(`scale: list ${n} cameras: server RSS ${rssBeforeMb} MB before, peak ${rssPeakMb} MB while serving`);
  return { ms, rssBeforeMb, rssPeakMb };
}

export async function runScale(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = { rows: [], memory: [], notes: [] };
  const databases: DatabaseKind[] = options.databases;
  for (const database of databases) {
    const server = await startServer({ name: `scale-${database}`, database, entry: 'host', cpuProfDir: options.profileDir });
    try {
      const account = await loginDemo(server);
      result.memory.push(memoryRecord('scale', server, 'idle'));
      const sampler = rssSampler(server);
      const rows: Row[] = [];
      for (const n of options.scaleSizes) {
        const regRounds = n >= 100_000 ? Math.min(options.rounds, 3) : options.rounds;
        const reg = summarise(await registration(server, account, n, regRounds));
        rows.push({
          benchmark: 'scale',
          metric: `register ${sizeLabel(n)} keys (${n / BATCH} × ${BATCH}) on ${database}`,
          unit: 's',
          summary: reg,
          ...(n === 100_000 ? { target: '< 60 s', met: reg.median < 60 } : {}),
        });
      }
      for (const n of options.scaleSizes) {
        const listing = await cameraListing(server, account, n, options.rounds);
        const list = summarise(listing.ms);
        const target = n === 10_000 ? 300 : n === 100_000 ? 1000 : undefined;
        rows.push({
          benchmark: 'scale',
          metric: `list ${sizeLabel(n)} cameras on ${database}`,
          unit: 'ms',
          summary: list,
          ...(target !== undefined ? { target: `< ${target} ms`, met: list.median < target } : {}),
        });
        rows.push({
          benchmark: 'scale',
          metric: `list ${sizeLabel(n)} cameras on ${database}: server RSS peak while serving`,
          unit: 'MB',
          summary: summarise([listing.rssPeakMb]),
          note: `${listing.rssBeforeMb} MB before`,
        });
      }
      result.rows.push(...rows);
      result.memory.push(memoryRecord('scale', server, 'end', { sampledPeakMb: sampler.stop() }));
    } finally {
      await server.dispose();
    }
  }
  result.notes.push(
    'scale: registration = sequential register_images calls of 500 keys from one client (each call: the inspection service calls the cloud bulk_register, which HEADs every key in the object store, then both services insert and count); objects written untimed through the ObjectStore and moved between rounds by one rename. Camera listing = one GET received in full (not parsed) after one unmeasured GET; rows inserted untimed with SQL.',
  );
  return result;
}
