// Issue 27, findings 1 and 7: hostile inputs of a video inspection.
// - A .SRT sidecar of 400,000 digits beside a valid video: parsed line by line with capped lines
//   (the cue-time pattern was quadratic on a digit run and froze every API of the process for
//   minutes); its telemetry is ignored, the video processed, and the API answers meanwhile.
// - An "MP4" that is an HLS playlist (a segment ../../secret.mp4, or a file: URL) or an ffconcat
//   list: ffprobe may recognise MP4/MOV, Matroska/WebM and AVI only, so the input fails (14) with
//   the reason; before, ffmpeg followed the playlist and the frames of a server-local video never
//   uploaded became the inspection's images (status 7).
// Over real HTTP with the machine's ffmpeg (the .SRT reader's limits on their own: inspection-video.test.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { startTestSystem, tempDir, type TestSystem, type TestAccount } from './helpers/test-system.ts';
import { requireTool } from './helpers/system-tools.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { FFMPEG, FFPROBE, lundVideo } from './helpers/video-fixtures.ts';

const run = promisify(execFile);
const PLACE = { latitude: 55.6982, longitude: 13.1953, elevation: 37 };
/** Longest wait for an answer of the API while the hostile .SRT is processed (the old parser: minutes). */
const DOES_NOT_HANG_MS = 10_000;

describe('video input: hostile uploads through HTTP', () => {
  let system: TestSystem | undefined;
  let account: TestAccount;
  let video: Buffer;
  let elsewhere: string;
  let secret: string;

  before(async () => {
    if (!fs.existsSync(FFMPEG)) return; // each test skips (or fails under CI) with the reason
    video = await lundVideo({ photos: 4, secondsPerPhoto: 0.5, extension: '.mp4', location: '+55.6982+013.1953+037.000/' });
    system = await startTestSystem({ ffmpegBinary: FFMPEG, ffprobeBinary: FFPROBE });
    account = await system.newAccount({ projects: 10 });
    // A server-local video nobody uploaded (640x480, unlike the uploads): in the data folder, two
    // levels above a video's work folder (DATA_DIR/work/video-<id>-*/), and in a folder of its own.
    secret = path.join(system.dataDir, 'secret.mp4');
    await run(FFMPEG, ['-nostdin', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=640x480:rate=10', '-t', '3', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-y', secret]);
    elsewhere = tempDir('oi-secret-');
    fs.copyFileSync(secret, path.join(elsewhere, 'secret.mp4'));
  });
  after(async () => {
    await system?.stop();
    if (elsewhere) fs.rmSync(elsewhere, { recursive: true, force: true });
  });

  async function processVideo(files: { name: string; body: Buffer }[], whileProcessing?: (inspectionId: number) => Promise<void>) {
    const asset = await account.client.createAsset({ name: 'Lund', type: 1, latitude: '55.69820000', longitude: '13.19530000' });
    const inspection = await account.client.createInspection({ asset: asset.id, processing_parameters: { is_video: true } });
    const keys = await account.client.upload(await account.client.storageCredentials(inspection.id), files);
    await account.client.register(inspection.id, keys);
    await account.client.process(inspection.id);
    await whileProcessing?.(inspection.id);
    const done = await account.client.waitUntilSettled(inspection.id, { timeoutMs: 120_000 });
    const state = await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/processing/`);
    return { inspection: done, reason: state.error_reason as string | null, cameras: await account.client.cameras(inspection.id) };
  }

  it('a .SRT of 400,000 digits beside a valid video: its telemetry ignored, the video processed, the API answering meanwhile', async (t) => {
    if (!requireTool(t, FFMPEG, 'ffmpeg') || !requireTool(t, FFPROBE, 'ffmpeg')) return;
    let longestWait = 0;
    const { inspection, cameras } = await processVideo(
      [
        { name: 'DJI_0009.MP4', body: video },
        { name: 'DJI_0009.SRT', body: Buffer.from('1'.repeat(400_000)) },
      ],
      async (id) => {
        // Back-to-back reads until it settles: the test shares the server's event loop, so a
        // blocked loop shows as a long wait between two answers, whoever was waiting.
        for (let last = Date.now(), status = 20; [20, 12, 3, 4].includes(status); ) {
          status = (await account.client.getInspection(id)).status;
          longestWait = Math.max(longestWait, Date.now() - last);
          last = Date.now();
        }
      },
    );
    assert.equal(inspection.status, 7, `processed (${inspection.status})`);
    assert.ok(longestWait < DOES_NOT_HANG_MS, `the API answered within ${DOES_NOT_HANG_MS / 1000} s throughout (longest wait ${longestWait} ms)`);
    assert.ok(cameras.length >= 2);
    for (const camera of cameras) assert.deepEqual(camera.location, PLACE, 'placed by the container, the .SRT holding no position');
  });

  const refused = /^DJI_trav\.MP4 is not a video in a container the service reads \(MP4\/MOV, Matroska\/WebM or AVI\)\. Playlists \(HLS, DASH\) and lists of other files \(ffconcat\) are refused/;
  const hostile: Record<string, () => string> = {
    'an HLS playlist with the segment ../../secret.mp4': () => `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:3.0,\n../../secret.mp4\n#EXT-X-ENDLIST\n`,
    'an HLS playlist with a file: URL segment': () => `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:3.0,\nfile://${path.join(elsewhere, 'secret.mp4')}\n#EXT-X-ENDLIST\n`,
    "an ffconcat list (file '../../secret.mp4')": () => `ffconcat version 1.0\nfile '../../secret.mp4'\n`,
  };
  for (const [what, body] of Object.entries(hostile)) {
    it(`refuses ${what} named DJI_trav.MP4: 14 with the reason, no frame of another file`, async (t) => {
      if (!requireTool(t, FFMPEG, 'ffmpeg') || !requireTool(t, FFPROBE, 'ffmpeg')) return;
      const { inspection, reason, cameras } = await processVideo([{ name: 'DJI_trav.MP4', body: Buffer.from(body()) }]);
      assert.deepEqual(
        cameras.map((c) => c.dimensions),
        [],
        'no frame (the secret video is 640x480)',
      );
      assert.equal(inspection.status, 14, `ERROR - Extracting video images (${inspection.status})`);
      assert.match(reason ?? '', refused);
    });
  }

  it('answered no request with a 5xx', (t) => {
    if (!system) return t.skip('ffmpeg absent');
    assertNoServerErrors(system);
  });
});
