// The inspection's mesh (reconstruction.mesh: the cloud's `3d_mesh_ply`) read from storage with
// its ray hierarchy (shared/mesh), kept in memory for the next request, as StoredPointClouds keeps
// clouds: a series of coords_3d annotations on one inspection reads and builds it once.
// Reading and building run on a worker thread (shared/mesh/mesh-loader.ts), so the event loop
// keeps answering while a large mesh loads. Kept: the most recently used meshes, at most
// CACHED_MESHES and MESH_CACHE_BYTES of arrays (about 60 bytes a triangle); a mesh file larger
// than MAX_MESH_FILE_BYTES is refused before it is downloaded.
import type { FileStore } from './inspection-files.ts';
import type { StoredObject } from '../pipeline/reconstruction.ts';
import type { MeshBvh } from '../../shared/mesh/mesh-bvh.ts';
import { buffer } from 'node:stream/consumers';
import { DEFAULT_MESH_LOAD_LIMITS, loadMeshBvh, MeshLoadError, type MeshLoadLimits } from '../../shared/mesh/mesh-loader.ts';

const CACHED_MESHES = 4;
const MESH_CACHE_BYTES = 1024 * 1024 * 1024;
/** A binary PLY of doubles holds ~39 bytes a triangle: 512 MiB is some 13 million triangles. */
export const MAX_MESH_FILE_BYTES = 512 * 1024 * 1024;

export class StoredMeshes {
  private readonly meshes = new Map<string, { bvh: Promise<MeshBvh>; bytes: number }>();

  constructor(
    private readonly files: FileStore,
    private readonly limits: MeshLoadLimits & { maxFileBytes: number } = { ...DEFAULT_MESH_LOAD_LIMITS, maxFileBytes: MAX_MESH_FILE_BYTES },
  ) {}

  /** The mesh stored at `source` (rejects when it cannot be read: not a binary PLY mesh, truncated, too large, removed). */
  read(source: StoredObject): Promise<MeshBvh> {
    const id = `${source.bucket}/${source.key}`;
    let entry = this.meshes.get(id);
    if (entry) {
      this.meshes.delete(id); // re-inserted: most recently used last
    } else {
      const fresh = { bvh: this.load(source), bytes: 0 };
      entry = fresh;
      fresh.bvh.then(
        (bvh) => {
          fresh.bytes = bvh.positions.byteLength + bvh.indices.byteLength + bvh.bounds.byteLength + bvh.links.byteLength;
          this.evict();
        },
        // A mesh that cannot be read stays known as such (outputs do not change under their key):
        // the next annotation falls back at once instead of downloading it again. Anything else
        // (storage unavailable) is tried again next time.
        (err) => {
          if (!(err instanceof MeshLoadError)) this.meshes.delete(id);
        },
      );
    }
    this.meshes.set(id, entry);
    this.evict();
    return entry.bvh;
  }

  private async load(source: StoredObject): Promise<MeshBvh> {
    const { info, body } = await this.files.store.getObject(source.bucket, source.key);
    if (info.size > this.limits.maxFileBytes) {
      body.destroy();
      throw new MeshLoadError(`the mesh file has ${info.size} bytes, more than the ${this.limits.maxFileBytes} read`);
    }
    return loadMeshBvh(await buffer(body), this.limits);
  }

  /** Drops the least recently used meshes beyond the count and byte limits (never the newest). */
  private evict(): void {
    let bytes = 0;
    for (const e of this.meshes.values()) bytes += e.bytes;
    while (this.meshes.size > 1 && (this.meshes.size > CACHED_MESHES || bytes > MESH_CACHE_BYTES)) {
      const [oldest, e] = this.meshes.entries().next().value!;
      this.meshes.delete(oldest);
      bytes -= e.bytes;
    }
  }
}
