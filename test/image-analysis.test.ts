import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { generateGeotaggedJpeg, generateGeotaggedTiff, type GeotaggedJpegOptions } from '../scripts/generate-demo-images.ts';
import {
  analyzeImage,
  openFileRangeReader,
  type AnalyzeOptions,
  type ImageAnalysis,
  type ImageMetadata,
  type ReadRange,
} from '../src/shared/image-metadata/index.ts';
import { cameraToEnuQuaternion, rotateVector } from '../src/shared/geo/rotation.ts';

// ---------------------------------------------------------------------------------------------
// helpers

interface Counted {
  result: ImageAnalysis;
  bytesRead: number;
  requests: number;
  size: number;
}

function counting(readRange: ReadRange): { readRange: ReadRange; stats: { bytesRead: number; requests: number } } {
  const stats = { bytesRead: 0, requests: 0 };
  return {
    stats,
    readRange: async (start, end) => {
      stats.requests += 1;
      const data = await readRange(start, end);
      stats.bytesRead += data.length;
      return data;
    },
  };
}

function bufferRangeReader(buffer: Buffer): ReadRange {
  return async (start, end) => {
    if (!(start >= 0 && start <= end && end <= buffer.length)) throw new Error(`range ${start}-${end} outside 0-${buffer.length}`);
    return buffer.subarray(start, end);
  };
}

async function analyzeBuffer(buffer: Buffer, options?: AnalyzeOptions): Promise<Counted> {
  const { readRange, stats } = counting(bufferRangeReader(buffer));
  const result = await analyzeImage(readRange, buffer.length, options);
  return { result, ...stats, size: buffer.length };
}

async function analyzeFile(file: string, options?: AnalyzeOptions): Promise<Counted> {
  const reader = await openFileRangeReader(file);
  try {
    const { readRange, stats } = counting(reader.readRange);
    const result = await analyzeImage(readRange, reader.size, options);
    return { result, ...stats, size: reader.size };
  } finally {
    await reader.close();
  }
}

function metadataOf(result: ImageAnalysis, what = 'image'): ImageMetadata {
  if (!result.ok) assert.fail(`${what}: expected ok, got: ${result.reason}`);
  return result.metadata;
}

function failureOf(result: ImageAnalysis, what: string): string {
  if (result.ok) assert.fail(`${what}: expected ok: false, got metadata`);
  assert.equal(typeof result.reason, 'string');
  assert.ok(result.reason.length > 0);
  return result.reason;
}

function near(actual: number | null | undefined, expected: number, eps: number, what: string): void {
  assert.ok(
    typeof actual === 'number' && Math.abs(actual - expected) <= eps,
    `${what}: got ${actual}, expected ${expected} ± ${eps}`,
  );
}

let exiftoolPresent: boolean | undefined;
function hasExiftool(): boolean {
  if (exiftoolPresent === undefined) {
    try {
      execFileSync('exiftool', ['-ver'], { stdio: 'pipe' });
      exiftoolPresent = true;
    } catch {
      exiftoolPresent = false;
    }
  }
  return exiftoolPresent;
}
const NO_EXIFTOOL = 'exiftool not installed (Debian package libimage-exiftool-perl)';

/** `exiftool -json -n` of the files, keyed by path. */
function exiftoolJson(files: string[]): Map<string, Record<string, unknown>> {
  const out = execFileSync('exiftool', ['-json', '-n', ...files], { maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  const rows = JSON.parse(out.toString('utf8')) as Array<Record<string, unknown>>;
  return new Map(rows.map((r) => [String(r.SourceFile), r]));
}

function listImages(dir: string, pattern: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => pattern.test(f))
    .sort()
    .map((f) => path.join(dir, f));
}

const KiB = 1024;
let tmp = '';
before(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'image-analysis-'));
});
after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// generated images

