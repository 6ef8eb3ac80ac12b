// Video input (`processing_parameters.is_video`, issue 12): a video uploaded instead of photos goes
// through status 12 (frames extracted by ffmpeg, GPS from the DJI .SRT sidecar or the video's own
// ISO 6709 place) into the normal pipeline; a broken video ends in 14 with its reason. The test
// video is made with ffmpeg from the lund photos (helpers/video-fixtures.ts), its .SRT from their
// EXIF GPS. Over real HTTP, uploads with @aws-sdk/client-s3. Also the parsers and the EXIF writer
// on their own, and the streaming .SRT reader's limits (issue 27: hostile sidecars; their HTTP
// side in inspection-video-hostile.test.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startTestSystem, tempDir, type TestSystem, type TestAccount } from './helpers/test-system.ts';
import { requireTool } from './helpers/system-tools.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { analyzeImage, openFileRangeReader } from '../src/shared/image-metadata/index.ts';
import { localTimeAt, MAX_TELEMETRY_BYTES, MAX_TELEMETRY_CUES, parseDjiSrt, positionAt, readDjiSrt } from '../src/inspection/video/srt-telemetry.ts';
import { parseIso6709 } from '../src/inspection/video/iso6709.ts';
import { FFMPEG, FFPROBE, LUND, lundPhotos, lundVideo } from './helpers/video-fixtures.ts';
import { withFrameExif } from '../src/inspection/video/frame-exif.ts';
import { frameInterval, MAX_FRAMES, MIN_FRAMES } from '../src/inspection/video/frame-spacing.ts';
import { pairVideoInputs } from '../src/inspection/video/video-inputs.ts';

const run = promisify(execFile);
/** Photos in the test video, each shown for SECONDS_PER_PHOTO. */
const PHOTOS = 8;
const SECONDS_PER_PHOTO = 0.5;

interface Fix {
  latitude: number;
  longitude: number;
  altitude: number;
}

async function exifOf(file: string): Promise<Fix & { capturedAt: Date | null; description?: string }> {
  const reader = await openFileRangeReader(file);
  try {
    const analysis = await analyzeImage(reader.readRange, reader.size);
    assert.ok(analysis.ok, `${file} is readable`);
    const m = analysis.metadata;
    assert.ok(m.latitude !== null && m.longitude !== null && m.altitude !== null, `${file} has GPS`);
    return { latitude: m.latitude, longitude: m.longitude, altitude: m.altitude, capturedAt: m.capturedAt };
  } finally {
    await reader.close();
  }
}

