// Text arriving in chunks (a DJI .SRT read from storage, ffmpeg's stderr) cut into lines, each at
// most `maxChars` long: the rest of a longer line is dropped as it arrives, so one line without a
// break (250,000 digits in an uploaded .SRT) costs neither memory nor a re-scan per chunk, and the
// patterns run on each line afterwards see bounded text. A line ends at \n, \r\n or a lone \r
// (ffmpeg's progress line), also when \r and \n arrive in different chunks.

export class CappedLineSplitter {
  private pending = '';
  private truncated = false;
  private started = false;
  private afterCarriageReturn = false;

  /** `onLine` gets each line without its break; `truncated` when it was longer than `maxChars`. */
  constructor(
    private readonly maxChars: number,
    private readonly onLine: (line: string, truncated: boolean) => void,
  ) {}

  write(text: string): void {
    let start = 0;
    if (this.afterCarriageReturn && text.startsWith('\n')) start = 1; // the \n of a \r\n cut between chunks
    this.afterCarriageReturn = false;
    const breaks = /\r\n?|\n/g;
    breaks.lastIndex = start;
    for (let m = breaks.exec(text); m; m = breaks.exec(text)) {
      this.append(text, start, m.index);
      this.emit();
      start = breaks.lastIndex;
      if (m[0] === '\r' && start === text.length) this.afterCarriageReturn = true;
    }
    this.append(text, start, text.length);
  }

  /** The last line, when the text does not end with a break. */
  end(): void {
    if (this.started) this.emit();
  }

  private append(text: string, from: number, to: number): void {
    if (to <= from) return;
    this.started = true;
    const room = this.maxChars - this.pending.length;
    if (to - from > room) this.truncated = true;
    if (room > 0) this.pending += text.slice(from, Math.min(to, from + room));
  }

  private emit(): void {
    const line = this.pending;
    const truncated = this.truncated;
    this.pending = '';
    this.truncated = false;
    this.started = false;
    this.onLine(line, truncated);
  }
}
