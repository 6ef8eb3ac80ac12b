// Reads binary little-endian PLY files for the 3D tab: the point clouds the colmap engine writes
// (`double x, y, z`, `uchar red, green, blue`; float coordinates and other vertex properties are
// read or skipped) and its meshes (the same vertices, then `element face` with
// `list uchar int vertex_indices`). Positions are stored relative to a centre: subtracting it in
// float64 before storing float32 keeps millimetres (absolute UTM coordinates, 6 170 000 m, in
// float32 would be rounded to 0.5 m). Colours stay bytes (a three.js normalized attribute): a
// few million points take 3 bytes of colour each instead of 12.
// Runs in the 3D tab's Web Worker (viewer3d/ply-worker.ts) and in the Node tests; no DOM.

export interface PlyCloud {
  count: number;
  /** x, y, z per point, minus `centre`. */
  positions: Float32Array;
  /** r, g, b per point, 0..255, or null when the file has no colours. */
  colors: Uint8Array | null;
  centre: [number, number, number];
  /** The header's comments (e.g. the coordinate system). */
  comments: string[];
  /** Points in the file (count is what was kept of them under the budget). */
  fileCount: number;
  /**
   * Set when the points are stored coarse to fine (clouds of COARSE_TO_FINE_FROM points or more):
   * the first ceil(count / 2^k) of them, for k up to `levels`, are every 2^k-th kept point, an even
   * thinning that a view in motion can draw alone (a prefix is one draw range, no copy).
   */
  levels?: number;
}

/** Clouds from this size on are stored coarse to fine; smaller ones are always drawn whole. */
export const COARSE_TO_FINE_FROM = 100_000;
/** Coarse-to-fine levels: the coarsest is every 64th point (47k of a 3M budget). */
const LEVELS = 6;

export interface PlyMesh extends PlyCloud {
  /** Three vertex indices per triangle (polygons are split into fans). */
  indices: Uint32Array;
  faceCount: number;
}

const SIZES: Record<string, number> = { char: 1, uchar: 1, int8: 1, uint8: 1, short: 2, ushort: 2, int16: 2, uint16: 2, int: 4, uint: 4, int32: 4, uint32: 4, float: 4, float32: 4, double: 8, float64: 8 };

export class PlyFormatError extends Error {}

interface Property {
  name: string;
  type: string;
  offset: number;
  /** For a list property: the type of its count (its items are `type`). */
  countType?: string;
}

interface Element {
  name: string;
  count: number;
  properties: Property[];
  /** Bytes per record; 0 when the element has a list property (records vary). */
  stride: number;
}

interface Header {
  elements: Element[];
  comments: string[];
  bodyStart: number;
}

function readHeader(bytes: Uint8Array): Header {
  const headerEnd = findHeaderEnd(bytes);
  const lines = new TextDecoder('ascii').decode(bytes.subarray(0, headerEnd)).split(/\r?\n/);
  if (lines[0] !== 'ply') throw new PlyFormatError('Not a PLY file.');
  if (!lines.includes('format binary_little_endian 1.0')) throw new PlyFormatError('Only binary little-endian PLY files are supported.');
  const comments: string[] = [];
  const elements: Element[] = [];
  for (const line of lines) {
    const words = line.trim().split(/\s+/);
    if (words[0] === 'comment') comments.push(line.trim().slice(8));
    else if (words[0] === 'element') {
      const count = Number(words[2]);
      if (!(count >= 0) || !Number.isInteger(count)) throw new PlyFormatError(`The element ${words[1]} has no valid count.`);
      elements.push({ name: words[1], count, properties: [], stride: 0 });
    } else if (words[0] === 'property') {
      const element = elements.at(-1);
      if (!element) throw new PlyFormatError('A property outside an element.');
      if (words[1] === 'list') {
        if (!SIZES[words[2]] || !SIZES[words[3]]) throw new PlyFormatError(`Unknown list types ${words[2]} ${words[3]}.`);
        element.properties.push({ name: words[4], type: words[3], countType: words[2], offset: -1 });
        element.stride = 0;
        continue;
      }
      const size = SIZES[words[1]];
      if (!size) throw new PlyFormatError(`Unknown property type ${words[1]}.`);
      if (element.properties.some((p) => p.countType)) throw new PlyFormatError('Properties after a list are not supported.');
      element.properties.push({ name: words[2], type: words[1], offset: element.stride });
      element.stride += size;
    }
  }
  return { elements, comments, bodyStart: headerEnd };
}