const srtTime = (s: number) => {
  const ms = Math.round(s * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(Math.floor(ms / 3600000))}:${p(Math.floor(ms / 60000) % 60)}:${p(Math.floor(ms / 1000) % 60)},${p(ms % 1000, 3)}`;
};

/** A DJI Mini-3-style sidecar: one cue per photo, the photo's EXIF GPS in it. */
function djiSrt(fixes: Fix[]): string {
  return fixes
    .map((f, i) => {
      const from = i * SECONDS_PER_PHOTO;
      const clock = new Date(Date.UTC(2024, 5, 1, 10, 0, 0) + from * 1000).toISOString().replace('T', ' ').replace('Z', '');
      return [
        String(i + 1),
        `${srtTime(from)} --> ${srtTime(from + SECONDS_PER_PHOTO)}`,
        `<font size="28">FrameCnt: ${i + 1}, DiffTime: 500ms`,
        clock,
        `[iso: 100] [shutter: 1/1000.0] [fnum: 2.8] [ev: 0] [focal_len: 24.00] [latitude: ${f.latitude.toFixed(6)}] [longitude: ${f.longitude.toFixed(6)}] [rel_alt: 30.000 abs_alt: ${f.altitude.toFixed(3)}] [ct: 5500] </font>`,
      ].join('\n');
    })
    .join('\n\n');
}

/** Expected position at t: linear between the photos' positions (as the .SRT gives them, 6 decimals). */
function expectedAt(fixes: Fix[], t: number): Fix {
  const r = (v: number) => Number(v.toFixed(6));
  const i = Math.min(Math.floor(t / SECONDS_PER_PHOTO), fixes.length - 1);
  const j = Math.min(i + 1, fixes.length - 1);
  const f = i === j ? 0 : (t - i * SECONDS_PER_PHOTO) / SECONDS_PER_PHOTO;
  const lerp = (a: number, b: number) => a + (b - a) * f;
  return { latitude: lerp(r(fixes[i].latitude), r(fixes[j].latitude)), longitude: lerp(r(fixes[i].longitude), r(fixes[j].longitude)), altitude: lerp(fixes[i].altitude, fixes[j].altitude) };
}

describe('video input: parsers and the frame EXIF', () => {
  it('reads both DJI .SRT layouts, skips cues without a fix, and interpolates by time', () => {
    const bracketed = [
      '1\n00:00:00,000 --> 00:00:00,033\n<font size="28">FrameCnt: 1, DiffTime: 33ms\n2024-08-07 12:34:24.380\n[iso: 100] [latitude: 0.000000] [longitude: 0.000000] [rel_alt: 0.000 abs_alt: 0.000] </font>',
      '2\n00:00:01,000 --> 00:00:01,033\n<font size="28">FrameCnt: 31, DiffTime: 33ms\n2024-08-07 12:34:25.380\n[iso: 100] [latitude: 55.000000] [longtitude : 13.000000] [rel_alt: 30.000 abs_alt: 60.000] </font>',
      '3\n00:00:03,000 --> 00:00:03,033\n<font size="28">FrameCnt: 91, DiffTime: 33ms\n2024-08-07 12:34:27.380\n[iso: 100] [latitude: 55.002000] [longitude: 13.004000] [rel_alt: 32.000 abs_alt: 62.000] </font>',
    ].join('\r\n\r\n');
    const samples = parseDjiSrt(bracketed);
    assert.equal(samples.length, 2, 'the cue at 0,0 (no fix) is skipped');
    const middle = positionAt(samples, 2)!;
    assert.ok(Math.abs(middle.latitude - 55.001) < 1e-12 && Math.abs(middle.longitude - 13.002) < 1e-12 && middle.altitude === 61, JSON.stringify(middle));
    assert.deepEqual(positionAt(samples, 0.5), { latitude: 55, longitude: 13, altitude: 60 }, 'before the first sample: the first, within 2 s');
    assert.equal(positionAt(samples, 6), null, 'more than 2 s after the last sample: none');
    assert.equal(localTimeAt(samples, 2), '2024-08-07 12:34:26.380');

    const phantom = '1\n00:00:00,000 --> 00:00:01,000\nHOME(149.0251,-20.2532) 2017.08.05 14:11:51\nGPS(149.0251,-20.2533,16) BAROMETER:1.9\nISO:100 Shutter:60 EV: Fnum:2.2\n\n2\n00:00:01,000 --> 00:00:02,000\nHOME(149.0251,-20.2532) 2017.08.05 14:11:52\nGPS(149.0253,-20.2535,18) BAROMETER:2.9\n';
    const p = parseDjiSrt(phantom);
    assert.deepEqual(
      p.map((s) => [s.t, s.longitude, s.latitude, s.altitude, s.localTime]),
      [
        [0, 149.0251, -20.2533, 16, '2017-08-05 14:11:51'],
        [1, 149.0253, -20.2535, 18, '2017-08-05 14:11:52'],
      ],
    );
    assert.deepEqual(parseDjiSrt('not a subtitle file'), []);
  });

  it('reads ISO 6709 places in degrees and in degrees-minutes(-seconds)', () => {
    assert.deepEqual(parseIso6709('+55.6982+013.1953+037.000/'), { latitude: 55.6982, longitude: 13.1953, altitude: 37 });
    assert.deepEqual(parseIso6709('-33.8688+151.2093/'), { latitude: -33.8688, longitude: 151.2093, altitude: null });
    const dm = parseIso6709('+4042.6-07400.4/')!;
    assert.ok(Math.abs(dm.latitude - (40 + 42.6 / 60)) < 1e-12 && Math.abs(dm.longitude + (74 + 0.4 / 60)) < 1e-12);
    const dms = parseIso6709('+404230-0740024/')!;
    assert.ok(Math.abs(dms.latitude - (40 + 42 / 60 + 30 / 3600)) < 1e-12);
    assert.equal(parseIso6709('somewhere'), null);
    assert.equal(parseIso6709('+0.0000+000.0000/'), null, '0,0 is no fix');
  });

  it('writes GPS (negative altitude too), capture time and description that the image analysis reads back', async () => {
    const jpeg = fs.readFileSync(path.join(LUND, '01.jpg'));
    const folder = tempDir();
    const file = path.join(folder, 'frame.jpg');
    fs.writeFileSync(file, withFrameExif(jpeg, { description: 'Frame at 1.500 s of a.mp4', position: { latitude: -33.123456789, longitude: -70.5, altitude: -12.25 }, dateTime: '2024-06-01 10:00:01.500', utcOffset: '+00:00' }));
    const read = await exifOf(file);
    assert.ok(Math.abs(read.latitude + 33.123456789) < 1e-7 && read.longitude === -70.5 && read.altitude === -12.25, JSON.stringify(read));
    assert.equal(read.capturedAt?.toISOString(), '2024-06-01T10:00:01.500Z');
    if (fs.existsSync('/usr/bin/exiftool')) {
      const { stdout } = await run('/usr/bin/exiftool', ['-j', '-n', '-ImageDescription', '-GPSAltitudeRef', '-GPSAltitude', '-ImageWidth', file]);
      const [tags] = JSON.parse(stdout);
      assert.equal(tags.ImageDescription, 'Frame at 1.500 s of a.mp4');
      assert.equal(tags.GPSAltitudeRef, 1, 'below sea level');
      assert.equal(tags.ImageWidth, 1024, 'the picture is untouched');
    }
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it('spaces frames one second apart, at most MAX_FRAMES and at least MIN_FRAMES', () => {
    assert.equal(frameInterval(120), 1);
    assert.equal(frameInterval(1000), 2, `${MAX_FRAMES} frames over 1000 s`);
    assert.equal(frameInterval(4), 4 / MIN_FRAMES);
  });

  it('pairs each video with the .SRT of the same name', () => {
    assert.deepEqual(pairVideoInputs(['p/b.MOV', 'p/A.srt', 'p/a.MP4', 'p/c.srt']), [
      { video: 'p/a.MP4', telemetry: 'p/A.srt' },
      { video: 'p/b.MOV', telemetry: null },
    ]);
  });
});

const cue = (i: number, extra = '') => `${i + 1}\r\n00:00:${String(i).padStart(2, '0')},000 --> 00:00:${String(i).padStart(2, '0')},500\r\n${extra}[latitude: 55.${i}] [longitude: 13.${i}] [rel_alt: 1.0 abs_alt: 40.${i}]`;

describe('video input: the .SRT reader on hostile and large files', () => {
  it('skips over-long lines and reads the cues around them (CRLF, a BOM, a break between chunks)', async () => {
    const text = `\uFEFF${cue(0)}\r\n\r\n${cue(1, `${'9'.repeat(100_000)}\r\n`)}\r\n\r\n${cue(2)}\r\n`;
    assert.deepEqual(
      parseDjiSrt(text).map((s) => [s.t, s.latitude, s.longitude, s.altitude]),
      [
        [0, 55.0, 13.0, 40.0],
        [1, 55.1, 13.1, 40.1],
        [2, 55.2, 13.2, 40.2],
      ],
    );
    const bytes = Buffer.from(text);
    const split = [bytes.subarray(0, 3), bytes.subarray(3, bytes.indexOf('\r\n') + 1), bytes.subarray(bytes.indexOf('\r\n') + 1)];
    const reading = await readDjiSrt(Readable.from(split));
    assert.deepEqual([reading.samples.length, reading.overlongLines, reading.refusal], [3, 1, null]);
  });

  it(`refuses more than ${MAX_TELEMETRY_BYTES / 1024 ** 2} MB and more than ${MAX_TELEMETRY_CUES} positioned cues, without reading on`, async () => {
    let served = 0;
    const endless = Readable.from(
      (function* () {
        for (;;) {
          served += 1024 ** 2;
          yield Buffer.alloc(1024 ** 2, 0x31);
        }
      })(),
    );
    const large = await readDjiSrt(endless);
    assert.match(large.refusal ?? '', /is larger than 64 MB/);
    // The stream is endless: that the reader returned at all is the point (Readable.from reads 16 chunks ahead).
    assert.ok(served <= MAX_TELEMETRY_BYTES + 17 * 1024 ** 2, `left soon after the limit (${served} bytes served)`);

    const tiny = (i: number) => `${Math.floor(i / 3600)}:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')},000 -->\nGPS(13.1,55.1)\n\n`;
    const many = await readDjiSrt(Readable.from(Array.from({ length: MAX_TELEMETRY_CUES + 1 }, (_, i) => Buffer.from(tiny(i)))));
    assert.match(many.refusal ?? '', /more than 250,000 positioned cues/);
  });

  it('lets the event loop run while it parses a large file', async () => {
    const text = Array.from({ length: 40_000 }, (_, i) => cue(i % 60)).join('\r\n\r\n');
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    try {
      const reading = await readDjiSrt(Readable.from([Buffer.from(text)])); // one 4.5 MB chunk
      assert.equal(reading.samples.length, 40_000);
    } finally {
      clearInterval(ticker);
    }
    assert.ok(turns > 0, 'timers ran during the parse');
  });
});