const JPEG_CASES: Array<{ name: string; options: GeotaggedJpegOptions }> = [
  {
    name: 'DJI-like, northern/western hemisphere, gimbal looking down',
    options: {
      latitude: 46.842607083333,
      longitude: -91.994559888889,
      altitude: 198.309,
      width: 800,
      height: 450,
      seed: 7,
      make: 'DJI',
      model: 'FC300S',
      focalLength35mm: 20,
      focalLengthMm: 3.61,
      capturedAt: new Date('2023-03-04T05:06:07.890Z'),
      gimbal: { yaw: 45, pitch: -89.9, roll: 0 },
      flight: { yaw: 46, pitch: 1.8, roll: 3 },
      relativeAltitude: 39.8,
    },
  },
  {
    name: 'southern/eastern hemisphere, below sea level, big-endian EXIF, no XMP',
    options: {
      latitude: -33.868819712,
      longitude: 151.209295534,
      altitude: -12.5,
      width: 320,
      height: 240,
      seed: 2,
      byteOrder: 'MM',
      make: 'Acme',
      model: 'Survey 2',
      focalLength35mm: 35,
    },
  },
  {
    name: 'oblique gimbal with roll, near the antimeridian',
    options: {
      latitude: 64.123456789,
      longitude: 179.999999,
      altitude: 1234.567,
      width: 200,
      height: 300,
      seed: 3,
      gimbal: { yaw: -135.5, pitch: -30.25, roll: 2.5 },
    },
  },
];

describe('analyzeImage on generated JPEGs', () => {
  for (const { name, options } of JPEG_CASES) {
    it(name, async () => {
      const jpeg = await generateGeotaggedJpeg(options);
      const { result } = await analyzeBuffer(jpeg);
      const m = metadataOf(result);
      assert.equal(m.format, 'jpeg');
      assert.equal(m.width, options.width);
      assert.equal(m.height, options.height);
      near(m.latitude, options.latitude, 1e-6, 'latitude');
      near(m.longitude, options.longitude, 1e-6, 'longitude');
      near(m.altitude, options.altitude, 1e-3, 'altitude');
      assert.equal(m.make, options.make ?? 'OpenInspection');
      assert.equal(m.model, options.model ?? 'DemoCam 1');
      assert.equal(m.focalLength35mm, options.focalLength35mm ?? 24);
      if (options.focalLengthMm) near(m.focalLengthMm, options.focalLengthMm, 1e-9, 'focal length');
      else assert.ok(m.focalLengthMm !== null && m.focalLengthMm > 0);
      assert.equal(m.exifOrientation, 1);
      if (options.capturedAt) assert.equal(m.capturedAt?.toISOString(), options.capturedAt.toISOString());
      else assert.ok(m.capturedAt instanceof Date);
      if (options.gimbal) {
        assert.deepEqual(m.gimbal, options.gimbal);
        assert.ok(m.quaternion);
        const expected = cameraToEnuQuaternion(options.gimbal);
        m.quaternion.forEach((c, i) => near(c, expected[i], 1e-12, `quaternion[${i}]`));
      } else {
        assert.equal(m.gimbal, null);
        assert.equal(m.quaternion, null);
      }
      assert.deepEqual(m.flight, options.flight ?? null);
      assert.equal(m.relativeAltitude, options.relativeAltitude ?? null);
    });
  }

  it('the quaternion of a nadir photo points the optical axis down and the image top along the yaw', async () => {
    const jpeg = await generateGeotaggedJpeg({ latitude: 1, longitude: 2, altitude: 3, width: 64, height: 48, gimbal: { yaw: 90, pitch: -90, roll: 0 } });
    const m = metadataOf((await analyzeBuffer(jpeg)).result);
    assert.ok(m.quaternion);
    const axis = rotateVector(m.quaternion, [0, 0, 1]);
    const top = rotateVector(m.quaternion, [0, -1, 0]);
    [0, 0, -1].forEach((c, i) => near(axis[i], c, 1e-9, `axis[${i}]`));
    [1, 0, 0].forEach((c, i) => near(top[i], c, 1e-9, `top[${i}]`));
  });

  it('agrees with exiftool on the written tags', { skip: hasExiftool() ? false : NO_EXIFTOOL }, async () => {
    const files: string[] = [];
    for (const [i, { options }] of JPEG_CASES.entries()) {
      const file = path.join(tmp, `case-${i}.jpg`);
      await writeFile(file, await generateGeotaggedJpeg(options));
      files.push(file);
    }
    const tags = exiftoolJson(files);
    for (const [i, { options }] of JPEG_CASES.entries()) {
      const t = tags.get(files[i]);
      assert.ok(t, files[i]);
      near(Number(t.GPSLatitude), options.latitude, 1e-6, 'exiftool GPSLatitude');
      near(Number(t.GPSLongitude), options.longitude, 1e-6, 'exiftool GPSLongitude');
      near(Number(t.GPSAltitude), options.altitude, 1e-3, 'exiftool GPSAltitude (signed by the composite tag)');
      assert.equal(t.GPSAltitudeRef, options.altitude < 0 ? 1 : 0);
      assert.equal(t.ImageWidth, options.width);
      assert.equal(t.Make, options.make ?? 'OpenInspection');
      if (options.gimbal) {
        near(Number(t.GimbalYawDegree), options.gimbal.yaw, 1e-9, 'exiftool GimbalYawDegree');
        near(Number(t.GimbalPitchDegree), options.gimbal.pitch, 1e-9, 'exiftool GimbalPitchDegree');
        near(Number(t.GimbalRollDegree), options.gimbal.roll, 1e-9, 'exiftool GimbalRollDegree');
      }
      const m = metadataOf((await analyzeFile(files[i])).result);
      near(m.latitude, Number(t.GPSLatitude), 1e-12, 'latitude vs exiftool');
      near(m.longitude, Number(t.GPSLongitude), 1e-12, 'longitude vs exiftool');
    }
    const validate = execFileSync('exiftool', ['-validate', '-warning', '-a', '-s3', ...files]).toString();
    for (const line of validate.split('\n').filter((l) => /^\d|OK/.test(l))) assert.match(line, /^OK$/, validate);
  });

  it('reads the same with a tiny head and read-ahead (segments reached by jumping)', async () => {
    const jpeg = await generateGeotaggedJpeg(JPEG_CASES[0].options);
    const full = await analyzeBuffer(jpeg);
    const small = await analyzeBuffer(jpeg, { headSize: 16, readAhead: 16 });
    assert.deepEqual(small.result, full.result);
    assert.ok(small.requests > 3, `requests: ${small.requests}`);
    assert.ok(small.bytesRead < 8 * KiB, `bytes read: ${small.bytesRead}`);
  });
});

