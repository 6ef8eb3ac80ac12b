// The orthomosaic's photos, decoded with sharp to 8-bit RGB only when a block of the grid needs
// them and kept within a byte budget (least recently used first out): 18 photos of 2000x1125 are
// 122 MB decoded, a survey of 500 would not fit, and the grid is walked north to south so the
// photos a block needs are mostly those of the block before.
import sharp, { type OutputInfo } from 'sharp';
import type { OrthoCamera } from './orthomosaic-camera.ts';

export interface DecodedImage {
  width: number;
  height: number;
  /** RGB, row-major. */
  rgb: Uint8Array;
  /** Image pixels per camera pixel (1 unless the file is not at the camera's size). */
  scaleX: number;
  scaleY: number;
}

export class ImageCache {
  private readonly images = new Map<number, DecodedImage>();
  private bytes = 0;

  constructor(
    private readonly cameras: OrthoCamera[],
    private readonly budgetBytes: number,
  ) {}

  /** Decodes (or reuses) the images of these cameras; all of them stay until the next call. */
  async load(indices: Iterable<number>): Promise<Map<number, DecodedImage>> {
    const wanted = [...new Set(indices)];
    const out = new Map<number, DecodedImage>();
    for (const index of wanted) {
      let image = this.images.get(index);
      if (image) {
        this.images.delete(index); // re-inserted last: most recently used
      } else {
        this.evict(wanted);
        image = await decode(this.cameras[index]);
        this.bytes += image.rgb.byteLength;
      }
      this.images.set(index, image);
      out.set(index, image);
    }
    return out;
  }

  private evict(keep: number[]): void {
    for (const [index, image] of this.images) {
      if (this.bytes <= this.budgetBytes) return;
      if (keep.includes(index)) continue;
      this.images.delete(index);
      this.bytes -= image.rgb.byteLength;
    }
  }
}

async function decode(camera: OrthoCamera): Promise<DecodedImage> {
  let decoded: { data: Buffer; info: OutputInfo };
  try {
    // sharp's default pixel limit stays: the undistorted photos are those the registration checked.
    decoded = await sharp(camera.imagePath).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw new Error(`the photo of camera ${camera.name} (${camera.imagePath}) could not be read: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const { data, info } = decoded;
  if (info.channels !== 3) throw new Error(`${camera.imagePath}: expected 3 colour channels, sharp gave ${info.channels}`);
  return {
    width: info.width,
    height: info.height,
    rgb: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    scaleX: info.width / camera.width,
    scaleY: info.height / camera.height,
  };
}

/** Adds `weight` times the bilinear colour at camera pixel coordinates (u, v) to sum[0..2]. */
export function addBilinear(image: DecodedImage, u: number, v: number, weight: number, sum: Float64Array): void {
  const { width, height, rgb } = image;
  // Pixel centres sit at +0.5 (COLMAP's convention): sample at (u - 0.5, v - 0.5) in index space.
  let fx = u * image.scaleX - 0.5;
  let fy = v * image.scaleY - 0.5;
  fx = fx < 0 ? 0 : fx > width - 1 ? width - 1 : fx;
  fy = fy < 0 ? 0 : fy > height - 1 ? height - 1 : fy;
  const x0 = Math.floor(fx);
  const y0 = Math.floor(fy);
  const x1 = x0 + 1 < width ? x0 + 1 : x0;
  const y1 = y0 + 1 < height ? y0 + 1 : y0;
  const ax = fx - x0;
  const ay = fy - y0;
  const w00 = (1 - ax) * (1 - ay) * weight;
  const w10 = ax * (1 - ay) * weight;
  const w01 = (1 - ax) * ay * weight;
  const w11 = ax * ay * weight;
  const i00 = 3 * (y0 * width + x0);
  const i10 = 3 * (y0 * width + x1);
  const i01 = 3 * (y1 * width + x0);
  const i11 = 3 * (y1 * width + x1);
  for (let c = 0; c < 3; c++) sum[c] += w00 * rgb[i00 + c] + w10 * rgb[i10 + c] + w01 * rgb[i01 + c] + w11 * rgb[i11 + c];
}
