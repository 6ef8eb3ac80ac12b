// ObjectStore over any S3-compatible service (AWS S3, MinIO, Ceph RGW, Garage, or the embedded
// endpoint run alone by the `storage` command), through @aws-sdk/client-s3. Bodies stream in
// both directions: nothing here holds a whole object in memory, except a Buffer the caller passed.
//
// The store's errors are mapped onto StorageError codes (NoSuchKey, InvalidRange, ...), so the
// services behave the same whichever store they run on.
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  StorageError,
  type ByteRange,
  type ListObjectsOptions,
  type ListObjectsResult,
  type ObjectInfo,
  type ObjectStore,
  type StorageErrorCode,
  type UploadedPart,
} from './object-store.ts';

export interface S3StoreSettings {
  /** e.g. http://127.0.0.1:9000; undefined: AWS S3 itself (the region's endpoint). */
  endpoint: string | undefined;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Bucket in the path (MinIO, Ceph, the embedded store) rather than in the host name (AWS). */
  forcePathStyle: boolean;
  /** The endpoint clients reach (presigned URLs, `endpoint_override`); defaults to `endpoint`. */
  publicEndpoint?: string;
}

/** The S3 error codes this store turns into StorageError codes; the rest are rethrown as they are. */
const ERROR_CODES: Record<string, StorageErrorCode> = {
  NoSuchKey: 'NoSuchKey',
  NotFound: 'NoSuchKey',
  NoSuchBucket: 'NoSuchBucket',
  NoSuchUpload: 'NoSuchUpload',
  InvalidPart: 'InvalidPart',
  InvalidPartOrder: 'InvalidPartOrder',
  InvalidRange: 'InvalidRange',
  EntityTooSmall: 'EntityTooSmall',
  InvalidArgument: 'InvalidArgument',
};

