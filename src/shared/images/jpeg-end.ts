// Where a JPEG's image data ends (its EOI marker), found while the file streams in, so that bytes
// after it are never read: they are not part of the image (a decoder stops at EOI) and can be
// anything: DJI's second, smaller JPEG (MPF), or hundreds of megabytes of padding (issue 27,
// finding 8).
// The walk: segments before the first scan are skipped by their lengths (an EXIF thumbnail inside
// APP1 holds an EOI of its own); in entropy-coded data a 0xFF byte is always followed by 0x00
// (stuffing), a restart marker (D0–D7) or a real marker, so the first FF D9 there is the end;
// segments between the scans of a progressive JPEG (DHT, SOS, ...) are skipped by their lengths too.
// A file that breaks these rules is simply read whole (up to the byte limit): the finder then
// never reports an end.

// The walk's states (plain numbers: the codebase uses no TypeScript enums).
const State = {
  /** A segment boundary: 0xFF expected. */
  Boundary: 0,
  /** After 0xFF at a boundary: the marker byte. */
  Marker: 1,
  /** The first and second bytes of a segment's length. */
  Length1: 2,
  Length2: 3,
  /** Inside a segment's payload. */
  Skip: 4,
  /** Entropy-coded data after a scan header. */
  Entropy: 5,
  /** After 0xFF in entropy-coded data. */
  EntropyFf: 6,
  /** Found, or not a JPEG this walk understands: nothing more to report. */
  Done: 7,
} as const;
type State = (typeof State)[keyof typeof State];

export class JpegEndFinder {
  private state: State = State.Boundary;
  private marker = 0;
  private length = 0;
  private remaining = 0;
  private offset = 0;
  /** The file's length up to and including EOI, once found. */
  end: number | undefined;

  /**
   * Feeds the next bytes of the file (from its first byte on). Returns how many bytes of `chunk`
   * belong to the image: all of them, or fewer once EOI has been met in this chunk.
   */
  push(chunk: Uint8Array): number {
    let i = 0;
    const n = chunk.length;
    while (i < n && this.state !== State.Done) {
      switch (this.state) {
        case State.Boundary:
          if (chunk[i++] !== 0xff) this.state = State.Done; // not a marker where one must be: give up
          else this.state = State.Marker;
          break;
        case State.Marker: {
          const m = chunk[i++];
          if (m === 0xff) break; // fill byte
          this.segmentMarker(m, i);
          break;
        }
        case State.Length1:
          this.length = chunk[i++] << 8;
          this.state = State.Length2;
          break;
        case State.Length2:
          this.length |= chunk[i++];
          if (this.length < 2) this.state = State.Done;
          else {
            this.remaining = this.length - 2;
            this.state = State.Skip;
          }
          break;
        case State.Skip: {
          const take = Math.min(this.remaining, n - i);
          i += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = this.marker === 0xda ? State.Entropy : State.Boundary;
          break;
        }
        case State.Entropy: {
          const ff = chunk.indexOf(0xff, i);
          if (ff < 0) i = n;
          else {
            i = ff + 1;
            this.state = State.EntropyFf;
          }
          break;
        }
        case State.EntropyFf: {
          const m = chunk[i++];
          if (m === 0x00 || (m >= 0xd0 && m <= 0xd7)) this.state = State.Entropy; // stuffing, restart
          else if (m !== 0xff) this.segmentMarker(m, i);
          break;
        }
      }
    }
    // Bytes up to the end: all of the chunk, some of it (the end is in it) or none (it was before).
    const used = this.end === undefined ? n : Math.max(0, this.end - this.offset);
    this.offset += n;
    return used;
  }

  /** A marker at a boundary or in entropy-coded data; `next`: index just after it in the chunk. */
  private segmentMarker(m: number, next: number): void {
    if (m === 0xd9) {
      this.end = this.offset + next;
      this.state = State.Done;
    } else if (m === 0xd8 || m === 0x01 || (m >= 0xd0 && m <= 0xd7)) {
      this.state = State.Boundary; // markers without a length
    } else {
      this.marker = m;
      this.state = State.Length1;
    }
  }
}

/** Whether the first bytes are a JPEG's (SOI and the next marker's 0xFF). */
export function isJpeg(head: Uint8Array): boolean {
  return head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
}
