// ObjectStore on the local disk: <rootDir>/<bucket>/<escaped key path> (see key-layout.ts for
// the key → path mapping, disk-object-files.ts for atomic writes and sidecars, disk-listing.ts
// for S3-ordered listing, disk-multipart.ts for multipart uploads). This class validates the
// bucket and key, then ties those pieces together behind the ObjectStore interface, and sweeps
// what crashed writers and vanished clients leave. (Past 350 lines because it is the one facade
// over those pieces; each method is a few lines of glue.)
import path from 'node:path';
import { readdir, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { listBucketKeys } from './disk-listing.ts';
import { DiskMultipartUploads, type PartInfo, type UploadOptions } from './disk-multipart.ts';
import { DiskObjectFiles, type Sidecar, type StoredHttpHeaders } from './disk-object-files.ts';
import { DATA_SUFFIX, META_SUFFIX, assertValidBucketName, assertValidKey, objectPaths } from './key-layout.ts';
import {
  StorageError,
  type ByteRange,
  type ListObjectsOptions,
  type ListObjectsResult,
  type ObjectInfo,
  type ObjectStore,
  type UploadedPart,
} from './object-store.ts';

export type { PartInfo, StoredHttpHeaders };

/** Options of putObject and createMultipartUpload (a superset of ObjectStore's). */
export interface PutObjectOptions extends UploadOptions {
  /**
   * putObject only: the body's CRC32 (base64), known once the body has ended, when a stage
   * upstream already computed and verified it (the S3 endpoint's BodyVerifier); saves a pass.
   */
  verifiedCrc32?: () => string | undefined;
}

export interface StoredObjectInfo extends ObjectInfo {
  /** Base64 CRC-32 of the whole object, as in x-amz-checksum-crc32. */
  checksumCrc32?: string;
  /** User metadata (the x-amz-meta-* headers without their prefix). */
  metadata: Record<string, string>;
  httpHeaders: StoredHttpHeaders;
  /** Number of parts for an object made by a multipart upload. */
  partsCount?: number;
}

/** Makes presigned GET URLs; see s3-presigner.ts. */
export interface GetUrlPresigner {
  presignGet(bucket: string, key: string, expiresInSeconds: number, query?: Record<string, string>): Promise<string>;
}

export interface LocalDiskObjectStoreOptions {
  /** Folder holding one sub-folder per bucket plus the hidden .tmp and .uploads folders. */
  rootDir: string;
  /** The buckets this store serves; anything else is NoSuchBucket. */
  buckets: string[];
  /** Needed by presignGetUrl only. */
  presigner?: GetUrlPresigner;
  /** Smallest allowed size of every part but the last (S3: 5 MiB). */
  minPartSize?: number;
  /** fsync files before renaming them into place (slower, survives power loss). */
  fsync?: boolean;
  /** Temp files untouched for longer are leftovers of interrupted writes (default 1 hour). */
  tmpExpiryMs?: number;
  /** Multipart uploads started longer ago are abandoned (default 7 days, a common S3 lifecycle rule). */
  multipartExpiryMs?: number;
}

const DEFAULT_MIN_PART_SIZE = 5 * 1024 * 1024;
const DEFAULT_TMP_EXPIRY_MS = 3600_000;
const DEFAULT_MULTIPART_EXPIRY_MS = 7 * 24 * 3600_000;

function toSource(body: Readable | Buffer): Readable {
  return Buffer.isBuffer(body) ? Readable.from([body]) : body;
}

function toInfo(key: string, sidecar: Sidecar): StoredObjectInfo {
  return {
    key,
    size: sidecar.size,
    etag: sidecar.etag,
    lastModified: new Date(sidecar.lastModified),
    contentType: sidecar.contentType,
    checksumCrc32: sidecar.crc32,
    metadata: sidecar.metadata ?? {},
    httpHeaders: sidecar.headers ?? {},
    partsCount: sidecar.parts,
  };
}

export class LocalDiskObjectStore implements ObjectStore {
  readonly rootDir: string;
  private readonly buckets: Set<string>;
  private readonly files: DiskObjectFiles;
  private readonly uploads: DiskMultipartUploads;
  private readonly presigner?: GetUrlPresigner;
  private readonly tmpExpiryMs: number;
  private readonly multipartExpiryMs: number;
  private readonly prefixDeletedListeners: ((bucket: string, prefix: string) => void)[] = [];
  private sweepTimer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;

  constructor(options: LocalDiskObjectStoreOptions) {
    this.rootDir = path.resolve(options.rootDir);
    for (const bucket of options.buckets) assertValidBucketName(bucket);
    this.buckets = new Set(options.buckets);
    this.files = new DiskObjectFiles(this.rootDir, options.fsync ?? false);
    this.uploads = new DiskMultipartUploads(this.files, path.join(this.rootDir, '.uploads'), options.minPartSize ?? DEFAULT_MIN_PART_SIZE);
    this.presigner = options.presigner;
    this.tmpExpiryMs = options.tmpExpiryMs ?? DEFAULT_TMP_EXPIRY_MS;
    this.multipartExpiryMs = options.multipartExpiryMs ?? DEFAULT_MULTIPART_EXPIRY_MS;
  }

  /** Called at the start of every deletePrefix (the S3 endpoint drops what it cached about it). */
  onPrefixDeleted(listener: (bucket: string, prefix: string) => void): void {
    this.prefixDeletedListeners.push(listener);
  }

  bucketNames(): string[] {
    return [...this.buckets];
  }

  hasBucket(bucket: string): boolean {
    return this.buckets.has(bucket);
  }

  // ---- single objects -------------------------------------------------------------------

  async putObject(bucket: string, key: string, body: Readable | Buffer, options: PutObjectOptions = {}): Promise<StoredObjectInfo> {
    const paths = objectPaths(this.bucketDir(bucket), key);
    const tmp = await this.files.writeTemp(toSource(body), options.verifiedCrc32);
    const sidecar: Sidecar = {
      v: 1,
      size: tmp.size,
      etag: `"${tmp.md5.toString('hex')}"`,
      ino: tmp.ino,
      lastModified: Date.now(),
      contentType: options.contentType,
      crc32: tmp.crc32,
      metadata: options.metadata,
      headers: options.httpHeaders,
    };
    await this.files.commit(paths, tmp.path, sidecar);
    return toInfo(key, sidecar);
  }

  async headObject(bucket: string, key: string): Promise<StoredObjectInfo | undefined> {
    const paths = objectPaths(this.bucketDir(bucket), key);
    // Performance (bench/README.md, "Scale"): registration HEADs every key it is given; a stat
    // of the data file and a read of its sidecar answer without opening the data file (5 system
    // calls instead of 7). Anything unusual takes the careful path below.
    const quick = await this.files.statConsistent(paths);
    if (quick === 'missing') return undefined;
    if (quick) return toInfo(key, quick);
    const opened = await this.files.openConsistent(paths);
    if (!opened) return undefined;
    await opened.handle.close();
    return toInfo(key, opened.sidecar);
  }

  async getObject(bucket: string, key: string, range?: ByteRange): Promise<{ info: StoredObjectInfo; body: Readable; range?: ByteRange }> {
    return this.getObjectWith(bucket, key, () => range);
  }

  /**
   * Like getObject, but the range is chosen once the object is known (for "bytes=-500", and
   * for conditional requests) without a second lookup that could race an overwrite. The
   * caller must consume or destroy `body`, which holds the file open.
   */
  async getObjectWith(
    bucket: string,
    key: string,
    chooseRange: (info: StoredObjectInfo) => ByteRange | undefined,
  ): Promise<{ info: StoredObjectInfo; body: Readable; range?: ByteRange }> {
    const opened = await this.files.openConsistent(objectPaths(this.bucketDir(bucket), key));
    if (!opened) throw new StorageError('NoSuchKey', 'The specified key does not exist.');
    const info = toInfo(key, opened.sidecar);
    let range: ByteRange | undefined;
    try {
      range = chooseRange(info);
      if (range) {
        if (range.start < 0 || range.start >= info.size || range.end < range.start) {
          throw new StorageError('InvalidRange', 'The requested range is not satisfiable');
        }
        range = { start: range.start, end: Math.min(range.end, info.size - 1) };
      }
    } catch (err) {
      await opened.handle.close();
      throw err;
    }
    const body = opened.handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    return { info, body, range };
  }

  async deleteObject(bucket: string, key: string): Promise<void> {
    const bucketDir = this.bucketDir(bucket);
    await this.files.remove(objectPaths(bucketDir, key), bucketDir);
  }

  /** Deletes the objects under the prefix and aborts the multipart uploads in progress there. */
  async deletePrefix(bucket: string, prefix: string): Promise<number> {
    this.bucketDir(bucket);
    for (const listener of this.prefixDeletedListeners) listener(bucket, prefix);
    await this.uploads.removeUnder(bucket, prefix);
    let deleted = 0;
    let after: string | undefined;
    for (;;) {
      const page = await listBucketKeys(this.bucketDir(bucket), { prefix, maxKeys: 1000, after });
      for (const item of page.items) {
        if (item.kind !== 'key') continue;
        await this.deleteObject(bucket, item.key);
        deleted++;
        after = item.key;
      }
      if (!page.isTruncated) return deleted;
    }
  }

  /** Bytes stored under the prefix: objects plus the parts of multipart uploads in progress. */
  async usage(bucket: string, prefix: string): Promise<number> {
    let bytes = await this.uploads.bytesUnder(bucket, prefix);
    let after: string | undefined;
    for (;;) {
      const page = await listBucketKeys(this.bucketDir(bucket), { prefix, maxKeys: 1000, after });
      for (const item of page.items) {
        if (item.kind !== 'key') continue;
        bytes += (await stat(item.dataPath).catch(() => undefined))?.size ?? 0;
        after = item.key;
      }
      if (!page.isTruncated) return bytes;
    }
  }

  async listObjects(bucket: string, options: ListObjectsOptions = {}): Promise<ListObjectsResult & { objects: StoredObjectInfo[] }> {
    const bucketDir = this.bucketDir(bucket);
    const maxKeys = Math.max(0, Math.min(options.maxKeys ?? 1000, 1000));
    let after = options.startAfter || undefined;
    if (options.continuationToken) after = decodeContinuationToken(options.continuationToken);
    const page = await listBucketKeys(bucketDir, { prefix: options.prefix ?? '', delimiter: options.delimiter || undefined, maxKeys, after });
    const objects: StoredObjectInfo[] = [];
    const commonPrefixes: string[] = [];
    let last: string | undefined;
    for (const item of page.items) {
      if (item.kind === 'prefix') {
        commonPrefixes.push(item.prefix);
        last = item.prefix;
        continue;
      }
      last = item.key;
      // Listing trusts the sidecar without the inode check (a race only shows the previous
      // version's size/etag); a missing one is rebuilt by the careful path.
      const sidecar = await this.files.readSidecar(item.dataPath.slice(0, -DATA_SUFFIX.length) + META_SUFFIX);
      const info = sidecar ? toInfo(item.key, sidecar) : await this.headObject(bucket, item.key);
      if (info) objects.push(info); // else deleted meanwhile
    }
    return {
      objects,
      commonPrefixes,
      isTruncated: page.isTruncated,
      nextContinuationToken: page.isTruncated && last !== undefined ? encodeContinuationToken(last) : undefined,
    };
  }

  /**
   * `responseHeaders` are signed into the URL as S3's response-* overrides, e.g. a
   * Content-Disposition that makes browsers save the file under a given name.
   */
  async presignGetUrl(
    bucket: string,
    key: string,
    expiresInSeconds: number,
    responseHeaders: { contentDisposition?: string; contentType?: string } = {},
  ): Promise<string> {
    this.bucketDir(bucket);
    assertValidKey(key);
    if (!this.presigner) throw new Error('LocalDiskObjectStore: no presigner configured');
    const query: Record<string, string> = {};
    if (responseHeaders.contentDisposition) query['response-content-disposition'] = responseHeaders.contentDisposition;
    if (responseHeaders.contentType) query['response-content-type'] = responseHeaders.contentType;
    return this.presigner.presignGet(bucket, key, expiresInSeconds, query);
  }

  // ---- multipart uploads ------------------------------------------------------------------

  async createMultipartUpload(bucket: string, key: string, options: PutObjectOptions = {}): Promise<{ uploadId: string }> {
    this.bucketDir(bucket);
    assertValidKey(key);
    const { contentType, metadata, httpHeaders } = options;
    return { uploadId: await this.uploads.create(bucket, key, { contentType, metadata, httpHeaders }) };
  }

  /** `options.verifiedCrc32`: as putObject's. */
  async uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: Readable | Buffer, options: Pick<PutObjectOptions, 'verifiedCrc32'> = {}): Promise<UploadedPart & { size: number; checksumCrc32: string }> {
    this.bucketDir(bucket);
    return this.uploads.uploadPart(bucket, key, uploadId, partNumber, toSource(body), options.verifiedCrc32);
  }

  async listParts(bucket: string, key: string, uploadId: string): Promise<PartInfo[]> {
    this.bucketDir(bucket);
    return this.uploads.listParts(bucket, key, uploadId);
  }

  async completeMultipartUpload(bucket: string, key: string, uploadId: string, parts: UploadedPart[]): Promise<StoredObjectInfo> {
    const paths = objectPaths(this.bucketDir(bucket), key);
    return toInfo(key, await this.uploads.complete(bucket, key, uploadId, parts, paths));
  }

  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    this.bucketDir(bucket);
    await this.uploads.abort(bucket, key, uploadId);
  }

  /** The ids of the multipart uploads in progress under the prefix (open-uploads-cap.ts). */
  async multipartUploadIdsUnder(bucket: string, prefix: string): Promise<string[]> {
    this.bucketDir(bucket);
    return this.uploads.idsUnder(bucket, prefix);
  }

  /**
   * Removes temp files (by last write) and multipart uploads (by start) abandoned by crashed
   * processes or vanished clients; the ages default to the store's expiry options.
   */
  async removeStale(options: { tmpOlderThanMs?: number; uploadsOlderThanMs?: number } = {}): Promise<{ tmpFiles: number; uploads: number }> {
    const now = Date.now();
    const tmpAge = options.tmpOlderThanMs ?? this.tmpExpiryMs;
    let tmpFiles = 0;
    for (const name of await readdir(this.files.tmpDir).catch(() => [] as string[])) {
      const file = path.join(this.files.tmpDir, name);
      const st = await stat(file).catch(() => undefined);
      if (st && now - st.mtimeMs > tmpAge) {
        await rm(file, { force: true });
        tmpFiles++;
      }
    }
    const uploads = await this.uploads.removeStale(options.uploadsOlderThanMs ?? this.multipartExpiryMs);
    return { tmpFiles, uploads };
  }

  /**
   * Runs removeStale now, then every `intervalMs` until stopSweeping(). Only one process per
   * data folder needs to (the one serving the S3 endpoint); the timer does not keep node alive.
   */
  async startSweeping(intervalMs: number, onError: (err: unknown) => void): Promise<{ tmpFiles: number; uploads: number }> {
    clearInterval(this.sweepTimer);
    const sweep = () => {
      if (this.sweeping) return;
      this.sweeping = this.removeStale()
        .catch(onError)
        .finally(() => (this.sweeping = undefined));
    };
    const first = await this.removeStale();
    this.sweepTimer = setInterval(sweep, intervalMs);
    this.sweepTimer.unref();
    return first;
  }

  /** Stops the periodic sweep; waits for one under way. */
  async stopSweeping(): Promise<void> {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    await this.sweeping;
  }

  private bucketDir(bucket: string): string {
    if (!this.buckets.has(bucket)) throw new StorageError('NoSuchBucket', 'The specified bucket does not exist');
    return path.join(this.rootDir, bucket);
  }
}

// Continuation tokens are opaque to clients; ours carry the last key or common prefix returned.
export function encodeContinuationToken(lastItem: string): string {
  return Buffer.from(lastItem, 'utf8').toString('base64url');
}

export function decodeContinuationToken(token: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(token)) throw new StorageError('InvalidArgument', 'The continuation token provided is incorrect');
  return Buffer.from(token, 'base64url').toString('utf8');
}
