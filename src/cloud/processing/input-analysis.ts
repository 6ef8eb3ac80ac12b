// Reads each registered input's image metadata once (EXIF/XMP from the head of the object) and
// caches it in cloud.project_inputs.analysis: processing needs it (readable images, positions,
// makers, capture dates) and so does mark registration (image dimensions).
import type { Kysely } from 'kysely';
import type { CloudTables, StoredAnalysis } from '../cloud.tables.ts';
import { StorageError, type ObjectStore } from '../../infra/storage/object-store.ts';
import { analyzeImage, objectStoreRangeReader, type ImageAnalysis } from '../../shared/image-metadata/index.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';

export interface InputRow {
  key: string;
  size: number;
  analysis: StoredAnalysis | null;
}

export type ReadableImage = { key: string; size: number } & Extract<StoredAnalysis, { ok: true }>;

export class InputAnalyzer {
  constructor(
    private readonly db: Kysely<CloudTables>,
    private readonly store: ObjectStore,
  ) {}

  /**
   * The analysis of each input, reading (and caching) those not read yet. A storage failure is
   * thrown; an unreadable or non-image file is an `{ ok: false }` analysis.
   */
  async analyze(
    projectId: number,
    bucket: string,
    inputs: readonly InputRow[],
    onProgress?: (done: number, total: number) => Promise<void>,
  ): Promise<Map<string, StoredAnalysis>> {
    const result = new Map<string, StoredAnalysis>();
    let done = 0;
    await mapConcurrently(inputs, 4, async (input) => {
      let analysis = input.analysis;
      if (!analysis) {
        try {
          analysis = toStored(await analyzeImage(objectStoreRangeReader(this.store, bucket, input.key), input.size));
        } catch (err) {
          // The client deleted or replaced the object after registering it: not readable, not cached.
          if (!(err instanceof StorageError)) throw err;
          result.set(input.key, { ok: false, reason: `not readable from storage (${err.code})` });
          done++;
          if (onProgress) await onProgress(done, inputs.length);
          return;
        }
        await this.db
          .updateTable('cloud.project_inputs')
          .set({ analysis: JSON.stringify(analysis) })
          .where('project_id', '=', projectId)
          .where('key', '=', input.key)
          .execute();
      }
      result.set(input.key, analysis);
      done++;
      if (onProgress) await onProgress(done, inputs.length);
    });
    return result;
  }
}

export function toStored(analysis: ImageAnalysis): StoredAnalysis {
  if (!analysis.ok) return { ok: false, reason: analysis.reason };
  const m = analysis.metadata;
  return {
    ok: true,
    width: m.width,
    height: m.height,
    latitude: m.latitude,
    longitude: m.longitude,
    altitude: m.altitude,
    make: m.make,
    model: m.model,
    focal_length_35mm: m.focalLength35mm,
    captured_at: m.capturedAt ? m.capturedAt.toISOString() : null,
    quaternion: m.quaternion,
    format: m.format,
  };
}

/** The readable images among analysed inputs, in input order. */
export function readableImages(inputs: readonly { key: string; size: number }[], analyses: Map<string, StoredAnalysis>): ReadableImage[] {
  const images: ReadableImage[] = [];
  for (const input of inputs) {
    const analysis = analyses.get(input.key);
    if (analysis?.ok) images.push({ key: input.key, size: input.size, ...analysis });
  }
  return images;
}
