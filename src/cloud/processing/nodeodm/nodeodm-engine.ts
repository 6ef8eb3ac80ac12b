// The `nodeodm` engine: processing on a NodeODM node (or a ClusterODM in front of many), over its
// HTTP API (shared/reference/nodeodm-api.md), for datasets too large for the local colmap engine.
//
//   GET /info, GET /options              the node answers; options it does not know are dropped
//   POST /task/new/init (set-uuid)       the task, with the ODM options of the pipeline (odm-options.ts)
//   POST /task/new/upload/{uuid}         the images, a few per request, each request retried
//                                        (UPLOAD_RETRIES times with back-off) when it fails
//   POST /task/new/commit/{uuid}         queued
//   GET /task/{uuid}/info, polled        progress mirrored into the project's (10-90 %)
//   GET /task/{uuid}/download/all.zip    when COMPLETED, unpacked into object storage (90-100 %)
//   POST /task/remove                    the node's copy is removed once ours is stored
// A cancel (input.signal) or the time limit cancels and removes the task on the node.
//
// all.zip entries -> outputs: odm_orthophoto/odm_orthophoto.tif -> `ortho_rgb`; odm_dem/dsm.tif ->
// `dsm` (odm_dem/dtm.tif -> `dtm` when the options made one); odm_georeferencing/
// odm_georeferenced_model.laz -> `point_cloud` (and a PLY copy, `point_cloud_ply`, for the 3D
// view: point-cloud-ply.ts); odm_texturing/* zipped -> `3d_mesh_obj_zip`;
// odm_report/shots.geojson + cameras.json -> `calibrated_camera_parameters_json` (odm-results.ts);
// a JSON `quality_report` (images calibrated, ODM's odm_report/stats.json, the coordinate system)
// and odm_report/report.pdf -> `quality_report_pdf`; task_output.txt -> `processing_log`. What
// all.zip lacks is listed `not available`.
//
// Failures: a FAILED task -> 10003 when ODM ran out of memory ("Not enough memory", exit 137),
// else 10410 with ODM's message and last log lines; a task canceled on the node -> 10410; the node
// unreachable or refusing -> 10001; more images than the node accepts (`maxImages`) -> 10003;
// the time limit -> 10002.
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { StorageError } from '../../../infra/storage/object-store.ts';
import { mapConcurrently } from '../../../shared/concurrency.ts';
import { EngineError, type EngineInput, type EngineResult, type OutputType, type PhotogrammetryEngine, type ProducedOutput } from '../engine.ts';
import { NodeOdmClient, NodeOdmRefusal, NodeOdmTransportError, TASK_STATUS, type NodeOdmInfo, type NodeOdmTaskInfo } from './nodeodm-client.ts';
import { acceptedOptions, NODEODM_CAPABILITIES, odmOptionsFor } from './odm-options.ts';
import { calibratedFromOdm, parseShots } from './odm-results.ts';
import { writePlyCopy } from './point-cloud-ply.ts';

export interface NodeOdmEngineOptions {
  url: string;
  token?: string;
  workDir: string;
  /** 0: no limit. */
  timeLimitSeconds?: number;
  pollIntervalMs?: number;
  /** Extra ODM options (NODEODM_OPTIONS), applied over the pipeline's. */
  extraOptions?: Record<string, unknown>;
  /** Images per upload request. */
  uploadBatchSize?: number;
  /** Attempts of each upload request (and of init and commit) before giving up. */
  uploadRetries?: number;
  /** First back-off between attempts, doubled each time. */
  retryDelayMs?: number;
}

const UPLOAD_RETRIES = 5;
const POLL_FAILURES_TOLERATED = 10;

