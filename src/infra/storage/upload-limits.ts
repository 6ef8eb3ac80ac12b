// Upload limits of the S3 endpoint, checked from the request headers before the body is asked
// for (so an oversized "Expect: 100-continue" upload is refused without being transferred):
//   - S3's size limit of one PutObject or UploadPart body (5 GiB), EntityTooLarge;
//   - a quota per credential prefix (one cloud project / inspection), QuotaExceeded.
// Usage of a prefix = its objects + the parts of its multipart uploads in progress. Scanning the
// prefix for every upload would cost a stat per object, so the scan is reused and kept up to date
// with this process's own uploads: the bytes of uploads under way are reserved, the bytes of
// finished ones added. The count drifts only upwards (deletions and overwrites are not
// subtracted), and an upload that the cached count would refuse rescans first, so drift never
// refuses an upload wrongly. Uploads through another process (another `serve` on the same data
// folder) are seen at the next rescan (at most `rescanMs` later).
import type { IncomingMessage } from 'node:http';
import type { LocalDiskObjectStore } from './local-disk-store.ts';
import { S3Error, entityTooLarge } from './s3-errors.ts';
import { header } from './s3-request.ts';

export const S3_MAX_UPLOAD_SIZE = 5 * 1024 ** 3;

export interface UploadLimitsOptions {
  /** Largest PutObject / UploadPart body (default 5 GiB, S3's limit). */
  maxUploadSize?: number;
  /** Bytes allowed under one temporary credential's prefix (default none). */
  prefixQuotaBytes?: number;
  /** Reuse of a prefix's scan (default 60 s). */
  rescanMs?: number;
  now?: () => number;
}

interface Usage {
  scanned: number;
  scannedAt: number;
  /** Bytes written since the scan. */
  added: number;
  /** Bytes reserved by uploads under way. */
  reserved: number;
  scanning?: Promise<void>;
}

/** What an admitted upload holds until it ends. */
export interface Admission {
  /** Bytes that ended up stored (counted against the quota from now on). */
  wrote(bytes: number): void;
  /** Frees the reservation; call once, when the request ends. */
  release(): void;
}

const NO_ADMISSION: Admission = { wrote: () => {}, release: () => {} };
const MAX_ENTRIES = 10_000;

/**
 * The body size the client declares: the decoded length of an aws-chunked body, else
 * Content-Length; undefined when unknown (Transfer-Encoding: chunked), then capped while streaming.
 */
export function declaredBodySize(req: IncomingMessage): number | undefined {
  const streaming = (header(req, 'x-amz-content-sha256') ?? '').startsWith('STREAMING-');
  const text = streaming ? header(req, 'x-amz-decoded-content-length') : header(req, 'content-length');
  if (text === undefined) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

export class UploadLimits {
  readonly maxUploadSize: number;
  private readonly quota?: number;
  private readonly rescanMs: number;
  private readonly now: () => number;
  private readonly usage = new Map<string, Usage>();

  constructor(options: UploadLimitsOptions = {}) {
    this.maxUploadSize = options.maxUploadSize ?? S3_MAX_UPLOAD_SIZE;
    this.quota = options.prefixQuotaBytes || undefined;
    this.rescanMs = options.rescanMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Checks an upload (PutObject, CopyObject, UploadPart) before its body is read. `quotaPrefix`:
   * the temporary credential's prefix (the root credential has no quota). `declared`: the body
   * size, or undefined when unknown (a copy, a chunked body): then only a prefix already at its
   * quota is refused, and the bytes count once written.
   */
  async admit(store: LocalDiskObjectStore, bucket: string, quotaPrefix: string | undefined, declared: number | undefined, isCopy: boolean): Promise<Admission> {
    if (!isCopy && declared !== undefined && declared > this.maxUploadSize) throw entityTooLarge(this.maxUploadSize);
    if (this.quota === undefined || quotaPrefix === undefined) return NO_ADMISSION;
    const quota = this.quota;
    const id = `${bucket}\0${quotaPrefix}`;
    const need = declared ?? 0;
    const fits = (u: Usage) => (declared === undefined ? total(u) < quota : total(u) + need <= quota);
    let usage = await this.current(store, bucket, quotaPrefix, id, false);
    if (!fits(usage)) usage = await this.current(store, bucket, quotaPrefix, id, true);
    if (!fits(usage)) {
      throw new S3Error('QuotaExceeded', `This upload would take the storage used under ${quotaPrefix} beyond its quota of ${quota} bytes.`);
    }
    usage.reserved += need;
    let released = false;
    return {
      wrote: (bytes) => {
        usage.added += bytes;
      },
      release: () => {
        if (released) return;
        released = true;
        usage.reserved -= need;
      },
    };
  }

  /** Deletions under the prefix: the next check rescans rather than count freed bytes. */
  forget(bucket: string, prefix: string): void {
    const usage = this.usage.get(`${bucket}\0${prefix}`);
    if (usage) usage.scannedAt = -Infinity;
  }

  private async current(store: LocalDiskObjectStore, bucket: string, prefix: string, id: string, fresh: boolean): Promise<Usage> {
    let usage = this.usage.get(id);
    if (!usage) {
      if (this.usage.size >= MAX_ENTRIES) {
        for (const [key, u] of this.usage) if (u.reserved === 0 && !u.scanning) this.usage.delete(key);
      }
      usage = { scanned: 0, scannedAt: -Infinity, added: 0, reserved: 0 };
      this.usage.set(id, usage);
    }
    // Before refusing, rescan unless nothing was written since a scan of the last second (a
    // client retrying over its quota does not rescan the prefix on every attempt).
    const stale = fresh ? usage.added > 0 || usage.scannedAt < this.now() - 1_000 : usage.scannedAt < this.now() - this.rescanMs;
    if (stale) {
      const u = usage;
      const addedBefore = u.added;
      u.scanning ??= store
        .usage(bucket, prefix)
        .then((bytes) => {
          // Writes that finished during the scan stay added: perhaps counted twice until the next scan.
          u.scanned = bytes;
          u.added -= addedBefore;
          u.scannedAt = this.now();
        })
        .finally(() => (u.scanning = undefined));
      await u.scanning;
    }
    return usage;
  }
}

function total(u: Usage): number {
  return u.scanned + u.added + u.reserved;
}
