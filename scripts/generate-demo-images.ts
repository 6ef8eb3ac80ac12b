// Geotagged demo and test photos: JPEGs with textured content, real EXIF GPS tags and, optionally,
// a DJI-style XMP packet with gimbal and flight angles.
//
//   tsx scripts/generate-demo-images.ts <outDir> [count] [latitude longitude altitude]
//
// The EXIF block is written here (a small TIFF writer) rather than through sharp's withExif: libvips
// cannot write every tag we need (GPSAltitudeRef, a BYTE, always comes out 0, so altitudes below sea
// level would be lost), and writing it ourselves keeps the bytes under test exactly known.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { seededRandom } from '../src/shared/seeded-random.ts';
import { djiXmpPacket, signed } from './dji-xmp.ts';

export interface Angles {
  yaw: number;
  pitch: number;
  roll: number;
}

export interface GeotaggedJpegOptions {
  latitude: number;
  longitude: number;
  /** Metres above sea level; negative values are written with GPSAltitudeRef = 1. */
  altitude: number;
  width?: number;
  height?: number;
  /** Seeds the texture: the same seed gives the same pixels. */
  seed?: number;
  make?: string;
  model?: string;
  /** EXIF FocalLengthIn35mmFormat (default 24). */
  focalLength35mm?: number;
  /** EXIF FocalLength (default: the 35 mm value over a 1-inch sensor's crop factor, 2.73). */
  focalLengthMm?: number;
  /** Written as DateTimeOriginal with OffsetTimeOriginal +00:00 and as the GPS time stamp. */
  capturedAt?: Date;
  /** DJI-style XMP `drone-dji:Gimbal{Yaw,Pitch,Roll}Degree`; without it no gimbal data is written. */
  gimbal?: Angles;
  /** DJI-style XMP `drone-dji:Flight{Yaw,Pitch,Roll}Degree`. */
  flight?: Angles;
  /** DJI-style XMP `drone-dji:RelativeAltitude`. */
  relativeAltitude?: number;
  /** TIFF byte order of the EXIF block: 'II' little-endian (default, as DJI) or 'MM' big-endian. */
  byteOrder?: 'II' | 'MM';
  /** JPEG quality (default 85). */
  quality?: number;
  /** RGB pixels to encode instead of a seeded texture (width * height * 3 bytes). */
  pixels?: Buffer;
}

const DEFAULT_MAKE = 'OpenInspection';
const DEFAULT_MODEL = 'DemoCam 1';
const CROP_FACTOR_1_INCH = 2.73;

/** A JPEG with GPS EXIF (and DJI-style XMP when gimbal, flight or relativeAltitude is given). */
export async function generateGeotaggedJpeg(options: GeotaggedJpegOptions): Promise<Buffer> {
  const width = options.width ?? 640;
  const height = options.height ?? 480;
  const pixels = options.pixels ?? texture(width, height, options.seed ?? 1);
  if (pixels.length !== width * height * 3) throw new RangeError('pixels must hold width * height * 3 bytes');
  const jpeg = await sharp(pixels, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: options.quality ?? 85 })
    .toBuffer();
  const segments = [app1(Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), exifTiff(options, width, height)]))];
  const xmp = djiXmp(options);
  if (xmp) segments.push(app1(Buffer.concat([Buffer.from('http://ns.adobe.com/xap/1.0/\0', 'latin1'), Buffer.from(xmp, 'utf8')])));
  return spliceAfterSoi(jpeg, segments);
}

// ---------------------------------------------------------------------------------------------
// Demo set: a small survey flight, lawnmower pattern over a grid centred on `center`, camera
// pointing straight down with the top of each image to the north. Every photo is a window of one
// seeded ground texture at the photo's place, so neighbouring photos overlap (70 %) like a real
// survey and can be matched.

export interface DemoCenter {
  latitude: number;
  longitude: number;
  /** Flight altitude (camera GPS altitude), metres above sea level. */
  altitude: number;
}

