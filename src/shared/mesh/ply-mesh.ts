// Binary PLY meshes read into typed arrays: what `colmap stereo_fusion` (fused.ply: a vertex
// element only) and `colmap poisson_mesher` (meshed.ply: float x y z, a float `value` when it
// trimmed, uchar colours, `list uchar int vertex_indices`) write, read by the cloud's dense and mesh
// stages (processing/mesh/), and the delivered `3d_mesh_ply` (double x y z), read by the
// inspection's coords_3d (annotations/coords-3d.ts, through mesh-worker.ts). One reader for both
// services, so it lives here.
//
// The reader follows the header (any property order, both byte orders, the PLY scalar types) so
// that it reads fused clouds and meshes alike; polygons are split into triangles as a fan. A
// header's counts are checked against the bytes that follow before anything is allocated for
// them: a truncated file or one that claims billions of faces is an error, not an allocation of
// gigabytes or a loop over records that are not there.
import fs from 'node:fs';

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
        if (!countType || !type || countType.startsWith('float')) throw new Error(`PLY list type ${words[2]} ${words[3]} is not read`);
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
  // Each face takes at least a byte (its list's count): more faces than bytes left is a lie.
  if (element.count > length - start) throw new Error('PLY file is shorter than its header says');
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
  // An element without properties takes no bytes, whatever its count; any other takes at least
  // a byte per record, so a count beyond the bytes left is a lie (and not looped over).
  if (!element.properties.length) return start;
  if (element.count > length - start) throw new Error('PLY file is shorter than its header says');
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
