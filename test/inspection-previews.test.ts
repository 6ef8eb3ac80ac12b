// Photo previews (web console): after the typical flow (exif engine) on lund photos, a JPEG made
// once by sharp with EXIF orientation applied, presigned afterwards; 404 for another
// organization's inspection, an unknown photo or an inspection not processed yet; 400 for an
// unknown size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { startTestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';

const LUND = path.join(import.meta.dirname, 'fixtures', 'lund', 'images');

test('photo previews: thumb and large made once and kept, original presigned, errors', async (t) => {
  const system = await startTestSystem();
  t.after(() => system.stop());
  const owner = await system.newAccount();
  const other = await system.newAccount();
  const { client } = owner;

  // Three lund photos (1024x768; processing wants at least three), the second re-tagged EXIF orientation 6 (shown rotated: 768x1024).
  const first = fs.readFileSync(path.join(LUND, '01.jpg'));
  const rotated = await sharp(fs.readFileSync(path.join(LUND, '02.jpg'))).keepExif().withMetadata({ orientation: 6 }).jpeg({ quality: 90 }).toBuffer();
  const asset = await client.createAsset({ name: 'Lund', type: 1, latitude: '55.69816667', longitude: '13.19538889' } as never);
  const inspection = await client.createInspection({ asset: asset.id, name: 'Lund previews' });
  const keys = await client.upload(await client.storageCredentials(inspection.id), [
    { name: '01.jpg', body: first },
    { name: '02-rotated.jpg', body: rotated },
    { name: '03.jpg', body: fs.readFileSync(path.join(LUND, '03.jpg')) },
  ]);
  await client.register(inspection.id, keys);

  // Registered but not processed: no cameras, so no photo ids yet.
  const early = await client.expect(404, 'GET', `/v1/inspections/${inspection.id}/photos/1/preview/`);
  assert.match(early.detail, /cameras/);

  await client.process(inspection.id);
  assert.equal((await client.waitUntilSettled(inspection.id, { timeoutMs: 90_000 })).status, 7);
  const cameras = await client.cameras(inspection.id);
  const byName = (name: string) => cameras.find((c: { filename: string }) => c.filename === name)!;
  const photo = byName('01.jpg').photo_id;
  const path1 = `/v1/inspections/${inspection.id}/photos/${photo}/preview/`;

  const thumb = await client.expect(200, 'GET', path1);
  assert.deepEqual([thumb.size, thumb.width, thumb.height], ['thumb', 320, 240]);
  const image = await fetch(thumb.url);
  assert.equal(image.status, 200);
  const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 320, 240]);
  assert.equal(system.inspection.previews.built, 1);

  // Kept: the same preview again, and concurrently, builds nothing more.
  await Promise.all([client.expect(200, 'GET', path1), client.expect(200, 'GET', `${path1}?size=thumb`)]);
  assert.equal(system.inspection.previews.built, 1);
  // Concurrent first requests of another size share one build (large never enlarges: 1024x768).
  const larges = await Promise.all([1, 2, 3].map(() => client.expect(200, 'GET', `${path1}?size=large`)));
  assert.equal(system.inspection.previews.built, 2);
  assert.deepEqual([larges[0].width, larges[0].height], [1024, 768]);

  // EXIF orientation applied: the rotated photo's thumbnail is upright, 240x320.
  const rotatedThumb = await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/photos/${byName('02-rotated.jpg').photo_id}/preview/?size=thumb`);
  assert.deepEqual([rotatedThumb.width, rotatedThumb.height], [240, 320]);
  const rotatedMeta = await sharp(Buffer.from(await (await fetch(rotatedThumb.url)).arrayBuffer())).metadata();
  assert.deepEqual([rotatedMeta.width, rotatedMeta.height, rotatedMeta.orientation ?? 1], [240, 320, 1]);
  assert.equal(system.inspection.previews.built, 3);

  // Many previews asked at once (a grid scrolling into view): at most two sharp builds run together.
  const photos = cameras.map((c: { photo_id: number }) => c.photo_id);
  await Promise.all(photos.flatMap((id: number) => ['thumb', 'large'].map((size) => client.expect(200, 'GET', `/v1/inspections/${inspection.id}/photos/${id}/preview/?size=${size}`))));
  assert.equal(system.inspection.previews.built, 6);
  assert.equal(system.inspection.previews.peakBuilds, 2);

  // A kept preview whose size this process has forgotten (as after a restart) is read back, not rebuilt.
  (system.inspection.previews as unknown as { sizes: Map<string, unknown> }).sizes.clear();
  const again = await client.expect(200, 'GET', path1);
  assert.deepEqual([again.width, again.height], [320, 240]);
  assert.equal(system.inspection.previews.built, 6);

  const original = await client.expect(200, 'GET', `${path1}?size=original`);
  assert.deepEqual([original.width, original.height], [1024, 768]);
  const originalBytes = Buffer.from(await (await fetch(original.url)).arrayBuffer());
  assert.deepEqual(originalBytes, first);

  await other.client.expect(404, 'GET', path1);
  await client.expect(404, 'GET', `/v1/inspections/${inspection.id}/photos/999999/preview/`);
  await client.expect(404, 'GET', `/v1/inspections/999999/photos/${photo}/preview/`);
  const bad = await client.expect(400, 'GET', `${path1}?size=huge`);
  assert.ok(bad.querystring?.size, JSON.stringify(bad));
  assertNoServerErrors(system);
});
