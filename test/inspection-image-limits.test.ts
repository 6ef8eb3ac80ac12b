// Photos too large to decode (issue 27, findings 8 and 9), with IMAGE_MAX_BYTES at 16 MiB here:
// - register_images refuses a photo file over IMAGE_MAX_BYTES (400 on image_keys, naming it);
// - a photo overwritten after registration with a file over the limit, a forged 60000 × 60000
//   JPEG frame header and a 30000 × 30000 PNG of zeros (a decompression bomb of 0.9 MB) are
//   refused with their reason: 422 on every preview size (never a 500), skipped with the reason by
//   the rust analysis, "photo not available: <reason>" in the report's PDF, which is still made;
// - the refusal is remembered against the object's ETag: later requests read nothing, a new
//   object under the same key is judged again;
// - a JPEG followed by megabytes of padding is previewed from its own bytes: the padding is not read.
// And the JPEG end finder (shared/images/jpeg-end.ts) on baseline, progressive and thumbnail-carrying
// JPEGs fed a byte at a time.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, waitFor } from './helpers/inspection-fixtures.ts';
import { requireTool } from './helpers/system-tools.ts';
import { s3ClientFor } from '../src/sdk/inspection-client.ts';
import { JpegEndFinder } from '../src/shared/images/jpeg-end.ts';

const run = promisify(execFile);
const LUND = path.join(import.meta.dirname, 'fixtures', 'lund', 'images');
const lund = (name: string) => fs.readFileSync(path.join(LUND, name));
const MIB = 1024 ** 2;

/** A real JPEG whose frame header (SOF0) claims `side` × `side` pixels: a few hundred bytes. */
async function forgedJpeg(side: number): Promise<Buffer> {
  const jpeg = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#808080' } }).jpeg().toBuffer();
  const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
  assert.ok(sof > 0);
  jpeg.writeUInt16BE(side, sof + 5); // height
  jpeg.writeUInt16BE(side, sof + 7); // width
  return jpeg;
}

/** A `side` × `side` 8-bit grey PNG of zeros: the whole image data deflated (no shortcut in the file). */
async function pngBomb(side: number): Promise<Buffer> {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 8; // bit depth; colour type 0 (grey), compression 0, filter 0, interlace 0
  // Rows of a filter byte and `side` zeros, deflated as a stream (900 MB in, never held at once).
  const rows = Buffer.alloc((side + 1) * 100);
  const deflate = zlib.createDeflate({ level: 9, strategy: zlib.constants.Z_RLE });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  for (let i = 0; i < side / 100; i++) if (!deflate.write(rows)) await new Promise((resolve) => deflate.once('drain', resolve));
  deflate.end();
  await ended;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', Buffer.concat(out)), chunk('IEND', Buffer.alloc(0))]);
}

const padded = (jpeg: Buffer, bytes: number) => Buffer.concat([jpeg, Buffer.alloc(bytes)]);

