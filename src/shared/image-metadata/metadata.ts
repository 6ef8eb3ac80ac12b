// Turns the metadata blocks found in an image (TIFF-structured EXIF, XMP packet) into fields, with
// exifr doing the TIFF and XMP decoding.
//
// exifr is only ever given an in-memory Buffer holding exactly the block to decode (containers.ts
// found and read it), never a path or URL: with a Buffer, exifr reads nothing itself (its chunked
// reader, `firstChunkSize`/`chunkSize`/`chunkLimit`, only applies to files, URLs and Blobs), so it
// cannot ask for bytes beyond what was fetched.
import exifr from 'exifr';

// TIFF tags used (numeric, so the output does not depend on exifr's name dictionaries).
export const TAG = {
  ImageWidth: 0x0100,
  ImageHeight: 0x0101,
  Make: 0x010f,
  Model: 0x0110,
  Orientation: 0x0112,
  DateTimeOriginal: 0x9003,
  CreateDate: 0x9004, // DateTimeDigitized
  OffsetTimeOriginal: 0x9011,
  SubSecTimeOriginal: 0x9291,
  FocalLength: 0x920a,
  FocalLengthIn35mmFormat: 0xa405,
  GPSLatitudeRef: 0x0001,
  GPSLatitude: 0x0002,
  GPSLongitudeRef: 0x0003,
  GPSLongitude: 0x0004,
  GPSAltitudeRef: 0x0005,
  GPSAltitude: 0x0006,
  GPSTimeStamp: 0x0007,
  GPSDateStamp: 0x001d,
} as const;

// One options object, reused: exifr caches the parsed form of an options object it has seen.
// Only the picked tags are decoded; thumbnails, maker notes, ICC, IPTC and XMP are left alone
// (XMP is decoded separately, below, so that its `tiff:` and `exif:` properties do not mix with
// the real TIFF tags as exifr's merged output would).
const EXIFR_OPTIONS = {
  tiff: true,
  ifd0: { pick: [TAG.ImageWidth, TAG.ImageHeight, TAG.Make, TAG.Model, TAG.Orientation] },
  exif: {
    pick: [
      TAG.DateTimeOriginal,
      TAG.CreateDate,
      TAG.OffsetTimeOriginal,
      TAG.SubSecTimeOriginal,
      TAG.FocalLength,
      TAG.FocalLengthIn35mmFormat,
    ],
  },
  gps: {
    pick: [
      TAG.GPSLatitudeRef,
      TAG.GPSLatitude,
      TAG.GPSLongitudeRef,
      TAG.GPSLongitude,
      TAG.GPSAltitudeRef,
      TAG.GPSAltitude,
      TAG.GPSTimeStamp,
      TAG.GPSDateStamp,
    ],
  },
  ifd1: false,
  interop: false,
  xmp: false,
  icc: false,
  iptc: false,
  jfif: false,
  ihdr: false,
  makerNote: false,
  userComment: false,
  mergeOutput: false,
  translateKeys: false,
  translateValues: false,
  reviveValues: false,
  sanitize: true,
  silentErrors: true,
};

type Block = Record<string, unknown>;
export interface TiffTags {
  ifd0: Block;
  exif: Block;
  gps: Block;
}

/** Decodes the picked IFD0, EXIF and GPS tags; blocks that are missing or unreadable come back empty. */
export async function parseTiffTags(tiff: Buffer | null): Promise<TiffTags> {
  const empty: TiffTags = { ifd0: {}, exif: {}, gps: {} };
  if (!tiff) return empty;
  let out: Record<string, unknown> | undefined;
  try {
    out = (await exifr.parse(tiff, EXIFR_OPTIONS)) as Record<string, unknown> | undefined;
  } catch {
    return empty; // malformed EXIF: the image is still usable without it
  }
  const block = (v: unknown): Block => (v && typeof v === 'object' ? (v as Block) : {});
  return { ifd0: block(out?.ifd0), exif: block(out?.exif), gps: block(out?.gps) };
}

type XmpParser = { parse(xmp: string): unknown };
const xmpParser = exifr.segmentParsers.get('xmp') as XmpParser | undefined;

/** Decodes an XMP packet into `{ [namespace prefix]: { [property]: value } }`; {} when unreadable. */
export function parseXmp(xmp: string | null): Record<string, Block> {
  if (!xmp || !xmpParser) return {};
  try {
    const out = xmpParser.parse(xmp);
    return out && typeof out === 'object' ? (out as Record<string, Block>) : {};
  } catch {
    return {};
  }
}

// ---------------------------------------------------------------------------------------------
// Field conversions. Every one returns null for a missing or unusable value.

export function num(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : null;
  }
  if ((Array.isArray(v) || ArrayBuffer.isView(v)) && (v as ArrayLike<number>).length === 1) return num((v as ArrayLike<number>)[0]);
  return null;
}

