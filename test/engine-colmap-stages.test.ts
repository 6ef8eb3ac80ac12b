// The colmap engine's stage runtime and what the stages leave for the dense stages of issue 28:
// - the final placed model (levelled in memory, leveling.ts) written as a COLMAP model folder by
//   model_transformer (georegistration.ts: writeFinalModel) holds the camera centres and points of
//   the model in memory, within 1e-6 relative, even for cameras along a line (lund's walk);
// - progress that moves: COLMAP's per-image and per-block lines (feature_extractor,
//   exhaustive_matcher, mapper) parsed into the progress texts, through the engine with a
//   stand-in colmap; matches_importer's pair list imported in parts, progress after each; the
//   runtime's heartbeat re-reporting the text with the stage's time while COLMAP prints nothing;
//   the stage's section of the processing log with its time.
// Needs /usr/bin/colmap for the model folder (skips otherwise).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestSystem, tempDir, type TestSystem } from './helpers/test-system.ts';
import { droneStripInput } from './helpers/engine-input.ts';
import { ColmapEngine } from '../src/cloud/processing/colmap/colmap-engine.ts';
import { importPairs, importParts, IMPORT_PART_PAIRS } from '../src/cloud/processing/colmap/stages/matching.ts';
import type { Pair } from '../src/cloud/processing/colmap/pair-selection.ts';
import { readTextModel, type ColmapModel } from '../src/cloud/processing/colmap/colmap-model.ts';
import { levelAlongTrack } from '../src/cloud/processing/colmap/leveling.ts';
import { applySimilarity, modelSimilarity } from '../src/cloud/processing/colmap/model-similarity.ts';
import { cameraCentre } from '../src/cloud/processing/colmap/colmap-model.ts';
import { writeFinalModel } from '../src/cloud/processing/colmap/stages/georegistration.ts';
import { StageRuntime, type Stage } from '../src/cloud/processing/colmap/stages/stage.ts';
import { converterArgs } from '../src/cloud/processing/colmap/colmap-commands.ts';
import { multiplyQuaternions, conjugateQuaternion, quaternionFromAxisAngle, type Vec3 } from '../src/shared/geo/rotation.ts';
import { EngineError, type EngineInput } from '../src/cloud/processing/engine.ts';
import { denseStageList, denseStages } from '../src/cloud/processing/colmap/dense-pipeline.ts';
import { densePlan, DENSE_SWITCHED_OFF } from '../src/cloud/processing/colmap/stages/dense-plan.ts';

const HAS_COLMAP = fs.existsSync('/usr/bin/colmap');

/** A small text model: `n` cameras walking along x (nearly collinear), each seeing `m` points ahead. */
function writeSyntheticModel(dir: string, n = 8, m = 40): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'cameras.txt'), '1 SIMPLE_RADIAL 1024 768 900 512 384 0.01\n');
  const images: string[] = [];
  const points: string[] = [];
  const tracks = new Map<number, string[]>();
  for (let i = 0; i < n; i++) {
    // Looking along +x (camera z = world x), image down = world -z: world->camera rotation.
    const q = multiplyQuaternions(quaternionFromAxisAngle([0, 0, 1], 0.02 * i), quaternionFromAxisAngle([1, 0, 0], Math.PI / 2));
    const qWorldToCam = conjugateQuaternion(multiplyQuaternions(quaternionFromAxisAngle([0, 0, 1], -Math.PI / 2), q));
    const centre: Vec3 = [3 * i, 0.05 * Math.sin(i), 1.6 + 0.02 * i];
    const R = rotationOf(qWorldToCam);
    const t = R.map((row) => -(row[0] * centre[0] + row[1] * centre[1] + row[2] * centre[2]));
    const observations: string[] = [];
    for (let j = 0; j < m; j++) {
      const id = i * m + j + 1;
      observations.push(`${100 + j} ${200 + j} ${id}`);
      tracks.set(id, [`${i + 1} ${j}`]);
    }
    images.push(`${i + 1} ${qWorldToCam.join(' ')} ${t.join(' ')} 1 img${i}.jpg`, observations.join(' '));
  }
  for (const [id, track] of tracks) {
    const x = 3 * Math.floor((id - 1) / m) + 5 + ((id * 7) % 11);
    points.push(`${id} ${x} ${((id * 13) % 17) - 8} ${((id * 5) % 7) - 2} 120 130 140 0.5 ${track.join(' ')}`);
  }
  fs.writeFileSync(path.join(dir, 'images.txt'), `${images.join('\n')}\n`);
  fs.writeFileSync(path.join(dir, 'points3D.txt'), `${points.join('\n')}\n`);
}