export interface DemoSetOptions {
  width?: number;
  height?: number;
  seed?: number;
  /** Height of the flight above the ground, metres (default 40); sets the ground scale and RelativeAltitude. */
  heightAboveGround?: number;
  make?: string;
  model?: string;
  focalLength35mm?: number;
  /** Time of the first photo (default 2024-06-01T10:00:00Z); one photo every 2 seconds. */
  start?: Date;
}

export interface DemoImage {
  filename: string;
  data: Buffer;
  latitude: number;
  longitude: number;
  altitude: number;
  gimbal: Angles;
}

const EARTH_RADIUS = 6378137;
const OVERLAP = 0.7;

export async function generateDemoImageSet(count: number, center: DemoCenter, options: DemoSetOptions = {}): Promise<DemoImage[]> {
  if (!Number.isInteger(count) || count < 1) throw new RangeError('count must be a positive integer');
  const width = options.width ?? 640;
  const height = options.height ?? 480;
  const agl = options.heightAboveGround ?? 40;
  const f35 = options.focalLength35mm ?? 24;
  const groundWidth = (agl * 36) / f35; // metres covered by the image width (36 mm film width)
  const metresPerPixel = groundWidth / width;
  const stepEast = groundWidth * (1 - OVERLAP);
  const stepNorth = height * metresPerPixel * (1 - OVERLAP);
  const cols = Math.ceil(Math.sqrt(count));
  const rows = Math.ceil(count / cols);
  const pxEast = Math.round(stepEast / metresPerPixel);
  const pxNorth = Math.round(stepNorth / metresPerPixel);
  const worldWidth = (cols - 1) * pxEast + width;
  const worldHeight = (rows - 1) * pxNorth + height;
  const world = texture(worldWidth, worldHeight, options.seed ?? 1);
  const start = options.start ?? new Date(Date.UTC(2024, 5, 1, 10, 0, 0));
  const metresPerDegLat = (EARTH_RADIUS * Math.PI) / 180;
  const metresPerDegLon = metresPerDegLat * Math.cos((center.latitude * Math.PI) / 180);

  const images: DemoImage[] = [];
  for (let i = 0; i < count; i++) {
    const row = Math.floor(i / cols);
    const col = row % 2 === 0 ? i % cols : cols - 1 - (i % cols); // back and forth
    const east = (col - (cols - 1) / 2) * pxEast * metresPerPixel;
    const north = (row - (rows - 1) / 2) * pxNorth * metresPerPixel;
    const latitude = center.latitude + north / metresPerDegLat;
    const longitude = center.longitude + east / metresPerDegLon;
    const gimbal: Angles = { yaw: 0, pitch: -90, roll: 0 };
    const x0 = col * pxEast;
    const y0 = (rows - 1 - row) * pxNorth; // north is up in the world texture
    const pixels = Buffer.allocUnsafe(width * height * 3);
    for (let y = 0; y < height; y++) {
      const from = ((y0 + y) * worldWidth + x0) * 3;
      world.copy(pixels, y * width * 3, from, from + width * 3);
    }
    const data = await generateGeotaggedJpeg({
      latitude,
      longitude,
      altitude: center.altitude,
      width,
      height,
      pixels,
      make: options.make,
      model: options.model,
      focalLength35mm: f35,
      capturedAt: new Date(start.getTime() + i * 2000),
      gimbal,
      flight: { yaw: row % 2 === 0 ? 90 : 270, pitch: 0, roll: 0 },
      relativeAltitude: agl,
    });
    images.push({ filename: `DEMO_${String(i + 1).padStart(4, '0')}.JPG`, data, latitude, longitude, altitude: center.altitude, gimbal });
  }
  return images;
}

// ---------------------------------------------------------------------------------------------
// Texture: a smooth colour field, random rectangles and discs, and pixel noise.

