// `readRange` implementations for analyzeImage: a local file, and an object of the ObjectStore.
import { open } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import type { ReadRange } from './range-source.ts';

export interface OpenedRangeReader {
  readRange: ReadRange;
  size: number;
  close(): Promise<void>;
}

/** Opens a local file for ranged reads; call close() when done. */
export async function openFileRangeReader(path: string): Promise<OpenedRangeReader> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const readRange: ReadRange = async (start, end) => {
      const buffer = Buffer.allocUnsafe(Math.max(0, end - start));
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    };
    return { readRange, size, close: () => handle.close() };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Ranged reads of one object (whose size the caller knows, e.g. from headObject or a listing). */
export function objectStoreRangeReader(store: ObjectStore, bucket: string, key: string): ReadRange {
  return async (start, end) => {
    // ByteRange.end is inclusive; ReadRange's end is exclusive.
    const { body } = await store.getObject(bucket, key, { start, end: end - 1 });
    return buffer(body);
  };
}
