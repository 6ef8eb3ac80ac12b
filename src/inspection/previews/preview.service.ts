// Photo previews for the web console (not in the spec): a thumbnail (longest side 320 px) or a
// large view (2048 px) of a camera's photo, made once by sharp (EXIF orientation applied, JPEG)
// and kept in the object store beside the inspection's other files; later requests only presign
// it. So a grid of 300 thumbnails never downloads the 5–10 MB originals. `original` presigns the
// uploaded photo itself (for zooming in to full resolution).
// Concurrent requests for one preview share one build; at most PREVIEW_BUILDS run at once, so a
// grid scrolling into view cannot start dozens of decodes of large photos together.
// Photo ids are cameras' (inspection.cameras.id): registered images have no id of their own (their
// key is their identity), so before processing has made cameras there is nothing to preview.
// A photo over the image limits (IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS) or that cannot be decoded has
// no preview of any size: 422 with the reason, remembered by the ImageReader (shared/images), so
// that later requests neither read nor decode it again (issue 27, findings 8 and 9).
import { loadSharp } from '../../shared/images/load-sharp.ts';
import { ImageRefused } from '../../shared/images/image-limits.ts';
import type { ImageReader } from '../../shared/images/image-reader.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import type { Kysely } from 'kysely';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { InspectionTables } from '../inspection.tables.ts';
import { inspectionFiles, type FileStore } from '../storage/inspection-files.ts';
import { downloadUrlSeconds } from '../auth/share-tokens.ts';
import { ApiError, notFound } from '../../infra/http/errors.ts';

export const PREVIEW_SIZES = { thumb: 320, large: 2048 } as const;
export type PreviewSize = keyof typeof PREVIEW_SIZES | 'original';
const PREVIEW_BUILDS = 2;
/** Sizes remembered per process (a few dozen bytes each; bounded so a long-lived server does not grow). */
const MAX_REMEMBERED_SIZES = 20_000;

export interface Preview {
  url: string;
  size: PreviewSize;
  /** Pixels as displayed (EXIF orientation applied). */
  width: number;
  height: number;
}

export class PreviewService {
  private readonly building = new Map<string, Promise<{ width: number; height: number }>>();
  private readonly sizes = new Map<string, { width: number; height: number }>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Previews made by this process (tests check a second request makes none). */
  built = 0;
  /** The most builds that ran at once (tests check the bound). */
  peakBuilds = 0;

  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly access: InspectionAccess,
    private readonly files: FileStore,
    private readonly images: ImageReader,
  ) {}

  async preview(auth: AuthContext, inspectionId: number, photoId: number, size: PreviewSize): Promise<Preview> {
    const inspection = await this.access.requireInspectionData(auth, inspectionId); // 410 once purged (retention)
    const camera = await this.db
      .selectFrom('inspection.cameras')
      .select(['image_key'])
      .where('inspection_id', '=', inspection.id)
      .where('id', '=', photoId)
      .executeTakeFirst();
    if (!camera) throw new ApiError(404, 'not_found', `Photo ${photoId} of inspection ${inspection.id} not found: photo ids are those of the inspection's cameras (GET /v1/inspections/${inspection.id}/cameras/), which exist once its photos have been processed.`);
    const bucket = this.files.bucket;
    const key = size === 'original' ? camera.image_key : inspectionFiles.photoPreview(inspection.id, photoId, size);
    let dimensions = this.sizes.get(key);
    if (!dimensions) {
      dimensions = await this.dimensionsOf(camera.image_key, key, size).catch((err: unknown) => {
        throw previewError(err, photoId);
      });
      this.remember(key, dimensions);
    }
    // A share holder's URL lasts minutes (SHARE_TOKEN_URL_TTL_SECONDS): a revoked token's photos stop soon after.
    return { url: await this.files.store.presignGetUrl(bucket, key, downloadUrlSeconds(auth)), size, ...dimensions };
  }

  private remember(key: string, dimensions: { width: number; height: number }): void {
    if (this.sizes.size >= MAX_REMEMBERED_SIZES) this.sizes.clear();
    this.sizes.set(key, dimensions);
  }

  /** The displayed size of the original, or of a kept preview (after a restart), read from its header; else the preview built. */
  private async dimensionsOf(imageKey: string, key: string, size: PreviewSize): Promise<{ width: number; height: number }> {
    if (size === 'original' || (await this.files.store.headObject(this.files.bucket, key))) return this.images.dimensions(this.files.bucket, key);
    return this.buildOnce(key, () => this.build(imageKey, key, PREVIEW_SIZES[size]));
  }

  private buildOnce(key: string, build: () => Promise<{ width: number; height: number }>): Promise<{ width: number; height: number }> {
    let pending = this.building.get(key);
    if (!pending) {
      pending = this.limited(build).finally(() => this.building.delete(key));
      this.building.set(key, pending);
    }
    return pending;
  }

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= PREVIEW_BUILDS) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    this.peakBuilds = Math.max(this.peakBuilds, this.running);
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private async build(imageKey: string, previewKey: string, longestSide: number): Promise<{ width: number; height: number }> {
    const photo = await this.images.read(this.files.bucket, imageKey);
    const sharp = await loadSharp();
    const { data, info } = await sharp(photo.bytes, { failOn: 'none', ...this.images.decodeOptions })
      .autoOrient()
      .resize({ width: longestSide, height: longestSide, fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality: longestSide <= 320 ? 72 : 85, mozjpeg: false })
      .toBuffer({ resolveWithObject: true })
      .catch((err: unknown) => {
        throw this.images.refuse(this.files.bucket, imageKey, photo.etag, err);
      });
    await this.files.store.putObject(this.files.bucket, previewKey, data, { contentType: 'image/jpeg' });
    this.built++;
    return { width: info.width, height: info.height };
  }
}

/** A refused photo: 422 with the reason (CONTRACT's error format); a photo file gone: 404. */
function previewError(err: unknown, photoId: number): unknown {
  if (err instanceof ImageRefused) return new ApiError(422, err.code, `Photo ${photoId} has no preview: ${err.reason}.`);
  if (err instanceof StorageError && err.code === 'NoSuchKey') return notFound(`The photo file of photo ${photoId}`);
  return err;
}
