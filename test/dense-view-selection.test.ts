// The binary sparse model reader and the view selection of PatchMatch, on the synthetic
// workspace: poses read back as written, each view's sources are the others ranked by shared
// points, its depth range holds most of its true depths, and its seeds sit at the true depth of their pixel.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readSparseModel } from '../src/cloud/processing/dense/sparse-model.ts';
import { planReferences } from '../src/cloud/processing/dense/view-selection.ts';
import { makeSyntheticScene } from './helpers/synthetic-scene.ts';

test('readSparseModel and planReferences on the synthetic workspace', async (t) => {
  const workspace = await fs.mkdtemp(path.join(os.tmpdir(), 'dense-views-'));
  t.after(() => fs.rm(workspace, { recursive: true, force: true }));
  const scene = await makeSyntheticScene(workspace, { views: 4, width: 96, height: 72 });
  const model = await readSparseModel(path.join(workspace, 'sparse'));
  assert.deepEqual(model.images.map((i) => i.name), scene.views.map((v) => v.name));
  model.images.forEach((image, i) => {
    for (let k = 0; k < 9; k++) assert.ok(Math.abs(image.R[k] - scene.views[i].R[k]) < 1e-9, `R[${k}] of ${image.name}`);
    for (let k = 0; k < 3; k++) assert.ok(Math.abs(image.t[k] - scene.views[i].t[k]) < 1e-9);
    assert.deepEqual([image.camera.width, image.camera.fx, image.camera.cx], [scene.width, scene.fx, scene.cx]);
  });

  const plans = planReferences(model, 2);
  plans.forEach((plan, r) => {
    assert.equal(plan.sources.length, 2);
    assert.ok(!plan.sources.includes(r));
    const truth = Array.from(scene.views[r].depth).filter((d) => d > 0).sort((a, b) => a - b);
    const inside = truth.filter((d) => d >= plan.minDepth && d <= plan.maxDepth).length / truth.length;
    assert.ok(inside >= 0.85, `depth range ${plan.minDepth}-${plan.maxDepth} holds ${inside} of view ${r}'s true depths`);
    assert.ok(plan.seeds.length >= 3 * 8, `view ${r} has ${plan.seeds.length / 3} seeds`);
    for (let k = 0; k < plan.seeds.length; k += 3) {
      const x = Math.round(plan.seeds[k]), y = Math.round(plan.seeds[k + 1]);
      const d = scene.views[r].depth[y * scene.width + x];
      assert.ok(Math.abs(plan.seeds[k + 2] - d) < 0.05 * d, `seed at ${x},${y}: ${plan.seeds[k + 2]} against ${d}`);
    }
  });
  // the outer views share fewer points with each other than with their neighbours
  assert.ok(!plans[0].sources.includes(3) || !plans[3].sources.includes(0));
});