function texture(width: number, height: number, seed: number): Buffer {
  const rand = seededRandom(seed * 2654435761 + 1);
  const buf = Buffer.allocUnsafe(width * height * 3);
  const phase = [rand() * 6.28, rand() * 6.28, rand() * 6.28];
  const freq = [0.004 + rand() * 0.01, 0.004 + rand() * 0.01, 0.004 + rand() * 0.01];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) buf[o + c] = 110 + 50 * Math.sin(x * freq[c] + phase[c]) * Math.cos(y * freq[(c + 1) % 3] + phase[c]);
    }
  }
  const shapes = Math.max(20, Math.round((width * height) / 2500));
  for (let s = 0; s < shapes; s++) {
    const cx = rand() * width;
    const cy = rand() * height;
    const r = 3 + rand() * 30;
    const color = [rand() * 255, rand() * 255, rand() * 255];
    const disc = rand() < 0.5;
    const rx = disc ? r : r * (0.3 + rand() * 1.5);
    const ry = disc ? r : r * (0.3 + rand() * 1.5);
    const x1 = Math.max(0, Math.floor(cx - rx));
    const x2 = Math.min(width - 1, Math.ceil(cx + rx));
    const y1 = Math.max(0, Math.floor(cy - ry));
    const y2 = Math.min(height - 1, Math.ceil(cy + ry));
    for (let y = y1; y <= y2; y++) {
      for (let x = x1; x <= x2; x++) {
        if (disc && (x - cx) ** 2 + (y - cy) ** 2 > r * r) continue;
        const o = (y * width + x) * 3;
        buf[o] = color[0];
        buf[o + 1] = color[1];
        buf[o + 2] = color[2];
      }
    }
  }
  for (let i = 0; i < buf.length; i++) {
    const v = buf[i] + ((rand() * 24) | 0) - 12;
    buf[i] = v < 0 ? 0 : v > 255 ? 255 : v;
  }
  return buf;
}

// ---------------------------------------------------------------------------------------------
// EXIF: a TIFF structure with IFD0 (camera), the EXIF IFD (time, focal lengths, pixel size) and
// the GPS IFD.

const BYTE = 1;
const ASCII = 2;
const SHORT = 3;
const LONG = 4;
const RATIONAL = 5;
const UNDEFINED = 7;
const TYPE_SIZE: Record<number, number> = { [BYTE]: 1, [ASCII]: 1, [SHORT]: 2, [LONG]: 4, [RATIONAL]: 8, [UNDEFINED]: 1 };

interface Entry {
  tag: number;
  type: number;
  /** Numbers for BYTE/SHORT/LONG, [numerator, denominator] pairs for RATIONAL, bytes for ASCII/UNDEFINED. */
  values: number[] | Array<[number, number]> | Buffer;
}

const ascii = (tag: number, s: string): Entry => ({ tag, type: ASCII, values: Buffer.from(`${s}\0`, 'latin1') });

function entryCount(e: Entry): number {
  return Buffer.isBuffer(e.values) ? e.values.length : e.values.length;
}

function encodeValues(e: Entry, le: boolean): Buffer {
  if (Buffer.isBuffer(e.values)) return e.values;
  const size = TYPE_SIZE[e.type];
  const out = Buffer.alloc(size * e.values.length);
  e.values.forEach((v, i) => {
    const o = i * size;
    if (e.type === BYTE) out.writeUInt8(v as number, o);
    else if (e.type === SHORT) {
      if (le) out.writeUInt16LE(v as number, o);
      else out.writeUInt16BE(v as number, o);
    } else if (e.type === LONG) {
      if (le) out.writeUInt32LE(v as number, o);
      else out.writeUInt32BE(v as number, o);
    }
    else if (e.type === RATIONAL) {
      const [n, d] = v as [number, number];
      if (le) {
        out.writeUInt32LE(n, o);
        out.writeUInt32LE(d, o + 4);
      } else {
        out.writeUInt32BE(n, o);
        out.writeUInt32BE(d, o + 4);
      }
    }
  });
  return out;
}

function ifdSize(entries: Entry[]): number {
  let size = 2 + 12 * entries.length + 4;
  for (const e of entries) {
    const bytes = TYPE_SIZE[e.type] * entryCount(e);
    if (bytes > 4) size += bytes + (bytes % 2);
  }
  return size;
}

