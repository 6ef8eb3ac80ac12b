// Photo previews for the web console (not in the spec): a thumbnail (longest side 320 px) or a
// large view (2048 px) of a camera's photo, made once by sharp (EXIF orientation applied, JPEG)
// and kept in the object store beside the inspection's other files; later requests only presign
// it. So a grid of 300 thumbnails never downloads the 5–10 MB originals. `original` presigns the
// uploaded photo itself (for zooming in to full resolution).
// Concurrent requests for one preview share one build; at most PREVIEW_BUILDS run at once, so a
// grid scrolling into view cannot start dozens of decodes of large photos together.
import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import type { Kysely } from 'kysely';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { InspectionTables } from '../inspection.tables.ts';
import { DOWNLOAD_URL_TTL_SECONDS, inspectionFiles, type FileStore } from '../storage/inspection-files.ts';
import { notFound } from '../../infra/http/errors.ts';

export const PREVIEW_SIZES = { thumb: 320, large: 2048 } as const;
export type PreviewSize = keyof typeof PREVIEW_SIZES | 'original';
const PREVIEW_BUILDS = 2;

export class PreviewService {
  private readonly building = new Map<string, Promise<void>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Previews made by this process (tests check a second request makes none). */
  built = 0;

  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly access: InspectionAccess,
    private readonly files: FileStore,
  ) {}

  async preview(auth: AuthContext, inspectionId: number, photoId: number, size: PreviewSize): Promise<{ url: string; size: PreviewSize }> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    const camera = await this.db
      .selectFrom('inspection.cameras')
      .select(['image_key'])
      .where('inspection_id', '=', inspection.id)
      .where('id', '=', photoId)
      .executeTakeFirst();
    if (!camera) throw notFound(`Photo ${photoId} of inspection ${inspection.id}`);
    const bucket = this.files.bucket;
    if (size === 'original') return { url: await this.files.store.presignGetUrl(bucket, camera.image_key, DOWNLOAD_URL_TTL_SECONDS), size };
    const key = inspectionFiles.photoPreview(inspection.id, photoId, size);
    if (!(await this.files.store.headObject(bucket, key))) await this.buildOnce(key, () => this.build(camera.image_key, key, PREVIEW_SIZES[size]));
    return { url: await this.files.store.presignGetUrl(bucket, key, DOWNLOAD_URL_TTL_SECONDS), size };
  }

  private buildOnce(key: string, build: () => Promise<void>): Promise<void> {
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
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private async build(imageKey: string, previewKey: string, longestSide: number): Promise<void> {
    const { body } = await this.files.store.getObject(this.files.bucket, imageKey);
    const photo = await buffer(body);
    const jpeg = await sharp(photo, { failOn: 'none' })
      .autoOrient()
      .resize({ width: longestSide, height: longestSide, fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality: longestSide <= 320 ? 72 : 85, mozjpeg: false })
      .toBuffer();
    await this.files.store.putObject(this.files.bucket, previewKey, jpeg, { contentType: 'image/jpeg' });
    this.built++;
  }
}

