// The labelled rust set (test/fixtures/rust/): synthetic corrosion patches composited at known
// positions onto real street photos of test/fixtures/lund (BSD 2-clause, which allows modified
// copies with the notice kept), and some photos left clean for false positives, each downscaled
// to WIDTH pixels. The ground truth is every patch's rectangle (its pixels of opacity >= 0.5).
//
//   node --import tsx scripts/generate-rust-fixtures.ts [outDir] [seed] [--development]
//
// The committed set is seed 12 (the default) on the test photos into test/fixtures/rust/. The
// detector's thresholds were chosen on development sets (`--development`, seeds 7, 8 and 9, not
// committed) made from the other lund photos (PHOTO_SETS), so the figures measured on the committed
// set are not those of the photos, distractors or patches tuned on.
//
// A patch is what rust looks like from a few metres: an irregular blob (a wobbly outline from
// random harmonics, or a run-off streak, or several merged lobes) of iron-oxide colours (hue 12–32°,
// saturation 0.45–0.9, value 0.25–0.8: sienna, ochre, dark brown) with a two-scale noise texture,
// pits and lighter flakes, shaded by the surface it lies on and with a ragged, soft edge.
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { seededRandom } from '../src/shared/seeded-random.ts';

const ROOT = path.join(import.meta.dirname, '..');
const LUND = path.join(ROOT, 'test/fixtures/lund/images');
export const WIDTH = 640;
/**
 * The lund photos are split between the committed test set and a development set, so that the
 * thresholds tuned on the second are measured on photos (and distractors) they have never seen.
 * Clean photos are those with the likely false positives: red and brown brick, red cars, orange
 * facades and roofs.
 */
export const PHOTO_SETS = {
  test: {
    patched: ['01.jpg', '03.jpg', '05.jpg', '07.jpg', '09.jpg', '13.jpg', '15.jpg', '17.jpg', '19.jpg', '21.jpg', '25.jpg'],
    clean: ['08.jpg', '11.jpg', '20.jpg', '22.jpg', '26.jpg', '28.jpg'],
  },
  development: {
    patched: ['02.jpg', '04.jpg', '06.jpg', '10.jpg', '14.jpg', '16.jpg', '18.jpg', '24.jpg'],
    clean: ['12.jpg', '23.jpg', '27.jpg', '29.jpg'],
  },
} as const;

export interface TruthRect {
  /** Pixels of the fixture photo, right and bottom exclusive. */
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface TruthFile {
  seed: number;
  set: keyof typeof PHOTO_SETS;
  width: number;
  photos: { file: string; source: string; width: number; height: number; rust: TruthRect[] }[];
}

/** Smooth value noise on a grid of `cell` pixels (bilinear between random lattice values). */
function valueNoise(width: number, height: number, cell: number, random: () => number): Float32Array {
  const gw = Math.ceil(width / cell) + 2;
  const gh = Math.ceil(height / cell) + 2;
  const lattice = Float32Array.from({ length: gw * gh }, () => random());
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const gy = y / cell;
    const y0 = Math.floor(gy);
    const fy = gy - y0;
    const sy = fy * fy * (3 - 2 * fy);
    for (let x = 0; x < width; x++) {
      const gx = x / cell;
      const x0 = Math.floor(gx);
      const fx = gx - x0;
      const sx = fx * fx * (3 - 2 * fx);
      const a = lattice[y0 * gw + x0] + (lattice[y0 * gw + x0 + 1] - lattice[y0 * gw + x0]) * sx;
      const b = lattice[(y0 + 1) * gw + x0] + (lattice[(y0 + 1) * gw + x0 + 1] - lattice[(y0 + 1) * gw + x0]) * sx;
      out[y * width + x] = a + (b - a) * sy;
    }
  }
  return out;
}

function hsvToRgb(h: number, s: number, v: number): [number, number, number] {
  const c = v * s;
  const hp = (((h % 360) + 360) % 360) / 60;
  const x = c * (1 - Math.abs((hp % 2) - 1));
  const [r, g, b] = hp < 1 ? [c, x, 0] : hp < 2 ? [x, c, 0] : hp < 3 ? [0, c, x] : hp < 4 ? [0, x, c] : hp < 5 ? [x, 0, c] : [c, 0, x];
  const m = v - c;
  return [(r + m) * 255, (g + m) * 255, (b + m) * 255];
}

interface Patch {
  width: number;
  height: number;
  /** Opacity 0..1 per pixel. */
  alpha: Float32Array;
  /** RGB 0..255 per pixel, before shading by the surface. */
  rgb: Float32Array;
}