/** One IFD at `offset` (from the TIFF header): entry table, next-IFD 0, then the out-of-line values. */
function encodeIfd(entries: Entry[], offset: number, le: boolean): Buffer {
  const sorted = [...entries].sort((a, b) => a.tag - b.tag);
  const out = Buffer.alloc(ifdSize(sorted));
  const u16 = (v: number, o: number) => (le ? out.writeUInt16LE(v, o) : out.writeUInt16BE(v, o));
  const u32 = (v: number, o: number) => (le ? out.writeUInt32LE(v, o) : out.writeUInt32BE(v, o));
  u16(sorted.length, 0);
  let data = 2 + 12 * sorted.length + 4;
  sorted.forEach((e, i) => {
    const o = 2 + 12 * i;
    const bytes = encodeValues(e, le);
    u16(e.tag, o);
    u16(e.type, o + 2);
    u32(entryCount(e), o + 4);
    if (bytes.length <= 4) {
      bytes.copy(out, o + 8);
    } else {
      u32(offset + data, o + 8);
      bytes.copy(out, data);
      data += bytes.length + (bytes.length % 2);
    }
  });
  return out;
}

/** |degrees| as degrees, minutes, seconds rationals (seconds to 1/10000). */
function dms(value: number): Array<[number, number]> {
  const units = Math.round(Math.abs(value) * 3600 * 10000); // 1/10000 arc-seconds
  const deg = Math.floor(units / 36_000_000);
  const min = Math.floor((units % 36_000_000) / 600_000);
  const sec = units % 600_000;
  return [
    [deg, 1],
    [min, 1],
    [sec, 10000],
  ];
}

const pad2 = (n: number) => String(n).padStart(2, '0');

function tiffHeader(le: boolean, ifd0Offset: number): Buffer {
  const header = Buffer.alloc(8);
  header.write(le ? 'II' : 'MM', 0, 'latin1');
  if (le) {
    header.writeUInt16LE(42, 2);
    header.writeUInt32LE(ifd0Offset, 4);
  } else {
    header.writeUInt16BE(42, 2);
    header.writeUInt32BE(ifd0Offset, 4);
  }
  return header;
}

/** The EXIF payload of a JPEG APP1 segment (after "Exif\0\0"): TIFF header, IFD0, EXIF IFD, GPS IFD. */
function exifTiff(o: GeotaggedJpegOptions, width: number, height: number): Buffer {
  const le = (o.byteOrder ?? 'II') === 'II';
  const ifd0: Entry[] = [{ tag: 0x0213, type: SHORT, values: [1] }]; // YCbCrPositioning: centred
  const exif: Entry[] = [
    { tag: 0x9101, type: UNDEFINED, values: Buffer.from([1, 2, 3, 0]) }, // ComponentsConfiguration: YCbCr
    { tag: 0xa002, type: LONG, values: [width] }, // PixelXDimension
    { tag: 0xa003, type: LONG, values: [height] }, // PixelYDimension
  ];
  return Buffer.concat([tiffHeader(le, 8), metadataIfds(o, le, 8, ifd0, exif)]);
}

/**
 * IFD0 and the EXIF IFD (with the extra entries given), then the GPS IFD, encoded to be placed at `ifd0Offset`
 * of a TIFF structure.
 */