function rotationOf(q: number[]): number[][] {
  const [w, x, y, z] = q;
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
  ];
}

/** The model moved in memory as georegistration moves it: scaled, turned, shifted, then levelled along its track. */
function placeInMemory(model: ColmapModel): void {
  const turn = quaternionFromAxisAngle([0.3, -0.2, 0.93], 0.7);
  const R = rotationOf(turn);
  const scale = 2.5;
  const shift: Vec3 = [120.5, -33.25, 7];
  const move = (p: Vec3): Vec3 => R.map((row, k) => scale * (row[0] * p[0] + row[1] * p[1] + row[2] * p[2]) + shift[k]) as Vec3;
  for (const img of model.images) {
    const c = move(cameraCentre(img));
    img.qvec = multiplyQuaternions(img.qvec, conjugateQuaternion(turn));
    const Rc = rotationOf(img.qvec);
    img.tvec = Rc.map((row) => -(row[0] * c[0] + row[1] * c[1] + row[2] * c[2])) as Vec3;
  }
  for (let i = 0; i < model.positions.length / 3; i++) {
    const p = move([model.positions[3 * i], model.positions[3 * i + 1], model.positions[3 * i + 2]]);
    model.positions.set(p, 3 * i);
  }
  levelAlongTrack(model, { anySpread: true });
}

/** An engine input for the runtime alone: its progress recorded, the processing log kept in `stored` when stored. */
function engineInputFor(progress: { percent: number; text: string }[], stored: Map<string, string> = new Map()): EngineInput {
  return {
    projectId: 1,
    projectUuid: crypto.randomUUID(),
    bucket: 'unused',
    inputs: [],
    images: [],
    outputPrefix: 'unused/',
    outputCrs: { type: 'arbitrary', name: 'arbitrary', wkt: '' } as unknown as EngineInput['outputCrs'],
    pipeline: 'nadir',
    tags: [],
    controlPoints: { gcps: [], mtps: [], marks: [] },
    store: {
      async putObject(_bucket: string, key: string, body: NodeJS.ReadableStream | Buffer) {
        let text = '';
        if (Buffer.isBuffer(body)) text = body.toString('utf8');
        else for await (const chunk of body) text += chunk.toString();
        stored.set(key, text);
      },
    } as unknown as EngineInput['store'],
    signal: new AbortController().signal,
    async reportProgress(percent, text) {
      progress.push({ percent, text });
    },
  };
}