describe('image limits: photos too large to read or decode', () => {
  let system: TestSystem;
  let account: TestAccount;
  let asset: { id: number };

  before(async () => {
    system = await startTestSystem({ imageMaxBytes: 16 * MIB });
    account = await system.newAccount({ projects: 10 });
    asset = await account.client.createAsset({ name: 'Lund', type: 1, latitude: '55.69816667', longitude: '13.19538889' });
  });
  after(async () => {
    try {
      assertNoServerErrors(system);
    } finally {
      await system?.stop();
    }
  });

  it('register_images refuses a photo file over IMAGE_MAX_BYTES, naming it and the limit', async () => {
    const { client } = account;
    const inspection = await client.createInspection({ asset: asset.id, name: 'too large' });
    const keys = await client.upload(await client.storageCredentials(inspection.id), [
      { name: '01.jpg', body: lund('01.jpg') },
      { name: 'padded.jpg', body: padded(lund('05.jpg'), 20 * MIB) },
    ]);
    const refused = await client.expect(400, 'POST', `/v1/inspections/${inspection.id}/register_images/`, { image_keys: keys });
    assert.equal(refused.image_keys.length, 1, JSON.stringify(refused));
    assert.match(refused.image_keys[0], /padded\.jpg: the photo file is 20\.\d MiB, over the limit of 16 MiB per image \(IMAGE_MAX_BYTES\)/);
    assert.doesNotMatch(refused.image_keys[0], /01\.jpg/);
    assert.equal((await client.getInspection(inspection.id)).status, 1, 'nothing registered');
    assert.deepEqual(await client.register(inspection.id, [keys[0]]), { nb_images_registered: 1 });
  });

  it('previews (422), rust analysis and report crops refuse hostile photos with their reason, and read each once', async (t) => {
    const { client } = account;
    const inspection = await client.createInspection({ asset: asset.id, name: 'hostile photos', processing_parameters: { detect_rust: true } });
    const credentials = await client.storageCredentials(inspection.id);
    const keys = await client.upload(credentials, [
      { name: '01.jpg', body: lund('01.jpg') },
      { name: '02.jpg', body: lund('02.jpg') },
      { name: '03-padded.jpg', body: padded(lund('03.jpg'), 8 * MIB) }, // under the limit: previewed from its own bytes
      { name: '04-overwritten.jpg', body: lund('04.jpg') },
      { name: 'huge-header.jpg', body: await forgedJpeg(60000) },
      { name: 'bomb.png', body: await pngBomb(30000) },
    ]);
    await client.register(inspection.id, keys);
    // Overwritten after registration: over the byte limit when it is read.
    const s3 = s3ClientFor(credentials);
    const put = (name: string, body: Buffer) => s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: `${credentials.key}${name}`, Body: body }));
    t.after(() => s3.destroy());
    await put('04-overwritten.jpg', padded(lund('04.jpg'), 20 * MIB));

    await client.process(inspection.id);
    assert.equal((await client.waitUntilSettled(inspection.id, { timeoutMs: 90_000 })).status, 7);
    const rust = await waitFor('rust analysis', async () => {
      const record = await client.getInspection(inspection.id);
      return [13, 14].includes(record.additional_statuses.rust) ? record.additional_statuses : undefined;
    });
    assert.equal(rust.rust, 13, JSON.stringify(rust));
    const reason: string = rust.rust_reason;
    assert.match(reason, /^3 photo\(s\) skipped: /, reason);
    assert.match(reason, /04-overwritten\.jpg: the photo file is 20\.\d MiB, over the limit of 16 MiB per image \(IMAGE_MAX_BYTES\)/);
    assert.match(reason, /bomb\.png: the photo is 30000 × 30000 pixels \(900 megapixels\), over the limit of 200 megapixels per image \(IMAGE_MAX_PIXELS\)/);
    assert.match(reason, /huge-header\.jpg: the photo is 60000 × 60000 pixels \(3,600 megapixels\), over the limit of 200 megapixels per image \(IMAGE_MAX_PIXELS\)/);

    const cameras = await client.cameras(inspection.id);
    const photoOf = (name: string) => cameras.find((c: { filename: string }) => c.filename === name)!.photo_id as number;
    const preview = (name: string, size: string) => `/v1/inspections/${inspection.id}/photos/${photoOf(name)}/preview/?size=${size}`;

    // Every size of a refused photo: 422 with the reason. The rust analysis's verdicts are
    // remembered: none of these requests reads a photo again.
    const reads = system.inspection.images.filesRead;
    for (const [name, why] of [
      ['huge-header.jpg', /the photo is 60000 × 60000 pixels .*IMAGE_MAX_PIXELS/],
      ['bomb.png', /the photo is 30000 × 30000 pixels .*IMAGE_MAX_PIXELS/],
      ['04-overwritten.jpg', /the photo file is 20\.\d MiB, .*IMAGE_MAX_BYTES/],
    ] as const) {
      for (const size of ['thumb', 'large', 'original', 'thumb']) {
        const refused = await client.expect(422, 'GET', preview(name, size));
        assert.equal(refused.code, 'image_too_large', JSON.stringify(refused));
        assert.match(refused.detail, new RegExp(`^Photo ${photoOf(name)} has no preview: `));
        assert.match(refused.detail, why);
      }
    }
    assert.equal(system.inspection.images.filesRead, reads, 'refused photos are not read again');

    // A new object under the same key is judged again: first refused by the preview, once... (written
    // by the store itself: the inspection's credentials no longer write once processing started, spec rule 4)
    const replace = async (name: string, body: Buffer) => void (await system.store.putObject(credentials.bucket, `${credentials.key}${name}`, body));
    await replace('huge-header.jpg', await forgedJpeg(50000));
    for (const size of ['thumb', 'large', 'thumb']) {
      assert.match((await client.expect(422, 'GET', preview('huge-header.jpg', size))).detail, /50000 × 50000 pixels/);
    }
    assert.equal(system.inspection.images.filesRead, reads + 1, 'read once by the previews, then remembered');
    // ...then, a real photo there, previewed.
    await replace('huge-header.jpg', lund('07.jpg'));
    const fixed = await client.expect(200, 'GET', preview('huge-header.jpg', 'thumb'));
    assert.deepEqual([fixed.width, fixed.height], [320, 240]);

    // A JPEG followed by 8 MiB of zeros: previewed from its own bytes, the padding not read.
    const before = system.inspection.images.bytesRead;
    const thumb = await client.expect(200, 'GET', preview('03-padded.jpg', 'thumb'));
    assert.deepEqual([thumb.width, thumb.height], [320, 240]);
    assert.equal(system.inspection.images.bytesRead - before, lund('03.jpg').length, 'exactly the JPEG, up to its end marker');
    const meta = await sharp(Buffer.from(await (await fetch(thumb.url)).arrayBuffer())).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 320, 240]);

    // The report is made; the refused photo's annotation says why it has no crop.
    const annotate = (name: string, title: string) =>
      client.expect(201, 'POST', '/v1/annotations/', { inspection: inspection.id, photo_id: photoOf(name), type: 'Crack', name: title, data: { coords_2d: [[0.2, 0.2], [0.4, 0.2], [0.4, 0.4], [0.2, 0.4]] } });
    await annotate('01.jpg', 'Crack on a real photo');
    await annotate('bomb.png', 'Crack on the bomb');
    await client.expect(202, 'POST', `/v1/inspections/${inspection.id}/report/`, { include_sharetoken: false });
    const done = await waitFor('report', async () => {
      const record = await client.getInspection(inspection.id);
      return record.report_status === 'processing' ? undefined : record;
    });
    assert.equal(done.report_status, 'available');
    if (!requireTool(t, '/usr/bin/pdftotext', 'poppler-utils')) return;
    const outputs = await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/outputs/`);
    const pdf = Buffer.from(await (await fetch(outputs.find((o: { output_type: string }) => o.output_type === 'report_pdf').url)).arrayBuffer());
    const dir = tempDir('oi-image-limits-');
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, 'report.pdf'), pdf);
    const text = (await run('/usr/bin/pdftotext', [path.join(dir, 'report.pdf'), '-'])).stdout.replace(/\s+/g, ' ');
    assert.ok(
      text.includes('(photo not available: the photo is 30000 × 30000 pixels (900 megapixels), over the limit of 200 megapixels per image (IMAGE_MAX_PIXELS))'),
      text,
    );
    // One crop per annotation but the bomb's (the rust analysis annotated some lund photos too).
    const annotations = await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/annotations/`);
    const images = (await run('/usr/bin/pdfimages', ['-list', path.join(dir, 'report.pdf')])).stdout.trim().split('\n').slice(2);
    assert.equal(images.length, annotations.length - 1, JSON.stringify(annotations.map((a: { photo_id: number }) => a.photo_id)));
  });
});

