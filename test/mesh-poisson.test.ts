// The mesh of a dense cloud (src/cloud/processing/mesh/poisson-mesher.ts) by the real
// `colmap poisson_mesher`: a synthetic fused cloud (a 20 x 20 plane with a Gaussian bump and a
// round hole, normals, four colour quadrants) is meshed; the mesh must lie on the true surface,
// stop near the plane's edges and around the hole (Poisson alone extends the plane by a tenth of
// its size and closes the hole), and carry the quadrants' colours.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { readPlyMeshFile } from '../src/cloud/processing/mesh/mesh-ply.ts';
import { chooseDepth, estimateSpacing, finestCell, meshFromFusedCloud, poissonMesherArgs } from '../src/cloud/processing/mesh/poisson-mesher.ts';
import { requireTool } from './helpers/system-tools.ts';

const COLMAP = '/usr/bin/colmap';
const HALF = 10;
const HOLE = { x: 5, y: 5, radius: 2 };
const height = (x: number, y: number) => 2 * Math.exp(-(x * x + y * y) / 8);
const quadrantColor = (x: number, y: number): [number, number, number] => [x > 0 ? 200 : 30, y > 0 ? 180 : 40, 90];

/** A seeded generator, so that every run meshes the same cloud. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A fused-like binary PLY (float x y z nx ny nz, uchar red green blue) of the plane: n x n jittered samples, minus the hole. */
function writeFusedCloud(file: string, n: number): number {
  const rand = random(7);
  const records: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const x = -HALF + (2 * HALF * (i + rand())) / n;
      const y = -HALF + (2 * HALF * (j + rand())) / n;
      if (Math.hypot(x - HOLE.x, y - HOLE.y) < HOLE.radius) continue;
      const h = height(x, y);
      const gx = (-x / 4) * h;
      const gy = (-y / 4) * h;
      const l = Math.hypot(gx, gy, 1);
      const r = Buffer.alloc(27);
      [x, y, h + 0.02 * (rand() - 0.5), -gx / l, -gy / l, 1 / l].forEach((v, k) => r.writeFloatLE(v, 4 * k));
      r.set(quadrantColor(x, y), 24);
      records.push(r);
    }
  }
  const header = ['ply', 'format binary_little_endian 1.0', `element vertex ${records.length}`, ...['x', 'y', 'z', 'nx', 'ny', 'nz'].map((p) => `property float ${p}`), ...['red', 'green', 'blue'].map((p) => `property uchar ${p}`), 'end_header', ''].join('\n');
  fs.writeFileSync(file, Buffer.concat([Buffer.from(header, 'ascii'), ...records]));
  return records.length;
}

test('poisson_mesher arguments: input, output and the PoissonMeshing options', () => {
  assert.deepEqual(poissonMesherArgs('in.ply', 'out.ply', { depth: 9, trim: 0.01, color: 32, pointWeight: 1, numThreads: 2 }), [
    'poisson_mesher', '--input_path', 'in.ply', '--output_path', 'out.ply', '--PoissonMeshing.depth', '9', '--PoissonMeshing.trim', '0.01',
    '--PoissonMeshing.color', '32', '--PoissonMeshing.point_weight', '1', '--PoissonMeshing.num_threads', '2',
  ]);
});

test('the depth follows the point spacing: the finest cell is about twice the spacing', async () => {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'mesh-depth-'));
  try {
    for (const n of [100, 400]) {
      const file = path.join(dir, `cloud-${n}.ply`);
      const count = writeFusedCloud(file, n);
      const cloud = await readPlyMeshFile(file);
      const trueSpacing = Math.sqrt((4 * HALF * HALF - Math.PI * HOLE.radius ** 2) / count);
      const spacing = estimateSpacing(cloud.positions);
      assert.ok(Math.abs(spacing / trueSpacing - 1) < 0.25, `spacing ${spacing} vs ${trueSpacing} (${n} x ${n})`);
      const cell = finestCell(2 * HALF, chooseDepth(cloud.positions));
      assert.ok(cell >= trueSpacing && cell <= 4.5 * trueSpacing, `finest cell ${cell} for spacing ${trueSpacing}`);
    }
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
});

