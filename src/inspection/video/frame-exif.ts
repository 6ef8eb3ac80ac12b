// The EXIF block of an extracted video frame: where it was taken (GPS IFD), when (EXIF
// DateTimeOriginal) and what it is (ImageDescription: the video and the time in it), inserted as
// an APP1 segment right after the JPEG's SOI; the pixels are not re-encoded. ffmpeg's JPEG writer
// writes no EXIF, and libvips (sharp's withExif) cannot write every GPS tag (GPSAltitudeRef comes
// out 0, losing altitudes below sea level), so the few tags are written here. (The test-image
// generator, scripts/generate-demo-images.ts, has a fuller writer of its own for fixtures.)

export interface FrameExif {
  description: string;
  position: { latitude: number; longitude: number; altitude: number | null } | null;
  /** "YYYY-MM-DD HH:MM:SS[.mmm]" (local time of the recording, as the drone or camera wrote it). */
  dateTime: string | null;
  /** "+HH:MM" when the time is known to be in that zone (e.g. a container's UTC creation_time). */
  utcOffset: string | null;
}

const BYTE = 1;
const ASCII = 2;
const SHORT = 3;
const LONG = 4;
const RATIONAL = 5;
const UNDEFINED = 7;
const SIZE: Record<number, number> = { [BYTE]: 1, [ASCII]: 1, [SHORT]: 2, [LONG]: 4, [RATIONAL]: 8, [UNDEFINED]: 1 };

interface Entry {
  tag: number;
  type: number;
  /** Encoded value bytes (little-endian) and their count in units of `type`. */
  bytes: Buffer;
  count: number;
}

const ascii = (tag: number, s: string): Entry => {
  const bytes = Buffer.from(`${s.replace(/[^\x20-\x7e]/g, '?')}\0`, 'latin1');
  return { tag, type: ASCII, bytes, count: bytes.length };
};
const byte = (tag: number, values: number[]): Entry => ({ tag, type: BYTE, bytes: Buffer.from(values), count: values.length });
const long = (tag: number, value: number): Entry => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return { tag, type: LONG, bytes, count: 1 };
};
const rationals = (tag: number, values: Array<[number, number]>): Entry => {
  const bytes = Buffer.alloc(8 * values.length);
  values.forEach(([n, d], i) => {
    bytes.writeUInt32LE(n, 8 * i);
    bytes.writeUInt32LE(d, 8 * i + 4);
  });
  return { tag, type: RATIONAL, bytes, count: values.length };
};

/** |degrees| as degrees, minutes and seconds to 1/10000 of an arc-second (about 3 µm). */
function dms(value: number): Array<[number, number]> {
  const units = Math.round(Math.abs(value) * 3600 * 10000);
  return [
    [Math.floor(units / 36_000_000), 1],
    [Math.floor((units % 36_000_000) / 600_000), 1],
    [units % 600_000, 10000],
  ];
}

function ifdSize(entries: Entry[]): number {
  return entries.reduce((size, e) => size + (e.bytes.length > 4 ? e.bytes.length + (e.bytes.length % 2) : 0), 2 + 12 * entries.length + 4);
}

/** One IFD placed at `offset` of the TIFF structure: entries sorted by tag, next-IFD 0, then values. */
function encodeIfd(entries: Entry[], offset: number): Buffer {
  const sorted = [...entries].sort((a, b) => a.tag - b.tag);
  const out = Buffer.alloc(ifdSize(sorted));
  out.writeUInt16LE(sorted.length, 0);
  let data = 2 + 12 * sorted.length + 4;
  sorted.forEach((e, i) => {
    const o = 2 + 12 * i;
    out.writeUInt16LE(e.tag, o);
    out.writeUInt16LE(e.type, o + 2);
    out.writeUInt32LE(e.count, o + 4);
    if (e.bytes.length !== SIZE[e.type] * e.count) throw new Error(`EXIF tag ${e.tag}: ${e.bytes.length} bytes for ${e.count} values`);
    if (e.bytes.length <= 4) e.bytes.copy(out, o + 8);
    else {
      out.writeUInt32LE(offset + data, o + 8);
      e.bytes.copy(out, data);
      data += e.bytes.length + (e.bytes.length % 2);
    }
  });
  return out;
}

