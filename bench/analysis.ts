// Image-analysis benchmark: the status-3 stage (InspectionPipeline.analyzeImages) on the lund and
// brighton_beach photos, against `exiftool -json -n` over the same files on local disk.
//
// What the project's time includes: the call as the job worker makes it, in the bench host (the
// whole server in its own process): re-reading the inspection, status 3, listing the registered
// keys, reading the project's bucket from the cloud service over HTTP, one ranged read of the
// first 64 KiB per image from the ObjectStore (the local-disk store; more ranges when the metadata
// lies further), EXIF/XMP parsing, the camera upserts (500 rows per statement), and the final
// transaction (status 4 + the next job queued). Not included: the pg-boss pickup delay and
// the upload itself (the photos are uploaded and registered once, untimed).
// What exiftool's time includes: one `exiftool -json -n <all files>` process, start to exit (Perl
// start-up included: that is what running it costs), reading the files from the page cache.
// A measured round runs each side REPEATS times back to back: one analysis of lund takes ~60 ms,
// and a single pause of the server (its job queue's polling and supervision share PGlite's one
// connection) made one round in three ~190 ms, the median 4.7x exiftool in one full run and 8.8x in
// the next (session 17).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loginDemo, newInspection } from './lib/account.ts';
import { memoryRecord, rssSampler, type BenchOptions, type BenchResult } from './lib/context.ts';
import { startServer } from './lib/processes.ts';
import { alternate, log, summarise } from './lib/stats.ts';

const DATASETS = [
  { name: 'lund', dir: '/work/shared/datasets/lund/images' },
  { name: 'brighton_beach', dir: '/work/shared/datasets/brighton_beach/images' },
];
const EXIFTOOL = '/usr/bin/exiftool';
/** Runs of each side per measured round (see the head comment). */
const REPEATS = 5;

function exiftool(files: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(EXIFTOOL, ['-json', '-n', ...files], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) return reject(new Error(`exiftool exited with ${code}`));
      const parsed = JSON.parse(out) as unknown[];
      if (parsed.length !== files.length) return reject(new Error(`exiftool returned ${parsed.length} records for ${files.length} files`));
      resolve(seconds);
    });
  });
}

export async function runAnalysis(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = { rows: [], memory: [], notes: [] };
  const datasets = DATASETS.filter((d) => fs.existsSync(d.dir));
  if (!fs.existsSync(EXIFTOOL)) throw new Error(`${EXIFTOOL} is not installed (Debian package libimage-exiftool-perl)`);
  if (datasets.length === 0) throw new Error('no dataset found under /work/shared/datasets');
  // Workers stay on, as in `serve`. The host waits, untimed, for the job the analysis queues
  // (status 4, the cloud project) to finish before answering, so it never runs in the background
  // of a measurement.
  const host = await startServer({ name: 'analysis-host', database: 'pglite', entry: 'host', cpuProfDir: options.profileDir });
  try {
    const account = await loginDemo(host);
    const prepared: { name: string; files: string[]; inspectionId: number }[] = [];
    for (const d of datasets) {
      const files = fs
        .readdirSync(d.dir)
        .filter((f) => /\.jpe?g$/i.test(f))
        .sort()
        .map((f) => path.join(d.dir, f));
      const inspection = await newInspection(account, `Analysis ${d.name}`);
      const credentials = await account.client.storageCredentials(inspection.id);
      const keys = await account.client.upload(
        credentials,
        files.map((f) => ({ name: path.basename(f), body: fs.readFileSync(f) })),
      );
      await account.client.register(inspection.id, keys);
      prepared.push({ name: d.name, files, inspectionId: inspection.id });
    }
    result.memory.push(memoryRecord('analysis', host, 'idle'));
    // Warm-up (not measured): one run of each side per dataset.
    for (const p of prepared) {
      await host.call({ cmd: 'analyze', inspectionId: p.inspectionId });
      await exiftool(p.files);
    }
    const sampler = rssSampler(host);
    for (const p of prepared) {
      const project: number[] = [];
      const anchor: number[] = [];
      await alternate(options.rounds, ['project', 'exiftool'] as const, async (side, round) => {
        const files = REPEATS * p.files.length;
        if (side === 'exiftool') {
          let s = 0;
          for (let i = 0; i < REPEATS; i++) s += await exiftool(p.files);
          anchor.push(files / s);
          log(`analysis: ${p.name} round ${round + 1} exiftool: ${(files / s).toFixed(1)} files/s (${REPEATS} runs, ${(s * 1000).toFixed(0)} ms)`);
          return;
        }
        const runs: number[] = [];
        await host.measured(async () => {
          for (let i = 0; i < REPEATS; i++) {
            const r = await host.call<{ ms: number; status: number; cameras: number }>({ cmd: 'analyze', inspectionId: p.inspectionId });
            if (r.status !== 4 || r.cameras !== p.files.length) throw new Error(`${p.name}: analysis ended in status ${r.status} with ${r.cameras} cameras of ${p.files.length} images`);
            runs.push(r.ms);
          }
        });
        const ms = runs.reduce((a, b) => a + b, 0);
        project.push(files / (ms / 1000));
        log(`analysis: ${p.name} round ${round + 1} project: ${(files / (ms / 1000)).toFixed(1)} files/s (${REPEATS} runs: ${runs.map((r) => r.toFixed(0)).join(', ')} ms)`);
      });
      const ratio = summarise(project.map((v, i) => v / anchor[i]));
      result.rows.push({ benchmark: 'analysis', metric: `anchor: exiftool -json -n, ${p.name} (${p.files.length} files)`, unit: 'files/s', summary: summarise(anchor) });
      result.rows.push({
        benchmark: 'analysis',
        metric: `status 3 analyzeImages, ${p.name} (${p.files.length} files)`,
        unit: 'files/s',
        summary: summarise(project),
        ratio,
        anchor: 'exiftool',
        target: '≥ 5× exiftool',
        met: ratio.median >= 5,
      });
    }
    result.memory.push(memoryRecord('analysis', host, 'end', { sampledPeakMb: sampler.stop() }));
    result.notes.push(
      `analysis: project = InspectionPipeline.analyzeImages called in the server process (bench/host.ts) on an inspection reset to 20 Waiting without cameras; the bucket of the project over HTTP, ranged reads from the ObjectStore, EXIF/XMP parsing, camera upserts, status 4 transaction. exiftool = one \`exiftool -json -n\` process over the same files, start-up included. Each side ${REPEATS} times per round; one warm-up run of each per dataset not measured.`,
    );
  } finally {
    await host.dispose();
  }
  return result;
}
