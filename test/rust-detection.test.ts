// The rust detector (rust/rust-detector.ts) on the labelled set test/fixtures/rust/ (17 lund
// photos, 25 synthetic rust patches at known rectangles, 6 photos without any, chosen for their
// red and brown brick, red cars and orange facades): precision and recall at IoU >= 0.5.
//
// Measured when the set was made (thresholds tuned on other photos, scripts/generate-rust-fixtures.ts):
// 18 of 25 findings right, 18 of 25 patches found: precision 0.72, recall 0.72. The bounds below
// are 16 of 25 (0.64) for both: the detector may lose two matches (or gain two false findings) to a
// libvips/libjpeg decoding difference before the test fails, and a change to the colour bounds,
// the morphology or the region filters that costs three fails it. Well above what colour alone
// gives: the first untuned bounds had precision 0.19 on the development set.
// Also: the rules the detector's parts promise (morphology, components, severity, coordinates).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { analysePhoto, findRust, ANALYSIS_SIZE } from '../src/inspection/rust/rust-detector.ts';
import { close, open } from '../src/inspection/rust/morphology.ts';
import { connectedComponents } from '../src/inspection/rust/components.ts';
import { severityOfArea } from '../src/inspection/rust/severity.ts';
import { iou, score } from '../src/inspection/rust/evaluation.ts';
import type { TruthFile } from '../scripts/generate-rust-fixtures.ts';

const RUST = path.join(import.meta.dirname, 'fixtures', 'rust');
const MIN_PRECISION = 0.64;
const MIN_RECALL = 0.64;

describe('rust detector', () => {
  it(`labelled set: precision >= ${MIN_PRECISION} and recall >= ${MIN_RECALL} at IoU >= 0.5`, async () => {
    const truth: TruthFile = JSON.parse(fs.readFileSync(path.join(RUST, 'truth.json'), 'utf8'));
    assert.equal(truth.photos.length, 17);
    const photos = [];
    let cleanFindings = 0;
    for (const p of truth.photos) {
      const { findings } = await analysePhoto(fs.readFileSync(path.join(RUST, 'images', p.file)));
      const found = findings.map((f) => ({ left: f.left * p.width, top: f.top * p.height, right: f.right * p.width, bottom: f.bottom * p.height }));
      if (p.rust.length === 0) cleanFindings += found.length;
      photos.push({ found, truth: p.rust });
    }
    const result = score(photos);
    console.log(`# rust detector on test/fixtures/rust: ${JSON.stringify(result)}; findings on the 6 clean photos: ${cleanFindings}`);
    assert.equal(result.labelled, 25);
    assert.ok(result.precision >= MIN_PRECISION, `precision ${result.precision.toFixed(3)}`);
    assert.ok(result.recall >= MIN_RECALL, `recall ${result.recall.toFixed(3)}`);
  });

  it('a rust-coloured square on grey is found at its rectangle; grey, red, yellow and green ones are not', () => {
    const width = 200;
    const height = 100;
    const data = new Uint8Array(width * height * 3).fill(128);
    const paint = (x0: number, y0: number, size: number, rgb: [number, number, number]) => {
      for (let y = y0; y < y0 + size; y++) for (let x = x0; x < x0 + size; x++) data.set(rgb, (y * width + x) * 3);
    };
    paint(20, 30, 30, [160, 82, 45]); // sienna: hue 19°, saturation 0.72
    paint(70, 30, 30, [220, 20, 20]); // red car: hue 0°
    paint(110, 30, 30, [230, 200, 40]); // yellow facade: hue 51°
    paint(150, 30, 30, [60, 160, 60]); // green
    const findings = findRust({ data, width, height, channels: 3 });
    assert.equal(findings.length, 1, JSON.stringify(findings));
    const f = findings[0];
    assert.ok(iou({ left: f.left * width, top: f.top * height, right: f.right * width, bottom: f.bottom * height }, { left: 20, top: 30, right: 50, bottom: 60 }) > 0.9);
    assert.ok(Math.abs(f.areaFraction - 900 / (width * height)) < 0.01);
    assert.equal(f.severity, severityOfArea(f.areaFraction));
  });

  it('coords are fractions of the photo as seen: EXIF orientation applied, downscaled to the analysis size', async () => {
    // A 1280 x 960 photo with a rust square at its upper left, stored rotated with orientation 6
    // (shown upright): the finding is where the viewer sees it, and the copy is at most ANALYSIS_SIZE.
    const width = 1280;
    const height = 960;
    const raw = Buffer.alloc(width * height * 3, 128);
    for (let y = 100; y < 300; y++) for (let x = 200; x < 400; x++) raw.set([150, 75, 35], (y * width + x) * 3);
    const upright = await sharp(raw, { raw: { width, height, channels: 3 } }).jpeg().toBuffer();
    const analysis = await analysePhoto(upright);
    assert.equal(Math.max(analysis.width, analysis.height), ANALYSIS_SIZE);
    // Stored turned 90° anticlockwise, with orientation 6 telling viewers to turn it back.
    const stored = await sharp(await sharp(upright).rotate(-90).toBuffer()).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    for (const photo of [upright, stored]) {
      const [f] = (await analysePhoto(photo)).findings;
      const expected = { left: 200 / width, top: 100 / height, right: 400 / width, bottom: 300 / height };
      assert.ok(iou(f, expected) > 0.9, JSON.stringify(f));
    }
  });

  it('a photo that cannot be decoded is refused, not analysed', async () => {
    const body = fs.readFileSync(path.join(RUST, 'images', '01-rust-lund01.jpg'));
    await assert.rejects(analysePhoto(body.subarray(0, body.length >> 1)), /premature end|truncated/i);
    await assert.rejects(analysePhoto(Buffer.from('not an image')));
  });

  it('morphology: closing fills pits and joins spots, opening removes specks; 8-connected components', () => {
    const width = 20;
    const height = 10;
    const mask = new Uint8Array(width * height);
    for (let y = 2; y < 8; y++) for (let x = 2; x < 8; x++) mask[y * width + x] = 1;
    mask[4 * width + 4] = 0; // a pit
    mask[5 * width + 15] = 1; // a speck
    const closed = close(mask, width, height, 1);
    assert.equal(closed[4 * width + 4], 1, 'pit filled');
    const opened = open(closed, width, height, 1);
    assert.equal(opened[5 * width + 15], 0, 'speck removed');
    assert.equal(opened[3 * width + 3], 1, 'the square kept');
    const diagonal = new Uint8Array(9);
    diagonal[0] = diagonal[4] = diagonal[8] = 1;
    const components = connectedComponents(diagonal, 3, 3);
    assert.equal(components.length, 1);
    assert.deepEqual([components[0].left, components[0].top, components[0].right, components[0].bottom, components[0].area], [0, 0, 3, 3, 3]);
  });

  it('severity grows with the share of the photo covered, 1..5', () => {
    assert.deepEqual(
      [0.0005, 0.001, 0.004, 0.01, 0.03, 0.2].map(severityOfArea),
      [1, 2, 2, 3, 4, 5],
    );
  });
});
