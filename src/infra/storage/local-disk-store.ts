// ObjectStore on the local disk: <rootDir>/<bucket>/<escaped key path> (see key-layout.ts).
//
// Atomicity: bodies stream into <rootDir>/.tmp (same filesystem), then one rename() makes the
// object appear whole; a reader never sees a half-written file. Each object has a JSON sidecar
// (etag, size, content type, CRC32, user metadata) written after the data rename. The sidecar
// records the data file's inode, so a reader that catches the two renames in between (or a
// crash between them) notices the mismatch, waits briefly and, failing that, rebuilds the
// sidecar from the data.
//
// Multipart uploads live in <rootDir>/.uploads/<uploadId>/; completing one streams the parts
// into a temp file (never the whole object in memory) and commits it like any other object.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, rm, rmdir, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Crc32 } from './checksums.ts';
import { listBucketKeys } from './disk-listing.ts';
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

/** Standard HTTP headers S3 stores with an object and returns on GET/HEAD. */
export interface StoredHttpHeaders {
  cacheControl?: string;
  contentDisposition?: string;
  contentEncoding?: string;
  contentLanguage?: string;
  expires?: string;
}

export interface PutObjectOptions {
  contentType?: string;
  /** User metadata (the x-amz-meta-* headers without their prefix). */
  metadata?: Record<string, string>;
  httpHeaders?: StoredHttpHeaders;
}

export interface StoredObjectInfo extends ObjectInfo {
  /** Base64 CRC-32 of the whole object, as in x-amz-checksum-crc32. */
  checksumCrc32?: string;
  metadata: Record<string, string>;
  httpHeaders: StoredHttpHeaders;
  /** Number of parts for an object made by a multipart upload. */
  partsCount?: number;
}

export interface PartInfo {
  partNumber: number;
  etag: string;
  size: number;
  lastModified: Date;
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
}

interface Sidecar {
  v: 1;
  size: number;
  etag: string;
  /** Inode of the data file this sidecar describes (string: inodes can exceed 2^53). */
  ino: string;
  lastModified: number;
  contentType?: string;
  crc32?: string;
  parts?: number;
  metadata?: Record<string, string>;
  headers?: StoredHttpHeaders;
}

interface UploadRecord {
  bucket: string;
  key: string;
  initiated: number;
  options: PutObjectOptions;
}

interface PartRecord {
  file: string;
  etag: string;
  size: number;
  lastModified: number;
}

interface TempFile {
  path: string;
  size: number;
  md5: Buffer;
  crc32: string;
  ino: string;
}

const UPLOAD_ID = /^[A-Za-z0-9_-]{16,64}$/;
const MAX_PART_NUMBER = 10_000;
const DEFAULT_MIN_PART_SIZE = 5 * 1024 * 1024;

function isErrno(err: unknown, ...codes: string[]): boolean {
  return codes.includes((err as NodeJS.ErrnoException)?.code ?? '');
}