/** One blob: its outline from a random radial function (or a streak, or lobes), filled with rust texture. */
function makePatch(random: () => number, size: number): Patch {
  const kind = random();
  const aspect = kind < 0.2 ? 0.3 + random() * 0.2 : 0.65 + random() * 0.7; // streaks are tall and narrow
  const width = Math.max(12, Math.round(size * Math.sqrt(aspect)));
  const height = Math.max(12, Math.round(size / Math.sqrt(aspect)));
  const harmonics = Array.from({ length: 5 }, (_, k) => ({ k: k + 2, a: (random() * 0.22) / (k + 1), phase: random() * Math.PI * 2 }));
  const lobes =
    kind > 0.75
      ? Array.from({ length: 2 + Math.floor(random() * 3) }, () => {
          const r = 0.17 + random() * 0.16;
          return { x: r + 0.06 + random() * (0.88 - 2 * r), y: r + 0.06 + random() * (0.88 - 2 * r), r };
        })
      : null;
  const spotty = random() < 0.25; // scattered spots with the surface showing between them
  const edge = valueNoise(width, height, Math.max(3, size / 10), random);
  const spots = valueNoise(width, height, Math.max(3, size / 12), random);
  const coarse = valueNoise(width, height, Math.max(4, size / 5), random);
  const fine = valueNoise(width, height, 2 + random() * 2, random);
  const hue = 12 + random() * 20;
  const saturation = 0.45 + random() * 0.45;
  const value = 0.25 + random() * 0.55;
  const alpha = new Float32Array(width * height);
  const rgb = new Float32Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const u = (x + 0.5) / width;
      const v = (y + 0.5) / height;
      let inside: number; // > 0 inside the outline, in units of the blob's radius
      if (lobes) {
        inside = Math.max(...lobes.map((l) => 1 - Math.hypot(u - l.x, v - l.y) / l.r));
      } else {
        const dx = (u - 0.5) * 2;
        const dy = (v - 0.5) * 2;
        const angle = Math.atan2(dy, dx);
        const radius = Math.min(0.8, 0.66 * (1 + harmonics.reduce((sum, h) => sum + h.a * Math.sin(h.k * angle + h.phase), 0)));
        inside = 1 - Math.hypot(dx, dy) / radius;
      }
      inside += (edge[i] - 0.5) * 0.3; // ragged outline
      let a = Math.min(1, Math.max(0, inside * 6)) * (0.82 + 0.18 * fine[i]);
      if (spotty) a *= Math.min(1, Math.max(0, (spots[i] - 0.3) * 5));
      alpha[i] = a;
      const shade = 0.7 + 0.5 * coarse[i] + 0.25 * (fine[i] - 0.5);
      const pit = fine[i] < 0.12 ? 0.55 : 1; // dark pits
      const flake = fine[i] > 0.93 ? 1.25 : 1; // lighter flakes
      const [r, g, b] = hsvToRgb(hue + (coarse[i] - 0.5) * 12, Math.min(1, saturation * (0.8 + 0.35 * spots[i])), Math.min(1, value * shade * pit * flake));
      rgb[i * 3] = r;
      rgb[i * 3 + 1] = g;
      rgb[i * 3 + 2] = b;
    }
  }
  return { width, height, alpha, rgb };
}

/** Pastes the patch at (left, top), shaded by the surface's brightness; its rectangle of opacity >= 0.5. */
function composite(pixels: Buffer, width: number, height: number, patch: Patch, left: number, top: number): TruthRect {
  let mean = 0;
  let n = 0;
  for (let y = 0; y < patch.height; y++) {
    for (let x = 0; x < patch.width; x++) {
      const p = ((top + y) * width + left + x) * 3;
      mean += (pixels[p] + pixels[p + 1] + pixels[p + 2]) / 3;
      n++;
    }
  }
  mean /= n;
  const rect = { left: width, top: height, right: 0, bottom: 0 };
  for (let y = 0; y < patch.height; y++) {
    for (let x = 0; x < patch.width; x++) {
      const i = y * patch.width + x;
      const a = patch.alpha[i];
      if (a <= 0) continue;
      const p = ((top + y) * width + left + x) * 3;
      const surface = (pixels[p] + pixels[p + 1] + pixels[p + 2]) / 3;
      const light = Math.min(1.3, Math.max(0.45, 0.55 + 0.45 * (surface / Math.max(1, mean)))); // shadows darken the rust too
      for (let c = 0; c < 3; c++) pixels[p + c] = Math.round(pixels[p + c] * (1 - a) + Math.min(255, patch.rgb[i * 3 + c] * light) * a);
      if (a >= 0.5) {
        rect.left = Math.min(rect.left, left + x);
        rect.top = Math.min(rect.top, top + y);
        rect.right = Math.max(rect.right, left + x + 1);
        rect.bottom = Math.max(rect.bottom, top + y + 1);
      }
    }
  }
  return rect;
}

