// The worker thread of loadMeshBvh (mesh-loader.ts): reads a binary PLY mesh (ply-mesh.ts) and
// builds its ray hierarchy (mesh-bvh.ts) off the event loop, then hands the typed arrays back
// transferred, not copied. One mesh per worker; the worker ends with it.
import { parentPort, workerData } from 'node:worker_threads';
import { readPlyMesh } from './ply-mesh.ts';
import { buildMeshBvh } from './mesh-bvh.ts';

const { data, maxTriangles } = workerData as { data: Uint8Array; maxTriangles: number };
try {
  const mesh = readPlyMesh(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  if (mesh.faceCount > maxTriangles) throw new Error(`the mesh has ${mesh.faceCount} triangles, more than the ${maxTriangles} read`);
  const bvh = buildMeshBvh(mesh.positions, mesh.indices);
  parentPort!.postMessage({ bvh }, [bvh.positions.buffer, bvh.indices.buffer, bvh.bounds.buffer, bvh.links.buffer] as ArrayBuffer[]);
} catch (err) {
  parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
}