function unquoteEtag(etag: string): string {
  return etag.trim().replace(/^W\//, '').replace(/^"|"$/g, '');
}

function toSource(body: Readable | Buffer): Readable {
  return Buffer.isBuffer(body) ? Readable.from([body]) : body;
}

export class LocalDiskObjectStore implements ObjectStore {
  readonly rootDir: string;
  private readonly buckets: Set<string>;
  private readonly tmpDir: string;
  private readonly uploadsDir: string;
  private readonly minPartSize: number;
  private readonly fsync: boolean;
  private readonly presigner?: GetUrlPresigner;
  /** Per-path promise chains: serialise commits and deletes of one key within this process. */
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(options: LocalDiskObjectStoreOptions) {
    this.rootDir = path.resolve(options.rootDir);
    for (const bucket of options.buckets) assertValidBucketName(bucket);
    this.buckets = new Set(options.buckets);
    this.tmpDir = path.join(this.rootDir, '.tmp');
    this.uploadsDir = path.join(this.rootDir, '.uploads');
    this.minPartSize = options.minPartSize ?? DEFAULT_MIN_PART_SIZE;
    this.fsync = options.fsync ?? false;
    this.presigner = options.presigner;
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
    const tmp = await this.writeTemp(toSource(body));
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
    await this.commit(paths, tmp.path, sidecar);
    return this.toInfo(key, sidecar);
  }

  async headObject(bucket: string, key: string): Promise<StoredObjectInfo | undefined> {
    const paths = objectPaths(this.bucketDir(bucket), key);
    const opened = await this.openConsistent(paths);
    if (!opened) return undefined;
    await opened.handle.close();
    return this.toInfo(key, opened.sidecar);
  }

  async getObject(bucket: string, key: string, range?: ByteRange): Promise<{ info: StoredObjectInfo; body: Readable; range?: ByteRange }> {
    return this.getObjectWith(bucket, key, () => range);
  }

  /**
   * Like getObject, but the range is chosen once the size is known (for "bytes=-500" and for
   * clamping "bytes=0-" style ranges) without a second lookup that could race an overwrite.
   * The caller must consume or destroy `body`, which holds the file open.
   */
  async getObjectWith(
    bucket: string,
    key: string,
    chooseRange: (info: StoredObjectInfo) => ByteRange | undefined,
  ): Promise<{ info: StoredObjectInfo; body: Readable; range?: ByteRange }> {
    const paths = objectPaths(this.bucketDir(bucket), key);
    const opened = await this.openConsistent(paths);
    if (!opened) throw new StorageError('NoSuchKey', 'The specified key does not exist.');
    const info = this.toInfo(key, opened.sidecar);
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
    const paths = objectPaths(bucketDir, key);
    await this.withLock(paths.data, async () => {
      await unlink(paths.data).catch((err) => {
        if (!isErrno(err, 'ENOENT')) throw err;
      });
      await unlink(paths.meta).catch((err) => {
        if (!isErrno(err, 'ENOENT')) throw err;
      });
    });
    await this.pruneEmptyDirs(paths.dir, bucketDir);
  }

  async deletePrefix(bucket: string, prefix: string): Promise<number> {
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
      const sidecar = await this.readSidecar(item.dataPath.slice(0, -DATA_SUFFIX.length) + META_SUFFIX);
      const info = sidecar ? this.toInfo(item.key, sidecar) : await this.headObject(bucket, item.key);
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
    const uploadId = randomBytes(24).toString('base64url');
    const dir = path.join(this.uploadsDir, uploadId);
    await mkdir(dir, { recursive: true });
    const record: UploadRecord = { bucket, key, initiated: Date.now(), options };
    await writeFile(path.join(dir, 'upload.json'), JSON.stringify(record), { flag: 'wx' });
    return { uploadId };
  }

  async uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: Readable | Buffer): Promise<UploadedPart & { size: number; checksumCrc32: string }> {
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
      throw new StorageError('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
    }
    const dir = await this.uploadDir(bucket, key, uploadId);
    const tmp = await this.writeTemp(toSource(body));
    const file = `part-${partNumber}-${randomUUID()}`;
    const record: PartRecord = { file, etag: tmp.md5.toString('hex'), size: tmp.size, lastModified: Date.now() };
    try {
      await rename(tmp.path, path.join(dir, file));
    } catch (err) {
      await unlink(tmp.path).catch(() => {});
      // The upload was completed or aborted while this part streamed in.
      if (isErrno(err, 'ENOENT')) throw new StorageError('NoSuchUpload', 'The specified upload does not exist.');
      throw err;
    }
    // The part's JSON record is the commit point: a re-uploaded part number replaces it
    // atomically; the superseded data file is removed with the upload folder.
    await this.writeJsonAtomic(path.join(dir, `part-${partNumber}.json`), record);
    return { partNumber, etag: `"${record.etag}"`, size: record.size, checksumCrc32: tmp.crc32 };
  }

  async listParts(bucket: string, key: string, uploadId: string): Promise<PartInfo[]> {
    const dir = await this.uploadDir(bucket, key, uploadId);
    const parts: PartInfo[] = [];
    for (const name of await readdir(dir)) {
      const match = /^part-(\d+)\.json$/.exec(name);
      if (!match) continue;
      const record = await this.readPartRecord(dir, Number(match[1]));
      if (record) parts.push({ partNumber: Number(match[1]), etag: `"${record.etag}"`, size: record.size, lastModified: new Date(record.lastModified) });
    }
    return parts.sort((a, b) => a.partNumber - b.partNumber);
  }

  async completeMultipartUpload(bucket: string, key: string, uploadId: string, parts: UploadedPart[]): Promise<StoredObjectInfo> {
    const paths = objectPaths(this.bucketDir(bucket), key);
    const dir = await this.uploadDir(bucket, key, uploadId);
    const record = (await this.readUploadRecord(uploadId)) as UploadRecord;
    if (parts.length === 0) throw new StorageError('InvalidArgument', 'You must specify at least one part');
    const records: PartRecord[] = [];
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (i > 0 && part.partNumber <= parts[i - 1].partNumber) {
        throw new StorageError('InvalidPartOrder', 'The list of parts was not in ascending order. Parts must be ordered by part number.');
      }
      const stored = await this.readPartRecord(dir, part.partNumber);
      if (!stored || stored.etag !== unquoteEtag(part.etag)) {
        throw new StorageError('InvalidPart', `Part ${part.partNumber} could not be found or its ETag does not match.`);
      }
      records.push(stored);
    }
    for (let i = 0; i < records.length - 1; i++) {
      if (records[i].size < this.minPartSize) {
        throw new StorageError('EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.');
      }
    }
    const files = records.map((r) => path.join(dir, r.file));
    // Concatenate by streaming one part after the other: memory stays at a few buffers.
    const tmp = await this.writeTemp(async function* () {
      for (const file of files) yield* createReadStream(file);
    });
    const etagHash = createHash('md5');
    for (const r of records) etagHash.update(Buffer.from(r.etag, 'hex'));
    const sidecar: Sidecar = {
      v: 1,
      size: tmp.size,
      etag: `"${etagHash.digest('hex')}-${records.length}"`,
      ino: tmp.ino,
      lastModified: Date.now(),
      contentType: record.options.contentType,
      crc32: tmp.crc32,
      parts: records.length,
      metadata: record.options.metadata,
      headers: record.options.httpHeaders,
    };
    await this.commit(paths, tmp.path, sidecar);
    await rm(dir, { recursive: true, force: true });
    return this.toInfo(key, sidecar);
  }

  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    const dir = await this.uploadDir(bucket, key, uploadId);
    await rm(dir, { recursive: true, force: true });
  }

  /** Removes temp files and multipart uploads abandoned by crashed or vanished clients. */
  async removeStale(options: { tmpOlderThanMs?: number; uploadsOlderThanMs?: number } = {}): Promise<{ tmpFiles: number; uploads: number }> {
    const now = Date.now();
    const tmpAge = options.tmpOlderThanMs ?? 24 * 3600_000;
    const uploadAge = options.uploadsOlderThanMs ?? 7 * 24 * 3600_000;
    let tmpFiles = 0;
    let uploads = 0;
    for (const name of await readdir(this.tmpDir).catch(() => [] as string[])) {
      const file = path.join(this.tmpDir, name);
      const st = await stat(file).catch(() => undefined);
      if (st && now - st.mtimeMs > tmpAge) {
        await rm(file, { force: true });
        tmpFiles++;
      }
    }
    for (const id of await readdir(this.uploadsDir).catch(() => [] as string[])) {
      const record = await this.readUploadRecord(id);
      const dir = path.join(this.uploadsDir, id);
      const started = record?.initiated ?? (await stat(dir).catch(() => undefined))?.mtimeMs ?? now;
      if (now - started > uploadAge) {
        await rm(dir, { recursive: true, force: true });
        uploads++;
      }
    }
    return { tmpFiles, uploads };
  }

  // ---- internals --------------------------------------------------------------------------

  private bucketDir(bucket: string): string {
    if (!this.buckets.has(bucket)) throw new StorageError('NoSuchBucket', 'The specified bucket does not exist');
    return path.join(this.rootDir, bucket);
  }

  private toInfo(key: string, sidecar: Sidecar): StoredObjectInfo {
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

  /** Streams a body into a fresh temp file, hashing it on the way; removes the file on error. */
  private async writeTemp(source: Readable | (() => AsyncGenerator<Buffer>)): Promise<TempFile> {
    await mkdir(this.tmpDir, { recursive: true });
    const tmpPath = path.join(this.tmpDir, randomUUID());
    const md5 = createHash('md5');
    const crc = new Crc32();
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        md5.update(chunk);
        crc.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    try {
      // "flush" fsyncs before close when durability across power loss is asked for.
      await pipeline(source, tap, createWriteStream(tmpPath, { flags: 'wx', flush: this.fsync }));
      const st = await stat(tmpPath, { bigint: true });
      return { path: tmpPath, size, md5: md5.digest(), crc32: crc.digestBase64(), ino: st.ino.toString() };
    } catch (err) {
      await unlink(tmpPath).catch(() => {});
      throw err;
    }
  }

  /** Moves a finished temp file into place, then its sidecar. */
  private async commit(paths: { dir: string; data: string; meta: string }, tmpPath: string, sidecar: Sidecar): Promise<void> {
    try {
      await this.withLock(paths.data, async () => {
        for (let attempt = 0; ; attempt++) {
          try {
            await mkdir(paths.dir, { recursive: true });
            await rename(tmpPath, paths.data);
            break;
          } catch (err) {
            // A concurrent delete may prune the freshly made folder; make it again.
            if (!isErrno(err, 'ENOENT') || attempt >= 5) throw err;
          }
        }
        await this.writeJsonAtomic(paths.meta, sidecar);
      });
    } catch (err) {
      await unlink(tmpPath).catch(() => {});
      throw err;
    }
  }

  private async writeJsonAtomic(target: string, value: unknown): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true });
    const tmp = path.join(this.tmpDir, randomUUID());
    try {
      await writeFile(tmp, JSON.stringify(value), { flag: 'wx', flush: this.fsync });
      await rename(tmp, target);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
  }

  private async readSidecar(metaPath: string): Promise<Sidecar | undefined> {
    try {
      const parsed = JSON.parse(await readFile(metaPath, 'utf8')) as Sidecar;
      return parsed?.v === 1 ? parsed : undefined;
    } catch {
      return undefined; // missing or torn: the caller rebuilds it
    }
  }

  /** Opens the data file and a sidecar that really describes it (same inode and size). */
  private async openConsistent(paths: { data: string; meta: string }): Promise<{ handle: FileHandle; sidecar: Sidecar } | undefined> {
    for (let attempt = 0; ; attempt++) {
      let handle: FileHandle;
      try {
        handle = await open(paths.data, 'r');
      } catch (err) {
        if (isErrno(err, 'ENOENT', 'ENOTDIR')) return undefined;
        throw err;
      }
      try {
        const st = await handle.stat({ bigint: true });
        const sidecar = await this.readSidecar(paths.meta);
        if (sidecar && sidecar.ino === st.ino.toString() && sidecar.size === Number(st.size)) return { handle, sidecar };
        if (attempt >= 3) {
          // Not a passing race: a crash between the two renames, or a file put there by hand.
          return { handle, sidecar: await this.rebuildSidecar(paths, handle, sidecar) };
        }
      } catch (err) {
        await handle.close();
        throw err;
      }
      await handle.close();
      await sleep(5 * (attempt + 1));
    }
  }

  private async rebuildSidecar(paths: { data: string; meta: string }, handle: FileHandle, stale: Sidecar | undefined): Promise<Sidecar> {
    const st = await handle.stat({ bigint: true });
    const md5 = createHash('md5');
    const crc = new Crc32();
    for await (const chunk of createReadStream(paths.data)) {
      md5.update(chunk as Buffer);
      crc.update(chunk as Buffer);
    }
    const sidecar: Sidecar = {
      v: 1,
      size: Number(st.size),
      etag: `"${md5.digest('hex')}"`,
      ino: st.ino.toString(),
      lastModified: Number(st.mtimeMs),
      contentType: stale?.contentType,
      crc32: crc.digestBase64(),
      metadata: stale?.metadata,
      headers: stale?.headers,
    };
    await this.withLock(paths.data, () => this.writeJsonAtomic(paths.meta, sidecar));
    return sidecar;
  }

  /** Removes folders left empty by a delete, up to (not including) the bucket folder. */
  private async pruneEmptyDirs(dir: string, bucketDir: string): Promise<void> {
    let current = dir;
    while (current.startsWith(bucketDir + path.sep)) {
      try {
        await rmdir(current);
      } catch {
        return; // not empty (or already gone): stop here
      }
      current = path.dirname(current);
    }
  }

  private async uploadDir(bucket: string, key: string, uploadId: string): Promise<string> {
    this.bucketDir(bucket);
    const record = await this.readUploadRecord(uploadId);
    if (!record || record.bucket !== bucket || record.key !== key) {
      throw new StorageError('NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.');
    }
    return path.join(this.uploadsDir, uploadId);
  }

  private async readUploadRecord(uploadId: string): Promise<UploadRecord | undefined> {
    if (!UPLOAD_ID.test(uploadId)) return undefined;
    try {
      return JSON.parse(await readFile(path.join(this.uploadsDir, uploadId, 'upload.json'), 'utf8')) as UploadRecord;
    } catch {
      return undefined;
    }
  }

  private async readPartRecord(dir: string, partNumber: number): Promise<PartRecord | undefined> {
    try {
      return JSON.parse(await readFile(path.join(dir, `part-${partNumber}.json`), 'utf8')) as PartRecord;
    } catch {
      return undefined;
    }
  }

  private async withLock<T>(lockKey: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(lockKey) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const settled = run.catch(() => {});
    this.locks.set(lockKey, settled);
    try {
      return await run;
    } finally {
      if (this.locks.get(lockKey) === settled) this.locks.delete(lockKey);
    }
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