function metadataIfds(o: GeotaggedJpegOptions, le: boolean, ifd0Offset: number, extraIfd0: Entry[], extraExif: Entry[]): Buffer {
  const f35 = o.focalLength35mm ?? 24;
  const focal = o.focalLengthMm ?? Math.round((f35 / CROP_FACTOR_1_INCH) * 100) / 100;
  const t = o.capturedAt ?? new Date(Date.UTC(2024, 5, 1, 10, 0, 0));
  const date = `${t.getUTCFullYear()}:${pad2(t.getUTCMonth() + 1)}:${pad2(t.getUTCDate())}`;
  const time = `${pad2(t.getUTCHours())}:${pad2(t.getUTCMinutes())}:${pad2(t.getUTCSeconds())}`;

  const exif: Entry[] = [
    { tag: 0x9000, type: UNDEFINED, values: Buffer.from('0231', 'latin1') }, // ExifVersion 2.31 (has OffsetTime*)
    ascii(0x9003, `${date} ${time}`), // DateTimeOriginal
    ascii(0x9004, `${date} ${time}`), // CreateDate
    ascii(0x9011, '+00:00'), // OffsetTimeOriginal
    ascii(0x9291, String(t.getUTCMilliseconds()).padStart(3, '0')), // SubSecTimeOriginal
    { tag: 0xa000, type: UNDEFINED, values: Buffer.from('0100', 'latin1') }, // FlashpixVersion
    { tag: 0xa001, type: SHORT, values: [1] }, // ColorSpace: sRGB
    { tag: 0x920a, type: RATIONAL, values: [[Math.round(focal * 100), 100]] }, // FocalLength
    ...extraExif,
    { tag: 0xa405, type: SHORT, values: [Math.round(f35)] }, // FocalLengthIn35mmFormat
  ];
  const gps: Entry[] = [
    { tag: 0x0000, type: BYTE, values: [2, 3, 0, 0] }, // GPSVersionID
    ascii(0x0001, o.latitude < 0 ? 'S' : 'N'),
    { tag: 0x0002, type: RATIONAL, values: dms(o.latitude) },
    ascii(0x0003, o.longitude < 0 ? 'W' : 'E'),
    { tag: 0x0004, type: RATIONAL, values: dms(o.longitude) },
    { tag: 0x0005, type: BYTE, values: [o.altitude < 0 ? 1 : 0] }, // GPSAltitudeRef
    { tag: 0x0006, type: RATIONAL, values: [[Math.round(Math.abs(o.altitude) * 1000), 1000]] },
    {
      tag: 0x0007, // GPSTimeStamp (UTC)
      type: RATIONAL,
      values: [
        [t.getUTCHours(), 1],
        [t.getUTCMinutes(), 1],
        [t.getUTCSeconds() * 1000 + t.getUTCMilliseconds(), 1000],
      ],
    },
    ascii(0x001d, date), // GPSDateStamp
  ];
  const ifd0 = (exifOffset: number, gpsOffset: number): Entry[] => [
    ascii(0x010f, o.make ?? DEFAULT_MAKE),
    ascii(0x0110, o.model ?? DEFAULT_MODEL),
    { tag: 0x0112, type: SHORT, values: [1] }, // Orientation
    { tag: 0x011a, type: RATIONAL, values: [[72, 1]] }, // XResolution
    { tag: 0x011b, type: RATIONAL, values: [[72, 1]] }, // YResolution
    { tag: 0x0128, type: SHORT, values: [2] }, // ResolutionUnit: inches
    ascii(0x0131, 'generate-demo-images'), // Software
    ascii(0x0132, `${date} ${time}`), // ModifyDate
    ...extraIfd0,
    { tag: 0x8769, type: LONG, values: [exifOffset] },
    { tag: 0x8825, type: LONG, values: [gpsOffset] },
  ];
  const exifOffset = ifd0Offset + ifdSize(ifd0(0, 0));
  const gpsOffset = exifOffset + ifdSize(exif);
  return Buffer.concat([
    encodeIfd(ifd0(exifOffset, gpsOffset), ifd0Offset, le),
    encodeIfd(exif, exifOffset, le),
    encodeIfd(gps, gpsOffset, le),
  ]);
}

/**
 * A baseline TIFF (uncompressed RGB, one strip) with the same metadata as generateGeotaggedJpeg,
 * XMP in IFD0 tag 700. The directories are written after the pixel data, at the end of the file,
 * as many TIFF writers do, so a reader has to follow the offsets rather than read the head.
 */
