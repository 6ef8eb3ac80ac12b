// The trimming rules of the Poisson mesh (src/cloud/processing/mesh/mesh-trim.ts), each on its
// own on a hand-made mesh: density below median - drop, distance to the cloud, small pieces.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PlyMesh } from '../src/cloud/processing/mesh/mesh-ply.ts';
import { PointGrid, trimMesh } from '../src/cloud/processing/mesh/mesh-trim.ts';

/** A 41 x 41 grid on [0, 10]^2 (step 0.25, value 8), plus an island of two triangles at x = 20 (value 8). */
function meshWithIsland(): PlyMesh {
  const n = 41;
  const positions: number[] = [];
  const values: number[] = [];
  const indices: number[] = [];
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    positions.push(j * 0.25, i * 0.25, 0);
    values.push(8);
  }
  for (let i = 0; i + 1 < n; i++) for (let j = 0; j + 1 < n; j++) {
    const a = i * n + j;
    indices.push(a, a + 1, a + n + 1, a, a + n + 1, a + n);
  }
  const island = positions.length / 3;
  positions.push(20, 0, 0, 20.25, 0, 0, 20.25, 0.25, 0, 20, 0.25, 0);
  values.push(8, 8, 8, 8);
  indices.push(island, island + 1, island + 2, island, island + 2, island + 3);
  return {
    vertexCount: positions.length / 3,
    positions: Float64Array.from(positions),
    colors: new Uint8Array(positions.length).fill(100),
    normals: null,
    values: Float32Array.from(values),
    faceCount: indices.length / 3,
    indices: Uint32Array.from(indices),
  };
}

/** Cloud points every 0.1 on x in [0, 6], y in [0, 10], and next to the island. */
function cloud(): Float64Array {
  const points: number[] = [];
  for (let x = 0; x <= 6.0001; x += 0.1) for (let y = 0; y <= 10.0001; y += 0.1) points.push(x, y, 0.01);
  points.push(20.1, 0.1, 0);
  return Float64Array.from(points);
}

const OFF = { densityDrop: null, maxDistance: null, minComponentFaces: 0 };

function maxX(mesh: PlyMesh, below = 15): number {
  let m = -Infinity;
  for (let v = 0; v < mesh.vertexCount; v++) if (mesh.positions[3 * v] < below) m = Math.max(m, mesh.positions[3 * v]);
  return m;
}

test('no rule: the mesh is kept whole', () => {
  const mesh = meshWithIsland();
  const { mesh: out } = trimMesh(mesh, cloud(), OFF);
  assert.equal(out.faceCount, mesh.faceCount);
  assert.equal(out.vertexCount, mesh.vertexCount);
});

test('density: faces with a vertex below median - drop go, the rest is compacted', () => {
  const mesh = meshWithIsland();
  // A low-density patch: the vertices with x >= 8 (value 5.5, median 8).
  for (let v = 0; v < mesh.vertexCount; v++) if (mesh.positions[3 * v] >= 8 && mesh.positions[3 * v] < 15) mesh.values![v] = 5.5;
  const kept = trimMesh(mesh, cloud(), { ...OFF, densityDrop: 3 }).mesh;
  assert.equal(kept.faceCount, mesh.faceCount, 'a drop of 3 keeps value 5.5');
  const { mesh: out, report } = trimMesh(mesh, cloud(), { ...OFF, densityDrop: 2 });
  assert.equal(report.densityThreshold, 6);
  assert.equal(maxX(out), 7.75);
  assert.equal(report.removedByDensity, mesh.faceCount - out.faceCount);
  for (const i of out.indices) assert.ok(i < out.vertexCount);
  for (let v = 0; v < out.vertexCount; v++) assert.ok(out.values![v] > 6 && out.colors![3 * v] === 100);
});

test('distance: faces with a vertex farther than maxDistance from every cloud point go', () => {
  const { mesh: out, report } = trimMesh(meshWithIsland(), cloud(), { ...OFF, maxDistance: 0.3 });
  assert.equal(maxX(out), 6.25); // the last column within 0.3 of x = 6
  assert.ok(report.removedByDistance > 0);
  assert.ok(maxX(out, Infinity) > 19, 'the island has a point next to it');
});

test('islands: pieces with fewer faces than minComponentFaces go', () => {
  const { mesh: out, report } = trimMesh(meshWithIsland(), cloud(), { ...OFF, minComponentFaces: 10 });
  assert.equal(report.removedIslands, 1);
  assert.equal(report.removedIslandFaces, 2);
  assert.ok(maxX(out, Infinity) <= 10);
});

test('the point grid answers within the distance asked, and only there', () => {
  const grid = new PointGrid(Float64Array.from([0, 0, 0, 5, 5, 5]), 1);
  assert.ok(grid.hasPointWithin(0.5, 0.5, 0.5, 0.9));
  assert.ok(!grid.hasPointWithin(0.6, 0.6, 0.6, 1));
  assert.ok(grid.hasPointWithin(5, 5, 5.99, 1));
  assert.ok(!grid.hasPointWithin(50, 50, 50, 1));
  assert.ok(!grid.hasPointWithin(-3, 0, 0, 1));
});
