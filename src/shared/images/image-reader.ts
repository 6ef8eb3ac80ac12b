// Reads images of the object store for decoding, under the limits of image-limits.ts, and
// remembers which ones were refused (issue 27, finding 9): a refused image is refused again,
// without being read or decoded, until its object changes (another ETag). So a photo over the
// limits costs one read, not one per preview request, per annotation of a report or per run.
// The verdicts are kept per process, bounded (a few hundred bytes each): a restarted or another
// process reads the header once more, which is cheap; decoding is what is never repeated.
import { mapConcurrently } from '../concurrency.ts';
import { StorageError, type ObjectInfo, type ObjectStore } from '../../infra/storage/object-store.ts';
import { analyzeImage, objectStoreRangeReader } from '../image-metadata/index.ts';
import { loadSharp } from './load-sharp.ts';
import { readImageBody } from './bounded-read.ts';
import { bytesRefusal, decodeOptions, ImageRefused, pixelsRefusal, unreadable, type ImageLimits } from './image-limits.ts';

/** Verdicts remembered per process; the oldest half goes when full. */
const MAX_VERDICTS = 10_000;
/** Heads in flight when checking the keys of one registration. */
const HEADS_AT_ONCE = 16;

export interface HeadedObject {
  key: string;
  info: ObjectInfo | undefined;
}

export interface ReadImage {
  bytes: Buffer;
  /** The ETag of the object read, to remember a failed decode against (refuse). */
  etag: string;
}

export class ImageReader {
  private readonly verdicts = new Map<string, { etag: string; refusal: ImageRefused }>();
  /** Image files read into memory by `read`, and their bytes kept (tests: a refused image is not read again; a JPEG's padding is not read). */
  filesRead = 0;
  bytesRead = 0;

  constructor(
    private readonly store: ObjectStore,
    readonly limits: ImageLimits,
  ) {}

  /** sharp's input options for decoding what `read` returned (limitInputPixels). */
  get decodeOptions(): { limitInputPixels: number } {
    return decodeOptions(this.limits);
  }

  /**
   * The image file in memory (bounded-read.ts), once its size and its header's pixel count are
   * within the limits. Throws ImageRefused (remembered), or the store's errors (NoSuchKey, ...).
   */
  async read(bucket: string, key: string): Promise<ReadImage> {
    const { info, body } = await this.store.getObject(bucket, key);
    const known = this.known(bucket, key, info);
    if (known) {
      body.destroy();
      throw known;
    }
    this.filesRead++;
    const bytes = await this.verdict(bucket, key, info.etag, () => readImageBody(body, info.size, this.limits));
    this.bytesRead += bytes.length;
    await this.verdict(bucket, key, info.etag, async () => {
      const sharp = await loadSharp();
      // The header only (sharp's metadata decodes no pixels); with sharp's own pixel limit it
      // would throw its bare "Input image exceeds pixel limit" before the check below words it.
      const meta = await sharp(bytes, { limitInputPixels: false }).metadata().catch((err: unknown) => {
        throw unreadable(err);
      });
      const refusal = pixelsRefusal(meta.width, meta.height, this.limits);
      if (refusal) throw refusal;
    });
    return { bytes, etag: info.etag };
  }

  /**
   * The size of an image as displayed (EXIF orientation applied) from its header alone (the
   * image-metadata reader: a few ranged reads), once within the limits; throws as `read` does
   * (StorageError NoSuchKey when the object is gone).
   */
  async dimensions(bucket: string, key: string): Promise<{ width: number; height: number }> {
    const info = await this.store.headObject(bucket, key);
    if (!info) throw new StorageError('NoSuchKey', `${key} is not in storage`);
    const known = this.known(bucket, key, info);
    if (known) throw known;
    return this.verdict(bucket, key, info.etag, async () => {
      const analysis = await analyzeImage(objectStoreRangeReader(this.store, bucket, key), info.size);
      if (!analysis.ok) throw new ImageRefused('image_unreadable', `the photo cannot be read (${analysis.reason})`);
      const { width, height, exifOrientation } = analysis.metadata;
      const refusal = pixelsRefusal(width, height, this.limits);
      if (refusal) throw refusal;
      // Orientations 5–8 turn the image a quarter: shown, its width is the stored height.
      return exifOrientation !== null && exifOrientation >= 5 ? { width: height, height: width } : { width, height };
    });
  }

  /** Remembers that a decode of this object (`etag`) failed, so that it is not tried again; returns the refusal. */
  refuse(bucket: string, key: string, etag: string, err: unknown): ImageRefused {
    const refusal = err instanceof ImageRefused ? err : unreadable(err);
    if (this.verdicts.size >= MAX_VERDICTS) {
      for (const old of [...this.verdicts.keys()].slice(0, MAX_VERDICTS / 2)) this.verdicts.delete(old);
    }
    this.verdicts.set(verdictKey(bucket, key), { etag, refusal });
    return refusal;
  }

  /** Each key's object as HEAD finds it (undefined: missing); one pass that a registration's checks share. */
  async heads(bucket: string, keys: readonly string[]): Promise<HeadedObject[]> {
    const infos = await mapConcurrently(keys, HEADS_AT_ONCE, (key) => this.store.headObject(bucket, key));
    return keys.map((key, i) => ({ key, info: infos[i] }));
  }

  /** Of the objects, those whose files are over the byte limit, with the reason (missing ones are not listed). */
  oversized(objects: readonly HeadedObject[]): { key: string; reason: string }[] {
    return objects.flatMap(({ key, info }) => {
      const refusal = info && bytesRefusal(info.size, this.limits);
      return refusal ? [{ key, reason: refusal.reason }] : [];
    });
  }

  /** A refusal known without reading: remembered for this ETag, or a file over the byte limit. */
  private known(bucket: string, key: string, info: ObjectInfo): ImageRefused | null {
    const remembered = this.verdicts.get(verdictKey(bucket, key));
    if (remembered?.etag === info.etag) return remembered.refusal;
    const refusal = bytesRefusal(info.size, this.limits);
    return refusal && this.refuse(bucket, key, info.etag, refusal);
  }

  /** Runs a check; an ImageRefused it throws is remembered for this ETag. */
  private async verdict<T>(bucket: string, key: string, etag: string, check: () => Promise<T>): Promise<T> {
    try {
      return await check();
    } catch (err) {
      if (err instanceof ImageRefused) throw this.refuse(bucket, key, etag, err);
      throw err;
    }
  }
}

function verdictKey(bucket: string, key: string): string {
  return `${bucket}/${key}`;
}