describe('analyzeImage on PNG and TIFF', () => {
  const raw = (w: number, h: number) => Buffer.alloc(w * h * 3, 0x80);
  const xmp = (yaw: number, pitch: number, roll: number) =>
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
    '<rdf:Description xmlns:drone-dji="http://www.dji.com/drone-dji/1.0/" ' +
    `drone-dji:GimbalYawDegree="${yaw}" drone-dji:GimbalPitchDegree="${pitch}" drone-dji:GimbalRollDegree="${roll}"/>` +
    '</rdf:RDF></x:xmpmeta>';
  const exif = {
    IFD0: { Make: 'Acme', Model: 'P1' },
    IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '10/1 20/1 300000/10000', GPSLongitudeRef: 'W', GPSLongitude: '1/1 2/1 30000/10000', GPSAltitude: '5000/100' },
  };

  it('PNG from sharp: IHDR size, eXIf GPS, XMP in a zTXt chunk', async () => {
    const png = await sharp(raw(96, 64), { raw: { width: 96, height: 64, channels: 3 } }).png().withExif(exif).withXmp(xmp(10, -45, 0)).toBuffer();
    const m = metadataOf((await analyzeBuffer(png)).result);
    assert.equal(m.format, 'png');
    assert.deepEqual([m.width, m.height], [96, 64]);
    near(m.latitude, 10 + 20 / 60 + 30 / 3600, 1e-9, 'latitude');
    near(m.longitude, -(1 + 2 / 60 + 3 / 3600), 1e-9, 'longitude');
    near(m.altitude, 50, 1e-9, 'altitude');
    assert.equal(m.make, 'Acme');
    assert.deepEqual(m.gimbal, { yaw: 10, pitch: -45, roll: 0 });
    assert.ok(m.quaternion);
  });

  it('PNG with XMP in an iTXt chunk (as the XMP specification writes it)', async () => {
    const png = await sharp(raw(40, 30), { raw: { width: 40, height: 30, channels: 3 } }).png().toBuffer();
    const text = Buffer.concat([Buffer.from('XML:com.adobe.xmp\0\0\0\0\0', 'latin1'), Buffer.from(xmp(-20, -60, 1), 'utf8')]);
    const chunk = Buffer.alloc(12 + text.length);
    chunk.writeUInt32BE(text.length, 0);
    chunk.write('iTXt', 4, 'latin1');
    text.copy(chunk, 8);
    chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + text.length)), 8 + text.length);
    const withXmp = Buffer.concat([png.subarray(0, 33), chunk, png.subarray(33)]); // after the signature and IHDR
    const m = metadataOf((await analyzeBuffer(withXmp)).result);
    assert.deepEqual([m.width, m.height], [40, 30]);
    assert.deepEqual(m.gimbal, { yaw: -20, pitch: -60, roll: 1 });
    assert.equal(m.latitude, null);
  });

  it('TIFF with its directories after the pixel data: follows the offsets, reads little', async () => {
    const options: GeotaggedJpegOptions = {
      latitude: -12.3456789,
      longitude: -45.6789012,
      altitude: 321.5,
      width: 1200,
      height: 900,
      gimbal: { yaw: 180, pitch: -45, roll: 0 },
      make: 'Tiffer',
      model: 'T-1',
      byteOrder: 'MM',
    };
    const tiff = generateGeotaggedTiff(options);
    assert.ok(tiff.length > 3_000_000);
    const { result, bytesRead } = await analyzeBuffer(tiff);
    const m = metadataOf(result);
    assert.equal(m.format, 'tiff');
    assert.deepEqual([m.width, m.height], [1200, 900]);
    near(m.latitude, options.latitude, 1e-6, 'latitude');
    near(m.longitude, options.longitude, 1e-6, 'longitude');
    near(m.altitude, options.altitude, 1e-3, 'altitude');
    assert.equal(m.make, 'Tiffer');
    assert.deepEqual(m.gimbal, options.gimbal);
    assert.ok(bytesRead < 80 * KiB, `bytes read: ${bytesRead}`);
  });

  it('TIFF from sharp: size from IFD0, XMP from tag 700', async () => {
    const tiff = await sharp(raw(50, 70), { raw: { width: 50, height: 70, channels: 3 } }).tiff().withXmp(xmp(5, -90, 0)).toBuffer();
    const m = metadataOf((await analyzeBuffer(tiff)).result);
    assert.equal(m.format, 'tiff');
    assert.deepEqual([m.width, m.height], [50, 70]);
    assert.deepEqual(m.gimbal, { yaw: 5, pitch: -90, roll: 0 });
    assert.equal(m.latitude, null);
  });
});

