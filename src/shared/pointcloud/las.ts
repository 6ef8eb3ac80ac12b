// LAS 1.2 (ASPRS) reading and writing, point data formats 0-3, without any library.
//
// Writing: point format 2 (x, y, z, intensity, returns, classification, RGB) or 3 (format 2 plus
// GPS time), a 227-byte public header with scale, offset, bounds and the count by return, and,
// when the coordinate system is known, the LASF_Projection records that readers look for:
// GeoKeyDirectoryTag (34735, EPSG codes of the horizontal and vertical systems, what LAS 1.2
// defines) and OGC WKT (2112, what PDAL, CloudCompare and LAStools also read). Colours are 8-bit in
// memory and written as 16-bit (c * 257), as the LAS specification asks.
//
// Reading: LAS 1.0-1.4 files whose points are in formats 0-3 (the first 227 header bytes are the
// same in every version; points are found at the header's offset and record length). Colours are
// brought back to 8 bits (16-bit values >> 8, or as they are when every value fits in 8 bits).
// Compressed LAZ is not read here.
import { createPointCloud, type PointCloud, type Vec3 } from './point-cloud.ts';

export interface LasWriteOptions {
  /** 2 (default) or 3. */
  pointFormat?: 2 | 3;
  /** Coordinate resolution; default 0.001 (millimetres in a metric system). */
  scale?: Vec3 | number;
  /** Default: the minimum of the points rounded down to a multiple of 1000 units. */
  offset?: Vec3;
  /** OGC WKT of the points' coordinate system (written as record 2112). */
  wkt?: string;
  /** EPSG codes for the GeoKeyDirectoryTag record (34735). */
  horizontalEpsg?: number | null;
  verticalEpsg?: number | null;
  /** Whether the horizontal system is projected (default) or geographic, for the GeoKeys. */
  geographic?: boolean;
  /** Up to 32 characters. */
  generatingSoftware?: string;
  systemIdentifier?: string;
  /** Classification written on every point (default 1, "unclassified"). */
  classification?: number;
  creationDate?: Date;
}

export interface LasHeader {
  versionMajor: number;
  versionMinor: number;
  pointFormat: number;
  pointRecordLength: number;
  pointCount: number;
  scale: Vec3;
  offset: Vec3;
  min: Vec3;
  max: Vec3;
  systemIdentifier: string;
  generatingSoftware: string;
  /** OGC WKT from record 2112, when present. */
  wkt: string | null;
  /** ProjectedCSTypeGeoKey / GeographicTypeGeoKey and VerticalCSTypeGeoKey from record 34735. */
  horizontalEpsg: number | null;
  verticalEpsg: number | null;
}

export interface LasFile extends PointCloud {
  header: LasHeader;
  /** Classification of each point. */
  classification: Uint8Array;
  /** GPS time of each point (formats 1 and 3), else null. */
  gpsTime: Float64Array | null;
}

const HEADER_SIZE = 227;
const VLR_HEADER_SIZE = 54;
const RECORD_LENGTH: Record<number, number> = { 0: 20, 1: 28, 2: 26, 3: 34 };

export class LasFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LasFormatError';
  }
}

