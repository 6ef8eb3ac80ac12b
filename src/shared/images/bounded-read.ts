// An image file read into memory for sharp, and no more of it than the image needs: into one
// buffer of the object's size (no list of chunks joined at the end, which doubles the peak, as
// sharp's own stream input does), never beyond the byte limit, and for a JPEG only up to its EOI
// marker (jpeg-end.ts), so that whatever follows the image data is not read at all.
import type { Readable } from 'node:stream';
import { bytesRefusal, ImageRefused, type ImageLimits } from './image-limits.ts';
import { JpegEndFinder } from './jpeg-end.ts';

/**
 * Reads `body` (an object of `size` bytes) into memory. Throws ImageRefused when more than
 * `limits.maxBytes` arrive; the body is destroyed whenever the read stops early.
 */
export async function readImageBody(body: Readable, size: number, limits: ImageLimits): Promise<Buffer> {
  const capacity = Math.min(size, limits.maxBytes);
  // Pages of an unsafe allocation that are never written (the part after a JPEG's end) are never
  // resident: the buffer costs what is read into it.
  const data = Buffer.allocUnsafe(capacity);
  const finder = new JpegEndFinder();
  let filled = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const used = finder.push(chunk);
      if (filled + used > capacity) {
        // More than the object's size said (it changed meanwhile), or more than the limit.
        throw bytesRefusal(filled + used, limits) ?? new ImageRefused('image_unreadable', `the photo file has more than the ${size} bytes its storage announced (it changed while it was read)`);
      }
      chunk.copy(data, filled, 0, used);
      filled += used;
      if (finder.end !== undefined) break; // leaving the loop destroys the body
    }
  } finally {
    body.destroy();
  }
  return data.subarray(0, filled);
}
