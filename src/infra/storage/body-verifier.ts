// Checks a request body against what the client declared about it, while it streams through:
// x-amz-content-sha256 (a hex SHA-256), Content-MD5, and x-amz-checksum-<algorithm> given as a
// header or as an aws-chunked trailer; and its size against a limit (one stage for all of it:
// every stream stage costs its own calls per 64 KiB chunk). A mismatch fails the stream at its
// end, a body over the limit as soon as it is, so the object store (which renames its temp file
// only after a clean end) stores nothing.
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { createChecksum, type ChecksumAlgorithm, type IncrementalChecksum } from './checksums.ts';
import { S3Error, entityTooLarge } from './s3-errors.ts';

export interface ExpectedChecksum {
  algorithm: ChecksumAlgorithm;
  /** Read at the end of the body: trailers are only known then. */
  expected: () => string | undefined;
}

export interface BodyExpectations {
  sha256Hex?: string;
  contentMd5Base64?: string;
  checksums?: ExpectedChecksum[];
  /** Bytes allowed: the stream fails with EntityTooLarge as soon as more come. */
  maxBytes?: number;
}

export class BodyVerifier extends Transform {
  private readonly sha256?: Hash;
  private readonly md5?: Hash;
  private readonly checksums: Array<{ spec: ExpectedChecksum; state: IncrementalChecksum }>;
  /** The verified checksums (algorithm → base64), for echoing back like S3 does. */
  readonly verified = new Map<ChecksumAlgorithm, string>();
  private seen = 0;

  constructor(private readonly expect: BodyExpectations) {
    super();
    if (expect.sha256Hex) this.sha256 = createHash('sha256');
    if (expect.contentMd5Base64) this.md5 = createHash('md5');
    this.checksums = (expect.checksums ?? []).map((spec) => ({ spec, state: createChecksum(spec.algorithm) }));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.expect.maxBytes !== undefined && this.seen > this.expect.maxBytes) return callback(entityTooLarge(this.expect.maxBytes));
    this.sha256?.update(chunk);
    this.md5?.update(chunk);
    for (const c of this.checksums) c.state.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.sha256 && this.sha256.digest('hex') !== this.expect.sha256Hex?.toLowerCase()) {
      callback(new S3Error('XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed."));
      return;
    }
    if (this.md5 && this.md5.digest('base64') !== this.expect.contentMd5Base64) {
      callback(new S3Error('BadDigest', 'The Content-MD5 you specified did not match what we received.'));
      return;
    }
    for (const { spec, state } of this.checksums) {
      const expected = spec.expected();
      if (expected === undefined) {
        callback(new S3Error('InvalidRequest', `The x-amz-checksum-${spec.algorithm} trailer was declared but not sent.`));
        return;
      }
      const actual = state.digestBase64();
      if (actual !== expected) {
        callback(new S3Error('BadDigest', `The ${spec.algorithm.toUpperCase()} you specified did not match the calculated checksum.`));
        return;
      }
      this.verified.set(spec.algorithm, actual);
    }
    callback();
  }
}
