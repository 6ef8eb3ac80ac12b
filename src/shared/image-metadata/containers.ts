// Finds, in a JPEG, PNG or TIFF file read through a RangeSource, the pixel dimensions and the
// metadata blocks (the TIFF-structured EXIF data and the XMP packet), reading as little as possible.
import { inflateSync } from 'node:zlib';
import type { RangeSource } from './range-source.ts';

export type ImageFormat = 'jpeg' | 'png' | 'tiff';

export interface ContainerInfo {
  format: ImageFormat;
  /** Pixel size from the JPEG SOF or PNG IHDR; null for TIFF, whose size is read from IFD0 with the EXIF. */
  width: number | null;
  height: number | null;
  /**
   * TIFF-structured metadata (byte-order mark first, offsets relative to it): the APP1 "Exif" payload
   * of a JPEG, the eXIf chunk of a PNG, or for a TIFF file a buffer holding the file's header and
   * metadata directories at their own offsets (other bytes zero). null when absent.
   */
  tiff: Buffer | null;
  /** The XMP packet (XML text), null when absent. */
  xmp: string | null;
}

export type Located = { ok: true; info: ContainerInfo } | { ok: false; reason: string };

/** Largest metadata block (PNG chunk, TIFF tag value) read; bigger ones are skipped. */
const MAX_METADATA_BLOCK = 1 << 20;
/** Guard against looping over a corrupt file's structure. */
const MAX_STRUCTURES = 4096;

const fail = (reason: string): Located => ({ ok: false, reason });