export function text(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  // Trailing NULs cut by hand: /\0+$/ was tried from every NUL of a run not at the end, quadratic
  // on a long one (an EXIF string of 256 K NULs and a letter: a minute and a half).
  let end = v.length;
  while (end > 0 && v.charCodeAt(end - 1) === 0) end--;
  const s = v.slice(0, end).trim();
  return s === '' ? null : s;
}

function dmsToDegrees(v: unknown): number | null {
  const parts: unknown[] = Array.isArray(v) ? v : ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : [v];
  if (parts.length < 1 || parts.length > 3) return null;
  let deg = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = num(parts[i]);
    if (p === null || p < 0) return null;
    deg += p / 60 ** i;
  }
  return deg;
}

/** Latitude and longitude in degrees (south and west negative), or null for both. */
export function gpsPosition(gps: Block): { latitude: number; longitude: number } | null {
  let lat = dmsToDegrees(gps[TAG.GPSLatitude]);
  let lon = dmsToDegrees(gps[TAG.GPSLongitude]);
  if (lat === null || lon === null) return null;
  if (text(gps[TAG.GPSLatitudeRef])?.toUpperCase().startsWith('S')) lat = -lat;
  if (text(gps[TAG.GPSLongitudeRef])?.toUpperCase().startsWith('W')) lon = -lon;
  if (Math.abs(lat) > 90 || Math.abs(lon) > 180) return null;
  // Exactly (0, 0) is what receivers without a fix write.
  if (lat === 0 && lon === 0) return null;
  return { latitude: lat, longitude: lon };
}

/** Altitude in metres above sea level; GPSAltitudeRef 1 means below sea level (negative). */
export function gpsAltitude(gps: Block): number | null {
  const alt = num(gps[TAG.GPSAltitude]);
  if (alt === null) return null;
  return num(gps[TAG.GPSAltitudeRef]) === 1 ? -Math.abs(alt) : alt;
}

const EXIF_DATE = /^(\d{4})[:-](\d{2})[:-](\d{2})[ T](\d{2}):(\d{2}):(\d{2})/;

/** An EXIF date-time ("YYYY:MM:DD HH:MM:SS") read as if it were UTC; null when invalid. */
function naiveDateMs(v: unknown): number | null {
  const m = text(v)?.match(EXIF_DATE);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number);
  if (y < 1900 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return null;
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

/** "+02:00" / "-0530" / "Z" → minutes east of UTC. */
function offsetMinutes(v: unknown): number | null {
  const s = text(v);
  if (!s) return null;
  if (s === 'Z') return 0;
  const m = s.match(/^([+-])(\d{2}):?(\d{2})$/);
  if (!m) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  return minutes > 14 * 60 ? null : (m[1] === '-' ? -1 : 1) * minutes;
}

function gpsUtcMs(gps: Block): number | null {
  const date = text(gps[TAG.GPSDateStamp])?.match(/^(\d{4})[:-](\d{2})[:-](\d{2})$/);
  const time = gps[TAG.GPSTimeStamp];
  const parts = Array.isArray(time) ? time.map(num) : null;
  if (!date || !parts || parts.length !== 3 || parts.some((p) => p === null)) return null;
  const [h, mi, s] = parts as number[];
  const ms = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]), 0, 0, 0) + ((h * 60 + mi) * 60 + s) * 1000;
  return Number.isFinite(ms) ? ms : null;
}

/**
 * Capture time. EXIF DateTimeOriginal (else CreateDate) is local time without a zone; its UTC
 * offset comes from OffsetTimeOriginal when present, else from the GPS UTC time stamp (the
 * difference rounded to 15 minutes), else the time is taken as UTC. Sub-seconds from
 * SubSecTimeOriginal. Falls back to the GPS time stamp alone when there is no EXIF date.
 */
export function captureTime(exif: Block, gps: Block): Date | null {
  let local = naiveDateMs(exif[TAG.DateTimeOriginal]) ?? naiveDateMs(exif[TAG.CreateDate]);
  const gpsMs = gpsUtcMs(gps);
  if (local === null) return gpsMs === null ? null : new Date(gpsMs);
  const subsec = text(exif[TAG.SubSecTimeOriginal]);
  if (subsec && /^\d+$/.test(subsec)) local += Math.round(Number(`0.${subsec}`) * 1000);
  let offset = offsetMinutes(exif[TAG.OffsetTimeOriginal]);
  if (offset === null && gpsMs !== null) {
    const derived = Math.round((local - gpsMs) / 60000 / 15) * 15;
    if (Math.abs(derived) <= 14 * 60) offset = derived;
  }
  return new Date(local - (offset ?? 0) * 60000);
}

export function positive(v: unknown): number | null {
  const n = num(v);
  return n !== null && n > 0 ? n : null;
}
