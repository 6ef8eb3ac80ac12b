// Temporary credentials are stateless (embedded-credentials.ts): nothing in them can be revoked.
// Their owner can go away before they expire, though (a deleted cloud project, and with it the
// inspection). The gate asks the owner of the credential's prefix whether it still exists, on every
// request made with temporary credentials, and caches "yes" briefly so that a burst of reads
// costs one lookup. "No" is never cached: there is no coming back from deletion.
// An owner can also close its prefix to writes (spec rule 4: a cloud project whose processing has
// started answers 'read-only'): a write is then AccessDenied while reads go on. Writes always ask
// afresh, so that the prefix closes at once, whichever process started the processing.
import { S3Error } from './s3-errors.ts';

/**
 * Whether the owner of `prefix` in `bucket` still exists (true) or was deleted (false), or exists
 * but takes no more writes ('read-only'). Throwing (database unreachable) answers 503
 * ServiceUnavailable: the client retries later.
 */
export type PrefixLiveness = (bucket: string, prefix: string) => Promise<boolean | 'read-only'>;

export interface PrefixGateOptions {
  isPrefixLive?: PrefixLiveness;
  /** How long a positive answer is reused (default 5 s); see the README for what that means. */
  cacheMs?: number;
  now?: () => number;
}

const MAX_ENTRIES = 10_000;

export class PrefixGate {
  private readonly lookup?: PrefixLiveness;
  private readonly cacheMs: number;
  private readonly now: () => number;
  /** `bucket \0 prefix` → until when the positive answer holds (for reads). */
  private readonly liveUntil = new Map<string, number>();

  constructor(options: PrefixGateOptions = {}) {
    this.lookup = options.isPrefixLive;
    this.cacheMs = options.cacheMs ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * AccessDenied unless the prefix's owner exists, and, for a `write`, takes writes; `fresh`
   * skips the cache (a write always does).
   */
  async assertLive(bucket: string, prefix: string, fresh = false, write = false): Promise<void> {
    if (!this.lookup) return;
    const id = `${bucket}\0${prefix}`;
    if (!fresh && !write && (this.liveUntil.get(id) ?? 0) > this.now()) return;
    let live: boolean | 'read-only';
    try {
      live = await this.lookup(bucket, prefix);
    } catch (err) {
      throw new S3Error('ServiceUnavailable', 'Please reduce your request rate.', 503, {}, err);
    }
    if (!live) {
      this.liveUntil.delete(id);
      throw new S3Error('AccessDenied', 'Access Denied');
    }
    if (this.liveUntil.size >= MAX_ENTRIES) this.liveUntil.clear();
    this.liveUntil.set(id, this.now() + this.cacheMs);
    if (write && live !== true) throw new S3Error('AccessDenied', 'Access Denied: the uploads of this project are closed, its processing has started.');
  }

  /**
   * Drops cached answers for prefixes inside or around `prefix` (called when a prefix is deleted
   * in this process, so that its credentials stop at once rather than after the cache delay).
   */
  forget(bucket: string, prefix: string): void {
    for (const id of this.liveUntil.keys()) {
      const [b, p] = id.split('\0');
      if (b === bucket && (p.startsWith(prefix) || prefix.startsWith(p))) this.liveUntil.delete(id);
    }
  }
}
