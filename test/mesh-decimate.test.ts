// The web viewer's lighter mesh (src/cloud/processing/mesh/mesh-decimate.ts): at most the faces
// asked, still on the surface, colours carried, holes not created.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decimateMesh } from '../src/cloud/processing/mesh/mesh-decimate.ts';
import type { PlyMesh } from '../src/cloud/processing/mesh/mesh-ply.ts';

const height = (x: number, y: number) => 2 * Math.exp(-(x * x + y * y) / 8);

/** n x n vertices on the bump over [-10, 10]^2, red growing with x. */
function bumpMesh(n: number): PlyMesh {
  const positions = new Float64Array(3 * n * n);
  const colors = new Uint8Array(3 * n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    const [x, y] = [-10 + (20 * j) / (n - 1), -10 + (20 * i) / (n - 1)];
    positions.set([x, y, height(x, y)], 3 * (i * n + j));
    colors.set([Math.round(((x + 10) / 20) * 255), 50, 50], 3 * (i * n + j));
  }
  const indices: number[] = [];
  for (let i = 0; i + 1 < n; i++) for (let j = 0; j + 1 < n; j++) {
    const a = i * n + j;
    indices.push(a, a + 1, a + n + 1, a, a + n + 1, a + n);
  }
  return { vertexCount: n * n, positions, colors, normals: null, values: null, faceCount: indices.length / 3, indices: Uint32Array.from(indices) };
}

function area(mesh: PlyMesh): number {
  let sum = 0;
  const p = mesh.positions;
  for (let f = 0; f < mesh.faceCount; f++) {
    const [a, b, c] = [0, 1, 2].map((k) => mesh.indices[3 * f + k]);
    const u = [0, 1, 2].map((k) => p[3 * b + k] - p[3 * a + k]);
    const v = [0, 1, 2].map((k) => p[3 * c + k] - p[3 * a + k]);
    sum += 0.5 * Math.hypot(u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]);
  }
  return sum;
}

test('a mesh within the limit is returned as it is', () => {
  const mesh = bumpMesh(20);
  assert.equal(decimateMesh(mesh, mesh.faceCount), mesh);
});

test('vertex clustering: at most maxFaces, on the surface, the same area, colours carried', () => {
  const mesh = bumpMesh(400); // 318 402 faces
  const light = decimateMesh(mesh, 20_000);
  assert.ok(light.faceCount <= 20_000 && light.faceCount > 8_000, `${light.faceCount} faces`);
  for (const i of light.indices) assert.ok(i < light.vertexCount);
  let worstHeight = 0;
  let worstRed = 0;
  for (let v = 0; v < light.vertexCount; v++) {
    const [x, y, z] = [light.positions[3 * v], light.positions[3 * v + 1], light.positions[3 * v + 2]];
    worstHeight = Math.max(worstHeight, Math.abs(z - height(x, y)));
    worstRed = Math.max(worstRed, Math.abs(light.colors![3 * v] - ((x + 10) / 20) * 255));
  }
  assert.ok(worstHeight < 0.05, `a vertex ${worstHeight} off the surface`);
  assert.ok(worstRed <= 2, `a colour ${worstRed} off`);
  const [before, after] = [area(mesh), area(light)];
  assert.ok(Math.abs(after / before - 1) < 0.03, `area ${after} vs ${before}: no holes`);
});