/** A client of the store; `sessionToken` for temporary credentials (the start-up self-check's probes). */
export function s3ClientFor(settings: Omit<S3StoreSettings, 'publicEndpoint'> & { endpoint: string | undefined; sessionToken?: string }): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey, sessionToken: settings.sessionToken },
    // Checksums only when the operation requires them: S3-compatible stores other than AWS do
    // not all accept the SDK's default CRC32 trailers (Ceph 16 does not).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export class S3ObjectStore implements ObjectStore {
  readonly client: S3Client;
  /** Signs presigned URLs for the public endpoint (the same client when it is the same). */
  private readonly publicClient: S3Client;
  private readonly prefixListeners: ((bucket: string, prefix: string) => Promise<void> | void)[] = [];

  constructor(readonly settings: S3StoreSettings) {
    this.client = s3ClientFor(settings);
    this.publicClient =
      settings.publicEndpoint && settings.publicEndpoint !== settings.endpoint ? s3ClientFor({ ...settings, endpoint: settings.publicEndpoint }) : this.client;
  }

  async putObject(bucket: string, key: string, body: Readable | Buffer, options: { contentType?: string } = {}): Promise<ObjectInfo> {
    if (Buffer.isBuffer(body)) {
      const out = await this.send(() => this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: options.contentType, ContentLength: body.length })));
      return { key, size: body.length, etag: out.ETag ?? '""', lastModified: new Date(), contentType: options.contentType };
    }
    // A stream of unknown length: S3 needs the length of a PutObject up front, so it goes as a
    // multipart upload of 8 MiB parts (one part in memory at a time).
    return this.putStream(bucket, key, body, options.contentType);
  }

  async headObject(bucket: string, key: string): Promise<ObjectInfo | undefined> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { key, size: out.ContentLength ?? 0, etag: out.ETag ?? '""', lastModified: out.LastModified ?? new Date(0), contentType: out.ContentType };
    } catch (err) {
      if (storageCode(err) === 'NoSuchKey') return undefined;
      throw mapError(err);
    }
  }

  async getObject(bucket: string, key: string, range?: ByteRange): Promise<{ info: ObjectInfo; body: Readable; range?: ByteRange }> {
    const out = await this.send(() =>
      this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined })),
    );
    const size = range ? totalFromContentRange(out.ContentRange) ?? out.ContentLength ?? 0 : out.ContentLength ?? 0;
    const served = range ? servedRange(out.ContentRange) ?? range : undefined;
    return {
      info: { key, size, etag: out.ETag ?? '""', lastModified: out.LastModified ?? new Date(0), contentType: out.ContentType },
      body: out.Body as Readable,
      range: served,
    };
  }

  async deleteObject(bucket: string, key: string): Promise<void> {
    await this.send(() => this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })));
  }

  /**
   * Called, and awaited, at the start of every deletePrefix, before any object goes: with per-prefix
   * roles (system.ts) the prefix's role is deleted first, so its credentials stop before the objects
   * they could still be writing are removed.
   */
  onPrefixDeleted(listener: (bucket: string, prefix: string) => Promise<void> | void): void {
    this.prefixListeners.push(listener);
  }

  async deletePrefix(bucket: string, prefix: string): Promise<number> {
    for (const listener of this.prefixListeners) await listener(bucket, prefix);
    // Multipart uploads in progress first, so no part lands after the listing. A store that cannot
    // list them (s3rver: NotImplemented) has none this could abort; its lifecycle rules apply.
    for (let keyMarker: string | undefined, uploadIdMarker: string | undefined; ; ) {
      const page = await this.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker })).catch((err: unknown) => {
        if (isNotImplemented(err)) return { Uploads: [], IsTruncated: false, NextKeyMarker: undefined, NextUploadIdMarker: undefined };
        throw mapError(err);
      });
      for (const upload of page.Uploads ?? []) await this.abortMultipartUpload(bucket, upload.Key!, upload.UploadId!);
      if (!page.IsTruncated) break;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
    let deleted = 0;
    for (let token: string | undefined; ; ) {
      const page = await this.send(() => this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token, MaxKeys: 1000 })));
      const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
      if (keys.length) {
        const out = await this.send(() => this.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } })));
        if (out.Errors?.length) throw new Error(`S3 DeleteObjects failed for ${out.Errors.length} key(s), e.g. ${out.Errors[0].Key}: ${out.Errors[0].Code} ${out.Errors[0].Message}`);
        deleted += keys.length;
      }
      if (!page.IsTruncated) return deleted;
      token = page.NextContinuationToken;
    }
  }

  async listObjects(bucket: string, options: ListObjectsOptions = {}): Promise<ListObjectsResult> {
    const out = await this.send(() =>
      this.client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: options.prefix,
          Delimiter: options.delimiter || undefined,
          MaxKeys: options.maxKeys,
          ContinuationToken: options.continuationToken,
          StartAfter: options.startAfter,
        }),
      ),
    );
    return {
      objects: (out.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size ?? 0, etag: o.ETag ?? '""', lastModified: o.LastModified ?? new Date(0) })),
      commonPrefixes: (out.CommonPrefixes ?? []).map((p) => p.Prefix!),
      isTruncated: out.IsTruncated ?? false,
      nextContinuationToken: out.NextContinuationToken,
    };
  }

  async createMultipartUpload(bucket: string, key: string, options: { contentType?: string } = {}): Promise<{ uploadId: string }> {
    const out = await this.send(() => this.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: options.contentType })));
    return { uploadId: out.UploadId! };
  }

  async uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: Readable | Buffer): Promise<UploadedPart> {
    // UploadPart needs the part's length: a stream is read into one Buffer (a part is at most 5 GiB
    // by S3's rules; the services send parts of a few MiB).
    const data = Buffer.isBuffer(body) ? body : await collect(body);
    const out = await this.send(() => this.client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: data, ContentLength: data.length })));
    return { partNumber, etag: out.ETag! };
  }

  async completeMultipartUpload(bucket: string, key: string, uploadId: string, parts: UploadedPart[]): Promise<ObjectInfo> {
    const out = await this.send(() =>
      this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) } }),
      ),
    );
    const info = await this.headObject(bucket, key);
    return info ?? { key, size: 0, etag: out.ETag ?? '""', lastModified: new Date() };
  }

  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
    } catch (err) {
      if (storageCode(err) !== 'NoSuchUpload') throw mapError(err); // already gone: done
    }
  }

  async presignGetUrl(bucket: string, key: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(this.publicClient, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: expiresInSeconds });
  }

  /** A stream of unknown length as a multipart upload; aborted when anything fails. */
  private async putStream(bucket: string, key: string, body: Readable, contentType: string | undefined): Promise<ObjectInfo> {
    const PART = 8 * 1024 * 1024;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let uploadId: string | undefined;
    const parts: UploadedPart[] = [];
    const flush = async () => {
      const data = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      uploadId ??= (await this.createMultipartUpload(bucket, key, { contentType })).uploadId;
      parts.push(await this.uploadPart(bucket, key, uploadId, parts.length + 1, data));
    };
    try {
      for await (const chunk of body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        pending.push(buffer);
        pendingBytes += buffer.length;
        if (pendingBytes >= PART) await flush();
      }
      // Small objects (one part's worth or less) go in one PutObject.
      if (!uploadId) return await this.putObject(bucket, key, Buffer.concat(pending, pendingBytes), { contentType });
      if (pendingBytes > 0) await flush();
      return await this.completeMultipartUpload(bucket, key, uploadId, parts);
    } catch (err) {
      if (uploadId) await this.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
      throw err;
    }
  }

  /** Runs one S3 call, turning the store's errors into StorageErrors where they have a code here. */
  private async send<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw mapError(err);
    }
  }
}

function storageCode(err: unknown): StorageErrorCode | undefined {
  if (!(err instanceof S3ServiceException)) return undefined;
  return ERROR_CODES[err.name] ?? (err.$metadata?.httpStatusCode === 404 && err.name === 'NotFound' ? 'NoSuchKey' : undefined);
}

function isNotImplemented(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NotImplemented' || err.$metadata?.httpStatusCode === 501);
}

function mapError(err: unknown): unknown {
  const code = storageCode(err);
  return code ? new StorageError(code, (err as Error).message) : err;
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** "bytes 0-99/1234" → 1234. */
function totalFromContentRange(header: string | undefined): number | undefined {
  const m = header ? /\/(\d+)$/.exec(header) : null;
  return m ? Number(m[1]) : undefined;
}

/** "bytes 0-99/1234" → {start 0, end 99}. */
function servedRange(header: string | undefined): ByteRange | undefined {
  const m = header ? /^bytes (\d+)-(\d+)\//.exec(header) : null;
  return m ? { start: Number(m[1]), end: Number(m[2]) } : undefined;
}
