// Frees the buffers of large streams promptly, whatever the size of V8's young generation.
//
// Why (bench/README.md, "Memory"): Node streams a request body or a file in 64 KiB buffers, each
// held by a small JavaScript object; a buffer's memory is given back only when a collection finds
// that object dead. Storing or reading an object allocates little JavaScript per byte, so with a
// young generation sized for the API (npm start's 16 MB semi-space; the API server's CPU per
// request 1.77× → 1.47× its anchor's, against 2 MB) no young collection came for many megabytes,
// the buffers piled up as external memory, and V8's external-memory limit ran full mark-compacts
// of the whole heap instead: 26 per 100 × 4 MiB PutObjects, the server's user CPU 2.4 → 4.6 s,
// uploads 0.70× the verifying sink, a 1 GiB multipart upload peaking ~55 MB higher. A young
// collection after every BYTES_PER_COLLECTION streamed (~0.8 ms each) frees them at a fraction
// of that cost.
// The disk store counts every byte it writes (disk-object-files.ts, writeTemp): PutObject and
// UploadPart bodies, multipart completions, the services' own objects. Not yet what it reads
// (downloads), which piles up the same way in a long download.
//
// Needs --expose-gc (npm start, worker and storage pass it); without it this does nothing.

type GcFunction = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async' }) => void;

/** Bytes streamed between two young collections (a 2 MB semi-space collected every ~8 MiB of upload). */
export const BYTES_PER_COLLECTION = 4 * 1024 * 1024;

const gc = (globalThis as { gc?: GcFunction }).gc;
let sinceCollection = 0;
let collections = 0;

/** Counts `bytes` streamed; a young collection when BYTES_PER_COLLECTION have passed. */
export function noteStreamedBytes(bytes: number): void {
  if (!gc) return;
  sinceCollection += bytes;
  if (sinceCollection < BYTES_PER_COLLECTION) return;
  sinceCollection = 0;
  collections++;
  gc({ type: 'minor' });
}

/** Young collections asked for so far (tests). */
export function streamedGarbageCollections(): number {
  return collections;
}