export function detectFormat(head: Buffer): ImageFormat | null {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47 && head.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (head.length >= 4) {
    const bom = head.toString('latin1', 0, 2);
    if (bom === 'II' && head.readUInt16LE(2) === 42) return 'tiff';
    if (bom === 'MM' && head.readUInt16BE(2) === 42) return 'tiff';
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// JPEG: walk the marker segments from SOI, jumping over each one by its length, until the SOFn
// segment (frame header: precision, height, width). APP1 segments met on the way are the EXIF
// ("Exif\0\0" + TIFF) and the XMP ("http://ns.adobe.com/xap/1.0/\0" + XML). Only segment headers
// and the wanted payloads are read; the bytes of other segments (previews, ICC, MPF...) are not.

const EXIF_ID = Buffer.from('Exif\0', 'latin1');
const XMP_ID = Buffer.from('http://ns.adobe.com/xap/1.0/\0', 'latin1');

function isSofMarker(m: number): boolean {
  // C0-CF are SOF0-SOF15 except C4 (DHT), C8 (JPG extension) and CC (DAC).
  return m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
}

export async function locateJpeg(src: RangeSource): Promise<Located> {
  let pos = 2; // after SOI
  let exif: [number, number] | null = null;
  let xmp: [number, number] | null = null;
  let width: number;
  let height: number;
  for (let n = 0; ; n++) {
    if (n > MAX_STRUCTURES) return fail('corrupt JPEG: too many segments before the frame header');
    const head = await src.read(pos, pos + 4);
    if (head.length < 2) return fail('truncated JPEG: the file ends before the frame header (SOF)');
    if (head[0] !== 0xff) return fail(`corrupt JPEG: no segment marker at byte ${pos}`);
    const marker = head[1];
    if (marker === 0xff) {
      pos += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      pos += 2; // markers without a length
      continue;
    }
    if (marker === 0xd9) return fail('corrupt JPEG: end of image before the frame header (SOF)');
    if (marker === 0xda) return fail('corrupt JPEG: scan data before the frame header (SOF)');
    if (head.length < 4) return fail('truncated JPEG: the file ends inside a segment header');
    const length = head.readUInt16BE(2);
    if (length < 2) return fail(`corrupt JPEG: invalid segment length at byte ${pos}`);
    const payload = pos + 4;
    const end = pos + 2 + length;
    if (end > src.size) return fail('truncated JPEG: the file ends inside a segment');
    if (isSofMarker(marker)) {
      const sof = await src.read(payload, payload + 5);
      if (sof.length < 5 || length < 8) return fail('corrupt JPEG: short frame header');
      height = sof.readUInt16BE(1);
      width = sof.readUInt16BE(3);
      if (width === 0 || height === 0) return fail('unsupported JPEG: zero width or height in the frame header');
      break;
    }
    if (marker === 0xe1 && (exif === null || xmp === null)) {
      const id = await src.read(payload, Math.min(end, payload + XMP_ID.length));
      if (exif === null && id.length >= 6 && id.subarray(0, EXIF_ID.length).equals(EXIF_ID)) {
        exif = [payload + 6, end];
      } else if (xmp === null && id.equals(XMP_ID)) {
        xmp = [payload + XMP_ID.length, end];
      }
    }
    pos = end;
  }
  const tiff = exif ? await src.read(exif[0], exif[1]) : null;
  const xmpBytes = xmp ? await src.read(xmp[0], xmp[1]) : null;
  return {
    ok: true,
    info: {
      format: 'jpeg',
      width,
      height,
      tiff: tiff && tiff.length >= 8 ? tiff : null,
      xmp: xmpBytes ? xmpBytes.toString('utf8') : null,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// PNG: IHDR is the first chunk (width, height). Metadata chunks before the image data: eXIf
// (raw TIFF) and the text chunk with keyword "XML:com.adobe.xmp" (XMP): iTXt as the XMP
// specification says, or zTXt/tEXt as libpng-based writers (libvips, so sharp) produce it.
// Chunks are jumped over by their length.

export async function locatePng(src: RangeSource): Promise<Located> {
  let pos = 8;
  let width = 0;
  let height = 0;
  let tiff: Buffer | null = null;
  let xmp: string | null = null;
  for (let n = 0; ; n++) {
    if (n > MAX_STRUCTURES) return fail('corrupt PNG: too many chunks');
    const head = await src.read(pos, pos + 8);
    if (head.length < 8) {
      if (n === 0) return fail('truncated PNG: no IHDR chunk');
      break; // a file cut short after its metadata still has usable metadata
    }
    const length = head.readUInt32BE(0);
    const type = head.toString('latin1', 4, 8);
    const data = pos + 8;
    if (n === 0) {
      if (type !== 'IHDR' || length < 8) return fail('corrupt PNG: the first chunk is not IHDR');
      const ihdr = await src.read(data, data + 8);
      if (ihdr.length < 8) return fail('truncated PNG: short IHDR chunk');
      width = ihdr.readUInt32BE(0);
      height = ihdr.readUInt32BE(4);
      if (width === 0 || height === 0) return fail('corrupt PNG: zero width or height');
    } else if (type === 'IDAT' || type === 'IEND') {
      break;
    } else if (type === 'eXIf' && tiff === null && length >= 8 && length <= MAX_METADATA_BLOCK) {
      const bytes = await src.read(data, data + length);
      if (bytes.length === length) tiff = bytes;
    } else if ((type === 'iTXt' || type === 'zTXt' || type === 'tEXt') && xmp === null && length <= MAX_METADATA_BLOCK) {
      const keyword = await src.read(data, data + Math.min(length, XMP_KEYWORD.length));
      if (keyword.equals(XMP_KEYWORD)) {
        const bytes = await src.read(data, data + length);
        if (bytes.length === length) xmp = xmpFromTextChunk(type, bytes.subarray(XMP_KEYWORD.length));
      }
    }
    pos = data + length + 4; // data, then CRC
  }
  return { ok: true, info: { format: 'png', width, height, tiff, xmp } };
}

const XMP_KEYWORD = Buffer.from('XML:com.adobe.xmp\0', 'latin1');

/** The XMP text of a PNG text chunk, given the chunk data after "keyword\0". */
function xmpFromTextChunk(type: string, rest: Buffer): string | null {
  let compressed: boolean;
  let text: Buffer;
  if (type === 'tEXt') {
    compressed = false;
    text = rest;
  } else if (type === 'zTXt') {
    // compression-method, compressed text
    compressed = true;
    text = rest.subarray(1);
  } else {
    // iTXt: compression-flag, compression-method, language \0, translated keyword \0, text
    compressed = rest[0] === 1;
    const langEnd = rest.indexOf(0, 2);
    const translatedEnd = langEnd < 0 ? -1 : rest.indexOf(0, langEnd + 1);
    if (translatedEnd < 0) return null;
    text = rest.subarray(translatedEnd + 1);
  }
  try {
    return (compressed ? inflateSync(text, { maxOutputLength: 4 * MAX_METADATA_BLOCK }) : text).toString('utf8');
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// TIFF: directories and values can lie anywhere in the file. Walk IFD0 and the EXIF and GPS
// directories it points to, read each directory and the out-of-line values of the tags the
// analysis uses, and place them at their own offsets in a zero-filled buffer that the EXIF parser
// reads like the whole file.

const TIFF_TYPE_SIZES = [0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4];
const TAG_EXIF_IFD = 0x8769;
const TAG_GPS_IFD = 0x8825;
const TAG_XMP = 0x02bc;
/** Tags whose values are copied (besides the IFD pointers): see metadata.ts for their meaning. */
const TIFF_WANTED: Record<'ifd0' | 'exif' | 'gps', Set<number>> = {
  ifd0: new Set([0x0100, 0x0101, 0x010f, 0x0110, 0x0112, TAG_EXIF_IFD, TAG_GPS_IFD]),
  exif: new Set([0x9003, 0x9004, 0x9011, 0x9291, 0x920a, 0xa405]),
  gps: new Set([0x0001, 0x0002, 0x0003, 0x0004, 0x0005, 0x0006, 0x0007, 0x001d]),
};
/** Largest file for which the sparse copy is made (its zero-filled buffer is as long as the farthest byte used). */
const MAX_SPARSE_TIFF = 512 * 1024 * 1024;

export async function locateTiff(src: RangeSource): Promise<Located> {
  const header = await src.read(0, 8);
  if (header.length < 8) return fail('truncated TIFF header');
  const le = header[0] === 0x49;
  const u16 = (b: Buffer, o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (b: Buffer, o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const regions: Array<{ start: number; data: Buffer }> = [{ start: 0, data: header }];
  let xmp: string | null = null;

  const readIfd = async (offset: number, which: 'ifd0' | 'exif' | 'gps'): Promise<Map<number, number> | null> => {
    if (offset < 8 || offset + 2 > src.size) return null;
    const countBytes = await src.read(offset, offset + 2);
    if (countBytes.length < 2) return null;
    const count = u16(countBytes, 0);
    const tableEnd = offset + 2 + 12 * count;
    if (count === 0 || tableEnd > src.size) return null;
    const table = await src.read(offset, Math.min(src.size, tableEnd + 4));
    if (table.length < tableEnd - offset) return null;
    regions.push({ start: offset, data: table });
    const pointers = new Map<number, number>();
    for (let i = 0; i < count; i++) {
      const e = 2 + 12 * i;
      const tag = u16(table, e);
      const type = u16(table, e + 2);
      const n = u32(table, e + 4);
      const size = (TIFF_TYPE_SIZES[type] ?? 0) * n;
      const inline = size <= 4;
      const valueOffset = inline ? offset + e + 8 : u32(table, e + 8);
      if (which === 'ifd0' && (tag === TAG_EXIF_IFD || tag === TAG_GPS_IFD)) pointers.set(tag, u32(table, e + 8));
      if (which === 'ifd0' && tag === TAG_XMP && size > 0 && size <= MAX_METADATA_BLOCK) {
        const bytes = inline ? table.subarray(e + 8, e + 8 + size) : await src.read(valueOffset, valueOffset + size);
        if (bytes.length === size) xmp = bytes.toString('utf8');
      }
      if (!inline && TIFF_WANTED[which].has(tag) && size <= MAX_METADATA_BLOCK && valueOffset + size <= src.size) {
        const bytes = await src.read(valueOffset, valueOffset + size);
        if (bytes.length === size) regions.push({ start: valueOffset, data: bytes });
      }
    }
    return pointers;
  };

  const ifd0 = await readIfd(u32(header, 4), 'ifd0');
  if (!ifd0) return fail('corrupt TIFF: the first image directory (IFD0) is missing or cut short');
  const exifOffset = ifd0.get(TAG_EXIF_IFD);
  if (exifOffset !== undefined) await readIfd(exifOffset, 'exif');
  const gpsOffset = ifd0.get(TAG_GPS_IFD);
  if (gpsOffset !== undefined) await readIfd(gpsOffset, 'gps');

  const extent = Math.max(...regions.map((r) => r.start + r.data.length));
  if (extent > MAX_SPARSE_TIFF) return fail('unsupported TIFF: metadata too far into the file');
  const tiff = Buffer.alloc(extent);
  for (const r of regions) r.data.copy(tiff, r.start);
  return { ok: true, info: { format: 'tiff', width: null, height: null, tiff, xmp } };
}
