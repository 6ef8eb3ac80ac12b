// Upload benchmark: N × 4 MiB PutObject at concurrency 4 through @aws-sdk/client-s3 into
//   - the project's embedded S3 endpoint, with the temporary credentials of s3_credentials (SigV4
//     signature, x-amz-content-sha256 payload hash and the SDK's CRC32 all verified), and
//   - three anchors in their own processes: a node:http server streaming each body to disk while
//     computing its SHA-256 (checked against the client's) and its MD5 ETag (the verifying sink,
//     the ceiling: the target), the same server without any hashing (the bare sink), and s3rver.
// The same pre-generated payloads, the same keys below the same prefix, the same S3Client options
// and the same concurrency on every side; sides alternate round by round, each run starts after
// `sync` so that no side pays for another's dirty pages, and a warm-up batch is not measured.
// Then a 1 GiB multipart upload into a fresh server: its peak RSS (VmHWM) must stay under 250 MB.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { loginDemo, newInspection } from './lib/account.ts';
import { memoryRecord, rssSampler, type BenchOptions, type BenchResult } from './lib/context.ts';
import { resetPeak, spawnNode, startServer, syncDisks, type Child, type DatabaseKind } from './lib/processes.ts';
import { alternate, log, summarise } from './lib/stats.ts';

const CONCURRENCY = 4;
const WARMUP_OBJECTS = 8;
const PART_MIB = 16;

interface Side {
  name: string;
  child: Child;
  bucket: string;
  prefix: string;
  config: S3ClientConfig;
  /** Removes the objects of the previous run (not timed). */
  clean(): void;
}

/** The one S3Client configuration every side gets; only endpoint and credentials differ. */
function clientConfig(endpoint: string, credentials: S3ClientConfig['credentials']): S3ClientConfig {
  return { region: 'us-east-1', endpoint, forcePathStyle: true, credentials, maxAttempts: 1 };
}

async function putAll(side: Side, bodies: Buffer[], tag: string): Promise<number> {
  const s3 = new S3Client(side.config);
  try {
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < bodies.length) {
          const i = next++;
          await s3.send(new PutObjectCommand({ Bucket: side.bucket, Key: `${side.prefix}${tag}/img-${String(i).padStart(4, '0')}.jpg`, Body: bodies[i], ContentType: 'image/jpeg' }));
        }
      }),
    );
    return (performance.now() - started) / 1000;
  } finally {
    s3.destroy();
  }
}