function overlaps(a: TruthRect, b: TruthRect, margin: number): boolean {
  return a.left < b.right + margin && b.left < a.right + margin && a.top < b.bottom + margin && b.top < a.bottom + margin;
}

/** Paints up to `count` patches at random, apart from each other, mostly below the sky line; their rectangles. */
function paintPatches(pixels: Buffer, width: number, height: number, random: () => number, count: number): TruthRect[] {
  const rects: TruthRect[] = [];
  for (let attempt = 0; rects.length < count && attempt < 50; attempt++) {
    const size = Math.round(width * (0.045 + random() * 0.14)); // 29..118 px at 640
    const patch = makePatch(random, size);
    const left = Math.floor(random() * (width - patch.width));
    const top = Math.floor(height * 0.2 + random() * (height * 0.8 - patch.height));
    const box = { left, top, right: left + patch.width, bottom: top + patch.height };
    if (rects.some((r) => overlaps(r, box, 12))) continue;
    rects.push(composite(pixels, width, height, patch, left, top));
  }
  return rects;
}

export async function generateRustSet(outDir: string, seed: number, set: keyof typeof PHOTO_SETS): Promise<TruthFile> {
  const random = seededRandom(seed);
  await fs.mkdir(path.join(outDir, 'images'), { recursive: true });
  const truth: TruthFile = { seed, set, width: WIDTH, photos: [] };
  const { patched, clean } = PHOTO_SETS[set];
  const sources = [...patched.map((file) => ({ file, patches: 1 + Math.floor(random() * 4) })), ...clean.map((file) => ({ file, patches: 0 }))];
  for (const [index, source] of sources.entries()) {
    const original = await fs.readFile(path.join(LUND, source.file));
    const { data, info } = await sharp(original).resize({ width: WIDTH }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const rects = paintPatches(data, info.width, info.height, random, source.patches);
    const file = `${String(index + 1).padStart(2, '0')}-${source.patches ? 'rust' : 'clean'}-lund${source.file.replace('.jpg', '')}.jpg`;
    const jpeg = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } }).jpeg({ quality: 68, mozjpeg: true }).toBuffer();
    // EXIF kept (the GPS of the original) so the photos go through the inspection pipeline as they are.
    await fs.writeFile(path.join(outDir, 'images', file), copyExif(original, jpeg));
    truth.photos.push({ file, source: `lund/images/${source.file}`, width: info.width, height: info.height, rust: rects });
  }
  await fs.writeFile(path.join(outDir, 'truth.json'), `${JSON.stringify(truth, null, 1)}\n`);
  return truth;
}

/** A photo (JPEG) with `count` patches painted at full size, its EXIF kept (tests of the pipeline). */
export async function compositeRustPatches(original: Buffer, seed: number, count: number): Promise<Buffer> {
  const { data, info } = await sharp(original).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  paintPatches(data, info.width, info.height, seededRandom(seed), count);
  return copyExif(original, await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer());
}

/** The original's EXIF segment (APP1) inserted after the new JPEG's SOI, so GPS and camera tags stay. */
function copyExif(bytes: Buffer, jpeg: Buffer): Buffer {
  let offset = 2;
  while (offset + 4 < bytes.length && bytes[offset] === 0xff) {
    const marker = bytes[offset + 1];
    const length = bytes.readUInt16BE(offset + 2);
    if (marker === 0xe1 && bytes.subarray(offset + 4, offset + 10).toString('latin1') === 'Exif\0\0') {
      return Buffer.concat([jpeg.subarray(0, 2), bytes.subarray(offset, offset + 2 + length), jpeg.subarray(2)]);
    }
    if (marker === 0xda) break;
    offset += 2 + length;
  }
  return jpeg;
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const development = process.argv.includes('--development');
  const [outArg, seedArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const outDir = path.resolve(outArg ?? path.join(ROOT, 'test/fixtures/rust'));
  const truth = await generateRustSet(outDir, Number(seedArg ?? 12), development ? 'development' : 'test');
  console.log(`${truth.photos.length} photos, ${truth.photos.reduce((n, p) => n + p.rust.length, 0)} patches -> ${outDir}`);
}
