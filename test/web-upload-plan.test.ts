// Rules of the console's Upload page (web/src/lib/upload-plan.ts): which files are photos, their
// object keys, part splitting, retry decisions and backoff, progress and time left, batches of
// 500 keys for register_images, and what processing will spend.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MiB, ProgressTracker, backoffMs, batches, formatDuration, objectKeys, planUpload, processingCost, relativeKey, retryDecision, selectImages,
} from '../web/src/lib/upload-plan.ts';
import { PROCESSING_OPTIONS } from '../web/src/lib/asset-rules.ts';

const file = (name: string, size = 1000, type = '', relativePath?: string) => ({ name, size, type, relativePath });

test('only photos are taken; the others are listed with a reason', () => {
  const files = [
    file('DJI_0001.JPG'), file('b.jpeg'), file('c.png'), file('d.tif'), file('e.TIFF'), file('f.dng'),
    file('no-extension', 10, 'image/jpeg'),
    file('notes.txt', 10, 'text/plain'), file('.DS_Store'), file('Thumbs.db'), file('empty.jpg', 0), file('flight.mp4', 10, 'video/mp4'),
  ];
  const { accepted, skipped } = selectImages(files);
  assert.deepEqual(accepted.map((f) => f.name), ['DJI_0001.JPG', 'b.jpeg', 'c.png', 'd.tif', 'e.TIFF', 'f.dng', 'no-extension']);
  const reasons = Object.fromEntries(skipped.map((s) => [s.file.name, s.reason]));
  assert.match(reasons['notes.txt'], /not a photo \(\.txt\)/);
  assert.match(reasons['flight.mp4'], /only JPEG, PNG, TIFF and DNG/);
  assert.match(reasons['.DS_Store'], /system file/);
  assert.match(reasons['Thumbs.db'], /system file/);
  assert.match(reasons['empty.jpg'], /empty/);
});

test('keys: under the prefix, safe names, folders kept, no traversal, duplicates numbered', () => {
  const prefix = 'projects/42/inputs/';
  const keys = objectKeys(prefix, [
    file('DJI_0001.JPG'),
    file('DJI_0001.JPG', 1, '', 'flight 1/DJI_0001.JPG'),
    file('Été à Lund #3.jpg'),
    file('x.jpg', 1, '', '../../etc/x.jpg'),
    file('dji_0001.jpg'), // same name but for case: kept apart
    file('DJI_0001.JPG'),
    file('...'),
  ]);
  assert.deepEqual(keys, [
    `${prefix}DJI_0001.JPG`,
    `${prefix}flight_1/DJI_0001.JPG`,
    `${prefix}Ete_a_Lund_3.jpg`,
    `${prefix}etc/x.jpg`,
    `${prefix}dji_0001-2.jpg`,
    `${prefix}DJI_0001-3.JPG`,
    `${prefix}photo.jpg`,
  ]);
  for (const key of keys) assert.ok(key.startsWith(prefix) && !key.includes('..') && !key.includes('//'), key);
  // Keys uploaded earlier in the session are not reused.
  assert.deepEqual(objectKeys(prefix, [file('a.jpg')], [`${prefix}a.jpg`]), [`${prefix}a-2.jpg`]);
  // Very long names are shortened, keeping the extension.
  const long = relativeKey(file(`${'x'.repeat(300)}.jpg`));
  assert.ok(long.length <= 120 && long.endsWith('.jpg'));
});

test('parts: one PUT up to 16 MiB, multipart above with parts of at least 5 MiB and at most 10,000 parts', () => {
  assert.deepEqual(planUpload(16 * MiB), { kind: 'single', size: 16 * MiB });
  const plan = planUpload(16 * MiB + 1);
  assert.equal(plan.kind, 'multipart');
  if (plan.kind !== 'multipart') return;
  assert.equal(plan.partSize, 8 * MiB);
  assert.deepEqual(plan.parts.map((p) => [p.number, p.start, p.end]), [[1, 0, 8 * MiB], [2, 8 * MiB, 16 * MiB], [3, 16 * MiB, 16 * MiB + 1]]);
  // A tiny preferred part size is raised to S3's minimum.
  const small = planUpload(20 * MiB, { singleMax: 1 * MiB, partSize: 1 * MiB });
  assert.ok(small.kind === 'multipart' && small.partSize === 5 * MiB && small.parts.length === 4);
  // Huge files: parts grow so that there are never more than 10,000; the parts cover the file exactly.
  const huge = planUpload(200 * 1024 * MiB);
  assert.ok(huge.kind === 'multipart');
  if (huge.kind !== 'multipart') return;
  assert.ok(huge.parts.length <= 10_000 && huge.partSize >= 5 * MiB);
  assert.equal(huge.parts[huge.parts.length - 1].end, 200 * 1024 * MiB);
  for (let i = 1; i < huge.parts.length; i++) assert.equal(huge.parts[i].start, huge.parts[i - 1].end);
});

test('retries: network errors, 5xx, 429 and RequestTimeout are retried; AccessDenied and other 4xx are not', () => {
  const half = () => 0.5;
  for (const failure of [{ name: 'TypeError' }, { status: 500, name: 'InternalError' }, { status: 503, name: 'ServiceUnavailable' }, { status: 429 }, { status: 400, name: 'RequestTimeout' }]) {
    const d = retryDecision(failure, 1, { random: half });
    assert.ok(d.retry, JSON.stringify(failure));
  }
  for (const failure of [{ status: 403, name: 'AccessDenied' }, { status: 403, name: 'QuotaExceeded' }, { status: 400, name: 'EntityTooLarge' }, { status: 404, name: 'NoSuchUpload' }]) {
    const d = retryDecision(failure, 1);
    assert.equal(d.retry, false, JSON.stringify(failure));
  }
  // Expired temporary credentials: retried once they are refreshed.
  const expired = retryDecision({ status: 400, name: 'ExpiredToken' }, 1, { random: half });
  assert.ok(expired.retry && expired.refreshCredentials);
  // A cancelled upload is never retried; nor is anything after the last attempt.
  assert.equal(retryDecision({ name: 'AbortError' }, 1).retry, false);
  const last = retryDecision({ status: 500 }, 5, { maxAttempts: 5 });
  assert.ok(!last.retry && /after 5 attempts/.test(last.reason));
});