/** Archive entries that are outputs, with their output type and file name in storage. */
const SINGLE_FILES: { entry: string; outputType: OutputType; name: string; contentType: string }[] = [
  { entry: 'odm_orthophoto/odm_orthophoto.tif', outputType: 'ortho_rgb', name: 'ortho_rgb.tif', contentType: 'image/tiff' },
  { entry: 'odm_dem/dsm.tif', outputType: 'dsm', name: 'dsm.tif', contentType: 'image/tiff' },
  { entry: 'odm_dem/dtm.tif', outputType: 'dtm', name: 'dtm.tif', contentType: 'image/tiff' },
  { entry: 'odm_georeferencing/odm_georeferenced_model.laz', outputType: 'point_cloud', name: 'point_cloud.laz', contentType: 'application/vnd.laszip' },
  { entry: 'task_output.txt', outputType: 'processing_log', name: 'processing_log.txt', contentType: 'text/plain; charset=utf-8' },
];
const KEPT_FOR_CONVERSION = ['odm_report/shots.geojson', 'cameras.json', 'odm_report/stats.json'];

export class NodeOdmEngine implements PhotogrammetryEngine {
  readonly name = 'nodeodm';
  readonly capabilities = NODEODM_CAPABILITIES;
  private readonly client: NodeOdmClient;

  constructor(private readonly options: NodeOdmEngineOptions) {
    this.client = new NodeOdmClient(options.url, options.token);
  }