describe('JPEG end finder', () => {
  /** Feeds `file` in chunks of `size` bytes; returns the bytes kept (the finder's count per chunk). */
  const kept = (file: Buffer, size: number) => {
    const finder = new JpegEndFinder();
    let total = 0;
    for (let i = 0; i < file.length; i += size) total += finder.push(file.subarray(i, i + size));
    return { total, end: finder.end };
  };

  it('stops at the end marker of baseline and progressive JPEGs, whatever the chunks, and skips an EXIF thumbnail', async () => {
    const photo = lund('01.jpg');
    const progressive = await sharp(photo).jpeg({ progressive: true, quality: 80 }).toBuffer();
    // An APP1 segment holding a thumbnail JPEG (with its own end marker) before the frame.
    const thumbnail = await sharp(photo).resize(160).jpeg().toBuffer();
    const app1 = Buffer.concat([Buffer.from([0xff, 0xe1, 0, 0]), Buffer.from('Exif\0\0', 'latin1'), thumbnail]);
    app1.writeUInt16BE(app1.length - 2, 2);
    const withThumbnail = Buffer.concat([photo.subarray(0, 2), app1, photo.subarray(2)]);
    // After the image: DJI-like trailing JPEG, then zeros.
    const trailer = Buffer.concat([thumbnail, Buffer.alloc(4096)]);
    for (const jpeg of [photo, progressive, withThumbnail]) {
      for (const size of [1, 7, 4096, 1 << 20]) {
        assert.deepEqual(kept(Buffer.concat([jpeg, trailer]), size), { total: jpeg.length, end: jpeg.length }, `chunks of ${size}`);
      }
    }
  });

  it('reports no end for what is not a JPEG it understands: the file is read whole', async () => {
    const png = await sharp(lund('01.jpg')).resize(64).png().toBuffer();
    assert.deepEqual(kept(png, 100), { total: png.length, end: undefined });
    const cut = lund('01.jpg').subarray(0, 50_000);
    assert.deepEqual(kept(cut, 999), { total: cut.length, end: undefined });
  });
});