test('backoff doubles from 500 ms up to 20 s, with 50–100 % jitter', () => {
  assert.deepEqual([1, 2, 3, 4].map((a) => backoffMs(a, () => 1)), [500, 1000, 2000, 4000]);
  assert.deepEqual([1, 2, 3].map((a) => backoffMs(a, () => 0)), [250, 500, 1000]);
  assert.equal(backoffMs(30, () => 1), 20_000);
});

test('register_images batches: at most 500 keys per call', () => {
  const keys = Array.from({ length: 1201 }, (_, i) => `k${i}`);
  const parts = batches(keys);
  assert.deepEqual(parts.map((b) => b.length), [500, 500, 201]);
  assert.deepEqual(parts.flat(), keys);
  assert.deepEqual(batches([]), []);
  assert.deepEqual(batches(keys.slice(0, 500)).map((b) => b.length), [500]);
});

test('progress: bytes per file and in total, speed over a sliding window, time left', () => {
  const p = new ProgressTracker(5000);
  p.addFile('a', 10 * MiB);
  p.addFile('b', 30 * MiB);
  const t0 = 1_000_000;
  p.update('a', 0, t0);
  assert.equal(p.snapshot(t0).bytesPerSecond, undefined); // not measurable yet
  assert.equal(p.snapshot(t0).secondsLeft, undefined);
  p.update('a', 5 * MiB, t0 + 1000);
  p.update('b', 5 * MiB, t0 + 2000);
  let s = p.snapshot(t0 + 2000);
  assert.equal(s.doneBytes, 10 * MiB);
  assert.equal(s.totalBytes, 40 * MiB);
  assert.equal(s.fraction, 0.25);
  assert.equal(s.bytesPerSecond, 5 * MiB); // 10 MiB in 2 s
  assert.equal(s.secondsLeft, 6); // 30 MiB left at 5 MiB/s
  assert.equal(p.fileFraction('a'), 0.5);
  // Later, the link slows to 1 MiB/s: the window forgets the fast start.
  for (let i = 1; i <= 10; i++) p.update('b', 5 * MiB + i * MiB, t0 + 2000 + i * 1000);
  s = p.snapshot(t0 + 12_000);
  assert.ok(Math.abs((s.bytesPerSecond ?? 0) - MiB) < 0.01 * MiB, String(s.bytesPerSecond));
  assert.equal(s.secondsLeft, 20); // 20 MiB left (a: 5 of 10, b: 15 of 30)
  // A retried part sends its bytes again: progress goes back, the link's bytes still count.
  p.update('a', 0, t0 + 12_500);
  assert.equal(p.snapshot(t0 + 12_500).doneBytes, 15 * MiB);
  p.update('a', 10 * MiB, t0 + 13_000);
  p.update('b', 30 * MiB, t0 + 13_000);
  s = p.snapshot(t0 + 13_000);
  assert.equal(s.fraction, 1);
  assert.equal(s.secondsLeft, 0);
  // 40 MiB + the 5 MiB of "a" sent again, first to last byte in 13 s.
  assert.ok(Math.abs((s.averageBytesPerSecond ?? 0) - (45 * MiB) / 13) < 1, String(s.averageBytesPerSecond));
  // Files added once all is done start a new run: the idle time is not averaged in.
  p.addFile('c', 4 * MiB);
  p.update('c', 0, t0 + 60_000);
  p.update('c', 4 * MiB, t0 + 62_000);
  assert.equal(p.snapshot(t0 + 62_000).averageBytesPerSecond, 2 * MiB);
  assert.equal(formatDuration(75), '1 min 15 s');
  assert.equal(formatDuration(undefined), 'estimating…');
});

test('processing cost mirrors the server: 1 processing run (projects), and 1 Tower inventory unit with detect_antennas', () => {
  const balances = [{ allowance_type: 'projects', balance: 3 }, { allowance_type: 'tower_inventory', balance: 0 }];
  const plain = processingCost({ generate_point_cloud: true }, balances);
  assert.deepEqual(plain.spends.map((s) => [s.code, s.amount, s.balance]), [['projects', 1, 3]]);
  assert.equal(plain.blockedBy, undefined);
  const antennas = processingCost({ detect_antennas: true }, balances);
  assert.deepEqual(antennas.spends.map((s) => [s.code, s.amount, s.balance]), [['projects', 1, 3], ['tower_inventory', 1, 0]]);
  assert.match(antennas.blockedBy ?? '', /processing needs 1 equipment inventory and 0 are left/);
  const granted = processingCost({ detect_antennas: true }, [{ allowance_type: 'projects', balance: 1 }, { allowance_type: 'tower_inventory', balance: 2 }]);
  assert.equal(granted.blockedBy, undefined);
  assert.ok((PROCESSING_OPTIONS as readonly string[]).includes('detect_antennas'), 'the form offers it');
  assert.match(processingCost({}, [])?.blockedBy ?? '', /processing needs 1 processing run and 0 are left/);
});