  async run(input: EngineInput): Promise<EngineResult> {
    const limitSeconds = this.options.timeLimitSeconds ?? 0;
    const timeLimit = new AbortController();
    const timer = limitSeconds > 0 ? setTimeout(() => timeLimit.abort(new Error('time limit')), limitSeconds * 1000) : undefined;
    const signal = AbortSignal.any([input.signal, timeLimit.signal]);
    await fsp.mkdir(this.options.workDir, { recursive: true });
    const work = await fsp.mkdtemp(path.join(this.options.workDir, `nodeodm-${input.projectUuid}-`));
    const uuid = crypto.randomUUID();
    let created = false;
    let percent = 0;
    const progress = async (value: number, text: string) => {
      const next = Math.max(percent, Math.min(100, Math.floor(value)));
      if (next === percent && value !== 0) return;
      percent = next;
      await input.reportProgress(next, text);
    };
    try {
      await progress(0, 'Connecting to the processing node');
      const info = await this.call('reach the processing node', () => this.client.info(signal), signal);
      if (typeof info.maxImages === 'number' && info.maxImages > 0 && input.images.length > info.maxImages) {
        throw new EngineError(10003, `Processing exceeded available resources: the processing node accepts at most ${info.maxImages} images, the project has ${input.images.length}.`);
      }
      const known = new Set((await this.call('read the node\'s options', () => this.client.options(signal), signal)).map((o) => o.name));
      const { accepted, dropped } = acceptedOptions(odmOptionsFor(input.pipeline, input.tags, this.options.extraOptions, input.requestedOutputs ?? null), known);

      // Images: downloaded from storage, then uploaded in batches.
      const names = input.images.map((image, i) => `${String(i + 1).padStart(5, '0')}_${path.posix.basename(image.key).replace(/[^A-Za-z0-9._-]/g, '_').slice(-80)}`);
      const keyOf = new Map(names.map((name, i) => [name, input.images[i].key]));
      const imageDir = path.join(work, 'images');
      await fsp.mkdir(imageDir);
      await mapConcurrently(input.images, 4, async (image, i) => {
        try {
          const { body } = await input.store.getObject(input.bucket, image.key);
          await pipeline(body, fs.createWriteStream(path.join(imageDir, names[i])), { signal });
        } catch (err) {
          if (err instanceof StorageError) throw new EngineError(10601, `Input data not valid: ${image.key} is no longer readable from storage (${err.code}).`);
          throw err;
        }
      });
      await progress(2, 'Creating the processing task');
      await this.withRetries('create the task', signal, async (attempt) => {
        try {
          await this.client.init(uuid, { name: `${input.projectUuid}`, options: accepted, skipPostProcessing: true }, signal);
        } catch (err) {
          // A retried init whose first attempt did reach the node: the UUID is taken, by us.
          if (attempt > 1 && err instanceof NodeOdmRefusal && /uuid/i.test(err.message)) return;
          throw err;
        }
      });
      created = true;
      const batch = this.options.uploadBatchSize ?? 10;
      for (let start = 0; start < names.length; start += batch) {
        const files = names.slice(start, start + batch).map((name) => ({ name, path: path.join(imageDir, name) }));
        await this.withRetries(`upload images ${start + 1}-${start + files.length}`, signal, () => this.client.upload(uuid, files, signal));
        await progress(2 + (8 * (start + files.length)) / names.length, `Uploading images to the processing node (${start + files.length}/${names.length})`);
      }
      await this.withRetries('start the task', signal, () => this.client.commit(uuid, signal));

      // Polling.
      const final = await this.poll(uuid, signal, progress);
      if (final.status.code === TASK_STATUS.FAILED) throw await this.failure(uuid, final);
      if (final.status.code === TASK_STATUS.CANCELED) throw new EngineError(10410, 'Processing failed: the task was canceled on the processing node.');

      // Results.
      await progress(90, 'Downloading results');
      const zipPath = path.join(work, 'all.zip');
      await this.withRetries('download all.zip', signal, () => this.client.downloadAll(uuid, zipPath, signal));
      await progress(94, 'Storing results');
      const result = await this.store(input, zipPath, { keyOf, names, info, accepted, dropped });
      await this.client.command('remove', uuid).catch(() => undefined);
      await progress(100, 'Done');
      return result;
    } catch (err) {
      if (created && signal.aborted) {
        await this.client.command('cancel', uuid).catch(() => undefined);
        await this.client.command('remove', uuid).catch(() => undefined);
      }
      if (timeLimit.signal.aborted && !input.signal.aborted) throw new EngineError(10002, `Processing exceeded the allotted time of ${limitSeconds} s (ENGINE_TIME_LIMIT_SECONDS).`);
      if (input.signal.aborted) throw input.signal.reason ?? err;
      if (err instanceof EngineError) throw err;
      if (err instanceof NodeOdmTransportError || err instanceof NodeOdmRefusal) throw new EngineError(10001, `The processing node failed: ${err.message}`);
      throw err;
    } finally {
      if (timer) clearTimeout(timer);
      await fsp.rm(work, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private async poll(uuid: string, signal: AbortSignal, progress: (value: number, text: string) => Promise<void>): Promise<NodeOdmTaskInfo> {
    let failures = 0;
    for (;;) {
      signal.throwIfAborted();
      let info: NodeOdmTaskInfo;
      try {
        info = await this.client.taskInfo(uuid, signal);
        failures = 0;
      } catch (err) {
        if (signal.aborted || !(err instanceof NodeOdmTransportError) || ++failures > POLL_FAILURES_TOLERATED) throw err;
        await sleep(this.options.pollIntervalMs ?? 5000, signal);
        continue;
      }
      const code = info.status?.code;
      if (code === TASK_STATUS.FAILED || code === TASK_STATUS.CANCELED || code === TASK_STATUS.COMPLETED) return info;
      const node = Math.max(0, Math.min(100, Number(info.progress) || 0));
      await progress(10 + node * 0.8, code === TASK_STATUS.QUEUED ? 'Queued on the processing node' : `Processing on the node (${Math.round(node)} %)`);
      await sleep(this.options.pollIntervalMs ?? 5000, signal);
    }
  }

  /** The EngineError of a FAILED task, with ODM's message and its last log lines. */
  private async failure(uuid: string, info: NodeOdmTaskInfo): Promise<EngineError> {
    const message = info.status.errorMessage?.trim() ?? '';
    const lines = await this.client.output(uuid, -20).catch(() => [] as string[]);
    const last = [...lines].reverse().find((l) => /error|exception|failed|killed/i.test(l))?.trim();
    await this.client.command('remove', uuid).catch(() => undefined);
    const detail = [message, last].filter(Boolean).join('; ').slice(0, 400);
    if (/memory|\b137\b|killed/i.test(`${message} ${last ?? ''}`)) {
      return new EngineError(10003, `Processing exceeded available resources on the processing node${detail ? `: ${detail}` : ''}.`);
    }
    return new EngineError(10410, `Processing failed on the processing node${detail ? `: ${detail}` : ' (no message)'}. Check image quality and overlap.`);
  }

  /** A call to the node that must succeed; transport failures are retried. */
  private call<T>(what: string, fn: () => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.withRetries(what, signal, fn);
  }

  private async withRetries<T>(what: string, signal: AbortSignal, fn: (attempt: number) => Promise<T>): Promise<T> {
    const attempts = this.options.uploadRetries ?? UPLOAD_RETRIES;
    let delay = this.options.retryDelayMs ?? 500;
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn(attempt);
      } catch (err) {
        if (signal.aborted) throw err;
        // A refusal of an upload may be transient too (NodeODM answers {success: false} when a
        // request is cut); a refusal of anything else is final.
        const retryable = err instanceof NodeOdmTransportError || (err instanceof NodeOdmRefusal && what.startsWith('upload'));
        if (!retryable || attempt >= attempts) {
          if (err instanceof NodeOdmTransportError || err instanceof NodeOdmRefusal) throw new EngineError(10001, `The processing node failed to ${what}: ${err.message}`);
          throw err;
        }
        await sleep(delay, signal);
        delay *= 2;
      }
    }
  }

  /** Unpacks all.zip into object storage and builds the outputs. */
  private async store(
    input: EngineInput,
    zipPath: string,
    run: { keyOf: Map<string, string>; names: string[]; info: NodeOdmInfo; accepted: { name: string; value: unknown }[]; dropped: string[] },
  ): Promise<EngineResult> {
    const prefix = input.outputPrefix;
    const outputs: ProducedOutput[] = [];
    const kept = new Map<string, Buffer>();
    const mesh = new yazl.ZipFile();
    let meshFiles = 0;
    const meshKey = `${prefix}3d_mesh_obj.zip`;
    const meshUpload = input.store.putObject(input.bucket, meshKey, mesh.outputStream.pipe(new PassThrough()), { contentType: 'application/zip' });
    meshUpload.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
    let reportPdfKey: string | null = null;

    await forEachEntry(zipPath, async (name, open) => {
      const single = SINGLE_FILES.find((f) => f.entry === name);
      if (single) {
        const key = `${prefix}${single.name}`;
        await input.store.putObject(input.bucket, key, await open(), { contentType: single.contentType });
        outputs.push({ outputType: single.outputType, key });
      } else if (name.startsWith('odm_texturing/') && !name.endsWith('/')) {
        mesh.addBuffer(await readAll(await open()), name.slice('odm_texturing/'.length));
        meshFiles++;
      } else if (name === 'odm_report/report.pdf') {
        reportPdfKey = `${prefix}odm_report.pdf`;
        await input.store.putObject(input.bucket, reportPdfKey, await open(), { contentType: 'application/pdf' });
        outputs.push({ outputType: 'quality_report_pdf', key: reportPdfKey });
      } else if (KEPT_FOR_CONVERSION.includes(name)) {
        kept.set(name, await readAll(await open()));
      }
    });
    mesh.end();
    await meshUpload;
    if (meshFiles > 0) outputs.push({ outputType: '3d_mesh_obj_zip', key: meshKey });
    else await input.store.deleteObject(input.bucket, meshKey);

    const json = (name: string): unknown => {
      try {
        return kept.has(name) ? JSON.parse(kept.get(name)!.toString('utf8')) : null;
      } catch {
        return null;
      }
    };
    const shots = parseShots(json('odm_report/shots.geojson'));
    let calibratedInfo: { epsg: number | null; offset: number[] } | null = null;
    if (shots.length) {
      const { epsg, offset, document } = calibratedFromOdm({
        shots,
        cameras: (json('cameras.json') ?? {}) as Record<string, never>,
        keyOf: (f) => run.keyOf.get(f),
        imagesTotal: input.images.length,
        allNames: run.names.map((name) => ({ name, key: run.keyOf.get(name)! })),
      });
      calibratedInfo = { epsg, offset };
      const key = `${prefix}calibrated_camera_parameters.json`;
      await input.store.putObject(input.bucket, key, Buffer.from(JSON.stringify({ ...document, pipeline: input.pipeline, tags: input.tags, control_points: input.controlPoints }, null, 2)), { contentType: 'application/json' });
      outputs.push({ outputType: 'calibrated_camera_parameters_json', key });
    }

    const report = {
      engine: this.name,
      node: { url: new URL(this.options.url).origin, version: run.info.version ?? null, engine: run.info.engine ?? null, engine_version: run.info.engineVersion ?? null },
      images: { total: input.images.length, registered: shots.length, ratio: shots.length / input.images.length },
      odm_options: run.accepted,
      odm_options_not_supported_by_node: run.dropped,
      coordinate_system_epsg: calibratedInfo?.epsg ?? null,
      offset_3d_xyz: calibratedInfo?.offset ?? null,
      output_coordinate_system_note:
        input.outputCrs.horizontal_epsg !== null && calibratedInfo?.epsg && input.outputCrs.horizontal_epsg !== calibratedInfo.epsg
          ? `ODM wrote its outputs in EPSG:${calibratedInfo.epsg}; the project's output system (${input.outputCrs.name}) was not applied by this engine.`
          : null,
      odm_stats: json('odm_report/stats.json'),
      report_pdf: reportPdfKey,
    };
    const reportKey = `${prefix}quality_report.json`;
    await input.store.putObject(input.bucket, reportKey, Buffer.from(JSON.stringify(report, null, 2)), { contentType: 'application/json' });
    outputs.push({ outputType: 'quality_report', key: reportKey });

    // The cloud as PLY too, for the 3D view (point-cloud-ply.ts).
    const cloudOutput = outputs.find((o) => o.outputType === 'point_cloud');
    const plyProblem = cloudOutput ? await writePlyCopy(input.store, input.bucket, cloudOutput.key, `${prefix}point_cloud.ply`, calibratedInfo?.epsg ? `EPSG:${calibratedInfo.epsg}` : input.outputCrs.name) : null;
    if (cloudOutput && !plyProblem) outputs.push({ outputType: 'point_cloud_ply', key: `${prefix}point_cloud.ply` });

    const produced = new Set(outputs.map((o) => o.outputType));
    const expected: OutputType[] = ['point_cloud', '3d_mesh_obj_zip', 'dsm', 'ortho_rgb', 'calibrated_camera_parameters_json'];
    return {
      outputs,
      notAvailable: [
        ...expected.filter((t) => !produced.has(t)).map((outputType) => ({ outputType, reason: 'The processing node did not produce it (see the processing log and the pipeline\'s ODM options).' })),
        ...(plyProblem ? [{ outputType: 'point_cloud_ply' as const, reason: plyProblem }] : []),
      ],
    };
  }
}

/** Calls `fn` for each file entry of a ZIP, one at a time, with a function opening its data. */
function forEachEntry(zipPath: string, fn: (name: string, open: () => Promise<Readable>) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.open(zipPath, { lazyEntries: true, autoClose: true }, (err, zip) => {
      if (err || !zip) return reject(new EngineError(10410, `Processing failed: the node's all.zip is not a readable ZIP (${err?.message ?? 'empty'}).`));
      zip.on('error', (e: Error) => reject(new EngineError(10410, `Processing failed: the node's all.zip is corrupt (${e.message}).`)));
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        const open = () =>
          new Promise<Readable>((res, rej) => zip.openReadStream(entry, (e, stream) => (e || !stream ? rej(e ?? new Error('no stream')) : res(stream))));
        fn(entry.fileName, open).then(
          () => zip.readEntry(),
          (e) => {
            zip.close();
            reject(e);
          },
        );
      });
      zip.readEntry();
    });
  });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
