// The object-storage boundary. Services depend on these two interfaces only:
// - ObjectStore: what the server itself does with objects (check that uploads exist, read inputs,
//   write outputs, hand out presigned download URLs).
// - CredentialIssuer: temporary credentials that let a client (aws-cli, boto3, an AWS SDK) read and
//   write under one key prefix until they expire (or only read it: `writable: false`), and
//   optionally read (never write) under others.
// The embedded implementation (local disk + an S3-compatible HTTP endpoint) lives beside this
// file; a real S3/MinIO provider (STS AssumeRole with a prefix-scoped session policy) implements
// the same interfaces.
import type { Readable } from 'node:stream';

export interface ObjectInfo {
  key: string;
  size: number;
  /** Quoted, as S3 returns it: "\"<md5 hex>\"" or "\"<hex>-<parts>\"" for multipart uploads. */
  etag: string;
  lastModified: Date;
  contentType?: string;
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

export interface ListObjectsOptions {
  prefix?: string;
  delimiter?: string;
  maxKeys?: number;
  /** Opaque token returned by a previous call. */
  continuationToken?: string;
  startAfter?: string;
}

export interface ListObjectsResult {
  objects: ObjectInfo[];
  commonPrefixes: string[];
  isTruncated: boolean;
  nextContinuationToken?: string;
}

export interface UploadedPart {
  partNumber: number;
  etag: string;
}

export interface ObjectStore {
  putObject(bucket: string, key: string, body: Readable | Buffer, options?: { contentType?: string }): Promise<ObjectInfo>;
  /** Throws StorageError('NoSuchKey') when absent; a range beyond the object throws 'InvalidRange'. */
  getObject(bucket: string, key: string, range?: ByteRange): Promise<{ info: ObjectInfo; body: Readable; range?: ByteRange }>;
  /** undefined when the object does not exist. */
  headObject(bucket: string, key: string): Promise<ObjectInfo | undefined>;
  /** Deleting a missing key succeeds, as in S3. */
  deleteObject(bucket: string, key: string): Promise<void>;
  /** Deletes every object under the prefix (and multipart uploads in progress there); returns how many objects. */
  deletePrefix(bucket: string, prefix: string): Promise<number>;
  listObjects(bucket: string, options?: ListObjectsOptions): Promise<ListObjectsResult>;
  createMultipartUpload(bucket: string, key: string, options?: { contentType?: string }): Promise<{ uploadId: string }>;
  uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: Readable | Buffer): Promise<UploadedPart>;
  completeMultipartUpload(bucket: string, key: string, uploadId: string, parts: UploadedPart[]): Promise<ObjectInfo>;
  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void>;
  /** A presigned GET URL that a plain HTTP client can download from until it expires. */
  presignGetUrl(bucket: string, key: string, expiresInSeconds: number): Promise<string>;
}

export interface TemporaryCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
  bucket: string;
  /** The only prefix these credentials may write under (and read), unless `writable` is false. */
  prefix: string;
  /** False: `prefix` is read and listed only, like the read-only prefixes. */
  writable: boolean;
  /** Prefixes these credentials may also read and list under, never write. */
  readOnlyPrefixes: string[];
  region: string;
  /** Endpoint URL for stock S3 clients; undefined when the store is AWS S3 itself. */
  endpoint: string | undefined;
}

export interface IssueOptions {
  /** Prefixes of the same bucket the credentials may read and list under, never write. */
  readOnlyPrefixes?: string[];
  /**
   * False: the main prefix is read-only too (GetObject, HeadObject, listing; every write is
   * AccessDenied), for a caller that may only read (a cloud token with the read:cloud scope only).
   * Default true.
   */
  writable?: boolean;
}

export interface CredentialIssuer {
  issue(bucket: string, prefix: string, ttlSeconds: number, options?: IssueOptions): Promise<TemporaryCredentials>;
  /**
   * Where the store can (per-prefix roles): refuses every credential of `prefix` issued before
   * `before` (a removed member's). The embedded store revokes single credentials instead
   * (revoked-credentials.ts).
   */
  revokeIssuedBefore?(bucket: string, prefix: string, before: Date): Promise<void>;
}

export type StorageErrorCode =
  | 'NoSuchKey'
  | 'NoSuchBucket'
  | 'NoSuchUpload'
  | 'InvalidPart'
  | 'InvalidPartOrder'
  | 'InvalidRange'
  | 'EntityTooSmall'
  | 'InvalidArgument';

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}
