// Reads a binary little-endian PLY point cloud (what the colmap engine writes: `double x, y, z`
// and `uchar red, green, blue`; also float coordinates and other vertex properties, skipped) into
// positions relative to a centre. Subtracting the centre in float64 before storing float32 keeps
// millimetres: absolute UTM coordinates (6 170 000 m) in float32 would be rounded to 0.5 m.

export interface PlyCloud {
  count: number;
  /** x, y, z per point, minus `centre`. */
  positions: Float32Array;
  /** r, g, b per point in 0..1, or null when the file has no colours. */
  colors: Float32Array | null;
  centre: [number, number, number];
  /** The header's comments (e.g. the coordinate system). */
  comments: string[];
}

const SIZES: Record<string, number> = { char: 1, uchar: 1, int8: 1, uint8: 1, short: 2, ushort: 2, int16: 2, uint16: 2, int: 4, uint: 4, int32: 4, uint32: 4, float: 4, float32: 4, double: 8, float64: 8 };

export class PlyFormatError extends Error {}

export function parsePly(buffer: ArrayBuffer, maxPoints = Infinity): PlyCloud {
  const bytes = new Uint8Array(buffer);
  const headerEnd = findHeaderEnd(bytes);
  const header = new TextDecoder('ascii').decode(bytes.subarray(0, headerEnd)).split(/\r?\n/);
  if (header[0] !== 'ply') throw new PlyFormatError('Not a PLY file.');
  if (!header.includes('format binary_little_endian 1.0')) throw new PlyFormatError('Only binary little-endian PLY files are supported.');
  const comments: string[] = [];
  let count = -1;
  let inVertex = false;
  let beforeVertex = false;
  const properties: { name: string; type: string; offset: number }[] = [];
  let stride = 0;
  for (const line of header) {
    const words = line.trim().split(/\s+/);
    if (words[0] === 'comment') comments.push(line.trim().slice(8));
    else if (words[0] === 'element') {
      inVertex = words[1] === 'vertex';
      if (inVertex) count = Number(words[2]);
      else if (count < 0) beforeVertex = true;
    } else if (words[0] === 'property' && inVertex) {
      if (words[1] === 'list') throw new PlyFormatError('List properties on vertices are not supported.');
      const size = SIZES[words[1]];
      if (!size) throw new PlyFormatError(`Unknown property type ${words[1]}.`);
      properties.push({ name: words[2], type: words[1], offset: stride });
      stride += size;
    }
  }
  if (beforeVertex) throw new PlyFormatError('Elements before the vertices are not supported.');
  if (!(count >= 0) || !Number.isInteger(count)) throw new PlyFormatError('The PLY header declares no vertices.');
  const field = (name: string) => properties.find((p) => p.name === name);
  const [fx, fy, fz] = ['x', 'y', 'z'].map(field);
  if (!fx || !fy || !fz) throw new PlyFormatError('The vertices have no x, y, z.');
  const [fr, fg, fb] = ['red', 'green', 'blue'].map(field);
  const bodyStart = headerEnd;
  if (bytes.length < bodyStart + count * stride) throw new PlyFormatError(`The file is cut short: ${count} vertices declared.`);
  const view = new DataView(buffer, bodyStart);
  const read = (offset: number, type: string): number => {
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
  // Every k-th point when the cloud is larger than the budget.
  const step = count > maxPoints ? Math.ceil(count / maxPoints) : 1;
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
  const colors = fr && fg && fb ? new Float32Array(kept * 3) : null;
  const colourScale = fr && (fr.type === 'float' || fr.type === 'double') ? 1 : 1 / 255;
  for (let i = 0, j = 0; i < count; i += step, j++) {
    const o = i * stride;
    positions[3 * j] = read(o + fx.offset, fx.type) - centre[0];
    positions[3 * j + 1] = read(o + fy.offset, fy.type) - centre[1];
    positions[3 * j + 2] = read(o + fz.offset, fz.type) - centre[2];
    if (colors) {
      colors[3 * j] = read(o + fr!.offset, fr!.type) * colourScale;
      colors[3 * j + 1] = read(o + fg!.offset, fg!.type) * colourScale;
      colors[3 * j + 2] = read(o + fb!.offset, fb!.type) * colourScale;
    }
  }
  return { count: kept, positions, colors, centre, comments };
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