// ---------------------------------------------------------------------------------------------
// corrupt inputs

describe('analyzeImage on corrupt or non-image input', () => {
  let jpeg: Buffer;
  before(async () => {
    jpeg = await generateGeotaggedJpeg({ latitude: 10, longitude: 20, altitude: 30, width: 160, height: 120, gimbal: { yaw: 1, pitch: -2, roll: 3 } });
  });

  it('empty file', async () => {
    assert.match(failureOf((await analyzeBuffer(Buffer.alloc(0))).result, 'empty'), /empty/);
  });

  it('text file', async () => {
    const text = Buffer.from('This is not an image, just some text.\n'.repeat(50));
    assert.match(failureOf((await analyzeBuffer(text)).result, 'text'), /not a JPEG, PNG or TIFF/);
  });

  it('JPEG truncated before its frame header', async () => {
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    assert.ok(sof > 0);
    for (const cut of [3, 4, 10, 100, sof - 1, sof + 3]) {
      failureOf((await analyzeBuffer(jpeg.subarray(0, cut))).result, `cut at ${cut}`);
    }
  });

  it('JPEG cut after its frame header still gives the metadata', async () => {
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    const m = metadataOf((await analyzeBuffer(jpeg.subarray(0, sof + 19))).result);
    assert.deepEqual([m.width, m.height], [160, 120]);
  });

  it('JPEG structure errors', async () => {
    const cases: Record<string, Buffer> = {
      'SOI only': Buffer.from([0xff, 0xd8, 0xff]),
      'segment length 0': Buffer.from([0xff, 0xd8, 0xff, 0xe1, 0x00, 0x00, 0x00, 0x00]),
      'EOI before SOF': Buffer.from([0xff, 0xd8, 0xff, 0xd9]),
      'SOS before SOF': Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x08, 1, 2, 3, 4, 5, 6]),
      'no marker where one belongs': Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0x12, 0x34]),
      'zero width': Buffer.from([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x0b, 8, 0x00, 0x10, 0x00, 0x00, 1, 1, 0x11, 0]),
      'segment longer than the file': Buffer.from([0xff, 0xd8, 0xff, 0xe1, 0xff, 0xff, 0x45, 0x78]),
    };
    for (const [name, bytes] of Object.entries(cases)) failureOf((await analyzeBuffer(bytes)).result, name);
  });

  it('malformed EXIF in a well-formed JPEG: dimensions kept, EXIF fields null', async () => {
    const broken = Buffer.from(jpeg);
    const app1 = broken.indexOf(Buffer.from('Exif\0\0', 'latin1'));
    broken.fill(0xee, app1 + 6 + 4, app1 + 6 + 200); // IFD0 offset and entries scrambled
    const m = metadataOf((await analyzeBuffer(broken)).result);
    assert.deepEqual([m.width, m.height], [160, 120]);
    assert.equal(m.latitude, null);
    assert.deepEqual(m.gimbal, { yaw: 1, pitch: -2, roll: 3 }); // the XMP is intact
  });

  it('PNG and TIFF structure errors', async () => {
    const png = await sharp(Buffer.alloc(300, 1), { raw: { width: 10, height: 10, channels: 3 } }).png().toBuffer();
    const cases: Record<string, Buffer> = {
      'PNG signature only': png.subarray(0, 8),
      'PNG cut inside IHDR': png.subarray(0, 20),
      'PNG first chunk not IHDR': Buffer.concat([png.subarray(0, 12), Buffer.from('IDAT'), png.subarray(16)]),
      'TIFF header only': Buffer.from('II*\0\x08\0\0\0', 'latin1'),
      'TIFF IFD0 beyond the end': Buffer.from('MM\0*\0\0\x10\0', 'latin1'),
      'TIFF IFD0 without size tags': Buffer.from('II*\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0\x01\0\0\0\0\0\0\0', 'latin1'),
    };
    for (const [name, bytes] of Object.entries(cases)) failureOf((await analyzeBuffer(bytes)).result, name);
  });

  it('never throws on truncated or bit-flipped files', async () => {
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const png = await sharp(Buffer.alloc(300, 1), { raw: { width: 10, height: 10, channels: 3 } }).png().withXmp('<x:xmpmeta/>').toBuffer();
    const tiff = generateGeotaggedTiff({ latitude: 1, longitude: 2, altitude: 3, width: 20, height: 10, gimbal: { yaw: 0, pitch: 0, roll: 0 } });
    for (const original of [jpeg, png, tiff]) {
      const limit = Math.min(original.length, 4000);
      for (let cut = 0; cut < limit; cut += 37) await analyzeBuffer(original.subarray(0, cut));
      for (let i = 0; i < 300; i++) {
        const copy = Buffer.from(original);
        for (let k = 0; k < 8; k++) copy[Math.floor(rand() * limit)] = Math.floor(rand() * 256);
        const { result } = await analyzeBuffer(copy);
        assert.equal(typeof result.ok, 'boolean');
      }
    }
  });

  it('a reader returning fewer bytes than asked is a truncated file', async () => {
    const short: ReadRange = async (start, end) => jpeg.subarray(start, Math.min(end, 500));
    failureOf(await analyzeImage(short, jpeg.length), 'short reads');
  });

  it('invalid sizes', async () => {
    failureOf(await analyzeImage(bufferRangeReader(jpeg), -1), 'negative size');
    failureOf(await analyzeImage(bufferRangeReader(jpeg), Number.NaN), 'NaN size');
  });

  it('errors of readRange itself are passed on (storage failure, not a bad image)', async () => {
    const storageDown = new Error('storage unavailable');
    await assert.rejects(
      analyzeImage(async () => {
        throw storageDown;
      }, 1000),
      (error) => error === storageDown,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// real datasets

const DATASETS = '/work/shared/datasets';
const LUND = listImages(path.join(DATASETS, 'lund/images'), /\.jpe?g$/i);
const BRIGHTON = listImages(path.join(DATASETS, 'brighton_beach/images'), /\.jpe?g$/i);
const TINY = listImages(path.join(DATASETS, 'tiny'), /\.jpe?g$/i);
const absent = (files: string[], name: string) => (files.length === 0 ? `dataset ${name} not present under ${DATASETS}` : false);

function printBytesTable(title: string, rows: Counted[], files: string[]): void {
  const lines = rows.map((r, i) => `  ${path.basename(files[i]).padEnd(14)} size ${String(r.size).padStart(8)}  read ${String(r.bytesRead).padStart(6)} B in ${r.requests} request(s)`);
  console.log(`${title}\n${lines.join('\n')}`);
}

async function throughput(files: string[], rounds: number): Promise<number> {
  const start = performance.now();
  for (let r = 0; r < rounds; r++) {
    for (const file of files) {
      const reader = await openFileRangeReader(file);
      try {
        const result = await analyzeImage(reader.readRange, reader.size);
        assert.ok(result.ok);
      } finally {
        await reader.close();
      }
    }
  }
  return (files.length * rounds) / ((performance.now() - start) / 1000);
}

function exiftoolThroughput(files: string[], rounds: number): number {
  const list = Array.from({ length: rounds }, () => files).flat();
  const start = performance.now();
  execFileSync('exiftool', ['-json', '-n', ...list], { maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  return list.length / ((performance.now() - start) / 1000);
}

function compareWithExiftool(files: string[], results: Counted[]): void {
  const tags = exiftoolJson(files);
  files.forEach((file, i) => {
    const t = tags.get(file);
    const m = metadataOf(results[i].result, file);
    assert.ok(t, file);
    assert.equal(m.width, t.ImageWidth, `${file} width`);
    assert.equal(m.height, t.ImageHeight, `${file} height`);
    near(m.latitude, Number(t.GPSLatitude), 1e-9, `${file} latitude`);
    near(m.longitude, Number(t.GPSLongitude), 1e-9, `${file} longitude`);
    near(m.altitude, Number(t.GPSAltitude), 1e-6, `${file} altitude`); // exiftool prints 10 significant digits
    assert.equal(m.make, t.Make ?? null, `${file} make`);
    assert.equal(m.model, t.Model ?? null, `${file} model`);
    assert.equal(m.focalLength35mm, t.FocalLengthIn35mmFormat ?? null, `${file} 35 mm focal length`);
    if (t.GimbalYawDegree !== undefined) {
      assert.deepEqual(m.gimbal, { yaw: Number(t.GimbalYawDegree), pitch: Number(t.GimbalPitchDegree), roll: Number(t.GimbalRollDegree) });
    }
  });
}

describe('analyzeImage on the lund dataset (phone photos, 1024x768, GPS)', { skip: absent(LUND, 'lund') }, () => {
  let results: Counted[] = [];
  before(async () => {
    results = await Promise.all(LUND.map((f) => analyzeFile(f)));
  });

  it('every image: size, GPS, no gimbal, only the 64 KiB head read', () => {
    LUND.forEach((file, i) => {
      const m = metadataOf(results[i].result, file);
      assert.equal(m.format, 'jpeg');
      assert.deepEqual([m.width, m.height], [1024, 768], file);
      assert.ok(m.latitude !== null && Math.abs(m.latitude - 55.7) < 0.1, `${file} latitude ${m.latitude}`);
      assert.ok(m.longitude !== null && Math.abs(m.longitude - 13.2) < 0.1, `${file} longitude ${m.longitude}`);
      assert.ok(m.altitude !== null, file);
      assert.equal(m.quaternion, null);
      assert.ok(results[i].bytesRead <= 64 * KiB, `${file} read ${results[i].bytesRead}`);
      assert.equal(results[i].requests, 1);
    });
    printBytesTable('lund: bytes read per file', results, LUND);
  });

  it('agrees with exiftool', { skip: hasExiftool() ? false : NO_EXIFTOOL }, () => compareWithExiftool(LUND, results));
});

describe('analyzeImage on the brighton_beach dataset (DJI, 4000x2250, gimbal XMP)', { skip: absent(BRIGHTON, 'brighton_beach') }, () => {
  let results: Counted[] = [];
  before(async () => {
    results = await Promise.all(BRIGHTON.map((f) => analyzeFile(f)));
  });

  it('every image: size, GPS, DJI gimbal and quaternion; reads far less than the file', () => {
    BRIGHTON.forEach((file, i) => {
      const { size, bytesRead } = results[i];
      const m = metadataOf(results[i].result, file);
      assert.deepEqual([m.width, m.height], [4000, 2250], file);
      assert.equal(m.make, 'DJI');
      assert.ok(m.latitude !== null && m.longitude !== null && m.altitude !== null, file);
      assert.ok(m.gimbal, `${file} gimbal`);
      assert.ok(m.flight, `${file} flight attitude`);
      assert.ok(m.quaternion, `${file} quaternion`);
      assert.deepEqual(m.quaternion, cameraToEnuQuaternion(m.gimbal));
      near(Math.hypot(...m.quaternion), 1, 1e-12, 'quaternion norm');
      if (m.gimbal.pitch < -85) assert.ok(rotateVector(m.quaternion, [0, 0, 1])[2] < -0.99, `${file} looks down`);
      assert.ok(m.capturedAt instanceof Date && m.capturedAt.getUTCFullYear() === 2016, file);
      assert.ok(bytesRead < 256 * KiB, `${file}: read ${bytesRead} bytes`);
      assert.ok(bytesRead * 20 < size, `${file}: read ${bytesRead} of ${size} bytes`);
    });
    printBytesTable('brighton_beach: bytes read per file', results, BRIGHTON);
  });

  it('same metadata when the head is tiny and every segment is reached by a jump', async () => {
    for (const [i, file] of BRIGHTON.entries()) {
      const small = await analyzeFile(file, { headSize: 512, readAhead: 256 });
      assert.deepEqual(small.result, results[i].result, file);
      assert.ok(small.bytesRead < results[i].bytesRead, `${file}: ${small.bytesRead} bytes in ${small.requests} requests`);
    }
  });

  it('agrees with exiftool', { skip: hasExiftool() ? false : NO_EXIFTOOL }, () => compareWithExiftool(BRIGHTON, results));
});

describe('analyzeImage on the tiny dataset', { skip: absent(TINY, 'tiny') }, () => {
  it('reads size and GPS', async () => {
    for (const file of TINY) {
      const m = metadataOf((await analyzeFile(file)).result, file);
      assert.ok(m.width > 0 && m.height > 0);
      assert.ok(m.latitude !== null && m.longitude !== null, file);
    }
  });

  it('agrees with exiftool', { skip: hasExiftool() ? false : NO_EXIFTOOL }, async () => {
    const results = await Promise.all(TINY.map((f) => analyzeFile(f)));
    compareWithExiftool(TINY, results);
  });
});

describe('throughput from local disk (printed, not asserted)', { skip: absent(LUND, 'lund') || absent(BRIGHTON, 'brighton_beach') }, () => {
  it('files per second, and exiftool -json -n on the same files when installed', async () => {
    for (const [name, files] of [
      ['lund', LUND],
      ['brighton_beach', BRIGHTON],
    ] as const) {
      await throughput(files, 1); // warm-up
      const ours = await throughput(files, 5);
      let line = `${name}: analyzeImage ${ours.toFixed(0)} files/s (sequential, open + read + close per file)`;
      if (hasExiftool()) {
        const theirs = exiftoolThroughput(files, 5);
        line += `; exiftool -json -n ${theirs.toFixed(0)} files/s (one process for ${files.length * 5} files); ratio ${(ours / theirs).toFixed(1)}x`;
      }
      console.log(line);
    }
  });
});

// A file written by the script is read back the same (guards the JPEG assembly with real files on disk).
describe('generated file on disk', () => {
  it('round-trips through the file reader', async () => {
    const file = path.join(tmp, 'on-disk.jpg');
    await writeFile(file, await generateGeotaggedJpeg({ latitude: 47.1, longitude: 8.5, altitude: 500, gimbal: { yaw: 0, pitch: -90, roll: 0 } }));
    const m = metadataOf((await analyzeFile(file)).result);
    near(m.latitude, 47.1, 1e-6, 'latitude');
    assert.equal((await readFile(file)).length > 0, true);
  });
});