function reader(view: DataView) {
  return (offset: number, type: string): number => {
    switch (type) {
      case 'double': case 'float64': return view.getFloat64(offset, true);
      case 'float': case 'float32': return view.getFloat32(offset, true);
      case 'uchar': case 'uint8': return view.getUint8(offset);
      case 'char': case 'int8': return view.getInt8(offset);
      case 'ushort': case 'uint16': return view.getUint16(offset, true);
      case 'short': case 'int16': return view.getInt16(offset, true);
      case 'uint': case 'uint32': return view.getUint32(offset, true);
      default: return view.getInt32(offset, true);
    }
  };
}

/**
 * The vertices: every `step`-th one, minus their mean; `ordered`: stored coarse to fine (a mesh's
 * vertices keep their order: its faces name them by it). Uniform sampling by stride: the engine's
 * clouds come in depth-map order, so every k-th point thins the cloud evenly over the scene,
 * without sorting or hashing (a voxel grid would be more even but costs a hash of every point).
 */
function readVertices(buffer: ArrayBuffer, header: Header, step: number, ordered: boolean): PlyCloud {
  const vertex = header.elements[0];
  if (!vertex || vertex.name !== 'vertex') throw new PlyFormatError(header.elements.length ? 'Elements before the vertices are not supported.' : 'The PLY header declares no vertices.');
  if (vertex.properties.some((p) => p.countType)) throw new PlyFormatError('List properties on vertices are not supported.');
  const { count, stride } = vertex;
  const field = (name: string) => vertex.properties.find((p) => p.name === name);
  const [fx, fy, fz] = ['x', 'y', 'z'].map(field);
  if (!fx || !fy || !fz) throw new PlyFormatError('The vertices have no x, y, z.');
  const [fr, fg, fb] = ['red', 'green', 'blue'].map(field);
  if (buffer.byteLength < header.bodyStart + count * stride) throw new PlyFormatError(`The file is cut short: ${count} vertices declared.`);
  const read = reader(new DataView(buffer, header.bodyStart));
  const kept = Math.ceil(count / step);
  let cx = 0, cy = 0, cz = 0;
  for (let i = 0; i < count; i += step) {
    const o = i * stride;
    cx += read(o + fx.offset, fx.type);
    cy += read(o + fy.offset, fy.type);
    cz += read(o + fz.offset, fz.type);
  }
  const centre: [number, number, number] = kept ? [cx / kept, cy / kept, cz / kept] : [0, 0, 0];
  const positions = new Float32Array(kept * 3);
  const colors = fr && fg && fb ? new Uint8Array(kept * 3) : null;
  const colourScale = fr && (fr.type === 'float' || fr.type === 'double') ? 255 : 1;
  // Passes over the kept points [first, every]: in file order, or coarse to fine (every 64th, then
  // the 32nd between them, ..., then the odd ones), so that each prefix is an even thinning.
  const levels = ordered && kept >= COARSE_TO_FINE_FROM ? LEVELS : 0;
  const passes: [number, number][] = [[0, 2 ** levels]];
  for (let every = 2 ** levels; every > 1; every /= 2) passes.push([every / 2, every]);
  let j = 0;
  for (const [first, every] of passes) for (let q = first; q < kept; q += every, j++) {
    const o = q * step * stride;
    positions[3 * j] = read(o + fx.offset, fx.type) - centre[0];
    positions[3 * j + 1] = read(o + fy.offset, fy.type) - centre[1];
    positions[3 * j + 2] = read(o + fz.offset, fz.type) - centre[2];
    if (colors) {
      colors[3 * j] = read(o + fr!.offset, fr!.type) * colourScale;
      colors[3 * j + 1] = read(o + fg!.offset, fg!.type) * colourScale;
      colors[3 * j + 2] = read(o + fb!.offset, fb!.type) * colourScale;
    }
  }
  return { count: kept, positions, colors, centre, comments: header.comments, fileCount: count, ...(levels ? { levels } : {}) };
}

