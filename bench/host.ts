// The bench host: the same system `src/main.ts serve` starts (startSystem(loadConfig(env), 'serve'):
// both HTTP services, the embedded S3 endpoint, the job queue), in its own process, plus an IPC
// channel that the benchmark runner uses for what a client cannot do cheaply:
//   - untimed setup: SQL (camera rows for the listing benchmark), tiny objects written straight
//     through the ObjectStore (the registration benchmark needs keys that exist);
//   - the image-analysis timer: InspectionPipeline.analyzeImages called in this process, the way
//     the job worker calls it, with its duration measured around that call only.
// Nothing here changes how the system serves HTTP.
import fs from 'node:fs';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { startSystem } from '../src/system.ts';
import { objectPaths } from '../src/infra/storage/key-layout.ts';

const config = loadConfig();
const system = await startSystem(config, 'serve');
const db = system.database.db;

type Message = { id: number; cmd: string; [k: string]: unknown };

const commands: Record<string, (m: Message) => Promise<unknown>> = {
  async sql(m) {
    const result = await db.executeQuery(CompiledQuery.raw(String(m.text), (m.params as unknown[]) ?? []));
    return { rows: result.rows, numAffectedRows: result.numAffectedRows === undefined ? undefined : Number(result.numAffectedRows) };
  },
  /**
   * Makes `count` objects of `size` bytes under `prefix`: the first through the ObjectStore, the
   * others as hard links to its data file and its metadata sidecar (same bytes, same inode, so the
   * store sees each one as a whole, consistent object). 100k PutObjects would take minutes.
   */
  async putObjects(m) {
    const count = Number(m.count);
    const bucket = String(m.bucket);
    const name = (i: number) => `${m.prefix}${String(i).padStart(6, '0')}.jpg`;
    const started = performance.now();
    const bucketDir = path.join(config.dataDir, 'objects', bucket);
    const body = Buffer.alloc(Number(m.size ?? 16), 0x61);
    let first = objectPaths(bucketDir, name(0));
    for (let i = 0; i < count; i++) {
      // A fresh source object every 60,000 links (ext4 allows 65,000 links per inode).
      if (i % 60_000 === 0) {
        await system.store.putObject(bucket, name(i), body);
        first = objectPaths(bucketDir, name(i));
        continue;
      }
      const p = objectPaths(bucketDir, name(i));
      if (p.dir !== first.dir) fs.mkdirSync(p.dir, { recursive: true });
      fs.linkSync(first.data, p.data);
      fs.linkSync(first.meta, p.meta);
    }
    if (!(await system.store.headObject(bucket, name(count - 1)))) throw new Error('the linked objects are not visible');
    return { ms: performance.now() - started };
  },
  /** Resets the inspection to 20 Waiting without cameras (untimed), then times analyzeImages. */
  async analyze(m) {
    const inspectionId = Number(m.inspectionId);
    await db.executeQuery(CompiledQuery.raw('delete from inspection.cameras where inspection_id = $1', [inspectionId]));
    await db.executeQuery(CompiledQuery.raw('update inspection.inspections set status = 20, images_valid = null, images_invalid = null where id = $1', [inspectionId]));
    const started = performance.now();
    await system.inspection.pipeline.analyzeImages(inspectionId);
    const ms = performance.now() - started;
    const state = async () =>
      (
        await db.executeQuery<{ status: number; cameras: number }>(
          CompiledQuery.raw('select status, (select count(*) from inspection.cameras c where c.inspection_id = i.id)::int as cameras from inspection.inspections i where id = $1', [inspectionId]),
        )
      ).rows[0];
    const after = await state();
    // Untimed: let the jobs the analysis queued (status 4, the cloud project; then 5, clipping)
    // finish, so that none of them runs in the background of the next measurement.
    const deadline = Date.now() + 120_000;
    while ([4, 5, 25].includes((await state()).status) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    return { ms, ...after };
  },
};

process.on('message', (message: Message) => {
  const command = commands[message.cmd];
  if (!command) {
    process.send!({ id: message.id, ok: false, error: `unknown command ${message.cmd}` });
    return;
  }
  command(message).then(
    (result) => process.send!({ id: message.id, ok: true, result }),
    (err: Error) => process.send!({ id: message.id, ok: false, error: err.stack ?? String(err) }),
  );
});

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(1), 15_000).unref(); // never outlive the runner
  await system.stop();
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
process.on('disconnect', () => void shutdown());

console.log(`Inspection service: ${system.urls.inspection}/v1/  (docs: ${system.urls.inspection}/docs)`);
console.log(`Cloud service:      ${system.urls.cloud}/project/api/v3/  (docs: ${system.urls.cloud}/docs)`);
console.log(`S3 endpoint:        ${system.urls.storage}`);
