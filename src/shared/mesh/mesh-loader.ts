// loadMeshBvh: a binary PLY mesh's bytes -> its ray hierarchy (mesh-bvh.ts), read and built on a
// worker thread (mesh-worker.ts). Reading a multi-million-triangle mesh and building its hierarchy
// takes seconds of CPU; on the event loop that would stall every other request of the service
// for as long (bench/mesh-ray.ts measures both). The worker (shared/worker-once.ts) gets the bytes
// transferred and sends the arrays back transferred: nothing is copied but the file's bytes, once,
// when they do not own their whole ArrayBuffer (when they do, the caller's Buffer is detached).
// A worker that fails, exits, runs past `timeoutMs` or exceeds its heap limit rejects with
// MeshLoadError: the caller (coords_3d) falls back to the point cloud rather than failing.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MeshBvh } from './mesh-bvh.ts';
import { runWorkerOnce, transferableBytes, type WorkerOnceError } from '../worker-once.ts';

export class MeshLoadError extends Error {}

export interface MeshLoadLimits {
  /** Triangles read at most (the mesh is refused above). */
  maxTriangles: number;
  /** Time the worker gets to read and build. */
  timeoutMs: number;
}

export const DEFAULT_MESH_LOAD_LIMITS: MeshLoadLimits = { maxTriangles: 20_000_000, timeoutMs: 120_000 };

/** The mesh's ray hierarchy; rejects with MeshLoadError when it cannot be read (not PLY, truncated, too large). */
export async function loadMeshBvh(data: Buffer, limits: MeshLoadLimits = DEFAULT_MESH_LOAD_LIMITS): Promise<MeshBvh> {
  const bytes = transferableBytes(data);
  // Under tsx the module is a .ts file (the worker inherits the --import tsx loader); built, a .js.
  const entry = new URL(`./mesh-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  let reply: { bvh?: MeshBvh; error?: string };
  try {
    reply = await runWorkerOnce(entry, { data: bytes, maxTriangles: limits.maxTriangles }, [bytes.buffer], limits.timeoutMs);
  } catch (err) {
    const e = err as WorkerOnceError;
    throw new MeshLoadError(e.kind === 'timeout' ? `the mesh was not read within ${limits.timeoutMs} ms` : e.kind === 'start' ? `the mesh worker did not start: ${e.message}` : e.kind === 'exit' ? `the mesh worker ${e.message}` : e.message);
  }
  if (!reply.bvh) throw new MeshLoadError(reply.error ?? 'the mesh worker answered nothing');
  return reply.bvh;
}
