// Photo previews (web console): a JPEG made once by sharp, presigned afterwards; 404 for another
// organization's inspection or an unknown photo, 400 for an unknown size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startTestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection } from './helpers/inspection-fixtures.ts';

test('photo previews: thumb and large made once and kept, original presigned, errors', async (t) => {
  const system = await startTestSystem();
  t.after(() => system.stop());
  const owner = await system.newAccount();
  const other = await system.newAccount();
  const { inspection, cameras } = await processedInspection(owner);
  const photo = cameras[0].photo_id;
  const path = `/v1/inspections/${inspection.id}/photos/${photo}/preview/`;

  const thumb = await owner.client.expect(200, 'GET', path);
  assert.equal(thumb.size, 'thumb');
  const image = Buffer.from(await (await fetch(thumb.url)).arrayBuffer());
  const meta = await sharp(image).metadata();
  assert.equal(meta.format, 'jpeg');
  assert.ok(Math.max(meta.width!, meta.height!) <= 320, `${meta.width}x${meta.height}`);
  assert.equal(system.inspection.previews.built, 1);

  // Kept: the same preview again, and concurrently, builds nothing more.
  await Promise.all([owner.client.expect(200, 'GET', path), owner.client.expect(200, 'GET', `${path}?size=thumb`)]);
  assert.equal(system.inspection.previews.built, 1);
  // Concurrent first requests of another size share one build.
  await Promise.all([1, 2, 3].map(() => owner.client.expect(200, 'GET', `${path}?size=large`)));
  assert.equal(system.inspection.previews.built, 2);

  const original = await owner.client.expect(200, 'GET', `${path}?size=original`);
  const originalBytes = Buffer.from(await (await fetch(original.url)).arrayBuffer());
  assert.equal((await sharp(originalBytes).metadata()).width, cameras[0].dimensions.x);

  await other.client.expect(404, 'GET', path);
  await owner.client.expect(404, 'GET', `/v1/inspections/${inspection.id}/photos/999999/preview/`);
  const bad = await owner.client.expect(400, 'GET', `${path}?size=huge`);
  assert.ok(bad.querystring?.size, JSON.stringify(bad));
  assertNoServerErrors(system);
});
