// Draws what the rust detector finds on a photo, to look at it: findings in red (with their
// severity), and, for a photo of the labelled set, its true patches in green.
//   node --import tsx scripts/rust-preview.ts <photo.jpg> [out.png]
// The photo is drawn at the detector's analysis size (rust-detector.ts ANALYSIS_SIZE).
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { analysePhoto } from '../src/inspection/rust/rust-detector.ts';

interface TruthFile {
  photos: { file: string; width: number; rust: { left: number; top: number; right: number; bottom: number }[] }[];
}

const [input, output = '/tmp/rust-preview.png'] = process.argv.slice(2);
if (!input) {
  console.error('usage: node --import tsx scripts/rust-preview.ts <photo.jpg> [out.png]');
  process.exit(2);
}
const photo = fs.readFileSync(input);
const { findings, width, height } = await analysePhoto(photo);
const truthPath = path.join(path.dirname(input), '..', 'truth.json');
const truth = fs.existsSync(truthPath) ? (JSON.parse(fs.readFileSync(truthPath, 'utf8')) as TruthFile).photos.find((p) => p.file === path.basename(input)) : undefined;
const scale = truth ? width / truth.width : 1;

const rect = (x: number, y: number, w: number, h: number, colour: string) => `<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="none" stroke="${colour}" stroke-width="2"/>`;
const shapes = [
  ...(truth?.rust ?? []).map((r) => rect(r.left * scale, r.top * scale, (r.right - r.left) * scale, (r.bottom - r.top) * scale, '#00e000')),
  ...findings.map((f) => {
    const [x, y] = [f.left * width, f.top * height];
    return `${rect(x, y, (f.right - f.left) * width, (f.bottom - f.top) * height, '#ff2020')}<text x="${x + 2}" y="${y - 3}" font-size="12" font-family="sans-serif" fill="#ff2020">severity ${f.severity}</text>`;
  }),
];
const overlay = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${shapes.join('')}</svg>`);
await sharp(photo).autoOrient().resize({ width, height, fit: 'fill' }).composite([{ input: overlay }]).png().toFile(output);
console.log(`${findings.length} finding(s)${truth ? `, ${truth.rust.length} true patch(es)` : ''}: ${output}`);