export function writeLas(cloud: PointCloud, options: LasWriteOptions = {}): Buffer {
  const format = options.pointFormat ?? 2;
  if (format !== 2 && format !== 3) throw new RangeError('LAS point format must be 2 or 3');
  const recordLength = RECORD_LENGTH[format];
  const scale: Vec3 = typeof options.scale === 'number' ? [options.scale, options.scale, options.scale] : (options.scale ?? [0.001, 0.001, 0.001]);
  const min: Vec3 = [Infinity, Infinity, Infinity];
  const max: Vec3 = [-Infinity, -Infinity, -Infinity];
  const p = cloud.positions;
  for (let i = 0; i < cloud.count; i++) {
    for (let a = 0; a < 3; a++) {
      const v = p[3 * i + a];
      if (!Number.isFinite(v)) throw new RangeError(`point ${i} has a non-finite coordinate`);
      if (v < min[a]) min[a] = v;
      if (v > max[a]) max[a] = v;
    }
  }
  if (cloud.count === 0) {
    min.fill(0);
    max.fill(0);
  }
  const offset: Vec3 = options.offset ?? [0, 1, 2].map((a) => Math.floor(min[a] / 1000) * 1000) as Vec3;
  for (let a = 0; a < 3; a++) {
    // Every coordinate must fit a signed 32-bit integer at this scale.
    const span = Math.max(Math.abs(min[a] - offset[a]), Math.abs(max[a] - offset[a])) / scale[a];
    if (span > 2_147_483_647) throw new RangeError(`coordinates of axis ${'xyz'[a]} do not fit LAS integers at scale ${scale[a]}; use a larger scale or another offset`);
  }

  const vlrs = projectionRecords(options);
  const vlrBytes = vlrs.reduce((n, v) => n + v.length, 0);
  const pointOffset = HEADER_SIZE + vlrBytes;
  const out = Buffer.alloc(pointOffset + cloud.count * recordLength);

  out.write('LASF', 0, 'ascii');
  // 4 file source id, 6 global encoding (0: GPS week time), 8-23 project GUID: zero.
  out.writeUInt8(1, 24);
  out.writeUInt8(2, 25);
  writeText(out, options.systemIdentifier ?? 'OTHER', 26, 32);
  writeText(out, options.generatingSoftware ?? 'open-inspection', 58, 32);
  const date = options.creationDate ?? new Date();
  const dayOfYear = Math.floor((Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()) - Date.UTC(date.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
  out.writeUInt16LE(dayOfYear, 90);
  out.writeUInt16LE(date.getUTCFullYear(), 92);
  out.writeUInt16LE(HEADER_SIZE, 94);
  out.writeUInt32LE(pointOffset, 96);
  out.writeUInt32LE(vlrs.length, 100);
  out.writeUInt8(format, 104);
  out.writeUInt16LE(recordLength, 105);
  out.writeUInt32LE(cloud.count, 107);
  out.writeUInt32LE(cloud.count, 111); // every point is a first (and only) return
  for (let a = 0; a < 3; a++) {
    out.writeDoubleLE(scale[a], 131 + 8 * a);
    out.writeDoubleLE(offset[a], 155 + 8 * a);
    out.writeDoubleLE(max[a], 179 + 16 * a);
    out.writeDoubleLE(min[a], 187 + 16 * a);
  }
  let at = HEADER_SIZE;
  for (const vlr of vlrs) {
    vlr.copy(out, at);
    at += vlr.length;
  }

  const classification = options.classification ?? 1;
  const c = cloud.colors;
  for (let i = 0; i < cloud.count; i++) {
    const o = pointOffset + i * recordLength;
    out.writeInt32LE(Math.round((p[3 * i] - offset[0]) / scale[0]), o);
    out.writeInt32LE(Math.round((p[3 * i + 1] - offset[1]) / scale[1]), o + 4);
    out.writeInt32LE(Math.round((p[3 * i + 2] - offset[2]) / scale[2]), o + 8);
    // o + 12 intensity: 0
    out.writeUInt8(0b0000_1001, o + 14); // return 1 of 1
    out.writeUInt8(classification, o + 15);
    // o + 16 scan angle, o + 17 user data, o + 18 point source id: 0
    const rgb = format === 2 ? o + 20 : o + 28; // format 3: GPS time (0) at o + 20
    if (c) {
      out.writeUInt16LE(c[3 * i] * 257, rgb);
      out.writeUInt16LE(c[3 * i + 1] * 257, rgb + 2);
      out.writeUInt16LE(c[3 * i + 2] * 257, rgb + 4);
    }
  }
  return out;
}

export function readLas(data: Buffer): LasFile {
  if (data.length < HEADER_SIZE || data.toString('ascii', 0, 4) !== 'LASF') throw new LasFormatError('not a LAS file (no LASF signature)');
  const versionMajor = data.readUInt8(24);
  const versionMinor = data.readUInt8(25);
  const headerSize = data.readUInt16LE(94);
  const pointOffset = data.readUInt32LE(96);
  const vlrCount = data.readUInt32LE(100);
  const formatByte = data.readUInt8(104);
  if (formatByte & 0x80) throw new LasFormatError('compressed LAZ points are not supported by readLas');
  const pointFormat = formatByte & 0x3f;
  if (!(pointFormat in RECORD_LENGTH)) throw new LasFormatError(`point data format ${pointFormat} is not supported (0-3 are)`);
  const recordLength = data.readUInt16LE(105);
  if (recordLength < RECORD_LENGTH[pointFormat]) throw new LasFormatError(`point record length ${recordLength} is too short for format ${pointFormat}`);
  let pointCount = data.readUInt32LE(107);
  if (pointCount === 0 && versionMinor >= 4 && data.length >= 255) pointCount = Number(data.readBigUInt64LE(247));
  if (pointOffset + pointCount * recordLength > data.length) throw new LasFormatError('truncated LAS file: fewer point records than the header counts');
  const v3 = (start: number, stride: number): Vec3 => [data.readDoubleLE(start), data.readDoubleLE(start + stride), data.readDoubleLE(start + 2 * stride)];
  const scale = v3(131, 8);
  const offset = v3(155, 8);
  const max = v3(179, 16);
  const min = v3(187, 16);

  let wkt: string | null = null;
  let horizontalEpsg: number | null = null;
  let verticalEpsg: number | null = null;
  let at = headerSize;
  for (let v = 0; v < vlrCount && at + VLR_HEADER_SIZE <= pointOffset; v++) {
    const userId = readText(data, at + 2, 16);
    const recordId = data.readUInt16LE(at + 18);
    const length = data.readUInt16LE(at + 20);
    const body = data.subarray(at + VLR_HEADER_SIZE, at + VLR_HEADER_SIZE + length);
    if (userId === 'LASF_Projection' && recordId === 2112) wkt = readText(body, 0, body.length) || null;
    if (userId === 'LASF_Projection' && recordId === 34735 && body.length >= 8) {
      const keys = body.readUInt16LE(6);
      for (let k = 0; k < keys && 8 + 8 * k + 8 <= body.length; k++) {
        const e = 8 + 8 * k;
        const id = body.readUInt16LE(e);
        const location = body.readUInt16LE(e + 2);
        const value = body.readUInt16LE(e + 6);
        if (location !== 0) continue;
        if (id === 3072 || id === 2048) horizontalEpsg = value;
        if (id === 4096) verticalEpsg = value;
      }
    }
    at += VLR_HEADER_SIZE + length;
  }

  const hasColor = pointFormat === 2 || pointFormat === 3;
  const cloud = createPointCloud(pointCount, hasColor);
  const classification = new Uint8Array(pointCount);
  const gpsTime = pointFormat === 1 || pointFormat === 3 ? new Float64Array(pointCount) : null;
  const wide = hasColor ? new Uint16Array(pointCount * 3) : null;
  let over8bits = false;
  for (let i = 0; i < pointCount; i++) {
    const o = pointOffset + i * recordLength;
    cloud.positions[3 * i] = data.readInt32LE(o) * scale[0] + offset[0];
    cloud.positions[3 * i + 1] = data.readInt32LE(o + 4) * scale[1] + offset[1];
    cloud.positions[3 * i + 2] = data.readInt32LE(o + 8) * scale[2] + offset[2];
    classification[i] = data.readUInt8(o + 15) & 0x1f;
    if (gpsTime) gpsTime[i] = data.readDoubleLE(o + 20);
    if (wide) {
      const rgb = pointFormat === 2 ? o + 20 : o + 28;
      for (let a = 0; a < 3; a++) {
        const value = data.readUInt16LE(rgb + 2 * a);
        wide[3 * i + a] = value;
        if (value > 255) over8bits = true;
      }
    }
  }
  if (wide) for (let j = 0; j < wide.length; j++) cloud.colors![j] = over8bits ? wide[j] >> 8 : wide[j];

  return {
    ...cloud,
    classification,
    gpsTime,
    header: {
      versionMajor,
      versionMinor,
      pointFormat,
      pointRecordLength: recordLength,
      pointCount,
      scale,
      offset,
      min,
      max,
      systemIdentifier: readText(data, 26, 32),
      generatingSoftware: readText(data, 58, 32),
      wkt,
      horizontalEpsg,
      verticalEpsg,
    },
  };
}

/** The LASF_Projection variable-length records for the options' coordinate system. */
function projectionRecords(options: LasWriteOptions): Buffer[] {
  const records: Buffer[] = [];
  if (options.horizontalEpsg) {
    const keys: [number, number][] = [
      [1024, options.geographic ? 2 : 1], // GTModelTypeGeoKey: projected / geographic
      [1025, 1], // GTRasterTypeGeoKey: PixelIsArea
      [options.geographic ? 2048 : 3072, options.horizontalEpsg], // GeographicTypeGeoKey / ProjectedCSTypeGeoKey
    ];
    if (options.verticalEpsg) keys.push([4096, options.verticalEpsg]); // VerticalCSTypeGeoKey
    const body = Buffer.alloc(8 + 8 * keys.length);
    body.writeUInt16LE(1, 0); // KeyDirectoryVersion
    body.writeUInt16LE(1, 2); // KeyRevision
    body.writeUInt16LE(0, 4); // MinorRevision
    body.writeUInt16LE(keys.length, 6);
    keys.forEach(([id, value], k) => {
      body.writeUInt16LE(id, 8 + 8 * k);
      body.writeUInt16LE(0, 8 + 8 * k + 2); // value stored in the entry
      body.writeUInt16LE(1, 8 + 8 * k + 4);
      body.writeUInt16LE(value, 8 + 8 * k + 6);
    });
    records.push(vlr('LASF_Projection', 34735, 'GeoKeyDirectoryTag', body));
  }
  if (options.wkt) records.push(vlr('LASF_Projection', 2112, 'OGC WKT coordinate system', Buffer.from(`${options.wkt}\0`, 'utf8')));
  return records;
}

function vlr(userId: string, recordId: number, description: string, body: Buffer): Buffer {
  if (body.length > 65535) throw new RangeError('LAS variable-length record too long');
  const out = Buffer.alloc(VLR_HEADER_SIZE + body.length);
  writeText(out, userId, 2, 16);
  out.writeUInt16LE(recordId, 18);
  out.writeUInt16LE(body.length, 20);
  writeText(out, description, 22, 32);
  body.copy(out, VLR_HEADER_SIZE);
  return out;
}

function writeText(buffer: Buffer, text: string, at: number, size: number): void {
  buffer.write(text.slice(0, size), at, size, 'ascii');
}

function readText(buffer: Buffer, at: number, size: number): string {
  const raw = buffer.subarray(at, at + size);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? raw.length : end).toString('utf8').trim();
}