export async function runUpload(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = { rows: [], memory: [], notes: [] };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oi-bench-upload-'));
  const disposers: (() => Promise<void>)[] = [];
  try {
    const size = options.uploadMiB * 1024 * 1024;
    // Distinct bodies (random bytes, then a random first 4 KiB per body), made once, in memory.
    log(`upload: generating ${options.uploadCount} payloads of ${options.uploadMiB} MiB`);
    const block = crypto.randomBytes(size);
    const bodies = Array.from({ length: options.uploadCount }, () => {
      const body = Buffer.from(block);
      crypto.randomFillSync(body, 0, 4096);
      return body;
    });
    const warmup = bodies.slice(0, WARMUP_OBJECTS);

    // The project, with storage credentials from the inspection API.
    const server = await startServer({ name: 'upload-server', database: 'pglite', cpuProfDir: options.profileDir });
    disposers.push(() => server.dispose());
    const account = await loginDemo(server);
    const inspection = await newInspection(account, 'Upload benchmark');
    const credentials = await account.client.storageCredentials(inspection.id);
    const objectsRoot = path.join(server.dataDir, 'objects', credentials.bucket);
    const sides: Side[] = [
      {
        name: 'project',
        child: server,
        bucket: credentials.bucket,
        prefix: credentials.key,
        config: clientConfig(credentials.endpoint_override, {
          accessKeyId: credentials.access_key,
          secretAccessKey: credentials.secret_key,
          sessionToken: credentials.session_token,
        }),
        clean: () => fs.rmSync(path.join(objectsRoot, credentials.key), { recursive: true, force: true }),
      },
    ];

    for (const [name, verify] of [
      ['verify', '1'],
      ['sink', '0'],
    ] as const) {
      const sinkDir = path.join(tmp, name);
      const sink = await spawnNode({ name: `upload-anchor-${name}`, args: ['bench/anchors/sink.ts'], env: { SINK_DIR: sinkDir, SINK_VERIFY: verify }, ready: (o) => /Listening: /.test(o) });
      disposers.push(() => sink.stop());
      sides.push({
        name,
        child: sink,
        bucket: credentials.bucket,
        prefix: credentials.key,
        config: clientConfig(/Listening: (\S+)/.exec(sink.output())![1], { accessKeyId: 'sink', secretAccessKey: 'sink' }),
        clean: () => {
          for (const f of fs.readdirSync(sinkDir)) fs.rmSync(path.join(sinkDir, f), { force: true });
        },
      });
    }

    let s3rver: Child | undefined;
    const s3rverDir = path.join(tmp, 's3rver');
    try {
      s3rver = await spawnNode({
        name: 'upload-anchor-s3rver',
        args: ['bench/anchors/s3rver.ts'],
        env: { S3RVER_DIR: s3rverDir, S3RVER_BUCKET: credentials.bucket },
        ready: (o) => /Listening: /.test(o),
      });
      disposers.push(() => s3rver!.stop());
      sides.push({
        name: 's3rver',
        child: s3rver,
        bucket: credentials.bucket,
        prefix: credentials.key,
        // s3rver's built-in account.
        config: clientConfig(/Listening: (\S+)/.exec(s3rver.output())![1], { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }),
        clean: () => fs.rmSync(path.join(s3rverDir, credentials.bucket, credentials.key), { recursive: true, force: true }),
      });
    } catch (err) {
      result.notes.push(`upload: s3rver could not start, compared with the bare sink only (${(err as Error).message.split('\n')[0]})`);
    }

    for (const side of sides) {
      result.memory.push(memoryRecord('upload', side.child, 'idle'));
      await putAll(side, warmup, 'warmup');
      side.clean();
    }
    const seconds = new Map<string, number[]>(sides.map((s) => [s.name, []]));
    const peaks = new Map<string, number>();
    await alternate(
      options.rounds,
      sides.map((s) => s.name),
      async (name, round) => {
        const side = sides.find((s) => s.name === name)!;
        side.clean();
        await syncDisks();
        const sampler = rssSampler(side.child);
        const s = await side.child.measured(() => putAll(side, bodies, `round-${round}`));
        peaks.set(name, Math.max(peaks.get(name) ?? 0, sampler.stop()));
        seconds.get(name)!.push(s);
        log(`upload: round ${round + 1} ${name}: ${((bodies.length * options.uploadMiB) / s).toFixed(0)} MiB/s (${s.toFixed(2)} s)`);
      },
    );
    for (const side of sides) side.clean();
    const mibps = (name: string) => seconds.get(name)!.map((s) => (bodies.length * options.uploadMiB) / s);
    const sinkRate = mibps('sink');
    const verifyRate = mibps('verify');
    const projectRate = mibps('project');
    const label = `${options.uploadCount} × ${options.uploadMiB} MiB PutObject, c=${CONCURRENCY}`;
    result.rows.push({ benchmark: 'upload', metric: `anchor: verifying sink (SHA-256 + MD5), ${label}`, unit: 'MiB/s', summary: summarise(verifyRate) });
    result.rows.push({ benchmark: 'upload', metric: `anchor: bare sink, ${label}`, unit: 'MiB/s', summary: summarise(sinkRate) });
    if (s3rver) result.rows.push({ benchmark: 'upload', metric: `anchor: s3rver, ${label}`, unit: 'MiB/s', summary: summarise(mibps('s3rver')) });
    const vsVerify = summarise(projectRate.map((v, i) => v / verifyRate[i]));
    result.rows.push({
      benchmark: 'upload',
      metric: `project, ${label}`,
      unit: 'MiB/s',
      summary: summarise(projectRate),
      ratio: vsVerify,
      anchor: 'verifying sink',
      target: '≥ 0.9× verifying sink',
      met: vsVerify.median >= 0.9,
    });
    result.rows.push({
      benchmark: 'upload',
      metric: `project vs bare sink, ${label}`,
      unit: 'MiB/s',
      summary: summarise(projectRate),
      ratio: summarise(projectRate.map((v, i) => v / sinkRate[i])),
      anchor: 'bare sink',
    });
    if (s3rver) {
      const s3rverRate = mibps('s3rver');
      const vsS3rver = summarise(projectRate.map((v, i) => v / s3rverRate[i]));
      result.rows.push({
        benchmark: 'upload',
        metric: `project vs s3rver, ${label}`,
        unit: 'MiB/s',
        summary: summarise(projectRate),
        ratio: vsS3rver,
        anchor: 's3rver',
        target: '> 1× s3rver',
        met: vsS3rver.median > 1,
      });
    }
    for (const side of sides) result.memory.push(memoryRecord('upload', side.child, 'end', { sampledPeakMb: peaks.get(side.name) }));
    result.notes.push(
      `upload: ${options.uploadCount} distinct ${options.uploadMiB} MiB bodies (random bytes, in memory), the same S3Client options (region, path style, default checksums: SHA-256 payload hash + CRC32 header, maxAttempts 1) and concurrency ${CONCURRENCY} on every side; ${WARMUP_OBJECTS} warm-up PUTs per side not measured; \`sync\` before each run.`,
    );
    for (const d of disposers.splice(0).reverse()) await d();

    // The storage path is the same on both databases; the server's baseline memory is not.
    if (options.multipartMiB > 0) for (const database of options.databases) result.rows.push(...(await multipart(options, result, database)));
  } finally {
    for (const d of disposers.reverse()) await d().catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return result;
}

/** Opens a measured window now; the returned function closes it. */
function windowOf(child: Child): () => void {
  let close!: () => void;
  void child.measured(() => new Promise<void>((resolve) => (close = resolve)));
  return close;
}

/** A multipart upload of options.multipartMiB into a fresh server; VmHWM of that server. */
async function multipart(options: BenchOptions, result: BenchResult, database: DatabaseKind) {
  const server = await startServer({ name: `multipart-${database}`, database, cpuProfDir: options.profileDir });
  try {
    const account = await loginDemo(server);
    const inspection = await newInspection(account, 'Multipart benchmark');
    const c = await account.client.storageCredentials(inspection.id);
    const s3 = new S3Client(clientConfig(c.endpoint_override, { accessKeyId: c.access_key, secretAccessKey: c.secret_key, sessionToken: c.session_token }));
    const key = `${c.key}big/flight.mp4`;
    const idle = server.memory();
    result.memory.push(memoryRecord('multipart', server, 'idle'));
    const resetOk = resetPeak(server.pid);
    const sampler = rssSampler(server, 50);
    const partSize = PART_MIB * 1024 * 1024;
    const parts = Math.ceil((options.multipartMiB * 1024 * 1024) / partSize);
    // Part bodies are generated per part (a random block with the part number in front) so the
    // client does not hold the whole GiB either.
    const block = crypto.randomBytes(partSize);
    const started = performance.now();
    const stopWindow = windowOf(server);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: c.bucket, Key: key, ContentType: 'video/mp4' }));
    const etags: { PartNumber: number; ETag: string }[] = [];
    let next = 1;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next <= parts) {
          const n = next++;
          const body = Buffer.from(block);
          body.writeUInt32BE(n, 0);
          const r = await s3.send(new UploadPartCommand({ Bucket: c.bucket, Key: key, UploadId, PartNumber: n, Body: body }));
          etags.push({ PartNumber: n, ETag: r.ETag! });
        }
      }),
    );
    etags.sort((a, b) => a.PartNumber - b.PartNumber);
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: c.bucket, Key: key, UploadId, MultipartUpload: { Parts: etags } }));
    const seconds = (performance.now() - started) / 1000;
    stopWindow();
    const sampledPeak = sampler.stop();
    s3.destroy();
    const end = server.memory();
    result.memory.push(memoryRecord('multipart', server, 'end', { sampledPeakMb: sampledPeak }));
    // VmHWM covers the whole life of the process when it could not be reset; the sampler covers the upload.
    const peak = resetOk ? end.hwmMb : sampledPeak;
    log(`upload: multipart ${options.multipartMiB} MiB (${database}) in ${seconds.toFixed(1)} s; VmHWM ${end.hwmMb} MB (idle RSS ${idle.rssMb} MB, sampled peak ${sampledPeak} MB)`);
    result.notes.push(
      `multipart (${database}): ${parts} parts of ${PART_MIB} MiB at concurrency ${CONCURRENCY} into a fresh server; idle RSS ${idle.rssMb} MB, growth during the upload ${(peak - idle.rssMb).toFixed(1)} MB; ${resetOk ? 'VmHWM reset (clear_refs 5) just before the upload' : 'VmHWM could not be reset: the 50 ms RSS sampler is used'}; ${(options.multipartMiB / seconds).toFixed(0)} MiB/s, not compared with an anchor.`,
    );
    return [
      {
        benchmark: 'upload',
        metric: `${options.multipartMiB} MiB multipart on ${database}: server peak RSS`,
        unit: 'MB',
        summary: summarise([peak]),
        target: '< 250 MB',
        met: peak < 250,
        note: `idle ${idle.rssMb} MB`,
      },
      { benchmark: 'upload', metric: `${options.multipartMiB} MiB multipart on ${database}: peak − idle RSS`, unit: 'MB', summary: summarise([peak - idle.rssMb]) },
      { benchmark: 'upload', metric: `${options.multipartMiB} MiB multipart on ${database}: throughput (1 run)`, unit: 'MiB/s', summary: summarise([options.multipartMiB / seconds]) },
    ];
  } finally {
    await server.dispose();
  }
}
