// Binary PLY meshes: the reader for what `colmap stereo_fusion` (fused.ply: a vertex element only)
// and `colmap poisson_mesher` (meshed.ply: float x y z, a float `value` when it trimmed, uchar
// colours, `list uchar int vertex_indices`) write, and the writer of the delivered `3d_mesh_ply`.
//
// The reader follows the header (any property order, both byte orders, the PLY scalar types) so
// that it reads fused clouds and meshes alike; polygons are split into triangles as a fan. The
// delivered PLY is written like the point cloud PLY (src/shared/pointcloud/ply.ts): binary
// little-endian with `double x, y, z` in output-system coordinates, so that absolute coordinates
// survive (a float keeps ~7 digits: 1 m steps at UTM northings) and any reader (CloudCompare,
// MeshLab, Blender, PDAL) places it without an offset file; comments carry the system's name.
// It is written in chunks, never as one buffer of the whole mesh.
import fs from 'node:fs';
import { once } from 'node:events';

export interface PlyMesh {
  vertexCount: number;
  /** x, y, z per vertex (the file's frame: for COLMAP's files, the engine's local frame). */
  positions: Float64Array;
  /** red, green, blue per vertex, or null. */
  colors: Uint8Array | null;
  /** Normals per vertex when the file has nx, ny, nz (fused clouds), else null. */
  normals: Float32Array | null;
  /** Poisson's per-vertex density (`value`, written when poisson_mesher trims), else null. */
  values: Float32Array | null;
  faceCount: number;
  /** Three vertex indices per triangle. */
  indices: Uint32Array;
}

type Scalar = 'int8' | 'uint8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'float32' | 'float64';
const SCALAR: Record<string, Scalar> = {
  char: 'int8', int8: 'int8', uchar: 'uint8', uint8: 'uint8', short: 'int16', int16: 'int16', ushort: 'uint16', uint16: 'uint16',
  int: 'int32', int32: 'int32', uint: 'uint32', uint32: 'uint32', float: 'float32', float32: 'float32', double: 'float64', float64: 'float64',
};
const SIZE: Record<Scalar, number> = { int8: 1, uint8: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, float32: 4, float64: 8 };

interface Property {
  name: string;
  type: Scalar;
  /** For a list property: the type of its count. */
  countType?: Scalar;
}
interface Element {
  name: string;
  count: number;
  properties: Property[];
}

function reader(view: DataView, little: boolean): (type: Scalar, at: number) => number {
  return (type, at) => {
    switch (type) {
      case 'int8': return view.getInt8(at);
      case 'uint8': return view.getUint8(at);
      case 'int16': return view.getInt16(at, little);
      case 'uint16': return view.getUint16(at, little);
      case 'int32': return view.getInt32(at, little);
      case 'uint32': return view.getUint32(at, little);
      case 'float32': return view.getFloat32(at, little);
      case 'float64': return view.getFloat64(at, little);
    }
  };
}

/** Parses the header; returns the elements, the byte order and where the body starts. */
function parseHeader(data: Buffer): { elements: Element[]; little: boolean; body: number } {
  const end = data.indexOf('end_header');
  if (data.toString('ascii', 0, 3) !== 'ply' || end < 0) throw new Error('not a PLY file');
  let body = end + 'end_header'.length;
  if (data[body] === 0x0d) body++;
  if (data[body] !== 0x0a) throw new Error('PLY header does not end with a line break');
  body++;
  const lines = data.toString('ascii', 0, end).split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const format = lines.find((l) => l.startsWith('format '))?.split(/\s+/)[1];
  if (format !== 'binary_little_endian' && format !== 'binary_big_endian') throw new Error(`PLY format ${format ?? '(none)'} is not read (binary only)`);
  const elements: Element[] = [];
  for (const line of lines) {
    const words = line.split(/\s+/);
    if (words[0] === 'element') elements.push({ name: words[1], count: Number(words[2]), properties: [] });
    else if (words[0] === 'property') {
      const element = elements.at(-1);
      if (!element) throw new Error('PLY property before any element');
      if (words[1] === 'list') {
        const countType = SCALAR[words[2]];
        const type = SCALAR[words[3]];
        if (!countType || !type) throw new Error(`PLY list type ${words[2]} ${words[3]} is not read`);
        element.properties.push({ name: words[4], type, countType });
      } else {
        const type = SCALAR[words[1]];
        if (!type) throw new Error(`PLY property type ${words[1]} is not read`);
        element.properties.push({ name: words[2], type });
      }
    }
  }
  for (const e of elements) if (!Number.isSafeInteger(e.count) || e.count < 0) throw new Error(`PLY element ${e.name} has a bad count`);
  return { elements, little: format === 'binary_little_endian', body };
}

