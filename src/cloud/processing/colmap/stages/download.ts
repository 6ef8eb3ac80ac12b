// Stage `download`: the registered images from object storage into the work folder's `images/`,
// four at a time, with what feature extraction and the pair selection need of their EXIF (focal
// lengths, DJI's relative altitude). Fails with 10601 when an image is gone from storage.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import exifr from 'exifr';
import { StorageError } from '../../../../infra/storage/object-store.ts';
import { analyzeImage, openFileRangeReader } from '../../../../shared/image-metadata/index.ts';
import { mapConcurrently } from '../../../../shared/concurrency.ts';
import { EngineError, type EngineInput } from '../../engine.ts';
import type { ImageIntrinsicsInput } from '../colmap-commands.ts';
import type { Stage } from './stage.ts';

export interface LocalImage {
  readonly image: EngineInput['images'][number];
  /** File name in the image folder (fileNames). */
  readonly name: string;
  readonly file: string;
  readonly intrinsics: ImageIntrinsicsInput;
  readonly relativeAltitude: number | null;
}

export interface Downloaded {
  /** The work folder's `images/`. */
  readonly imageDir: string;
  /** In the order of the engine input's images. */
  readonly images: readonly LocalImage[];
}

export const downloadStage: Stage<Record<string, never>, Downloaded> = {
  name: 'download',
  title: 'Downloading images',
  weight: 5,
  async run(context) {
    const { input, signal } = context;
    const total = input.images.length;
    await context.progress(0, `Downloading images (0/${total})`);
    const imageDir = path.join(context.work, 'images');
    await fsp.mkdir(imageDir);
    const names = fileNames(input.images.map((i) => i.key));
    let downloaded = 0;
    const images = await mapConcurrently(input.images, 4, async (image, i): Promise<LocalImage> => {
      signal.throwIfAborted();
      const file = path.join(imageDir, names[i]);
      try {
        const { body } = await input.store.getObject(input.bucket, image.key);
        await pipeline(body, fs.createWriteStream(file), { signal });
      } catch (err) {
        if (err instanceof StorageError) throw new EngineError(10601, `Input data not valid: ${image.key} is no longer readable from storage (${err.code}).`);
        throw err;
      }
      downloaded++;
      await context.progress(downloaded / total, `Downloading images (${downloaded}/${total})`);
      const { intrinsics, relativeAltitude } = await exifIntrinsics(file, image);
      return { image, name: names[i], file, intrinsics: { ...intrinsics, name: names[i] }, relativeAltitude };
    });
    return { imageDir, images };
  },
};

/** File names for the work folder: unique, short, safe, keeping the original name for the log. */
export function fileNames(keys: string[]): string[] {
  return keys.map((key, i) => {
    const base = path.posix.basename(key).replace(/[^A-Za-z0-9._-]/g, '_').slice(-80) || 'image';
    return `${String(i + 1).padStart(5, '0')}_${base}`;
  });
}

/**
 * What feature extraction needs of an image's EXIF (focal lengths), read from the local file, and
 * DJI's RelativeAltitude (metres above the take-off point) for the pair selection's footprints.
 */
export async function exifIntrinsics(
  file: string,
  image: Pick<EngineInput['images'][number], 'width' | 'height' | 'make' | 'model' | 'focal_length_35mm'>,
): Promise<{ intrinsics: ImageIntrinsicsInput; relativeAltitude: number | null }> {
  let focalLengthMm: number | null = null;
  let relativeAltitude: number | null = null;
  let focalLength35mm: number | null = image.focal_length_35mm;
  const reader = await openFileRangeReader(file);
  try {
    const analysis = await analyzeImage(reader.readRange, reader.size);
    if (analysis.ok) {
      focalLengthMm = analysis.metadata.focalLengthMm;
      focalLength35mm = analysis.metadata.focalLength35mm ?? focalLength35mm;
      relativeAltitude = analysis.metadata.relativeAltitude;
    }
  } finally {
    await reader.close();
  }
  let focalPlanePixelsPerMm: number | null = null;
  if (!focalLength35mm && focalLengthMm) {
    try {
      const tags = await exifr.parse(file, { pick: ['FocalPlaneXResolution', 'FocalPlaneResolutionUnit', 'ExifImageWidth'], translateValues: false });
      const resolution = Number(tags?.FocalPlaneXResolution);
      const unitMm = ({ 2: 25.4, 3: 10, 4: 1, 5: 0.001 } as Record<number, number>)[Number(tags?.FocalPlaneResolutionUnit ?? 2)];
      if (resolution > 0 && unitMm) focalPlanePixelsPerMm = (resolution / unitMm) * (image.width / (Number(tags?.ExifImageWidth) || image.width));
    } catch {
      // no focal plane resolution
    }
  }
  return {
    intrinsics: { name: '', width: image.width, height: image.height, make: image.make, model: image.model, focalLengthMm, focalLength35mm, focalPlanePixelsPerMm },
    relativeAltitude,
  };
}