describe('colmap engine stages', () => {
  let scratch: string;
  before(() => {
    scratch = tempDir('oi-colmap-stages-');
  });
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('modelSimilarity recovers a similarity from the cameras, also along a line', async () => {
    const dir = path.join(scratch, 'similarity');
    writeSyntheticModel(dir);
    const source = await readTextModel(dir);
    const placed = await readTextModel(dir);
    placeInMemory(placed);
    const s = modelSimilarity(source, placed);
    for (const [i, img] of source.images.entries()) {
      const expected = cameraCentre(placed.images[i]);
      const got = applySimilarity(s, cameraCentre(img));
      assert.ok(Math.hypot(got[0] - expected[0], got[1] - expected[1], got[2] - expected[2]) < 1e-9 * Math.hypot(...expected), `${img.name}: ${got} against ${expected}`);
    }
  });

  it('the final model folder (model_transformer) equals the model in memory: camera centres and points within 1e-6 relative', { skip: HAS_COLMAP ? false : 'colmap not installed' }, async () => {
    const progress: { percent: number; text: string }[] = [];
    const source = path.join(scratch, 'final-source');
    writeSyntheticModel(source);
    const placed = await readTextModel(source);
    placeInMemory(placed);
    const check: Stage<Record<string, never>, ColmapModel> = {
      name: 'final-model',
      title: 'Writing the final model',
      weight: 1,
      async run(context) {
        const folder = await writeFinalModel(context, { model: placed, folder: source });
        const text = path.join(context.work, 'final-text');
        fs.mkdirSync(text);
        await context.colmap('model export', converterArgs(folder, text), { text: 'checking' });
        return readTextModel(text);
      },
    };
    const runtime = new StageRuntime(engineInputFor(progress), [check], { binary: 'colmap', workDir: scratch, timeLimitSeconds: 0 });
    try {
      await runtime.open('stages test');
      const written = await runtime.run(check, {});
      assert.equal(written.images.length, placed.images.length);
      const byName = new Map(written.images.map((img) => [img.name, img]));
      let worst = 0;
      for (const img of placed.images) {
        const expected = cameraCentre(img);
        const got = cameraCentre(byName.get(img.name)!);
        worst = Math.max(worst, Math.hypot(got[0] - expected[0], got[1] - expected[1], got[2] - expected[2]) / Math.hypot(...expected));
      }
      assert.ok(worst < 1e-6, `camera centres off by ${worst} (relative)`);
      const pointIndex = new Map([...written.pointIds].map((id, i) => [id, i]));
      for (const [i, id] of placed.pointIds.entries()) {
        const j = pointIndex.get(id)!;
        const expected = [0, 1, 2].map((k) => placed.positions[3 * i + k]);
        const got = [0, 1, 2].map((k) => written.positions[3 * j + k]);
        assert.ok(Math.hypot(...got.map((v, k) => v - expected[k])) < 1e-6 * Math.hypot(...expected), `point ${id}: ${got} against ${expected}`);
      }
    } finally {
      await runtime.close();
    }
  });

  /** A stand-in colmap: bash with the command in $1. */
  function standIn(name: string, body: string): string {
    const file = path.join(scratch, name);
    fs.writeFileSync(file, `#!/bin/bash\nif [ "$1" = -h ]; then echo "COLMAP 3.8 -- stand-in"; exit 0; fi\n${body}\n`, { mode: 0o755 });
    return file;
  }

  it('the runtime reports the text again with the stage time while COLMAP prints nothing; the log names the stage and its time', async () => {
    const progress: { percent: number; text: string }[] = [];
    const quiet = standIn('quiet', 'sleep 1.7; exit 0');
    const wait: Stage<Record<string, never>, void> = {
      name: 'wait',
      title: 'Waiting for COLMAP',
      weight: 1,
      async run(context) {
        await context.colmap('waiting', ['mapper'], { text: 'Waiting' });
      },
    };
    const stored = new Map<string, string>();
    const runtime = new StageRuntime(engineInputFor(progress, stored), [wait], { binary: quiet, workDir: scratch, timeLimitSeconds: 0, heartbeatSeconds: 0.5 });
    try {
      await runtime.open('heartbeat test');
      await runtime.run(wait, {});
      await runtime.finish();
    } finally {
      await runtime.close();
    }
    const log = stored.get('unused/processing_log.txt') ?? '';
    assert.equal(progress[0].text, 'Waiting for COLMAP', 'the stage title at its start');
    const beats = progress.filter((p) => /^Waiting for COLMAP \(\d+ s\)$/.test(p.text));
    assert.deepEqual(progress.at(-1), { percent: 100, text: 'Done' });
    assert.ok(beats.length >= 2, `heartbeats while COLMAP was silent: ${JSON.stringify(progress)}`);
    assert.ok(beats.every((b) => b.percent === progress[0].percent), 'the same percent, a new text');
    const after = progress.length;
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.equal(progress.length, after, 'no heartbeat after the run');
    assert.match(log, /\n== wait ==\n[\s\S]*\n== wait: 1\.\d s ==\n/);
  });

  it('importParts: parts of about IMPORT_PART_PAIRS pairs, every pair once; a short list in one part', () => {
    const pairs = Array.from({ length: 133 }, (_, i) => i);
    const parts = importParts(pairs);
    assert.equal(parts.length, 3);
    assert.ok(parts.every((p) => p.length <= 1.5 * IMPORT_PART_PAIRS && p.length >= IMPORT_PART_PAIRS / 2), parts.map((p) => p.length).join(' '));
    assert.deepEqual(parts.flat(), pairs);
    assert.equal(importParts(pairs.slice(0, 50)).length, 1);
    assert.deepEqual(importParts([]), []);
  });

  it('matches_importer in parts: progress after each part with the pairs matched so far', async () => {
    const progress: { percent: number; text: string }[] = [];
    const calls = path.join(scratch, 'importer.calls');
    const importer = standIn('importer', `if [ "$1" = matches_importer ]; then wc -l < "\${@: -5:1}" >> ${calls}; echo "Matching block [1/1] in 0.1s"; fi\nexit 0`);
    const names = Array.from({ length: 30 }, (_, i) => `img${i}.jpg`);
    const pairs: Pair[] = [];
    for (let i = 0; i < 30 && pairs.length < 133; i++) for (let j = i + 1; j < 30 && pairs.length < 133; j++) pairs.push([i, j]);
    const matching: Stage<Record<string, never>, void> = {
      name: 'matching',
      title: 'Matching features',
      weight: 1,
      async run(context) {
        const downloaded = { imageDir: context.work, images: names.map((name) => ({ name })) } as unknown as Parameters<typeof importPairs>[2];
        await importPairs(context, { database: 'db', images: context.work, sparse: 'sparse' }, downloaded, pairs, 'pairs.txt', { text: 'Matching features' });
      },
    };
    const runtime = new StageRuntime(engineInputFor(progress), [matching], { binary: importer, workDir: scratch, timeLimitSeconds: 0 });
    try {
      await runtime.open('importer test');
      await runtime.run(matching, {});
    } finally {
      await runtime.close();
    }
    const sizes = fs.readFileSync(calls, 'utf8').trim().split('\n').map(Number);
    assert.deepEqual(sizes, importParts(pairs).map((p) => p.length), 'one matches_importer per part, each with its pairs');
    const texts = progress.map((p) => p.text);
    let done = 0;
    for (const size of sizes) {
      done += size;
      assert.ok(texts.includes(`Matching features (${done}/133 pairs)`), `${done}/133 in ${JSON.stringify(texts)}`);
    }
    assert.ok(progress.every((p, i) => i === 0 || p.percent >= progress[i - 1].percent));
  });

  describe('through the engine (stand-in colmap printing COLMAP 3.8 lines)', () => {
    let system: TestSystem;
    before(async () => {
      system = await startTestSystem();
    });
    after(async () => {
      await system?.stop();
    });

    it('features per photo, exhaustive matching per block, mapping per photo placed: the texts and percents move', async () => {
      const bin = standIn(
        'lines',
        [
          'case "$1" in',
          '  feature_extractor) n=$(wc -l < "${@: -1}"); for i in $(seq 1 4); do echo "Processed file [$i/4]"; echo "  Name: x.jpg"; done ;;',
          '  exhaustive_matcher) for i in 1 2; do for j in 1 2; do echo "Matching block [$i/2, $j/2] in 0.1s"; done; done ;;',
          '  mapper) for i in 1 2 3; do echo "Registering image #$i ($i)"; done ;;',
          'esac',
          'exit 0',
        ].join('\n'),
      );
      const run = await droneStripInput(system.store, 'colmap-stages', 4);
      const reported: { percent: number; text: string }[] = [];
      run.reportProgress = async (percent, text) => {
        reported.push({ percent, text });
      };
      // The stand-in builds no model: the run ends with 10201 after the mapper's attempts.
      await assert.rejects(new ColmapEngine({ binary: bin, workDir: path.join(system.dataDir, 'work') }).run(run), (err) => err instanceof EngineError && err.errorCode === 10201);
      const texts = reported.map((r) => r.text);
      for (const text of [
        'Extracting features',
        'Extracting features (1/4 photos)',
        'Extracting features (4/4 photos)',
        'Matching features',
        'Matching features (1/4 blocks)',
        'Matching features (4/4 blocks)',
        'Reconstructing cameras and points',
        'Reconstructing cameras and points (3/4 photos placed)',
      ]) {
        assert.ok(texts.includes(text), `"${text}" in ${JSON.stringify(texts)}`);
      }
      const percentOf = (text: string) => reported.find((r) => r.text === text)!.percent;
      assert.ok(percentOf('Extracting features (1/4 photos)') < percentOf('Extracting features (4/4 photos)'));
      assert.equal(percentOf('Extracting features (4/4 photos)'), 25);
      assert.ok(percentOf('Matching features (1/4 blocks)') < percentOf('Matching features (4/4 blocks)'));
      assert.equal(percentOf('Matching features (4/4 blocks)'), 50);
      assert.ok(percentOf('Reconstructing cameras and points (3/4 photos placed)') > 50);
      assert.ok(reported.every((r, i) => i === 0 || r.percent >= reported[i - 1].percent), 'never backwards');
    });
  });
});