describe('video input: through HTTP', () => {
  let system: TestSystem | undefined;
  let account: TestAccount;
  let folder: string;
  let gate: string;
  let fixes: Fix[];
  let video: Buffer;
  let videoWithPlace: Buffer;

  before(async () => {
    if (!fs.existsSync(FFMPEG)) return; // each test skips (or fails under CI) with the reason
    folder = tempDir('oi-video-');
    // ffmpeg as the service runs it waits for this file: the inspection is seen in 12 first.
    gate = path.join(folder, 'gate');
    const gated = path.join(folder, 'ffmpeg-gated');
    fs.writeFileSync(gated, `#!/bin/sh\nwhile [ ! -e '${gate}' ]; do sleep 0.05; done\nexec ${FFMPEG} "$@"\n`, { mode: 0o755 });
    fixes = await Promise.all(lundPhotos(PHOTOS).map((f) => exifOf(path.join(LUND, f))));
    video = await lundVideo({ photos: PHOTOS, secondsPerPhoto: SECONDS_PER_PHOTO, extension: '.mp4' });
    videoWithPlace = await lundVideo({ photos: PHOTOS, secondsPerPhoto: SECONDS_PER_PHOTO, extension: '.mov', location: '+55.6982+013.1953+037.000/' });
    system = await startTestSystem({ ffmpegBinary: gated, ffprobeBinary: FFPROBE });
    account = await system.newAccount({ projects: 5 });
  });
  after(async () => {
    await system?.stop();
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  });

  const consumed = async () => (await account.client.expect(200, 'GET', '/v1/allowance/')).find((b: any) => b.allowance_type === 'projects').consumed;

  async function videoInspection(files: { name: string; body: Buffer }[]) {
    const asset = await account.client.createAsset({ name: 'Lund', type: 1, latitude: '55.69820000', longitude: '13.19530000' });
    const inspection = await account.client.createInspection({ asset: asset.id, processing_parameters: { is_video: true } });
    const credentials = await account.client.storageCredentials(inspection.id);
    const keys = await account.client.upload(credentials, files);
    return { inspection, credentials, keys };
  }

  it('a DJI video with its .SRT: 20 -> 12 -> 3 ... -> 7, its frames the images, GPS interpolated from the .SRT', async (t) => {
    if (!requireTool(t, FFMPEG, 'ffmpeg') || !requireTool(t, FFPROBE, 'ffmpeg')) return;
    const client = account.client;
    try {
      const { inspection, keys } = await videoInspection([
        { name: 'DJI_0001.MP4', body: video },
        { name: 'DJI_0001.SRT', body: Buffer.from(djiSrt(fixes)) },
      ]);
      assert.equal((await client.register(inspection.id, keys)).nb_images_registered, 2, 'the video and its sidecar are registered like photos');
      const before = await consumed();
      assert.equal((await client.process(inspection.id)).status, 20);
      let status: number;
      do status = (await client.getInspection(inspection.id)).status;
      while (status === 20 && (await new Promise((r) => setTimeout(r, 50)), true));
      assert.equal(status, 12, 'Extracting video images while ffmpeg runs');
      fs.writeFileSync(gate, '');
      const seen: number[] = [];
      const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 120_000, onStatus: (s) => seen.push(s) });
      assert.equal(done.status, 7, `settled in 7 (seen ${seen.join(' -> ')})`);
      assert.equal(await consumed(), before + 1, 'one Projects unit, as for photos');

      const cameras = await client.cameras(inspection.id);
      const interval = frameInterval(PHOTOS * SECONDS_PER_PHOTO);
      assert.equal(cameras.length, Math.round((PHOTOS * SECONDS_PER_PHOTO) / interval), 'one camera per extracted frame');
      cameras.forEach((camera, i) => {
        assert.equal(camera.filename, `DJI_0001_${String(i + 1).padStart(5, '0')}.jpg`);
        assert.deepEqual(camera.dimensions, { x: 320, y: 240 });
        const want = expectedAt(fixes, i * interval);
        assert.ok(Math.abs(camera.location.latitude - want.latitude) < 1e-7, `frame ${i + 1} latitude ${camera.location.latitude} vs ${want.latitude}`);
        assert.ok(Math.abs(camera.location.longitude - want.longitude) < 1e-7, `frame ${i + 1} longitude`);
        assert.ok(Math.abs(camera.location.elevation - want.altitude) < 0.01, `frame ${i + 1} altitude`);
      });
      assert.ok(new Set(cameras.map((c) => `${c.location.latitude},${c.location.longitude}`)).size >= PHOTOS, 'positions follow the flight');

      const project = await system!.cloud.projects.projects.findById(inspection.project_id);
      assert.equal(project?.public_status, 'DONE');
      assert.equal(project?.image_count, 2 + cameras.length, 'the frames are registered with the cloud project beside the video and its sidecar');
    } finally {
      fs.writeFileSync(gate, '');
    }
  });

  it('a video without .SRT: the place its container records, on every frame', async (t) => {
    if (!requireTool(t, FFMPEG, 'ffmpeg') || !requireTool(t, FFPROBE, 'ffmpeg')) return;
    fs.writeFileSync(gate, '');
    const { inspection, keys } = await videoInspection([{ name: 'phone.mov', body: videoWithPlace }]);
    await account.client.register(inspection.id, keys);
    await account.client.process(inspection.id);
    const done = await account.client.waitUntilSettled(inspection.id, { timeoutMs: 120_000 });
    assert.equal(done.status, 7);
    const cameras = await account.client.cameras(inspection.id);
    assert.ok(cameras.length >= MIN_FRAMES);
    for (const camera of cameras) assert.deepEqual(camera.location, { latitude: 55.6982, longitude: 13.1953, elevation: 37 });
  });

  it('a broken video ends in 14 with its reason; the unit spent at the start stays spent, its retry spends none', async (t) => {
    if (!requireTool(t, FFMPEG, 'ffmpeg') || !requireTool(t, FFPROBE, 'ffmpeg')) return;
    fs.writeFileSync(gate, '');
    // Fixed bytes, not random ones: random bytes now and then probe as some other format, with
    // another error message (one local run of the suite).
    const { inspection, keys } = await videoInspection([{ name: 'broken.mp4', body: notAVideo(64 * 1024) }]);
    await account.client.register(inspection.id, keys);
    const before = await consumed();
    await account.client.process(inspection.id);
    const done = await account.client.waitUntilSettled(inspection.id, { timeoutMs: 60_000 });
    assert.equal(done.status, 14, 'ERROR - Extracting video images');
    const state = await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/processing/`);
    assert.match(state.error_reason, /^broken\.mp4 is not a readable video: Invalid data found/);
    assert.equal(await consumed(), before + 1, 'allowance rule 4: consumed when processing starts (as for 19), not given back');
    assert.equal((await account.client.cameras(inspection.id)).length, 0);
    assert.equal(done.can_retry, true, '14 is retryable (spec retry condition 3)');

    const retry = await account.client.expect(201, 'POST', '/v1/inspections/retry/', { inspection: inspection.id });
    const retried = await account.client.waitUntilSettled(retry.id, { timeoutMs: 60_000 });
    assert.equal(retried.status, 14, 'the retry extracts again from the copied video');
    assert.equal(await consumed(), before + 1, 'allowance rule 6: a retry spends nothing');
  });

  it('a video inspection takes videos and .SRT files only, and needs a video to start', async (t) => {
    if (!requireTool(t, FFMPEG, 'ffmpeg')) return;
    const { inspection, keys } = await videoInspection([
      { name: 'photo.jpg', body: fs.readFileSync(path.join(LUND, '01.jpg')) },
      { name: 'DJI_0002.SRT', body: Buffer.from(djiSrt(fixes)) },
    ]);
    const refused = await account.client.request('POST', `/v1/inspections/${inspection.id}/register_images/`, { image_keys: keys });
    assert.equal(refused.status, 400);
    assert.match((refused.body as any).image_keys[0], /is_video.*photo\.jpg/);
    await account.client.register(inspection.id, [keys[1]]);
    const noVideo = await account.client.request('POST', `/v1/inspections/${inspection.id}/process/`, {});
    assert.equal(noVideo.status, 409);
    assert.match((noVideo.body as any).detail, /no \.mp4 or \.mov video is registered/);
    assert.equal((await account.client.getInspection(inspection.id)).status, 2, 'nothing started, nothing spent');
  });

  it('answered no request with a 5xx', (t) => {
    if (!system) return t.skip('ffmpeg absent');
    assertNoServerErrors(system);
  });
});

/** `size` bytes that no demuxer recognises: a SHA-256 chain from a fixed seed (ffprobe: "Invalid data found"). */
function notAVideo(size: number): Buffer {
  const blocks: Buffer[] = [];
  let block = Buffer.from('broken');
  for (let n = 0; n < size; n += 32) blocks.push((block = crypto.createHash('sha256').update(block).digest()));
  return Buffer.concat(blocks).subarray(0, size);
}
