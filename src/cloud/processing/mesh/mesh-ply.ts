// Binary PLY meshes: the writer of the delivered `3d_mesh_ply`; the reader (of COLMAP's fused.ply
// and meshed.ply, and of the delivered file) is shared with the inspection service's coords_3d, in
// src/shared/mesh/ply-mesh.ts, re-exported here for the cloud's stages. The delivered PLY is
// written like the point cloud PLY (src/shared/pointcloud/ply.ts): binary little-endian with
// `double x, y, z` in output-system coordinates, so that absolute coordinates survive (a float keeps ~7 digits: 1 m steps at UTM northings) and any reader (CloudCompare,
// MeshLab, Blender, PDAL) places it without an offset file; comments carry the system's name.
// It is written in chunks, never as one buffer of the whole mesh.
import fs from 'node:fs';
import { once } from 'node:events';
import type { PlyMesh } from '../../../shared/mesh/ply-mesh.ts';

export { readPlyMesh, readPlyMeshFile, type PlyMesh } from '../../../shared/mesh/ply-mesh.ts';

/** Vertices or faces per chunk written (a chunk is at most a few MB). */
const CHUNK = 65536;

/** Writes a chunk, waiting when the stream's buffer is full. */
export async function writeChunk(out: fs.WriteStream, chunk: Buffer | string): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

/** Closes a write stream and waits until the file is complete. */
export async function closeStream(out: fs.WriteStream): Promise<void> {
  out.end();
  await once(out, 'close');
}

/**
 * Writes the delivered `3d_mesh_ply`: binary little-endian, `double x, y, z` (positions already in
 * output coordinates), `uchar red, green, blue` when the mesh has colours, `list uchar int
 * vertex_indices` triangles; `comments` (e.g. the coordinate system) go in the header.
 */
export async function writePlyMeshFile(file: string, mesh: Pick<PlyMesh, 'vertexCount' | 'positions' | 'colors' | 'faceCount' | 'indices'>, comments: string[] = []): Promise<void> {
  const lines = ['ply', 'format binary_little_endian 1.0', ...comments.map((c) => `comment ${c.replace(/[\r\n]+/g, ' ')}`), `element vertex ${mesh.vertexCount}`, 'property double x', 'property double y', 'property double z'];
  if (mesh.colors) lines.push('property uchar red', 'property uchar green', 'property uchar blue');
  lines.push(`element face ${mesh.faceCount}`, 'property list uchar int vertex_indices', 'end_header');
  const out = fs.createWriteStream(file);
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  const work = (async () => {
    await writeChunk(out, `${lines.join('\n')}\n`);
    const record = 24 + (mesh.colors ? 3 : 0);
    for (let first = 0; first < mesh.vertexCount; first += CHUNK) {
      const n = Math.min(CHUNK, mesh.vertexCount - first);
      const buf = Buffer.alloc(n * record);
      for (let i = 0; i < n; i++) {
        const v = first + i;
        const o = i * record;
        buf.writeDoubleLE(mesh.positions[3 * v], o);
        buf.writeDoubleLE(mesh.positions[3 * v + 1], o + 8);
        buf.writeDoubleLE(mesh.positions[3 * v + 2], o + 16);
        if (mesh.colors) {
          buf[o + 24] = mesh.colors[3 * v];
          buf[o + 25] = mesh.colors[3 * v + 1];
          buf[o + 26] = mesh.colors[3 * v + 2];
        }
      }
      await writeChunk(out, buf);
    }
    for (let first = 0; first < mesh.faceCount; first += CHUNK) {
      const n = Math.min(CHUNK, mesh.faceCount - first);
      const buf = Buffer.alloc(n * 13);
      for (let i = 0; i < n; i++) {
        const f = first + i;
        buf[i * 13] = 3;
        buf.writeInt32LE(mesh.indices[3 * f], i * 13 + 1);
        buf.writeInt32LE(mesh.indices[3 * f + 1], i * 13 + 5);
        buf.writeInt32LE(mesh.indices[3 * f + 2], i * 13 + 9);
      }
      await writeChunk(out, buf);
    }
    await closeStream(out);
  })();
  await Promise.race([work, failed]);
}
