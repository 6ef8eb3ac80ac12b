// Reads the inputs of an inspection for the image analysis straight from the shared ObjectStore,
// as the inputs ZIP job does (inputs-zip.service.ts: the cloud project's bucket, the registered
// keys), with ranged reads.
// Performance (bench/README.md, "Image analysis"): this used to go through the embedded S3
// endpoint with the project's temporary credentials (HTTP, SigV4 signing and verification, the
// AWS SDK's middleware: ~40 % of the analysis in the profile) for the same bytes.
import { buffer } from 'node:stream/consumers';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { objectStoreRangeReader, type ReadRange } from '../../shared/image-metadata/index.ts';

export interface RangedObject {
  size: number;
  readRange: ReadRange;
}

/**
 * Reads the first `headSize` bytes of an object (one ranged read, which also gives its size) and
 * returns its size with a reader that serves later ranges from that head when it can, and with
 * further ranged reads otherwise. undefined for an empty object (it has no byte 0: InvalidRange).
 * A missing object (NoSuchKey) or any other storage error is thrown, for the job to be retried.
 */
export async function openInput(store: ObjectStore, bucket: string, key: string, headSize: number): Promise<RangedObject | undefined> {
  let first: Awaited<ReturnType<ObjectStore['getObject']>>;
  try {
    first = await store.getObject(bucket, key, { start: 0, end: headSize - 1 });
  } catch (err) {
    if (isInvalidRange(err)) return undefined;
    throw err;
  }
  const head = await buffer(first.body);
  const further = objectStoreRangeReader(store, bucket, key);
  return {
    size: first.info.size,
    readRange: async (start, end) => {
      if (end <= head.length) return head.subarray(start, end);
      try {
        return await further(start, end);
      } catch (err) {
        // The object shrank since the first read: no bytes there (the analysis reports it).
        if (isInvalidRange(err)) return Buffer.alloc(0);
        throw err;
      }
    },
  };
}

function isInvalidRange(err: unknown): boolean {
  return err instanceof StorageError && err.code === 'InvalidRange';
}
