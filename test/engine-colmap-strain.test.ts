// A strained model (model-strain.ts: a stretch of photos whose points fit much worse than the
// rest) or a folded one (a stretch of cameras far from their GPS positions) is mapped again after
// the pairs' geometric verification is run again, and the better model is kept. Pure: the strain
// and fold measures, the choice between two placed models. COLMAP's database: forgetVerification on a database with COLMAP's tables. The
// engine: a stand-in `colmap` (a Node script) whose database is real SQLite and whose models are
// placed where the GPS says, looking down as the gimbal says, so that a run goes to its outputs;
// with it also the misoriented-camera retry (three cameras of a first model turned level).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startTestSystem, tempDir, type TestSystem } from './helpers/test-system.ts';
import { DRONE_STRIP_GIMBAL, droneStripInput } from './helpers/engine-input.ts';
import { betterPlaced, ColmapEngine, type FurtherStage } from '../src/cloud/processing/colmap/colmap-engine.ts';
import { forgetVerification } from '../src/cloud/processing/colmap/colmap-database.ts';
import { dislocatedImages, imageReprojectionErrors, meanReprojectionError, strainedImages, STRAINED_MIN_IMAGES } from '../src/cloud/processing/colmap/model-strain.ts';
import type { ColmapModel } from '../src/cloud/processing/colmap/colmap-model.ts';
import { cameraToEnuQuaternion, conjugateQuaternion } from '../src/shared/geo/rotation.ts';

/** A model of `n` images, each observing two points of its own (ids 2i, 2i+1) with `errorOf(i)` pixels. */
function modelWith(n: number, errorOf: (image: number) => number): Pick<ColmapModel, 'images' | 'errors' | 'pointIds' | 'trackLengths'> {
  const images = Array.from({ length: n }, (_, i) => ({ id: i + 1, qvec: [1, 0, 0, 0] as [number, number, number, number], tvec: [0, 0, 0] as [number, number, number], cameraId: 1, name: `img${i}.jpg`, point3dIds: [2 * i, 2 * i + 1] }));
  const pointIds = Uint32Array.from({ length: 2 * n }, (_, p) => p);
  const errors = Float64Array.from({ length: 2 * n }, (_, p) => errorOf(p >> 1));
  return { images, pointIds, errors, trackLengths: new Uint32Array(2 * n).fill(1) };
}

