// Ray against a large mesh, as coords_3d casts it (shared/mesh): standalone,
//   node --import tsx bench/mesh-ray.ts [--side 1200]
// A synthetic terrain of side x side vertices (2 (side - 1)^2 triangles; 1200: 2.9 million) in
// absolute UTM coordinates, written as the delivered `3d_mesh_ply` (doubles), then:
// - read and hierarchy built on the event loop (what loading it there would stall every other
//   request for);
// - the same through loadMeshBvh (a worker thread, as StoredMeshes loads it): its wall time, and
//   the event loop's longest delay meanwhile (perf_hooks monitorEventLoopDelay, 10 ms resolution,
//   plus a 5 ms timer's longest gap), which is what other requests wait at most;
// - the hierarchy's bytes per triangle, and the time per ray of 10,000 rays cast down at it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { writePlyMeshFile } from '../src/cloud/processing/mesh/mesh-ply.ts';
import { readPlyMesh } from '../src/shared/mesh/ply-mesh.ts';
import { buildMeshBvh, intersectRay, type MeshBvh } from '../src/shared/mesh/mesh-bvh.ts';
import { loadMeshBvh } from '../src/shared/mesh/mesh-loader.ts';
import { seededRandom } from '../src/shared/seeded-random.ts';

const sideArg = process.argv.indexOf('--side');
const SIDE = sideArg >= 0 ? Number(process.argv[sideArg + 1]) : 1200;
const [E, N, Z] = [500_000, 4_500_000, 100];
const height = (x: number, y: number) => Z + 3 * Math.sin(x / 7) * Math.cos(y / 11);

async function main() {
  const positions = new Float64Array(3 * SIDE * SIDE);
  for (let j = 0; j < SIDE; j++) for (let i = 0; i < SIDE; i++) positions.set([E + i * 0.1, N + j * 0.1, height(i * 0.1, j * 0.1)], 3 * (j * SIDE + i));
  const faces = 2 * (SIDE - 1) * (SIDE - 1);
  const indices = new Uint32Array(3 * faces);
  let f = 0;
  for (let j = 0; j + 1 < SIDE; j++) {
    for (let i = 0; i + 1 < SIDE; i++) {
      const a = j * SIDE + i;
      indices.set([a, a + 1, a + SIDE + 1, a, a + SIDE + 1, a + SIDE], 6 * f++);
    }
  }
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-ray-')), 'mesh.ply');
  await writePlyMeshFile(file, { vertexCount: SIDE * SIDE, positions, colors: null, faceCount: faces, indices });
  const data = fs.readFileSync(file);
  console.log(`mesh: ${faces} triangles, ${SIDE * SIDE} vertices, ${(data.length / 1e6).toFixed(1)} MB PLY`);

  let started = performance.now();
  const read = readPlyMesh(data);
  const readMs = performance.now() - started;
  const onLoop = buildMeshBvh(read.positions, read.indices);
  const loopMs = performance.now() - started;
  console.log(`  on the event loop: read in ${readMs.toFixed(0)} ms, hierarchy built by ${loopMs.toFixed(0)} ms: the loop blocked all along`);

  const monitor = monitorEventLoopDelay({ resolution: 10 });
  monitor.enable();
  let last = performance.now();
  let longestGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 5);
  started = performance.now();
  const bvh: MeshBvh = await loadMeshBvh(Buffer.from(data));
  const workerMs = performance.now() - started;
  clearInterval(timer);
  monitor.disable();
  console.log(`  on a worker thread: ${workerMs.toFixed(0)} ms; meanwhile the event loop's longest delay ${(monitor.max / 1e6).toFixed(1)} ms (p99 ${(monitor.percentile(99) / 1e6).toFixed(1)} ms), a 5 ms timer's longest gap ${longestGap.toFixed(1)} ms`);
  const bytes = bvh.positions.byteLength + bvh.indices.byteLength + bvh.bounds.byteLength + bvh.links.byteLength;
  console.log(`  hierarchy: ${bvh.links.length / 3} nodes, ${(bytes / 1e6).toFixed(0)} MB kept, ${(bytes / faces).toFixed(0)} bytes a triangle`);

  const random = seededRandom(28);
  const extent = (SIDE - 1) * 0.1;
  let hits = 0;
  let worst = 0;
  started = performance.now();
  for (let r = 0; r < 10_000; r++) {
    const [x, y] = [random() * extent, random() * extent];
    const origin: [number, number, number] = [E + x - 5, N + y - 5, Z + 30];
    const d: [number, number, number] = [5, 5, -(30 - (height(x, y) - Z))];
    const len = Math.hypot(...d);
    const hit = intersectRay(r % 2 ? bvh : onLoop, origin, [d[0] / len, d[1] / len, d[2] / len], 0);
    if (hit) {
      hits++;
      worst = Math.max(worst, Math.hypot(hit.point[0] - (E + x), hit.point[1] - (N + y), hit.point[2] - height(x, y)));
    }
  }
  const perRay = ((performance.now() - started) / 10_000) * 1000;
  console.log(`  10000 rays: ${perRay.toFixed(1)} µs a ray, ${hits} hits, farthest from the aimed surface point ${(worst * 100).toFixed(1)} cm (the terrain between grid vertices is flat triangles)`);
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

await main();
