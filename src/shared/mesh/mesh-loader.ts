// loadMeshBvh: a binary PLY mesh's bytes -> its ray hierarchy (mesh-bvh.ts), read and built on a
// worker thread (mesh-worker.ts). Reading a multi-million-triangle mesh and building its hierarchy
// takes seconds of CPU; on the event loop that would stall every other request of the service
// for as long (bench/mesh-ray.ts measures both). The worker gets the bytes transferred and sends
// the arrays back transferred: nothing is copied but the file's bytes, once, when they do not
// own their whole ArrayBuffer (when they do, the caller's Buffer is detached: handed over).
// A worker that fails, exits, runs past `timeoutMs` or exceeds its heap limit rejects with
// MeshLoadError: the caller (coords_3d) falls back to the point cloud rather than failing.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { MeshBvh } from './mesh-bvh.ts';

export class MeshLoadError extends Error {}

export interface MeshLoadLimits {
  /** Triangles read at most (the mesh is refused above). */
  maxTriangles: number;
  /** Time the worker gets to read and build. */
  timeoutMs: number;
}

export const DEFAULT_MESH_LOAD_LIMITS: MeshLoadLimits = { maxTriangles: 20_000_000, timeoutMs: 120_000 };

/** The mesh's ray hierarchy; rejects with MeshLoadError when it cannot be read (not PLY, truncated, too large). */
export function loadMeshBvh(data: Buffer, limits: MeshLoadLimits = DEFAULT_MESH_LOAD_LIMITS): Promise<MeshBvh> {
  // A Buffer that is a slice of a larger ArrayBuffer (Node's pool for small buffers) is copied into
  // one of its own, which can be transferred.
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && !(data.buffer instanceof SharedArrayBuffer);
  const bytes = whole ? new Uint8Array(data.buffer as ArrayBuffer) : new Uint8Array(data);
  // Under tsx the module is a .ts file (the worker inherits the --import tsx loader); built, a .js.
  const entry = new URL(`./mesh-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  return new Promise<MeshBvh>((resolve, reject) => {
    let worker: Worker;
    try {
      worker = new Worker(entry, { workerData: { data: bytes, maxTriangles: limits.maxTriangles }, transferList: [bytes.buffer as ArrayBuffer] });
    } catch (err) {
      reject(new MeshLoadError(`the mesh worker did not start: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(() => settle(() => reject(new MeshLoadError(`the mesh was not read within ${limits.timeoutMs} ms`))), limits.timeoutMs);
    worker.once('message', (m: { bvh?: MeshBvh; error?: string }) => settle(() => (m.bvh ? resolve(m.bvh) : reject(new MeshLoadError(m.error ?? 'the mesh worker answered nothing')))));
    worker.once('error', (err) => settle(() => reject(new MeshLoadError(err.message))));
    worker.once('exit', (code) => settle(() => reject(new MeshLoadError(`the mesh worker exited with code ${code}`))));
  });
}