describe('model strain (pure)', () => {
  it('a stretch of photos fitting over 1.5 times worse than the median photo: strained, worst first', () => {
    const bent = modelWith(29, (i) => (i >= 12 && i <= 18 ? 1.2 + i / 100 : 0.7));
    assert.deepEqual(strainedImages(bent), ['img18.jpg', 'img17.jpg', 'img16.jpg', 'img15.jpg', 'img14.jpg', 'img13.jpg', 'img12.jpg']);
    assert.equal(imageReprojectionErrors(bent).get('img0.jpg'), 0.7);
    // 22 photos at 0.7 and 7 at 1.32-1.38, every observation weighed alike.
    assert.ok(Math.abs(meanReprojectionError(bent)! - (22 * 0.7 + (1.32 + 1.38) * 3.5) / 29) < 1e-9);
  });

  it('fewer strained photos than STRAINED_MIN_IMAGES (or 10 %): one bad photo is not a bent model', () => {
    assert.equal(STRAINED_MIN_IMAGES, 3);
    assert.deepEqual(strainedImages(modelWith(29, (i) => (i === 5 || i === 6 ? 2 : 0.7))), []);
    assert.equal(strainedImages(modelWith(29, (i) => (i >= 5 && i <= 7 ? 2 : 0.7))).length, 3);
    // 40 photos: 10 % is 4.
    assert.deepEqual(strainedImages(modelWith(40, (i) => (i >= 5 && i <= 7 ? 2 : 0.7))), []);
    assert.equal(strainedImages(modelWith(40, (i) => (i >= 5 && i <= 8 ? 2 : 0.7))).length, 4);
    // Just below 1.5 times the median: not strained.
    assert.deepEqual(strainedImages(modelWith(29, (i) => (i < 5 ? 1.04 : 0.7))), []);
    assert.deepEqual(strainedImages(modelWith(0, () => 1)), []);
    assert.equal(meanReprojectionError(modelWith(0, () => 1)), null);
  });

  it('betterPlaced: fewer misoriented cameras first, then fewer dislocated ones, then the lower mean reprojection error', () => {
    const none: string[] = [];
    assert.equal(betterPlaced({ misoriented: none, dislocated: none, error: 0.9 }, { misoriented: ['a'], dislocated: none, error: 0.6 }), true);
    assert.equal(betterPlaced({ misoriented: ['a', 'b'], dislocated: none, error: 0.5 }, { misoriented: ['a'], dislocated: none, error: 0.9 }), false);
    assert.equal(betterPlaced({ misoriented: none, dislocated: none, error: 0.64 }, { misoriented: none, dislocated: none, error: 0.81 }), true);
    assert.equal(betterPlaced({ misoriented: none, dislocated: none, error: 0.81 }, { misoriented: none, dislocated: none, error: 0.81 }), false);
    // A fold outweighs pixels: the unfolded model is kept at a higher error, the folded one not taken at a lower.
    assert.equal(betterPlaced({ misoriented: none, dislocated: none, error: 0.76 }, { misoriented: none, dislocated: ['a', 'b', 'c'], error: 0.72 }), true);
    assert.equal(betterPlaced({ misoriented: none, dislocated: ['a', 'b', 'c'], error: 0.64 }, { misoriented: none, dislocated: none, error: 0.72 }), false);
    assert.equal(betterPlaced({ misoriented: none, dislocated: ['a', 'b', 'c'], error: 0.64 }, { misoriented: ['x'], dislocated: none, error: 0.72 }), true);
  });

  it('dislocatedImages: at least 3 cameras (and 10 %) beyond 30 m and 5 times the median camera from their GPS positions', () => {
    const metres = (count: number, at: (i: number) => number) => new Map(Array.from({ length: count }, (_, i) => [`p${i}`, at(i)] as [string, number]));
    // A fold (lund: the median camera 6.7 m away, the folded ones tens to hundreds of metres).
    assert.deepEqual(dislocatedImages(metres(29, (i) => (i >= 20 && i <= 23 ? 40 + 50 * i : 6.7))), ['p23', 'p22', 'p21', 'p20']);
    // Two cameras with a bad GPS fix are not a fold; nor are three in 40 photos (10 % is 4).
    assert.deepEqual(dislocatedImages(metres(29, (i) => (i < 2 ? 240 : 6))), []);
    assert.deepEqual(dislocatedImages(metres(40, (i) => (i < 3 ? 240 : 6))), []);
    assert.equal(dislocatedImages(metres(40, (i) => (i < 4 ? 240 : 6))).length, 4);
    // 30 m is the floor: a walk whose cameras all lie ~5 m away, three at 29 m, is not folded.
    assert.deepEqual(dislocatedImages(metres(29, (i) => (i < 3 ? 29 : 5))), []);
    // 5 times the median is the other: cameras a median 10 m off (a poor GPS), three at 45 m, neither.
    assert.deepEqual(dislocatedImages(metres(29, (i) => (i < 3 ? 45 : 10))), []);
    assert.equal(dislocatedImages(metres(29, (i) => (i < 3 ? 51 : 10))).length, 3);
    assert.deepEqual(dislocatedImages(new Map()), []);
  });
});

/** COLMAP's three tables forgetVerification reads (their other columns left out). */
const SCHEMA = `
  CREATE TABLE images (image_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
  CREATE TABLE matches (pair_id INTEGER PRIMARY KEY NOT NULL, rows INTEGER NOT NULL, cols INTEGER NOT NULL, data BLOB);
  CREATE TABLE two_view_geometries (pair_id INTEGER PRIMARY KEY NOT NULL, rows INTEGER NOT NULL, cols INTEGER NOT NULL, data BLOB, config INTEGER NOT NULL);`;

