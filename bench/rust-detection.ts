// Rust detection benchmark: the detector (src/inspection/rust/rust-detector.ts) on the labelled set
// test/fixtures/rust/, in this process, one photo at a time as the analysis job decodes them:
// - precision and recall at IoU >= 0.5 (the same each round: the detector is deterministic);
// - time per photo, decode included, on the set's 640 x 480 photos, on lund's 1024 x 768 originals
//   and on 4000 x 3000 JPEGs (a drone's 12 MP, lund photos upscaled: what the job meets in practice);
// - anchor: sharp alone decoding and downscaling the same photos to the same size (what any
//   analysis of the pixels costs), so the ratio is the detector's own share.
//
//   node --import tsx bench/rust-detection.ts [--rounds N]     (standalone)
//   npm run bench -- --only rust                                (in the table of bench/run.ts)
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { analysePhoto, ANALYSIS_SIZE } from '../src/inspection/rust/rust-detector.ts';
import { score } from '../src/inspection/rust/evaluation.ts';
import type { TruthFile } from '../scripts/generate-rust-fixtures.ts';
import type { BenchOptions, BenchResult } from './lib/context.ts';
import { ROOT } from './lib/processes.ts';
import { fmt, log, renderTable, summarise } from './lib/stats.ts';

const RUST = path.join(ROOT, 'test/fixtures/rust');
const LUND = path.join(ROOT, 'test/fixtures/lund/images');
const TARGET_PRECISION = 0.64;
const TARGET_RECALL = 0.64;

async function timePerPhoto(photos: Buffer[], work: (photo: Buffer) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (const photo of photos) await work(photo);
  return (performance.now() - started) / photos.length;
}

/** sharp's part alone: decode, orient, downscale to the analysis size, raw pixels. */
function decodeOnly(photo: Buffer): Promise<unknown> {
  return sharp(photo, { failOn: 'truncated' }).autoOrient().resize({ width: ANALYSIS_SIZE, height: ANALYSIS_SIZE, fit: 'inside', withoutEnlargement: true }).removeAlpha().raw().toBuffer();
}

export async function runRustDetection(options: Pick<BenchOptions, 'rounds'>): Promise<BenchResult> {
  const truth: TruthFile = JSON.parse(fs.readFileSync(path.join(RUST, 'truth.json'), 'utf8'));
  const set = truth.photos.map((p) => fs.readFileSync(path.join(RUST, 'images', p.file)));
  const lundFiles = fs.readdirSync(LUND).filter((f) => f.endsWith('.jpg')).sort().slice(0, 8);
  const lund = lundFiles.map((f) => fs.readFileSync(path.join(LUND, f)));
  log(`rust: making 4 drone-size (4000 x 3000) JPEGs`);
  const drone = await Promise.all(lund.slice(0, 4).map((b) => sharp(b).resize(4000, 3000).jpeg({ quality: 90 }).toBuffer()));

  // Quality: once is enough (deterministic); checked again each round below.
  const scored = async () => {
    const photos = [];
    for (const [i, p] of truth.photos.entries()) {
      const { findings } = await analysePhoto(set[i]);
      photos.push({ found: findings.map((f) => ({ left: f.left * p.width, top: f.top * p.height, right: f.right * p.width, bottom: f.bottom * p.height })), truth: p.rust });
    }
    return score(photos);
  };
  const quality = await scored();
  // Warm-up (never measured): sharp's thread pool and the JIT.
  await timePerPhoto(set.slice(0, 3), (b) => analysePhoto(b));
  await timePerPhoto(set.slice(0, 3), decodeOnly);

  const datasets = [
    { name: `labelled set, ${truth.photos.length} photos 640 x 480`, photos: set },
    { name: `lund, ${lund.length} photos 1024 x 768`, photos: lund },
    { name: `drone size, ${drone.length} photos 4000 x 3000`, photos: drone },
  ];
  const times = datasets.map(() => ({ detector: [] as number[], anchor: [] as number[], ratio: [] as number[] }));
  for (let round = 0; round < options.rounds; round++) {
    for (const [i, d] of datasets.entries()) {
      // Alternate which side goes first, so neither always finds the caches warm.
      const order = round % 2 === 0 ? (['detector', 'anchor'] as const) : (['anchor', 'detector'] as const);
      const measured: Record<string, number> = {};
      for (const side of order) measured[side] = await timePerPhoto(d.photos, side === 'detector' ? (b) => analysePhoto(b) : decodeOnly);
      times[i].detector.push(measured.detector);
      times[i].anchor.push(measured.anchor);
      times[i].ratio.push(measured.detector / measured.anchor);
    }
    const again = await scored();
    if (again.matched !== quality.matched || again.found !== quality.found) throw new Error('the detector gave different findings across rounds');
    log(`rust: round ${round + 1}/${options.rounds} done`);
  }
  const rows: BenchResult['rows'] = [
    { benchmark: 'rust', metric: `precision at IoU >= 0.5 (${quality.matched}/${quality.found} findings)`, unit: '', summary: summarise([quality.precision]), target: `>= ${TARGET_PRECISION}`, met: quality.precision >= TARGET_PRECISION },
    { benchmark: 'rust', metric: `recall at IoU >= 0.5 (${quality.matched}/${quality.labelled} patches)`, unit: '', summary: summarise([quality.recall]), target: `>= ${TARGET_RECALL}`, met: quality.recall >= TARGET_RECALL },
  ];
  for (const [i, d] of datasets.entries()) {
    rows.push({ benchmark: 'rust', metric: `time per photo, ${d.name}`, unit: 'ms', summary: summarise(times[i].detector), ratio: summarise(times[i].ratio), anchor: 'sharp decode + downscale alone' });
    rows.push({ benchmark: 'rust', metric: `anchor: sharp decode + downscale, ${d.name}`, unit: 'ms', summary: summarise(times[i].anchor) });
  }
  return { rows, memory: [], notes: [`rust: analysis size ${ANALYSIS_SIZE} px (longest side); one photo at a time in this process`] };
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const at = process.argv.indexOf('--rounds');
  const rounds = at > 0 ? Number(process.argv[at + 1]) : 3;
  const result = await runRustDetection({ rounds });
  console.log(`\n${renderTable(result.rows)}\n`);
  for (const note of result.notes) console.log(`- ${note}`);
  const [precision, recall] = result.rows;
  console.log(`precision ${fmt(precision.summary.median, 3)}, recall ${fmt(recall.summary.median, 3)}`);
}
