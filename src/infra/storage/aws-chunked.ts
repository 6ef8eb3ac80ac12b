// Streaming decoder for "Content-Encoding: aws-chunked" bodies, which current AWS SDKs and
// aws-cli send for uploads whose length or checksum is only known while streaming:
//
//   STREAMING-UNSIGNED-PAYLOAD-TRAILER          <hex>\r\n<data>\r\n ... 0\r\n<trailers>\r\n
//   STREAMING-AWS4-HMAC-SHA256-PAYLOAD          <hex>;chunk-signature=<sig>\r\n<data>\r\n ... 0;chunk-signature=<sig>\r\n\r\n
//   STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER  as above, then <trailers> and x-amz-trailer-signature:<sig>
//
// Chunk n's signature is HMAC(signingKey, "AWS4-HMAC-SHA256-PAYLOAD\n<date>\n<scope>\n<sig n-1>\n
// <sha256("")>\n<sha256(chunk n)>"), chained from the request's own (seed) signature; the trailer
// signature covers "name:value\n" of every trailer. Data is passed on as it arrives (never a
// whole chunk in memory); a bad signature or framing error fails the stream, and the object
// store then discards what it had written.
import { createHash, createHmac, timingSafeEqual, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { S3Error } from './s3-errors.ts';
import { EMPTY_SHA256 } from './sigv4-common.ts';
import type { ChunkSigningContext } from './sigv4-verifier.ts';

export interface AwsChunkedOptions {
  /** Present when chunks carry signatures (STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]). */
  signing?: ChunkSigningContext;
  /** Trailers follow the final chunk (the *-TRAILER variants). */
  trailers: boolean;
  /** x-amz-decoded-content-length, checked at the end when given. */
  decodedLength?: number;
}

type State = 'header' | 'data' | 'data-crlf' | 'trailer' | 'done';

const MAX_LINE = 4096;

function malformed(message: string): S3Error {
  return new S3Error('IncompleteBody', `Malformed aws-chunked body: ${message}`);
}

function hmacHex(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given.toLowerCase());
  return a.length === b.length && timingSafeEqual(a, b);
}

export class AwsChunkedDecoder extends Transform {
  /** Trailing headers (lower-case names), available once the stream has ended. */
  readonly trailers = new Map<string, string>();
  private state: State = 'header';
  private line: Buffer[] = [];
  private lineLength = 0;
  private remaining = 0;
  private crlfSeen = 0;
  private decoded = 0;
  private chunkHash: Hash | undefined;
  private chunkSignature = '';
  private previousSignature: string;
  private trailerSignature: string | undefined;

  constructor(private readonly options: AwsChunkedOptions) {
    super();
    this.previousSignature = options.signing?.seedSignature ?? '';
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.consume(chunk);
      callback();
    } catch (err) {
      callback(err as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      // Tolerate a body that ends right after the last line without the closing empty line
      // (the SDK omits it when it sends no trailer).
      if (this.state === 'trailer' && this.lineLength === 0) this.finishTrailers();
      if (this.state !== 'done') throw new S3Error('IncompleteBody', 'The request body terminated unexpectedly');
      if (this.options.decodedLength !== undefined && this.decoded !== this.options.decodedLength) {
        throw new S3Error('IncompleteBody', 'The decoded body length does not match x-amz-decoded-content-length');
      }
      callback();
    } catch (err) {
      callback(err as Error);
    }
  }

  private consume(buf: Buffer): void {
    let pos = 0;
    while (pos < buf.length) {
      switch (this.state) {
        case 'header':
        case 'trailer': {
          const line = this.takeLine(buf, pos);
          pos = line.next;
          if (line.text === undefined) break;
          if (this.state === 'header') this.onChunkHeader(line.text);
          else this.onTrailerLine(line.text);
          break;
        }
        case 'data': {
          const n = Math.min(this.remaining, buf.length - pos);
          const slice = buf.subarray(pos, pos + n);
          this.chunkHash?.update(slice);
          this.push(slice);
          this.decoded += n;
          this.remaining -= n;
          pos += n;
          if (this.remaining === 0) this.state = 'data-crlf';
          break;
        }
        case 'data-crlf': {
          const expected = this.crlfSeen === 0 ? 0x0d : 0x0a;
          if (buf[pos] !== expected) throw malformed('chunk data is not followed by CRLF');
          pos++;
          if (++this.crlfSeen === 2) {
            this.crlfSeen = 0;
            this.endChunk();
            this.state = 'header';
          }
          break;
        }
        case 'done':
          // Only stray line breaks may follow the end of the body.
          if (buf[pos] !== 0x0d && buf[pos] !== 0x0a) throw malformed('data after the final chunk');
          pos++;
          break;
      }
    }
  }