describe('forgetVerification (COLMAP database)', () => {
  it('deletes the two-view geometries of the matched pairs and lists those pairs by image name', () => {
    const dir = tempDir('oi-colmap-db-');
    try {
      const file = path.join(dir, 'database.db');
      const db = new DatabaseSync(file);
      db.exec(SCHEMA);
      for (const [id, name] of [[1, 'a.jpg'], [2, 'b.jpg'], [3, 'c.jpg'], [5_000_000, 'far.jpg'], [5_000_001, 'farther.jpg']] as const) db.prepare('INSERT INTO images VALUES (?, ?)').run(id, name);
      const pair = (a: number, b: number) => BigInt(a) * 2147483647n + BigInt(b);
      assert.ok(pair(5_000_000, 5_000_001) > 2n ** 53n);
      // a-b and a-c matched and verified; b-c matched with no matches (nothing to verify); far-farther:
      // a pair id past 2^53, read as a BigInt (image ids past 4.2 million are rare, not impossible).
      for (const [id, rows] of [[pair(1, 2), 40], [pair(1, 3), 25], [pair(2, 3), 0], [pair(5_000_000, 5_000_001), 30]] as const) {
        db.prepare('INSERT INTO matches VALUES (?, ?, 2, NULL)').run(id, rows);
        db.prepare('INSERT INTO two_view_geometries VALUES (?, ?, 2, NULL, ?)').run(id, rows, rows ? 2 : 0);
      }
      db.close();
      assert.deepEqual(forgetVerification(file), [['a.jpg', 'b.jpg'], ['a.jpg', 'c.jpg'], ['far.jpg', 'farther.jpg']]);
      const after = new DatabaseSync(file);
      const left = after.prepare('SELECT pair_id FROM two_view_geometries');
      left.setReadBigInts(true);
      assert.deepEqual(left.all().map((r) => r.pair_id), [pair(2, 3)], 'only the pair without matches keeps its geometry');
      assert.equal(after.prepare('SELECT count(*) AS n FROM matches').get()!.n, 4, 'the matches are kept');
      after.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

const COUNT = 12;
/** How many of the stand-in's first mapper models are strained, turned or folded. */
interface Mappings {
  strained?: number;
  turned?: number;
  folded?: number;
}

describe('colmap engine: a strained or folded model is mapped again after the verification is run again (stand-in colmap)', () => {
  let system: TestSystem;
  let scripts: string;

  before(async () => {
    system = await startTestSystem();
    scripts = tempDir('oi-strain-colmap-');
  });
  after(async () => {
    await system?.stop();
    fs.rmSync(scripts, { recursive: true, force: true });
  });

  /**
   * The stand-in: feature_extractor creates the database (COLMAP's tables, images from the list);
   * matches_importer matches a listed pair with no matches yet and verifies a pair with matches
   * and no two-view geometry (a "verification"); the mapper registers every image, its first
   * `strained` models strained: the points of the last four photos at 2 px, the others at
   * 0.5 px, then 0.4 px everywhere; model_aligner places the cameras at the reference positions,
   * looking down as the gimbal says, each seeing two points 40 m below; model_converter writes
   * the text model; the first `turned` models have their first three cameras looking north,
   * level, against the gimbal's nadir; the first `folded` ones their last four cameras (and their
   * points) 200 m east of their GPS positions. Every command is logged to calls.json.
   */
  function standIn(name: string, { strained = 0, turned = 0, folded = 0 }: Mappings): string {
    const file = path.join(scripts, name);
    const callsFile = path.join(scripts, `${name}.calls.json`);
    const worldToCamera = conjugateQuaternion(cameraToEnuQuaternion(DRONE_STRIP_GIMBAL));
    const levelWorldToCamera = conjugateQuaternion(cameraToEnuQuaternion({ yaw: 0, pitch: 0, roll: 0 }));
    fs.writeFileSync(
      file,
      `#!${process.execPath}
const fs = require('node:fs');
const path = require('node:path');
const { DatabaseSync } = require('node:sqlite');
const args = process.argv.slice(2);
if (args[0] === '-h') { console.log('COLMAP 3.8 -- stand-in'); process.exit(0); }
const opt = (n) => args[args.indexOf(n) + 1];
const calls = fs.existsSync(${JSON.stringify(callsFile)}) ? JSON.parse(fs.readFileSync(${JSON.stringify(callsFile)}, 'utf8')) : [];
const call = { command: args[0] };
calls.push(call);
const save = () => fs.writeFileSync(${JSON.stringify(callsFile)}, JSON.stringify(calls));
const pairId = (a, b) => BigInt(Math.min(a, b)) * 2147483647n + BigInt(Math.max(a, b));
if (args[0] === 'feature_extractor') {
  const db = new DatabaseSync(opt('--database_path'));
  db.exec(${JSON.stringify(SCHEMA)});
  for (const name of fs.readFileSync(opt('--image_list_path'), 'utf8').trim().split('\\n')) db.prepare('INSERT INTO images (name) VALUES (?)').run(name);
  db.close();
}
if (args[0] === 'matches_importer') {
  const db = new DatabaseSync(opt('--database_path'));
  const id = (name) => db.prepare('SELECT image_id FROM images WHERE name = ?').get(name).image_id;
  call.matched = 0;
  call.verified = 0;
  for (const line of fs.readFileSync(opt('--match_list_path'), 'utf8').trim().split('\\n')) {
    const [a, b] = line.split(' ').map(id);
    const pair = pairId(a, b);
    const matched = db.prepare('SELECT 1 FROM matches WHERE pair_id = ?').get(pair);
    const verified = db.prepare('SELECT 1 FROM two_view_geometries WHERE pair_id = ?').get(pair);
    if (matched && verified) continue;
    if (!matched) { db.prepare('INSERT INTO matches VALUES (?, 50, 2, NULL)').run(pair); call.matched++; } else call.verified++;
    db.prepare('INSERT INTO two_view_geometries VALUES (?, 50, 2, NULL, 2)').run(pair);
  }
  db.close();
  console.log('Matching block [1/1] in 0.1s');
}
if (args[0] === 'mapper') {
  const mappings = calls.filter((c) => c.command === 'mapper').length;
  const strained = mappings <= ${strained};
  const turned = mappings <= ${turned};
  const folded = mappings <= ${folded};
  const names = fs.readdirSync(opt('--image_path')).sort();
  const model = path.join(opt('--output_path'), '0');
  fs.mkdirSync(model, { recursive: true });
  // images.bin: the count, then per image 64 bytes (id, qvec, tvec, camera id), the name, NUL, 0 points.
  const parts = [Buffer.alloc(8)];
  parts[0].writeBigUInt64LE(BigInt(names.length));
  for (const n of names) parts.push(Buffer.alloc(64), Buffer.from(n + '\\0'), Buffer.alloc(8));
  fs.writeFileSync(path.join(model, 'images.bin'), Buffer.concat(parts));
  fs.writeFileSync(path.join(model, 'stand-in.json'), JSON.stringify({ names, strained, turned, folded }));
}
if (args[0] === 'model_aligner') {
  fs.mkdirSync(opt('--output_path'), { recursive: true });
  for (const f of ['images.bin', 'stand-in.json']) fs.copyFileSync(path.join(opt('--input_path'), f), path.join(opt('--output_path'), f));
  fs.copyFileSync(opt('--ref_images_path'), path.join(opt('--output_path'), 'references.txt'));
}
if (args[0] === 'model_converter') {
  const input = opt('--input_path');
  const { names, strained, turned, folded } = JSON.parse(fs.readFileSync(path.join(input, 'stand-in.json'), 'utf8'));
  const refs = new Map(fs.readFileSync(path.join(input, 'references.txt'), 'utf8').trim().split('\\n').map((l) => { const f = l.split(' '); return [f[0], f.slice(1).map(Number)]; }));
  const rotate = (q, v) => {
    const [w, x, y, z] = q;
    const t = [2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])];
    return [v[0] + w * t[0] + y * t[2] - z * t[1], v[1] + w * t[1] + z * t[0] - x * t[2], v[2] + w * t[2] + x * t[1] - y * t[0]];
  };
  const images = [];
  const points = [];
  names.forEach((name, i) => {
    const gps = refs.get(name);
    const c = folded && i >= names.length - 4 ? [gps[0] + 200, gps[1], gps[2]] : gps;
    // A turned model: its first three cameras look north, level, against their gimbal's nadir.
    const q = turned && i < 3 ? ${JSON.stringify(levelWorldToCamera)} : ${JSON.stringify(worldToCamera)};
    const t = rotate(q, c).map((v) => -v);
    const error = strained ? (i >= names.length - 4 ? 2 : 0.5) : 0.4;
    const own = [0, 1].map((k) => { const id = 2 * i + k + 1; points.push(id + ' ' + (c[0] + (k ? 3 : -3)) + ' ' + c[1] + ' ' + (c[2] - 40) + ' 120 120 120 ' + error + ' ' + (i + 1) + ' ' + k); return id; });
    images.push((i + 1) + ' ' + q.join(' ') + ' ' + t.join(' ') + ' 1 ' + name, '60 60 ' + own[0] + ' 100 60 ' + own[1]);
  });
  const out = opt('--output_path');
  fs.writeFileSync(path.join(out, 'cameras.txt'), '1 SIMPLE_RADIAL 160 120 100 80 60 0\\n');
  fs.writeFileSync(path.join(out, 'images.txt'), images.join('\\n') + '\\n');
  fs.writeFileSync(path.join(out, 'points3D.txt'), points.join('\\n') + '\\n');
}
save();
`,
      { mode: 0o755 },
    );
    return file;
  }

  async function text(key: string): Promise<string> {
    const { body } = await system.store.getObject('inspection-data', key);
    let out = '';
    for await (const chunk of body) out += chunk.toString();
    return out;
  }

  async function run(name: string, mappings: Mappings) {
    const bin = standIn(name, mappings);
    const result = await new ColmapEngine({ binary: bin, workDir: path.join(system.dataDir, 'work') }).run(await droneStripInput(system.store, 'colmap-strain', COUNT));
    const calls = JSON.parse(fs.readFileSync(path.join(scripts, `${name}.calls.json`), 'utf8')) as { command: string; matched?: number; verified?: number }[];
    const key = (type: string) => result.outputs.find((o) => o.outputType === type)!.key;
    const report = JSON.parse(await text(key('quality_report'))) as { mean_reprojection_error_px: number };
    return { calls, log: await text(key('processing_log')), report };
  }

  const mapping = (calls: { command: string }[]) => calls.map((c) => c.command).filter((c) => c === 'matches_importer' || c === 'mapper');

  it('a model that holds together: no verification again, one mapper run', async () => {
    const { calls, log, report } = await run('together', {});
    assert.deepEqual(mapping(calls), ['matches_importer', 'mapper']);
    assert.match(log, /model: mean reprojection error 0\.400 px\n/);
    assert.doesNotMatch(log, /strained|folded|run again/);
    assert.ok(Math.abs(report.mean_reprojection_error_px - 0.4) < 1e-9);
  });

  it('a strained model: every matched pair verified again (no pair matched again), the mapper again, the better model kept', async () => {
    const { calls, log, report } = await run('strained-once', { strained: 1 });
    assert.deepEqual(mapping(calls), ['matches_importer', 'mapper', 'matches_importer', 'mapper']);
    const [first, again] = calls.filter((c) => c.command === 'matches_importer');
    assert.ok(first.matched! > 0 && first.verified === 0);
    assert.equal(again.matched, 0, 'no pair matched again');
    assert.equal(again.verified, first.matched, 'every matched pair verified again');
    assert.match(log, /model: mean reprojection error 1\.000 px; strained \(points fitting over 1\.5 times worse than the median photo's\) in 4 photo\(s\): 00009_img08\.jpg/);
    assert.match(log, new RegExp(`geometric verification of the ${first.matched} matched pair\\(s\\) run again`));
    assert.match(log, /mapper attempt 2: 0 misoriented camera\(s\) against 0, 0 dislocated against 0, mean reprojection error 0\.400 against 1\.000 px: kept/);
    assert.ok(Math.abs(report.mean_reprojection_error_px - 0.4) < 1e-9, 'the report is the kept model\'s');
  });

  it('strained every time: MAPPER_ATTEMPTS - 1 more tries, the first model kept (no better one), the run still completes', async () => {
    const { calls, log, report } = await run('strained-always', { strained: 99 });
    assert.deepEqual(mapping(calls), ['matches_importer', 'mapper', 'matches_importer', 'mapper', 'matches_importer', 'mapper']);
    assert.equal((log.match(/: not kept/g) ?? []).length, 2);
    assert.ok(Math.abs(report.mean_reprojection_error_px - 1) < 1e-9);
  });

  it('misoriented cameras: another seed first (no verification again, no fallback yet), the model without them kept', async () => {
    const { calls, log } = await run('turned-once', { turned: 1 });
    assert.deepEqual(mapping(calls), ['matches_importer', 'mapper', 'mapper']);
    assert.match(log, /misoriented cameras \(on their side, or not seeing up where the other photos or their gimbal angles say\): 3: 00001_img00\.jpg 00002_img01\.jpg 00003_img02\.jpg/);
    assert.match(log, /mapper: another seed for the misoriented cameras before the fallback/);
    assert.match(log, /mapper attempt 2: 0 misoriented camera\(s\) against 3, 0 dislocated against 0, mean reprojection error 0\.400 against 0\.400 px: kept/);
    assert.doesNotMatch(log, /run again|matching fallback/);
  });

  it('a folded model (cameras 200 m from their GPS positions, points fitting well): verified again, mapped again, the unfolded model kept at an equal error', async () => {
    const { calls, log } = await run('folded-once', { folded: 1 });
    assert.deepEqual(mapping(calls), ['matches_importer', 'mapper', 'matches_importer', 'mapper']);
    assert.match(log, /folded model: 4 camera\(s\) far from their GPS positions: 000(09|10|11|12)_img\d\d\.jpg 200 m/);
    assert.match(log, /geometric verification of the \d+ matched pair\(s\) run again/);
    assert.match(log, /mapper attempt 2: 0 misoriented camera\(s\) against 0, 0 dislocated against 4, mean reprojection error 0\.400 against 0\.400 px: kept/);
    assert.match(log, /georegistration: robust fit, cameras a median [\d.]+ m from their GPS positions \(4 beyond 30 m, furthest 200\.0 m\)/);
    assert.match(log, /georegistration-2: robust fit, cameras a median 0\.00 m from their GPS positions \(0 beyond 30 m, furthest 0\.0 m\)/);
  });

  it('further stages (the dense stages to come) run after the sparse ones with their result, their outputs listed, their weight a share of the progress', async () => {
    const bin = standIn('further', {});
    const seen: { folder: boolean; registered: number; outputs: string[] }[] = [];
    const further: FurtherStage = {
      name: 'further-check',
      title: 'Checking the sparse result',
      weight: 100,
      async run(context, sparse) {
        seen.push({ folder: fs.statSync(sparse.placement.modelFolder).isDirectory(), registered: sparse.placement.placed.model.images.length, outputs: sparse.result.outputs.map((o) => o.outputType) });
        await context.progress(0.5, 'Checking halfway');
        const key = `${context.input.outputPrefix}further.txt`;
        await context.input.store.putObject(context.input.bucket, key, Buffer.from('made by a further stage'));
        return [{ outputType: 'dsm', key }];
      },
    };
    const input = await droneStripInput(system.store, 'colmap-strain', COUNT);
    const result = await new ColmapEngine({ binary: bin, workDir: path.join(system.dataDir, 'work'), furtherStages: [further] }).run(input);
    assert.deepEqual(seen, [{ folder: true, registered: COUNT, outputs: ['point_cloud', 'point_cloud_ply', 'calibrated_camera_parameters_json', 'quality_report', 'project_thumb'] }]);
    assert.deepEqual(result.outputs.map((o) => o.outputType).slice(-2), ['dsm', 'processing_log']);
    // The sparse stages weigh 100 as before, the further stage 100: the sparse ones end at 50 %, halfway through it is 75 %.
    assert.ok(input.progress.includes(46) && input.progress.includes(75) && !input.progress.some((p) => p > 50 && p < 75), input.progress.join(' '));
    const log = await text(result.outputs.find((o) => o.outputType === 'processing_log')!.key);
    assert.match(log, /\n== sparse-outputs: \d+\.\d s ==\n\n== further-check ==\n== further-check: \d+\.\d s ==\n\ndone in /);
    const transformer = JSON.parse(fs.readFileSync(path.join(scripts, 'further.calls.json'), 'utf8')).filter((c: { command: string }) => c.command === 'model_transformer');
    assert.equal(transformer.length, 1, 'the final model written once, by model_transformer');
  });

  it('dense stages: one that fails keeps the sparse results and says why; outputs not asked for run no dense stage', async () => {
    // The stand-in's image_undistorter writes nothing: the depth maps find no workspace and fail.
    const bin = standIn('dense-fails', {});
    const input = await droneStripInput(system.store, 'colmap-strain', COUNT);
    const result = await new ColmapEngine({ binary: bin, workDir: path.join(system.dataDir, 'work'), dense: { enabled: true, maxImageSize: 64 } }).run(input);
    assert.deepEqual(result.outputs.map((o) => o.outputType), ['point_cloud', 'point_cloud_ply', 'calibrated_camera_parameters_json', 'quality_report', 'project_thumb', 'processing_log']);
    assert.deepEqual(result.notAvailable.map((n) => n.outputType).sort(), ['3d_mesh_obj_zip', '3d_mesh_ply', 'dsm', 'dtm', 'ortho_rgb']);
    for (const n of result.notAvailable) assert.match(n.reason, /^The dense stage "depth-maps" failed \(.+\); the sparse results are kept\.$/, n.reason);
    const key = (type: string) => result.outputs.find((o) => o.outputType === type)!.key;
    const log = await text(key('processing_log'));
    assert.match(log, /\n== undistortion: \d+\.\d s ==\n\n== depth-maps ==\n/);
    assert.match(log, /dense stage depth-maps failed: .+; the sparse results are kept\n/);
    const report = JSON.parse(await text(key('quality_report')));
    assert.equal(report.dense.failures[0].stage, 'depth-maps');
    assert.equal(report.not_available.length, 5);
    assert.equal(input.progress.at(-1), 100);

    const none = await droneStripInput(system.store, 'colmap-strain', COUNT);
    none.requestedOutputs = { point_cloud: false, mesh: false, dsm: false, ortho: false };
    const sparseOnly = await new ColmapEngine({ binary: standIn('dense-none', {}), workDir: path.join(system.dataDir, 'work'), dense: { enabled: true } }).run(none);
    const calls = JSON.parse(fs.readFileSync(path.join(scripts, 'dense-none.calls.json'), 'utf8')) as { command: string }[];
    assert.ok(!calls.some((c) => c.command === 'image_undistorter'), 'no dense stage ran');
    assert.deepEqual(sparseOnly.notAvailable.map((n) => n.reason), ['Not requested (outputs.mesh: false).', 'Not requested (outputs.mesh: false).', 'Not requested (outputs.dsm: false).', 'Not requested (outputs.dsm: false).', 'Not requested (outputs.ortho: false).']);
  });
});
