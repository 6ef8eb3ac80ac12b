import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateDemoImageSet, generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { analyzeImage, type ImageMetadata } from '../src/shared/image-metadata/index.ts';
import { rotateVector } from '../src/shared/geo/rotation.ts';

const SCRIPT = fileURLToPath(new URL('../scripts/generate-demo-images.ts', import.meta.url));

async function read(buffer: Buffer): Promise<ImageMetadata> {
  const result = await analyzeImage(async (start, end) => buffer.subarray(start, end), buffer.length);
  if (!result.ok) assert.fail(result.reason);
  return result.metadata;
}

/** Metres between two nearby positions (equirectangular approximation). */
function metres(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const r = 6371000;
  const dLat = ((b.latitude - a.latitude) * Math.PI) / 180;
  const dLon = (((b.longitude - a.longitude) * Math.PI) / 180) * Math.cos((a.latitude * Math.PI) / 180);
  return r * Math.hypot(dLat, dLon);
}

let tmp = '';
before(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'demo-images-'));
});
after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('generateGeotaggedJpeg', () => {
  it('different seeds give different pixels, the same seed the same file', async () => {
    const base = { latitude: 1, longitude: 2, altitude: 3, width: 120, height: 90 };
    const a = await generateGeotaggedJpeg({ ...base, seed: 1 });
    const b = await generateGeotaggedJpeg({ ...base, seed: 2 });
    const a2 = await generateGeotaggedJpeg({ ...base, seed: 1 });
    assert.notDeepEqual(a, b);
    assert.deepEqual(a, a2);
  });

  it('starts with SOI and an Exif APP1 segment, like a camera file', async () => {
    const jpeg = await generateGeotaggedJpeg({ latitude: 1, longitude: 2, altitude: 3, width: 32, height: 32 });
    assert.deepEqual([...jpeg.subarray(0, 4)], [0xff, 0xd8, 0xff, 0xe1]);
    assert.equal(jpeg.toString('latin1', 6, 12), 'Exif\0\0');
  });

  it('rejects pixel buffers of the wrong size', async () => {
    await assert.rejects(generateGeotaggedJpeg({ latitude: 0, longitude: 0, altitude: 0, width: 10, height: 10, pixels: Buffer.alloc(5) }), RangeError);
  });
});

describe('generateDemoImageSet', () => {
  const center = { latitude: 59.3293, longitude: 18.0686, altitude: 60 };

  it('places the photos on a grid around the centre, nadir, each readable', async () => {
    const images = await generateDemoImageSet(6, center, { width: 320, height: 240, seed: 5 });
    assert.equal(images.length, 6);
    assert.equal(new Set(images.map((i) => i.filename)).size, 6);
    assert.equal(new Set(images.map((i) => i.data.toString('base64'))).size, 6, 'distinct contents');
    const positions = new Set<string>();
    for (const image of images) {
      const m = await read(image.data);
      assert.deepEqual([m.width, m.height], [320, 240]);
      assert.ok(Math.abs((m.latitude ?? NaN) - image.latitude) < 1e-6);
      assert.ok(Math.abs((m.longitude ?? NaN) - image.longitude) < 1e-6);
      assert.ok(Math.abs((m.altitude ?? NaN) - center.altitude) < 1e-3);
      assert.equal(m.relativeAltitude, 40);
      assert.ok(metres(center, image) < 60, `${image.filename} is ${metres(center, image).toFixed(1)} m from the centre`);
      assert.deepEqual(m.gimbal, { yaw: 0, pitch: -90, roll: 0 });
      assert.ok(m.quaternion);
      assert.ok(rotateVector(m.quaternion, [0, 0, 1])[2] < -0.999);
      positions.add(`${image.latitude.toFixed(7)},${image.longitude.toFixed(7)}`);
    }
    assert.equal(positions.size, 6, 'distinct positions');
    const times = await Promise.all(images.map(async (i) => (await read(i.data)).capturedAt?.getTime()));
    assert.deepEqual(times, [...times].sort((x, y) => (x ?? 0) - (y ?? 0)), 'capture times increase along the flight');
  });

  it('neighbouring photos overlap (the same ground texture shifted)', async () => {
    const [first, second] = await generateDemoImageSet(2, center, { width: 200, height: 150, seed: 9 });
    assert.ok(metres(first, second) > 5);
    assert.notDeepEqual(first.data, second.data);
  });

  it('rejects a count that is not a positive integer', async () => {
    await assert.rejects(generateDemoImageSet(0, center), RangeError);
    await assert.rejects(generateDemoImageSet(1.5, center), RangeError);
  });
});

describe('scripts/generate-demo-images.ts as a command', () => {
  it('writes the requested number of readable files', async () => {
    const out = path.join(tmp, 'cli');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', SCRIPT, out, '3', '48.8584', '2.2945', '100']);
    assert.match(stdout, /wrote 3 images/);
    const files = (await readdir(out)).sort();
    assert.deepEqual(files, ['DEMO_0001.JPG', 'DEMO_0002.JPG', 'DEMO_0003.JPG']);
    for (const file of files) {
      const m = await read(await readFile(path.join(out, file)));
      assert.ok(Math.abs((m.latitude ?? NaN) - 48.8584) < 0.001);
      assert.ok(Math.abs((m.longitude ?? NaN) - 2.2945) < 0.001);
    }
  });
});