  /** Accumulates bytes up to LF; returns the line without CRLF once complete. */
  private takeLine(buf: Buffer, pos: number): { text?: string; next: number } {
    const lf = buf.indexOf(0x0a, pos);
    const end = lf === -1 ? buf.length : lf;
    this.line.push(buf.subarray(pos, end));
    this.lineLength += end - pos;
    if (this.lineLength > MAX_LINE) throw malformed('line too long');
    if (lf === -1) return { next: buf.length };
    let text = Buffer.concat(this.line).toString('latin1');
    this.line = [];
    this.lineLength = 0;
    if (text.endsWith('\r')) text = text.slice(0, -1);
    return { text, next: lf + 1 };
  }

  private onChunkHeader(text: string): void {
    const [sizeField, ...extensions] = text.split(';');
    if (!/^[0-9a-fA-F]{1,16}$/.test(sizeField.trim())) throw malformed('bad chunk size');
    const size = parseInt(sizeField.trim(), 16);
    if (this.options.signing) {
      const sig = extensions.map((e) => e.trim()).find((e) => e.startsWith('chunk-signature='));
      if (!sig) throw new S3Error('SignatureDoesNotMatch', 'A chunk signature is missing.');
      this.chunkSignature = sig.slice('chunk-signature='.length);
      this.chunkHash = createHash('sha256');
    }
    if (size === 0) {
      this.endChunk();
      // Trailer lines (if any) then an empty line end the body; without trailers it is just
      // the empty line, which the same state handles.
      this.state = 'trailer';
      return;
    }
    this.remaining = size;
    this.state = 'data';
  }

  /** Checks the signature of the chunk that just ended (no-op for unsigned bodies). */
  private endChunk(): void {
    const signing = this.options.signing;
    if (!signing || !this.chunkHash) return;
    const stringToSign = ['AWS4-HMAC-SHA256-PAYLOAD', signing.amzDate, signing.scope, this.previousSignature, EMPTY_SHA256, this.chunkHash.digest('hex')].join('\n');
    const expected = hmacHex(signing.signingKey, stringToSign);
    if (!sameHex(expected, this.chunkSignature)) {
      throw new S3Error('SignatureDoesNotMatch', 'The chunk signature we calculated does not match the signature you provided.');
    }
    this.previousSignature = expected;
    this.chunkHash = undefined;
  }

  private onTrailerLine(text: string): void {
    if (text === '') {
      this.finishTrailers();
      return;
    }
    const colon = text.indexOf(':');
    if (colon <= 0) throw malformed('bad trailer line');
    const name = text.slice(0, colon).trim().toLowerCase();
    const value = text.slice(colon + 1).trim();
    if (name === 'x-amz-trailer-signature') this.trailerSignature = value;
    else this.trailers.set(name, value);
  }

  private finishTrailers(): void {
    const signing = this.options.signing;
    if (signing && this.options.trailers) {
      if (!this.trailerSignature) throw new S3Error('SignatureDoesNotMatch', 'The trailer signature is missing.');
      const canonical = [...this.trailers.keys()]
        .sort()
        .map((name) => `${name}:${this.trailers.get(name)}\n`)
        .join('');
      const stringToSign = ['AWS4-HMAC-SHA256-TRAILER', signing.amzDate, signing.scope, this.previousSignature, createHash('sha256').update(canonical).digest('hex')].join('\n');
      if (!sameHex(hmacHex(signing.signingKey, stringToSign), this.trailerSignature)) {
        throw new S3Error('SignatureDoesNotMatch', 'The trailer signature we calculated does not match the signature you provided.');
      }
    }
    this.state = 'done';
  }
}