/** Reads a binary PLY (a mesh, or a cloud without faces) into typed arrays. */
export function readPlyMesh(data: Buffer): PlyMesh {
  const { elements, little, body } = parseHeader(data);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const read = reader(view, little);
  let offset = body;
  const mesh: PlyMesh = { vertexCount: 0, positions: new Float64Array(0), colors: null, normals: null, values: null, faceCount: 0, indices: new Uint32Array(0) };
  for (const element of elements) {
    if (element.name === 'vertex') offset = readVertices(element, read, offset, data.length, mesh);
    else if (element.name === 'face') offset = readFaces(element, read, offset, data.length, mesh);
    else offset = skipElement(element, read, offset, data.length);
  }
  for (let i = 0; i < mesh.indices.length; i++) if (mesh.indices[i] >= mesh.vertexCount) throw new Error(`PLY face refers to vertex ${mesh.indices[i]} of ${mesh.vertexCount}`);
  return mesh;
}

function readVertices(element: Element, read: ReturnType<typeof reader>, start: number, length: number, mesh: PlyMesh): number {
  if (element.properties.some((p) => p.countType)) throw new Error('PLY vertex lists are not read');
  const at = new Map<string, { offset: number; type: Scalar }>();
  let stride = 0;
  for (const p of element.properties) {
    at.set(p.name, { offset: stride, type: p.type });
    stride += SIZE[p.type];
  }
  const need = (names: string[]) => names.every((n) => at.has(n));
  if (!need(['x', 'y', 'z'])) throw new Error('PLY vertices have no x, y, z');
  const count = element.count;
  if (start + count * stride > length) throw new Error('PLY file is shorter than its header says');
  const positions = new Float64Array(3 * count);
  const colors = need(['red', 'green', 'blue']) ? new Uint8Array(3 * count) : need(['diffuse_red', 'diffuse_green', 'diffuse_blue']) ? new Uint8Array(3 * count) : null;
  const colorNames = at.has('red') ? ['red', 'green', 'blue'] : ['diffuse_red', 'diffuse_green', 'diffuse_blue'];
  const normals = need(['nx', 'ny', 'nz']) ? new Float32Array(3 * count) : null;
  const values = at.has('value') ? new Float32Array(count) : null;
  const fields = (names: string[]) => names.map((n) => at.get(n)!);
  const [px, py, pz] = fields(['x', 'y', 'z']);
  const cs = colors ? fields(colorNames) : [];
  const ns = normals ? fields(['nx', 'ny', 'nz']) : [];
  const value = at.get('value');
  for (let i = 0, o = start; i < count; i++, o += stride) {
    positions[3 * i] = read(px.type, o + px.offset);
    positions[3 * i + 1] = read(py.type, o + py.offset);
    positions[3 * i + 2] = read(pz.type, o + pz.offset);
    if (colors) for (let k = 0; k < 3; k++) colors[3 * i + k] = read(cs[k].type, o + cs[k].offset);
    if (normals) for (let k = 0; k < 3; k++) normals[3 * i + k] = read(ns[k].type, o + ns[k].offset);
    if (values && value) values[i] = read(value.type, o + value.offset);
  }
  Object.assign(mesh, { vertexCount: count, positions, colors, normals, values });
  return start + count * stride;
}

function readFaces(element: Element, read: ReturnType<typeof reader>, start: number, length: number, mesh: PlyMesh): number {
  const list = element.properties.find((p) => p.countType && (p.name === 'vertex_indices' || p.name === 'vertex_index'));
  if (!list) throw new Error('PLY faces have no vertex_indices list');
  const triangles: number[] = [];
  let indices = new Uint32Array(Math.max(3 * element.count, 3));
  let used = 0;
  let o = start;
  for (let f = 0; f < element.count; f++) {
    for (const p of element.properties) {
      if (o >= length) throw new Error('PLY file is shorter than its header says');
      if (!p.countType) {
        o += SIZE[p.type];
        continue;
      }
      const n = read(p.countType, o);
      o += SIZE[p.countType];
      if (o + n * SIZE[p.type] > length) throw new Error('PLY file is shorter than its header says');
      if (p !== list) {
        o += n * SIZE[p.type];
        continue;
      }
      triangles.length = 0;
      for (let k = 0; k < n; k++, o += SIZE[p.type]) triangles.push(read(p.type, o));
      // A polygon becomes a fan of n - 2 triangles.
      for (let k = 1; k + 1 < n; k++) {
        if (used + 3 > indices.length) {
          const grown = new Uint32Array(indices.length * 2);
          grown.set(indices);
          indices = grown;
        }
        indices[used++] = triangles[0];
        indices[used++] = triangles[k];
        indices[used++] = triangles[k + 1];
      }
    }
  }
  mesh.indices = indices.slice(0, used);
  mesh.faceCount = used / 3;
  return o;
}

function skipElement(element: Element, read: ReturnType<typeof reader>, start: number, length: number): number {
  let o = start;
  for (let i = 0; i < element.count; i++) {
    for (const p of element.properties) {
      if (p.countType) {
        const n = read(p.countType, o);
        o += SIZE[p.countType] + n * SIZE[p.type];
      } else o += SIZE[p.type];
    }
    if (o > length) throw new Error('PLY file is shorter than its header says');
  }
  return o;
}

export async function readPlyMeshFile(file: string): Promise<PlyMesh> {
  return readPlyMesh(await fs.promises.readFile(file));
}

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
