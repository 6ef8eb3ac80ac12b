// A small in-process cache with a time to live and a size bound, for per-request lookups whose
// answer may be a few seconds stale (API keys, memberships) or never changes (verified tokens).
// Measured in bench/ (README "API"): on the embedded database every query costs ~0.2 ms of the
// one connection, so each lookup saved per request counts.
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Remembers `value` until `expiresAt` (ms since the epoch), at most the cache's time to live. */
  set(key: K, value: V, expiresAt = Infinity): void {
    this.entries.delete(key);
    // Map keeps insertion order: the first entry is the oldest.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, { value, expiresAt: Math.min(expiresAt, this.now() + this.ttlMs) });
  }

  /** When the entry of `key` expires (ms since the epoch), or undefined when there is none. */
  expiry(key: K): number | undefined {
    return this.get(key) === undefined ? undefined : this.entries.get(key)?.expiresAt;
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets every entry whose value (or key) matches (a revoked key, whatever it was looked up by). */
  deleteWhere(matches: (value: V, key: K) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