export function generateGeotaggedTiff(options: GeotaggedJpegOptions): Buffer {
  const width = options.width ?? 640;
  const height = options.height ?? 480;
  const pixels = options.pixels ?? texture(width, height, options.seed ?? 1);
  if (pixels.length !== width * height * 3) throw new RangeError('pixels must hold width * height * 3 bytes');
  const le = (options.byteOrder ?? 'II') === 'II';
  const ifd0Offset = 8 + pixels.length + (pixels.length % 2);
  const xmp = djiXmp(options);
  const image: Entry[] = [
    { tag: 0x0100, type: LONG, values: [width] }, // ImageWidth
    { tag: 0x0101, type: LONG, values: [height] }, // ImageLength
    { tag: 0x0102, type: SHORT, values: [8, 8, 8] }, // BitsPerSample
    { tag: 0x0103, type: SHORT, values: [1] }, // Compression: none
    { tag: 0x0106, type: SHORT, values: [2] }, // PhotometricInterpretation: RGB
    { tag: 0x0111, type: LONG, values: [8] }, // StripOffsets
    { tag: 0x0115, type: SHORT, values: [3] }, // SamplesPerPixel
    { tag: 0x0116, type: LONG, values: [height] }, // RowsPerStrip
    { tag: 0x0117, type: LONG, values: [pixels.length] }, // StripByteCounts
    { tag: 0x011c, type: SHORT, values: [1] }, // PlanarConfiguration: chunky
  ];
  if (xmp) image.push({ tag: 0x02bc, type: BYTE, values: Buffer.from(xmp, 'utf8') }); // XMP
  return Buffer.concat([
    tiffHeader(le, ifd0Offset),
    pixels,
    Buffer.alloc(pixels.length % 2),
    metadataIfds(options, le, ifd0Offset, image, []),
  ]);
}

// ---------------------------------------------------------------------------------------------
// XMP (DJI's layout, dji-xmp.ts).


function djiXmp(o: GeotaggedJpegOptions): string | null {
  if (!o.gimbal && !o.flight && o.relativeAltitude === undefined) return null;
  const attributes: [string, string][] = [
    ['tiff:Make', o.make ?? DEFAULT_MAKE],
    ['tiff:Model', o.model ?? DEFAULT_MODEL],
    ['drone-dji:AbsoluteAltitude', signed(o.altitude)],
  ];
  if (o.relativeAltitude !== undefined) attributes.push(['drone-dji:RelativeAltitude', signed(o.relativeAltitude)]);
  if (o.gimbal) attributes.push(['drone-dji:GimbalRollDegree', signed(o.gimbal.roll)], ['drone-dji:GimbalYawDegree', signed(o.gimbal.yaw)], ['drone-dji:GimbalPitchDegree', signed(o.gimbal.pitch)]);
  if (o.flight) attributes.push(['drone-dji:FlightRollDegree', signed(o.flight.roll)], ['drone-dji:FlightYawDegree', signed(o.flight.yaw)], ['drone-dji:FlightPitchDegree', signed(o.flight.pitch)]);
  return djiXmpPacket(attributes);
}

// ---------------------------------------------------------------------------------------------
// JPEG assembly.

function app1(payload: Buffer): Buffer {
  if (payload.length + 2 > 0xffff) throw new RangeError('APP1 segment too large');
  const head = Buffer.from([0xff, 0xe1, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/** SOI, our segments, then the encoder's segments without its APPn (JFIF) ones. */
function spliceAfterSoi(jpeg: Buffer, segments: Buffer[]): Buffer {
  let pos = 2;
  while (jpeg[pos] === 0xff && jpeg[pos + 1] >= 0xe0 && jpeg[pos + 1] <= 0xef) pos += 2 + jpeg.readUInt16BE(pos + 2);
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(pos)]);
}

// ---------------------------------------------------------------------------------------------

async function main(argv: string[]): Promise<void> {
  const [outDir, countArg, lat, lon, alt] = argv;
  if (!outDir || outDir === '--help' || outDir === '-h') {
    console.error('usage: tsx scripts/generate-demo-images.ts <outDir> [count=9] [latitude longitude altitude]');
    process.exitCode = outDir ? 0 : 2;
    return;
  }
  const count = countArg ? Number(countArg) : 9;
  const center: DemoCenter =
    lat !== undefined ? { latitude: Number(lat), longitude: Number(lon), altitude: Number(alt ?? 100) } : { latitude: 46.8426, longitude: -91.9945, altitude: 230 };
  if (![count, center.latitude, center.longitude, center.altitude].every(Number.isFinite)) {
    console.error('count, latitude, longitude and altitude must be numbers');
    process.exitCode = 2;
    return;
  }
  await mkdir(outDir, { recursive: true });
  const images = await generateDemoImageSet(count, center);
  for (const image of images) await writeFile(path.join(outDir, image.filename), image.data);
  console.log(`wrote ${images.length} images to ${outDir}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
