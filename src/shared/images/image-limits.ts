// The limits on every image the services decode (issue 27, findings 8 and 9), one pair of values
// for all of them (previews, rust analysis, report crops, the engines' project thumbnails):
// - bytes (IMAGE_MAX_BYTES): a photo is decoded from memory, so its file is read into memory
//   first; larger files are refused at registration and again before any read (an object can be
//   overwritten after it was registered);
// - pixels (IMAGE_MAX_PIXELS): width x height from the file's header, checked before decoding and
//   given to sharp as `limitInputPixels`, so that a small file declaring a huge image (a PNG of
//   zeros, a forged JPEG frame header) is refused instead of decoded into gigabytes.
// A refusal is an ImageRefused with a reason in words, which the callers turn into a 422 (a
// preview), a skipped photo (rust analysis) or a note in place of the crop (reports).

export interface ImageLimits {
  /** Largest image file read, bytes. */
  maxBytes: number;
  /** Largest image decoded, width x height in pixels (sharp's limitInputPixels). */
  maxPixels: number;
}

/**
 * The defaults of IMAGE_MAX_BYTES and IMAGE_MAX_PIXELS (src/config.ts). Drone photos are 5–30 MB
 * of 12–45 MP; the largest aerial cameras make 100–150 MP, about 60 MB as JPEG.
 */
export const DEFAULT_IMAGE_LIMITS: ImageLimits = { maxBytes: 100 * 1024 ** 2, maxPixels: 200_000_000 };

export type ImageRefusalCode = 'image_too_large' | 'image_unreadable';

export class ImageRefused extends Error {
  /** `reason`: a phrase in words ("the photo is …"), shown to users as it is. */
  constructor(
    readonly code: ImageRefusalCode,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'ImageRefused';
  }
}

const MIB = 1024 ** 2;

/** Refused when the file has more bytes than the limit; null when it may be read. */
export function bytesRefusal(size: number, limits: ImageLimits): ImageRefused | null {
  if (size <= limits.maxBytes) return null;
  return new ImageRefused('image_too_large', `the photo file is ${mib(size)} MiB, over the limit of ${mib(limits.maxBytes)} MiB per image (IMAGE_MAX_BYTES)`);
}

/** Refused when the image has more pixels than the limit; null when it may be decoded. */
export function pixelsRefusal(width: number, height: number, limits: ImageLimits): ImageRefused | null {
  if (width * height <= limits.maxPixels) return null;
  return new ImageRefused(
    'image_too_large',
    `the photo is ${width} × ${height} pixels (${megapixels(width * height)} megapixels), over the limit of ${megapixels(limits.maxPixels)} megapixels per image (IMAGE_MAX_PIXELS)`,
  );
}

/** An image sharp could not read (corrupt, truncated, not an image): its message as the reason. */
export function unreadable(err: unknown): ImageRefused {
  const message = (err instanceof Error ? err.message : String(err)).trim().replace(/\s+/g, ' ').slice(0, 200);
  return new ImageRefused('image_unreadable', `the photo cannot be decoded (${message})`);
}

/** sharp's input options for a decode under these limits. */
export function decodeOptions(limits: ImageLimits): { limitInputPixels: number } {
  return { limitInputPixels: limits.maxPixels };
}

function mib(bytes: number): string {
  return Number((bytes / MIB).toFixed(1)).toLocaleString('en-US');
}

function megapixels(pixels: number): string {
  return Number((pixels / 1e6).toFixed(1)).toLocaleString('en-US');
}
