// The georeferencing of a GeoTIFF (an engine's orthophoto, DSM or DTM), read from its first IFD
// with a few ranged reads, without decoding any pixel: the raster size, the pixel -> model
// transform (ModelPixelScale + ModelTiepoint, or ModelTransformation) and the EPSG code of its
// system (GeoKeys ProjectedCSTypeGeoKey / GeographicTypeGeoKey). Classic TIFF and BigTIFF, either
// byte order. GeoTIFF 1.1 (OGC 19-008r4) sections 7.2-7.4; GDAL's reading of PixelIsPoint
// (the model point names the centre of the pixel, so the corner is half a pixel further).

/** Reads bytes [start, end] (inclusive) of the file; may return fewer at the end of the file. */
export type RangeReader = (start: number, end: number) => Promise<Buffer>;

export interface GeoTiffGeoreference {
  width: number;
  height: number;
  /** The EPSG code of the model system; null when the file defines its own (user-defined keys). */
  epsg: number | null;
  /** 1: projected, 2: geographic (GTModelTypeGeoKey). */
  modelType: number | null;
  /** Model coordinates of a raster position (pixel edges: (0, 0) the top-left corner of the image). */
  toModel(column: number, row: number): [number, number];
}

export class GeoTiffError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GeoTiffError';
  }
}

const TAG = {
  width: 256,
  height: 257,
  pixelScale: 33550,
  tiepoint: 33922,
  transformation: 34264,
  geoKeys: 34735,
} as const;
const KEY = { modelType: 1024, rasterType: 1025, geographicType: 2048, projectedType: 3072 } as const;
const USER_DEFINED = 32767;
/** Bytes of one value of each TIFF field type. */
const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 16: 8, 17: 8, 18: 8 };
const MAX_ENTRIES = 4096;
const MAX_VALUES = 1 << 16;

interface Entry {
  tag: number;
  type: number;
  count: number;
  /** Where the values are: inline in the entry (already read) or at an offset of the file. */
  inline: Buffer | null;
  offset: number;
}

