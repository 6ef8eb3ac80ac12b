// A cap on the multipart uploads in progress under one temporary credential's prefix (one cloud
// project / inspection). Each open upload is a folder under `.uploads/` that lives until it is
// completed, aborted or swept (STORAGE_MULTIPART_EXPIRY_SECONDS): without a cap, a client could
// open them by the thousand, each a few inodes, and every scan of `.uploads/` (quota, sweep,
// prefix deletion) would grow with them. One more than the cap is refused with 403 QuotaExceeded,
// the code of the prefix's byte quota (upload-limits.ts): stock clients print it with its message.
//
// Exact within this process, even for 100 CreateMultipartUpload calls at once: the creations of a
// prefix run one at a time (a mkdir and a small write each), against the set of its open upload
// ids. The set comes from a scan of `.uploads/`, reused for `rescanMs` and kept up to date with
// this process's creations, completions and aborts; uploads removed by the sweep or by another
// process are seen at the next scan, and a refusal always rescans first (unless a scan of the last
// second said the same), so a stale set never refuses wrongly.
import type { LocalDiskObjectStore } from './local-disk-store.ts';
import { S3Error } from './s3-errors.ts';

export interface OpenUploadsCapOptions {
  /** Open multipart uploads allowed under one prefix (0 or undefined: no cap). */
  maxPerPrefix?: number;
  /** Reuse of a prefix's scan (default 60 s). */
  rescanMs?: number;
  now?: () => number;
}

interface Entry {
  ids: Set<string>;
  scannedAt: number;
  /** The creations of this prefix, one after the other, and how many are queued or running. */
  queue: Promise<unknown>;
  busy: number;
  /** Uploads closed while a scan runs: the scan may still have seen their folder. */
  closedDuringScan?: Set<string>;
}

const MAX_ENTRIES = 10_000;

export class OpenUploadsCap {
  private readonly max?: number;
  private readonly rescanMs: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();

  constructor(options: OpenUploadsCapOptions = {}) {
    this.max = options.maxPerPrefix || undefined;
    this.rescanMs = options.rescanMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Runs `create` (which returns the new upload's id) if the prefix has room; QuotaExceeded if not. */
  async open(store: LocalDiskObjectStore, bucket: string, prefix: string, create: () => Promise<string>): Promise<string> {
    if (this.max === undefined) return create();
    const entry = this.entry(bucket, prefix);
    entry.busy++;
    const turn = entry.queue.then(async () => {
      if (entry.scannedAt < this.now() - this.rescanMs) await this.scan(store, bucket, prefix, entry);
      if (entry.ids.size >= this.max! && entry.scannedAt < this.now() - 1_000) await this.scan(store, bucket, prefix, entry);
      if (entry.ids.size >= this.max!) {
        throw new S3Error(
          'QuotaExceeded',
          `Too many multipart uploads in progress under ${prefix}: at most ${this.max} at once. Complete or abort one first (uploads left open are removed when they expire).`,
        );
      }
      const id = await create();
      entry.ids.add(id);
      return id;
    });
    entry.queue = turn.catch(() => {}).finally(() => entry.busy--);
    return turn;
  }

  /** An upload of the prefix was completed or aborted. */
  closed(bucket: string, prefix: string, uploadId: string): void {
    const entry = this.entries.get(key(bucket, prefix));
    entry?.ids.delete(uploadId);
    entry?.closedDuringScan?.add(uploadId);
  }

  /** The prefix's uploads went away in bulk (prefix deleted): the next creation rescans. */
  forget(bucket: string, prefix: string): void {
    const entry = this.entries.get(key(bucket, prefix));
    if (entry) entry.scannedAt = -Infinity;
  }

  private entry(bucket: string, prefix: string): Entry {
    const id = key(bucket, prefix);
    let entry = this.entries.get(id);
    if (!entry) {
      if (this.entries.size >= MAX_ENTRIES) {
        // Forgetting an entry costs one scan later, never a wrong answer.
        for (const [k, e] of this.entries) if (e.busy === 0) this.entries.delete(k);
      }
      entry = { ids: new Set(), scannedAt: -Infinity, queue: Promise.resolve(), busy: 0 };
      this.entries.set(id, entry);
    }
    return entry;
  }

  private async scan(store: LocalDiskObjectStore, bucket: string, prefix: string, entry: Entry): Promise<void> {
    entry.closedDuringScan = new Set();
    try {
      const ids = new Set(await store.multipartUploadIdsUnder(bucket, prefix));
      for (const id of entry.closedDuringScan) ids.delete(id);
      entry.ids = ids;
      entry.scannedAt = this.now();
    } finally {
      entry.closedDuringScan = undefined;
    }
  }
}

function key(bucket: string, prefix: string): string {
  return `${bucket}\0${prefix}`;
}
