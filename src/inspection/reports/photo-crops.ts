// Annotated photo crops for reports: the annotation's rectangle cut out of its photo with a margin
// around it, the rectangle drawn in red on top, scaled to at most MAX_SIDE pixels. Photos are
// oriented by their EXIF Orientation first, so that coords_2d (fractions of the photo as seen,
// (0, 0) upper left) land where the user drew them.
// The photo is read through the ImageReader (shared/images): a photo over the image limits
// (IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS), gone from storage or that cannot be decoded gives no crop
// but the reason, which the report prints in its place; it is read once however many annotations
// it has (the reader remembers the refusal).
import { loadSharp } from '../../shared/images/load-sharp.ts';
import { ImageRefused } from '../../shared/images/image-limits.ts';
import type { ImageReader } from '../../shared/images/image-reader.ts';
import { StorageError } from '../../infra/storage/object-store.ts';

const MAX_SIDE = 900;

export interface Rectangle {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** A crop, or why there is none (a phrase: "the photo is …"). */
export type Crop = { jpeg: Buffer; width: number; height: number } | { unavailable: string };

/** The crop of `rect` from the photo `key` of `bucket`. Throws only the store's errors other than NoSuchKey. */
export async function annotatedCrop(images: ImageReader, bucket: string, key: string, rect: Rectangle): Promise<Crop> {
  let photo: Awaited<ReturnType<ImageReader['read']>>;
  try {
    photo = await images.read(bucket, key);
  } catch (err) {
    if (err instanceof ImageRefused) return { unavailable: err.reason };
    if (err instanceof StorageError && err.code === 'NoSuchKey') return { unavailable: 'the photo is no longer in storage' };
    throw err;
  }
  try {
    return await cropOf(photo.bytes, rect, images.decodeOptions);
  } catch (err) {
    return { unavailable: images.refuse(bucket, key, photo.etag, err).reason };
  }
}

async function cropOf(photo: Buffer, rect: Rectangle, decode: { limitInputPixels: number }): Promise<Crop> {
  const sharp = await loadSharp();
  const meta = await sharp(photo, decode).metadata();
  const W = meta.autoOrient?.width ?? meta.width;
  const H = meta.autoOrient?.height ?? meta.height;
  if (!W || !H) throw new Error('photo without dimensions');
  // The annotation in pixels (at least one pixel), then the crop around it.
  const rx = clamp(Math.floor(rect.left * W), 0, W - 1);
  const ry = clamp(Math.floor(rect.top * H), 0, H - 1);
  const rw = clamp(Math.ceil(rect.right * W) - rx, 1, W - rx);
  const rh = clamp(Math.ceil(rect.bottom * H) - ry, 1, H - ry);
  const margin = Math.round(Math.max(rw, rh) * 0.5) + 24;
  const cx = Math.max(0, rx - margin);
  const cy = Math.max(0, ry - margin);
  const cw = Math.min(W, rx + rw + margin) - cx;
  const ch = Math.min(H, ry + rh + margin) - cy;
  const stroke = Math.max(2, Math.round(Math.max(cw, ch) / 160));
  const half = stroke / 2;
  const svg = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${cw}" height="${ch}">` +
      `<rect x="${rx - cx + half}" y="${ry - cy + half}" width="${Math.max(1, rw - stroke)}" height="${Math.max(1, rh - stroke)}" fill="none" stroke="#ff1f1f" stroke-width="${stroke}"/>` +
      `</svg>`,
  );
  // Two passes: composite works on the extracted size, resizing comes after it.
  const cut = await sharp(photo, decode).autoOrient().extract({ left: cx, top: cy, width: cw, height: ch }).composite([{ input: svg, left: 0, top: 0 }]).png().toBuffer();
  const { data, info } = await sharp(cut)
    .resize({ width: MAX_SIDE, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 85 })
    .toBuffer({ resolveWithObject: true });
  return { jpeg: data, width: info.width, height: info.height };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
