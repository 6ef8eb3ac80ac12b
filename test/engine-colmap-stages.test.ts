// The colmap engine's stage runtime and what the stages leave for the dense stages of issue 28:
// - the final placed model (levelled in memory, leveling.ts) written as a COLMAP model folder by
//   model_transformer (georegistration.ts: writeFinalModel) holds the camera centres and points of
//   the model in memory, within 1e-6 relative, even for cameras along a line (lund's walk);
// - the runtime: a stage's section of the processing log with its time, its share of progress.
// Needs /usr/bin/colmap for the model folder (skips otherwise).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './helpers/test-system.ts';
import { readTextModel, type ColmapModel } from '../src/cloud/processing/colmap/colmap-model.ts';
import { levelAlongTrack } from '../src/cloud/processing/colmap/leveling.ts';
import { applySimilarity, cameraCentre, modelSimilarity } from '../src/cloud/processing/colmap/model-similarity.ts';
import { writeFinalModel } from '../src/cloud/processing/colmap/stages/georegistration.ts';
import { StageRuntime, type Stage } from '../src/cloud/processing/colmap/stages/stage.ts';
import { converterArgs } from '../src/cloud/processing/colmap/colmap-commands.ts';
import { multiplyQuaternions, conjugateQuaternion, quaternionFromAxisAngle, type Vec3 } from '../src/shared/geo/rotation.ts';
import type { EngineInput } from '../src/cloud/processing/engine.ts';

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

function engineInputFor(progress: { percent: number; text: string }[]): EngineInput {
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
    store: undefined as unknown as EngineInput['store'],
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
});
