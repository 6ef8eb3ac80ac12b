// A contact sheet of the flight's photos (thumbnails in order, each labelled with its file name and
// flight segment), so whoever runs the generator can look at the whole flight in one image.
import sharp from 'sharp';

export const THUMB_WIDTH = 240;

/** A photo's thumbnail for the sheet, made as each photo is written (the full photos are not kept). */
export function thumbnail(jpeg: Buffer): Promise<Buffer> {
  return sharp(jpeg).resize(THUMB_WIDTH).jpeg({ quality: 80 }).toBuffer();
}

export async function contactSheet(photos: { file: string; segment: string; thumb: Buffer }[], columns = 10): Promise<Buffer> {
  if (!photos.length) throw new RangeError('no photos for the contact sheet');
  const thumbWidth = THUMB_WIDTH;
  const first = await sharp(photos[0].thumb).metadata();
  const thumbHeight = first.height ?? 180;
  const labelHeight = 18;
  const rows = Math.ceil(photos.length / columns);
  const tiles = photos.map((photo, i) => {
      const label = Buffer.from(
        `<svg width="${thumbWidth}" height="${labelHeight}"><rect width="100%" height="100%" fill="#111"/><text x="4" y="13" font-family="sans-serif" font-size="12" fill="#eee">${photo.file} · ${photo.segment}</text></svg>`,
      );
      return [
        { input: photo.thumb, left: (i % columns) * thumbWidth, top: Math.floor(i / columns) * (thumbHeight + labelHeight) },
        { input: label, left: (i % columns) * thumbWidth, top: Math.floor(i / columns) * (thumbHeight + labelHeight) + thumbHeight },
      ];
    });
  return sharp({ create: { width: columns * thumbWidth, height: rows * (thumbHeight + labelHeight), channels: 3, background: '#000' } })
    .composite(tiles.flat())
    .png()
    .toBuffer();
}
