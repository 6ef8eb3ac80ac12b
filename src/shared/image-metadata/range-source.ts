// Ranged, cached access to an object of known size through a `readRange` callback, so that the
// image analysis only fetches the parts of a file it needs (the head, and a few small pieces
// beyond it when a file's metadata is spread out).

/**
 * Reads bytes [start, end) of an object: `end` is exclusive, as in `Buffer.subarray` (an HTTP or
 * S3 Range header for it is `bytes=start-(end - 1)`). Callers never ask beyond the object's size.
 * It may return fewer bytes than asked (the object changed or was cut short); a thrown error or
 * rejected promise means the storage could not be read and is passed on to the caller.
 */
export type ReadRange = (start: number, end: number) => Promise<Buffer>;

interface Block {
  start: number;
  end: number;
  data: Buffer;
}

export class RangeSource {
  private readonly blocks: Block[] = [];
  /** Bytes returned by `readRange` so far. */
  bytesRead = 0;
  /** Calls made to `readRange` so far. */
  requests = 0;

  /**
   * @param readAhead a fetch that misses the cache reads at least this many bytes, so that small
   * reads next to each other (a segment header, then its first bytes) cost one request.
   */
  constructor(
    private readonly readRange: ReadRange,
    readonly size: number,
    private readonly readAhead: number,
  ) {}

  /**
   * Bytes [start, end) clipped to the object's size. The result is shorter than asked only when the
   * object ends (or the reader returned less); callers check the length.
   */
  async read(start: number, end: number): Promise<Buffer> {
    end = Math.min(end, this.size);
    if (start >= end) return Buffer.alloc(0);
    for (const b of this.blocks) {
      if (b.start <= start && end <= b.end) return b.data.subarray(start - b.start, end - b.start);
    }
    // Reuse a cached block holding the beginning of the range; fetch only what follows it.
    let fetchStart = start;
    let prefix: Buffer | undefined;
    for (const b of this.blocks) {
      if (b.start <= start && start < b.end && b.end > fetchStart) {
        fetchStart = b.end;
        prefix = b.data.subarray(start - b.start);
      }
    }
    const fetchEnd = Math.min(this.size, Math.max(end, fetchStart + this.readAhead));
    const data = await this.fetch(fetchStart, fetchEnd);
    const joined = prefix ? Buffer.concat([prefix, data]) : data;
    return joined.subarray(0, end - start);
  }

  private async fetch(start: number, end: number): Promise<Buffer> {
    this.requests += 1;
    let data = await this.readRange(start, end);
    if (!Buffer.isBuffer(data)) data = Buffer.from(data as Uint8Array);
    if (data.length > end - start) data = data.subarray(0, end - start);
    this.bytesRead += data.length;
    if (data.length > 0) this.blocks.push({ start, end: start + data.length, data });
    return data;
  }
}
