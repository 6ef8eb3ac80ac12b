// Small pieces shared by the presigner (signing side) and the endpoint (verifying side).
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';

/** The request shape @smithy/signature-v4 signs (its HttpRequest), without importing @smithy/types. */
export type SignableRequest = Parameters<SignatureV4['presign']>[0];

type SourceData = string | ArrayBuffer | ArrayBufferView;

function toBuffer(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/**
 * SHA-256 / HMAC-SHA256 with node:crypto in the shape SignatureV4 expects (its `sha256` option):
 * `new Sha256()` hashes, `new Sha256(secret)` is an HMAC keyed with `secret`.
 */
export class Sha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.create();
  }
  private create(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(this.secret));
  }
  update(data: SourceData): void {
    this.hash.update(toBuffer(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
  reset(): void {
    this.hash = this.create();
  }
}

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export function sha256Hex(data: SourceData): string {
  return createHash('sha256').update(toBuffer(data)).digest('hex');
}

/**
 * Percent-encodes an object key for a path-style URL the way AWS SDKs do (RFC 3986 unreserved
 * characters kept, "/" kept). The result is also the canonical URI S3 signs (S3 does not
 * double-encode), so presigned URLs built from it verify against the raw path received.
 */
export function encodeKeyForPath(key: string): string {
  return key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()))
    .join('/');
}

/** Parses the compact ISO 8601 form used by SigV4 ("20130524T000000Z"). */
export function parseAmzDate(value: string | undefined): Date | undefined {
  const m = value ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value) : null;
  if (!m) return undefined;
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}