describe('the dense plan: only the stages of the requested outputs run (dense-plan.ts, dense-pipeline.ts)', () => {
  // End to end the dense stages run once, on brighton with every output (engine-colmap-dense);
  // which stages a narrower request runs is decided here, before any stage starts.
  const stagesFor = (requested: Parameters<typeof densePlan>[0], enabled = true) => {
    const plan = densePlan(requested, { enabled, maxImageSize: 320 });
    return { plan, names: denseStageList(denseStages('colmap', { enabled, maxImageSize: 320 }), plan).map((s) => s.name) };
  };

  it('the point cloud alone: undistortion, depth maps and fusion, no meshing, elevation or orthophoto; the rest listed as not requested', () => {
    const { plan, names } = stagesFor({ point_cloud: true, mesh: false, dsm: false, ortho: false });
    assert.deepEqual(names, ['undistortion', 'depth-maps', 'fusion', 'dense-report']);
    assert.deepEqual(plan.leftOut.map((l) => l.outputType).sort(), ['3d_mesh_obj_zip', '3d_mesh_ply', 'dsm', 'dtm', 'ortho_rgb']);
    for (const { reason } of plan.leftOut) assert.match(reason, /^Not requested \(outputs\.(mesh|dsm|ortho): false\)/);
  });

  it('the orthomosaic alone brings the fused cloud and the DSM it stands on; nothing asked means everything', () => {
    assert.deepEqual(stagesFor({ point_cloud: false, mesh: false, dsm: false, ortho: true }).names, ['undistortion', 'depth-maps', 'fusion', 'elevation', 'orthophoto', 'dense-report']);
    assert.deepEqual(stagesFor({ point_cloud: false, mesh: true, dsm: false, ortho: false }).names, ['undistortion', 'depth-maps', 'fusion', 'meshing', 'dense-report']);
    const all = stagesFor(undefined);
    assert.deepEqual(all.names, ['undistortion', 'depth-maps', 'fusion', 'meshing', 'elevation', 'orthophoto', 'dense-report']);
    assert.deepEqual(all.plan.leftOut, []);
  });

  it('no dense output asked, or COLMAP_DENSE off: no dense stage; off says why for each output', () => {
    assert.deepEqual(stagesFor({ point_cloud: false, mesh: false, dsm: false, ortho: false }).names, []);
    const off = stagesFor(undefined, false);
    assert.deepEqual(off.names, []);
    assert.ok(off.plan.leftOut.length === 5 && off.plan.leftOut.every((l) => l.reason === DENSE_SWITCHED_OFF));
  });
});