/** A point cloud, at most `maxPoints` of it (every k-th point when larger), centred on its mean. */
export function parsePly(buffer: ArrayBuffer, maxPoints = Infinity): PlyCloud {
  const header = readHeader(new Uint8Array(buffer));
  const count = header.elements[0]?.count ?? 0;
  return readVertices(buffer, header, count > maxPoints ? Math.ceil(count / maxPoints) : 1, true);
}

/** A triangle mesh (every vertex, every face), centred on its vertices' mean. */
export function parsePlyMesh(buffer: ArrayBuffer): PlyMesh {
  const header = readHeader(new Uint8Array(buffer));
  const cloud = readVertices(buffer, header, 1, false);
  const face = header.elements[1];
  if (!face || face.name !== 'face') throw new PlyFormatError('The PLY file has no faces.');
  const list = face.properties.find((p) => p.name === 'vertex_indices' || p.name === 'vertex_index');
  if (!list?.countType) throw new PlyFormatError('The faces have no vertex_indices list.');
  const before = face.properties.slice(0, face.properties.indexOf(list)).reduce((bytes, p) => bytes + (p.countType ? NaN : SIZES[p.type]), 0);
  if (Number.isNaN(before) || face.properties.at(-1) !== list) throw new PlyFormatError('Only faces whose last property is their one vertex list are supported.');
  const vertexBytes = header.elements[0].count * header.elements[0].stride;
  const view = new DataView(buffer, header.bodyStart + vertexBytes);
  const read = reader(view);
  const countSize = SIZES[list.countType];
  const itemSize = SIZES[list.type];
  // Room for one triangle per face; grown when polygons split into more.
  let out = new Uint32Array(Math.max(3, face.count * 3));
  let triangles = 0;
  let offset = 0;
  const push = (a: number, b: number, c: number) => {
    if (triangles * 3 + 3 > out.length) {
      const grown = new Uint32Array(out.length * 2);
      grown.set(out);
      out = grown;
    }
    out[triangles * 3] = a;
    out[triangles * 3 + 1] = b;
    out[triangles * 3 + 2] = c;
    triangles++;
  };
  for (let f = 0; f < face.count; f++) {
    offset += before;
    if (offset + countSize > view.byteLength) throw new PlyFormatError(`The file is cut short: ${face.count} faces declared.`);
    const n = read(offset, list.countType);
    offset += countSize;
    if (offset + n * itemSize > view.byteLength) throw new PlyFormatError(`The file is cut short: ${face.count} faces declared.`);
    const first = read(offset, list.type);
    for (let k = 2; k < n; k++) {
      const a = read(offset + (k - 1) * itemSize, list.type);
      const b = read(offset + k * itemSize, list.type);
      if (first >= cloud.count || a >= cloud.count || b >= cloud.count || first < 0 || a < 0 || b < 0) throw new PlyFormatError(`Face ${f} names a vertex that does not exist.`);
      push(first, a, b);
    }
    offset += n * itemSize;
  }
  return { ...cloud, indices: out.slice(0, triangles * 3), faceCount: triangles };
}

/**
 * The offset the header's comment names (`... minus offset_3d_xyz X Y Z`, the colmap engine's
 * `3d_mesh_web_ply`): file coordinates plus it are output coordinates. null when absent.
 */
export function offsetFromComments(comments: string[]): [number, number, number] | null {
  for (const comment of comments) {
    const match = /offset_3d_xyz\s+(-?[\d.eE+-]+)\s+(-?[\d.eE+-]+)\s+(-?[\d.eE+-]+)/.exec(comment);
    if (match) {
      const offset = [Number(match[1]), Number(match[2]), Number(match[3])];
      if (offset.every(Number.isFinite)) return offset as [number, number, number];
    }
  }
  return null;
}

function findHeaderEnd(bytes: Uint8Array): number {
  const marker = [101, 110, 100, 95, 104, 101, 97, 100, 101, 114]; // "end_header"
  const limit = Math.min(bytes.length, 64 * 1024);
  for (let i = 0; i + marker.length < limit; i++) {
    if (marker.every((b, k) => bytes[i + k] === b)) {
      let end = i + marker.length;
      if (bytes[end] === 13) end++;
      if (bytes[end] === 10) return end + 1;
    }
  }
  throw new PlyFormatError('No PLY header found.');
}