/** The TIFF structure of the EXIF APP1 payload (after "Exif\0\0"), little-endian. */
export function frameExifTiff(exif: FrameExif): Buffer {
  const sub: Entry[] = [];
  if (exif.dateTime) {
    const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,3}))?/.exec(exif.dateTime);
    if (m) {
      sub.push({ tag: 0x9000, type: UNDEFINED, bytes: Buffer.from('0231', 'latin1'), count: 4 }); // ExifVersion
      sub.push(ascii(0x9003, `${m[1]}:${m[2]}:${m[3]} ${m[4]}`)); // DateTimeOriginal
      if (m[5]) sub.push(ascii(0x9291, m[5])); // SubSecTimeOriginal
      if (exif.utcOffset) sub.push(ascii(0x9011, exif.utcOffset)); // OffsetTimeOriginal
    }
  }
  const gps: Entry[] = [];
  if (exif.position) {
    const p = exif.position;
    gps.push(byte(0x0000, [2, 3, 0, 0])); // GPSVersionID
    gps.push(ascii(0x0001, p.latitude < 0 ? 'S' : 'N'), rationals(0x0002, dms(p.latitude)));
    gps.push(ascii(0x0003, p.longitude < 0 ? 'W' : 'E'), rationals(0x0004, dms(p.longitude)));
    if (p.altitude !== null) gps.push(byte(0x0005, [p.altitude < 0 ? 1 : 0]), rationals(0x0006, [[Math.round(Math.abs(p.altitude) * 1000), 1000]]));
  }
  const ifd0 = (subOffset: number, gpsOffset: number): Entry[] => [
    ascii(0x010e, exif.description), // ImageDescription
    ...(sub.length ? [long(0x8769, subOffset)] : []),
    ...(gps.length ? [long(0x8825, gpsOffset)] : []),
  ];
  const ifd0Offset = 8;
  const subOffset = ifd0Offset + ifdSize(ifd0(0, 0));
  const gpsOffset = subOffset + (sub.length ? ifdSize(sub) : 0);
  const header = Buffer.from([0x49, 0x49, 42, 0, ifd0Offset, 0, 0, 0]); // "II", 42, IFD0 at 8
  return Buffer.concat([header, encodeIfd(ifd0(subOffset, gpsOffset), ifd0Offset), ...(sub.length ? [encodeIfd(sub, subOffset)] : []), ...(gps.length ? [encodeIfd(gps, gpsOffset)] : [])]);
}

/** The JPEG with the frame's EXIF as an APP1 segment right after SOI (an existing EXIF APP1 is dropped). */
export function withFrameExif(jpeg: Buffer, exif: FrameExif): Buffer {
  if (jpeg.length < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new Error('not a JPEG (no SOI marker)');
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), frameExifTiff(exif)]);
  if (payload.length + 2 > 0xffff) throw new Error('EXIF block too large for one APP1 segment');
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xffe1, 0);
  segment.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), segment, payload, withoutExifSegments(jpeg.subarray(2))]);
}

/** The marker segments before the image data, minus APP1 "Exif" ones; the rest unchanged. */
function withoutExifSegments(rest: Buffer): Buffer {
  const kept: Buffer[] = [];
  let o = 0;
  while (o + 4 <= rest.length && rest[o] === 0xff) {
    const marker = rest[o + 1];
    if (marker === 0xda || marker === 0xd9) break; // start of scan: image data follows
    const length = rest.readUInt16BE(o + 2);
    const isExif = marker === 0xe1 && rest.subarray(o + 4, o + 10).toString('latin1') === 'Exif\0\0';
    if (!isExif) kept.push(rest.subarray(o, o + 2 + length));
    o += 2 + length;
  }
  kept.push(rest.subarray(o));
  return Buffer.concat(kept);
}