export async function readGeoTiffGeoreference(read: RangeReader): Promise<GeoTiffGeoreference> {
  const header = await read(0, 15);
  if (header.length < 8) throw new GeoTiffError('not a TIFF file (too short)');
  const order = header.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') throw new GeoTiffError('not a TIFF file (no byte order mark)');
  const le = order === 'II';
  const u16 = (b: Buffer, at: number) => (le ? b.readUInt16LE(at) : b.readUInt16BE(at));
  const u32 = (b: Buffer, at: number) => (le ? b.readUInt32LE(at) : b.readUInt32BE(at));
  const u64 = (b: Buffer, at: number) => Number(le ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at));
  const magic = u16(header, 2);
  const big = magic === 43;
  if (magic !== 42 && !big) throw new GeoTiffError('not a TIFF file (bad magic number)');
  if (big && header.length < 16) throw new GeoTiffError('truncated BigTIFF header');
  const ifd = big ? u64(header, 8) : u32(header, 4);
  const countSize = big ? 8 : 2;
  const entrySize = big ? 20 : 12;
  const inlineSize = big ? 8 : 4;

  const countBytes = await read(ifd, ifd + countSize - 1);
  if (countBytes.length < countSize) throw new GeoTiffError('the first IFD lies beyond the end of the file');
  const count = big ? u64(countBytes, 0) : u16(countBytes, 0);
  if (count === 0 || count > MAX_ENTRIES) throw new GeoTiffError(`implausible IFD entry count ${count}`);
  const table = await read(ifd + countSize, ifd + countSize + count * entrySize - 1);
  if (table.length < count * entrySize) throw new GeoTiffError('truncated IFD');
  const entries = new Map<number, Entry>();
  for (let i = 0; i < count; i++) {
    const at = i * entrySize;
    const tag = u16(table, at);
    const type = u16(table, at + 2);
    const n = big ? u64(table, at + 4) : u32(table, at + 4);
    const size = (TYPE_SIZE[type] ?? 0) * n;
    const valueAt = at + (big ? 12 : 8);
    entries.set(tag, {
      tag,
      type,
      count: n,
      inline: size <= inlineSize ? table.subarray(valueAt, valueAt + inlineSize) : null,
      offset: size <= inlineSize ? 0 : big ? u64(table, valueAt) : u32(table, valueAt),
    });
  }

  const numbers = async (tag: number): Promise<number[] | null> => {
    const entry = entries.get(tag);
    if (!entry) return null;
    const size = TYPE_SIZE[entry.type];
    if (!size || entry.count > MAX_VALUES) throw new GeoTiffError(`tag ${tag}: unsupported type ${entry.type} or count ${entry.count}`);
    const bytes = entry.inline ?? (await read(entry.offset, entry.offset + entry.count * size - 1));
    if (bytes.length < entry.count * size) throw new GeoTiffError(`tag ${tag}: values beyond the end of the file`);
    const values: number[] = [];
    for (let i = 0; i < entry.count; i++) {
      const at = i * size;
      switch (entry.type) {
        case 1:
        case 7:
          values.push(bytes[at]);
          break;
        case 3:
          values.push(u16(bytes, at));
          break;
        case 4:
          values.push(u32(bytes, at));
          break;
        case 16:
          values.push(u64(bytes, at));
          break;
        case 11:
          values.push(le ? bytes.readFloatLE(at) : bytes.readFloatBE(at));
          break;
        case 12:
          values.push(le ? bytes.readDoubleLE(at) : bytes.readDoubleBE(at));
          break;
        default:
          throw new GeoTiffError(`tag ${tag}: unsupported field type ${entry.type}`);
      }
    }
    return values;
  };

  const width = (await numbers(TAG.width))?.[0];
  const height = (await numbers(TAG.height))?.[0];
  if (!width || !height) throw new GeoTiffError('no image width or height');

  // GeoKeyDirectory: header (version, revision, minor, count), then (key, location, count, value).
  const keys = new Map<number, number>();
  const directory = await numbers(TAG.geoKeys);
  if (!directory) throw new GeoTiffError('no GeoKeyDirectory: the TIFF is not georeferenced');
  for (let i = 4; i + 3 < directory.length && i < 4 + 4 * directory[3]; i += 4) {
    // location 0: the value is the short itself (the codes we need are always stored so).
    if (directory[i + 1] === 0) keys.set(directory[i], directory[i + 3]);
  }
  const modelType = keys.get(KEY.modelType) ?? null;
  const code = modelType === 2 ? keys.get(KEY.geographicType) : (keys.get(KEY.projectedType) ?? keys.get(KEY.geographicType));
  const epsg = code && code !== USER_DEFINED ? code : null;
  const pixelIsPoint = keys.get(KEY.rasterType) === 2;

  const matrix = await numbers(TAG.transformation);
  let toModel: (column: number, row: number) => [number, number];
  if (matrix && matrix.length >= 16) {
    toModel = (i, j) => [matrix[0] * i + matrix[1] * j + matrix[3], matrix[4] * i + matrix[5] * j + matrix[7]];
  } else {
    const scale = await numbers(TAG.pixelScale);
    const tie = await numbers(TAG.tiepoint);
    if (!scale || scale.length < 2 || !tie || tie.length < 6) throw new GeoTiffError('no ModelPixelScale and ModelTiepoint, nor ModelTransformation');
    const [I, J, , X, Y] = tie;
    const [sx, sy] = scale;
    toModel = (i, j) => [X + (i - I) * sx, Y - (j - J) * sy];
  }
  const shift = pixelIsPoint ? 0.5 : 0;
  const transform = (column: number, row: number): [number, number] => {
    const [x, y] = toModel(column - shift, row - shift);
    if (!Number.isFinite(x) || !Number.isFinite(y)) throw new GeoTiffError('the georeferencing gives no finite coordinates');
    return [x, y];
  };
  transform(0, 0);
  return { width, height, epsg, modelType, toModel: transform };
}