test('colmap poisson_mesher meshes the cloud, trimmed to its edges and around its hole, with its colours', async (t) => {
  if (!requireTool(t, COLMAP, 'colmap')) return;
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'mesh-poisson-'));
  try {
    const fused = path.join(dir, 'fused.ply');
    writeFusedCloud(fused, 200);
    const log = new PassThrough();
    const logged: string[] = [];
    log.on('data', (c: Buffer) => logged.push(c.toString()));
    const result = await meshFromFusedCloud(fused, dir, { binary: COLMAP, glogDir: dir, log, threads: 2 }, new AbortController().signal);
    const mesh = await readPlyMeshFile(result.meshPly);
    assert.equal(mesh.vertexCount, result.vertices);
    assert.equal(mesh.faceCount, result.faces);
    assert.ok(mesh.faceCount > 10_000, `${mesh.faceCount} faces`);
    assert.match(logged.join(''), /poisson_mesher --input_path/);
    const cell = finestCell(2 * HALF, result.depth);

    let beyondEdge = 0;
    let inHole = 0;
    let offSurface = 0;
    let wrongColor = 0;
    let maxEdge = 0;
    let minHole = Infinity;
    for (let v = 0; v < mesh.vertexCount; v++) {
      const [x, y, z] = [mesh.positions[3 * v], mesh.positions[3 * v + 1], mesh.positions[3 * v + 2]];
      const edge = Math.max(Math.abs(x), Math.abs(y));
      const hole = Math.hypot(x - HOLE.x, y - HOLE.y);
      maxEdge = Math.max(maxEdge, edge);
      minHole = Math.min(minHole, hole);
      if (edge > HALF + 3 * cell) beyondEdge++;
      if (hole < HOLE.radius - 3 * cell) inHole++;
      if (Math.abs(z - height(x, y)) > 0.05) offSurface++;
      if (Math.abs(x) > 1 && Math.abs(y) > 1 && edge < HALF - 1) {
        const expected = quadrantColor(x, y);
        if ([0, 1, 2].some((k) => Math.abs(mesh.colors![3 * v + k] - expected[k]) > 20)) wrongColor++;
      }
    }
    t.diagnostic(`depth ${result.depth}, cell ${cell.toFixed(3)}, ${mesh.faceCount} faces; mesh reaches ${maxEdge.toFixed(3)} (edge ${HALF}), nearest to the hole's centre ${minHole.toFixed(3)} (radius ${HOLE.radius})`);
    assert.equal(offSurface, 0, 'vertices farther than 5 cm from the true surface');
    assert.equal(beyondEdge, 0, `vertices past the plane's edge + 3 cells (mesh reaches ${maxEdge})`);
    assert.equal(inHole, 0, `vertices inside the hole (nearest to its centre: ${minHole})`);
    assert.ok(mesh.colors, 'the mesh has colours');
    assert.equal(wrongColor, 0, 'vertices whose colour is not their quadrant');
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
});

test('a canceled run stops with the cancel reason, and a cloud without normals is refused before COLMAP runs', async (t) => {
  if (!requireTool(t, COLMAP, 'colmap')) return;
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'mesh-cancel-'));
  try {
    const fused = path.join(dir, 'fused.ply');
    writeFusedCloud(fused, 40);
    const controller = new AbortController();
    const reason = new Error('canceled by the user');
    controller.abort(reason);
    const options = { binary: COLMAP, glogDir: dir, log: new PassThrough(), threads: 1 };
    await assert.rejects(meshFromFusedCloud(fused, dir, options, controller.signal), (err) => err === reason);
    assert.ok(!fs.existsSync(path.join(dir, 'meshed.ply')));
    const noNormals = path.join(dir, 'xyz.ply');
    fs.writeFileSync(noNormals, Buffer.concat([Buffer.from('ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n'), Buffer.alloc(12)]));
    await assert.rejects(meshFromFusedCloud(noNormals, dir, options, new AbortController().signal), /no normals/);
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
});
