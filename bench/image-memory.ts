// Image memory benchmark (issue 27, finding 8): the server's peak RSS while it makes the thumbnail
// preview of a photo padded after its JPEG data, against the same preview of an unpadded photo.
// The server under test runs as `npm start` does (dist/, its node options and MALLOC_MMAP_THRESHOLD_;
// PGlite, ENGINE=exif), a fresh one for each side of each round (memory a side leaves behind would
// count in the next side's peak). It processes an inspection of three lund photos, of which 01.jpg
// is overwritten after registration (as a client holding the inspection's storage credentials
// can), then the peak (VmHWM, reset before the request, Linux) while `GET …/photos/{id}/preview/
// ?size=thumb` of 01.jpg builds:
// - anchor: 01.jpg as uploaded (237 KB): what making a thumbnail costs the server;
// - 01.jpg + 300 MB of zeros (the review's file): refused (422, over IMAGE_MAX_BYTES) without being
//   read; before: read whole, 1.2 GB;
// - 01.jpg + 90 MiB (under the default IMAGE_MAX_BYTES, so it is previewed): from its own bytes,
//   the zeros not read (shared/images/jpeg-end.ts).
//
//   node --import tsx bench/image-memory.ts [--rounds N]     (standalone)
//   npm run bench -- --only image-memory                     (in the table of bench/run.ts)
import fs from 'node:fs';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { s3ClientFor } from '../src/sdk/inspection-client.ts';
import { buildServer } from '../scripts/build.ts';
import type { BenchOptions, BenchResult } from './lib/context.ts';
import { ROOT, resetPeak, startServer, type Server } from './lib/processes.ts';
import { loginDemo, newInspection, type BenchAccount } from './lib/account.ts';
import { alternate, fmt, log, renderTable, summarise } from './lib/stats.ts';

const LUND = path.join(ROOT, 'test/fixtures/lund/images');
const MB = 1000 ** 2;
const MIB = 1024 ** 2;
/** Peak RSS allowed, as a multiple of the anchor's: the padding costs next to nothing. */
const TARGET_RATIO = 1.25;

interface Sample {
  peakMb: number;
  status: number;
}

/** The peak RSS of the server while it answers one preview request. */
async function previewPeak(server: Server, account: BenchAccount, inspectionId: number, photoId: number): Promise<Sample> {
  if (!resetPeak(server.pid)) throw new Error('cannot reset VmHWM (/proc/<pid>/clear_refs): Linux only');
  const response = await fetch(`${server.urls.inspection}/v1/inspections/${inspectionId}/photos/${photoId}/preview/?size=thumb`, { headers: account.headers });
  await response.arrayBuffer();
  return { peakMb: server.memory().hwmMb, status: response.status };
}

/** A processed inspection of 01–03.jpg, 01 followed by `zeros` bytes after registration; returns its id and 01's photo id. */
async function paddedInspection(account: BenchAccount, zeros: number): Promise<{ id: number; photoId: number }> {
  const { client } = account;
  const inspection = await newInspection(account, 'Image memory');
  const credentials = await client.storageCredentials(inspection.id);
  const names = ['01.jpg', '02.jpg', '03.jpg'];
  const keys = await client.upload(credentials, names.map((name) => ({ name, body: fs.readFileSync(path.join(LUND, name)) })));
  await client.register(inspection.id, keys);
  const s3 = s3ClientFor(credentials);
  try {
    if (zeros > 0) {
      const body = Buffer.concat([fs.readFileSync(path.join(LUND, '01.jpg')), Buffer.alloc(zeros)]);
      await s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: `${credentials.key}01.jpg`, Body: body }));
    }
  } finally {
    s3.destroy();
  }
  await client.process(inspection.id);
  const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 300_000 });
  if (done.status !== 7) throw new Error(`inspection ${inspection.id} ended in status ${done.status}`);
  const cameras: { filename: string; photo_id: number }[] = await client.cameras(inspection.id);
  return { id: inspection.id, photoId: cameras.find((c) => c.filename === '01.jpg')!.photo_id };
}

const PADDING = { anchor: 0, padded300: 300 * MB, padded90: 90 * MIB } as const;
type Side = keyof typeof PADDING;

/** One side on a server of its own: started, the inspection processed, one preview measured, stopped. */
async function measure(side: Side): Promise<Sample & { idleMb: number }> {
  const server = await startServer({ name: `image-memory-${side}`, database: 'pglite', env: { ENGINE: 'exif' } });
  try {
    const account = await loginDemo(server);
    const inspection = await paddedInspection(account, PADDING[side]);
    const idleMb = server.memory().rssMb;
    return { ...(await previewPeak(server, account, inspection.id, inspection.photoId)), idleMb };
  } finally {
    await server.dispose();
  }
}

export async function runImageMemory(options: Pick<BenchOptions, 'rounds'>): Promise<BenchResult> {
  buildServer();
  const sides = { anchor: [] as Sample[], padded300: [] as Sample[], padded90: [] as Sample[] };
  const idle: number[] = [];
  await alternate(options.rounds, ['anchor', 'padded300', 'padded90'] as const, async (side, round) => {
    const sample = await measure(side);
    sides[side].push(sample);
    idle.push(sample.idleMb);
    log(`image-memory: round ${round + 1}/${options.rounds}, ${side}: peak ${fmt(sample.peakMb, 0)} MB (answer ${sample.status}; ${fmt(sample.idleMb, 0)} MB before)`);
  });
  const peaks = (side: keyof typeof sides) => summarise(sides[side].map((s) => s.peakMb));
  const ratios = (side: keyof typeof sides) => summarise(sides[side].map((s, i) => s.peakMb / sides.anchor[i].peakMb));
  const statuses = (side: keyof typeof sides) => [...new Set(sides[side].map((s) => s.status))].join('/');
  const line = (side: 'padded300' | 'padded90', what: string) => {
    const ratio = ratios(side);
    return { benchmark: 'image-memory', metric: `peak RSS previewing ${what} (answer ${statuses(side)})`, unit: 'MB', summary: peaks(side), ratio, anchor: 'the unpadded photo', target: `<= ${TARGET_RATIO}× anchor`, met: ratio.median <= TARGET_RATIO };
  };
  return {
    rows: [
      line('padded300', 'a JPEG + 300 MB of zeros'),
      line('padded90', 'a JPEG + 90 MiB of zeros'),
      { benchmark: 'image-memory', metric: `anchor: peak RSS previewing the unpadded JPEG (answer ${statuses('anchor')})`, unit: 'MB', summary: peaks('anchor') },
    ],
    memory: [],
    notes: [`image-memory: the thumbnail (320 px) of a lund photo (1024 x 768); server RSS before the request ${fmt(summarise(idle).median, 0)} MB (median; after start, login and processing); VmHWM reset before it`],
  };
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const at = process.argv.indexOf('--rounds');
  const result = await runImageMemory({ rounds: at > 0 ? Number(process.argv[at + 1]) : 3 });
  console.log(`\n${renderTable(result.rows)}\n`);
  for (const note of result.notes) console.log(`- ${note}`);
}
