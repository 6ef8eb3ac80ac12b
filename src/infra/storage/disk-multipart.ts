// Multipart uploads of the disk store. Each upload is a folder <rootDir>/.uploads/<uploadId>/
// holding upload.json (bucket, key, options), the part data files and one JSON record per part
// number. Completing streams the parts one after the other into a temp file (memory stays at a
// few buffers whatever the size) and commits it like any other object.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { isErrno, type DiskObjectFiles, type ObjectFilePaths, type Sidecar, type StoredHttpHeaders } from './disk-object-files.ts';
import { StorageError, type UploadedPart } from './object-store.ts';

export interface UploadOptions {
  contentType?: string;
  metadata?: Record<string, string>;
  httpHeaders?: StoredHttpHeaders;
}

export interface PartInfo {
  partNumber: number;
  etag: string;
  size: number;
  lastModified: Date;
}

interface UploadRecord {
  bucket: string;
  key: string;
  initiated: number;
  options: UploadOptions;
}

interface PartRecord {
  file: string;
  /** MD5 hex, unquoted. */
  etag: string;
  size: number;
  lastModified: number;
}

const UPLOAD_ID = /^[A-Za-z0-9_-]{16,64}$/;
const MAX_PART_NUMBER = 10_000;

function unquoteEtag(etag: string): string {
  return etag.trim().replace(/^W\//, '').replace(/^"|"$/g, '');
}

function noSuchUpload(): StorageError {
  return new StorageError('NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.');
}

export class DiskMultipartUploads {
  constructor(
    private readonly files: DiskObjectFiles,
    private readonly uploadsDir: string,
    private readonly minPartSize: number,
  ) {}

  async create(bucket: string, key: string, options: UploadOptions): Promise<string> {
    const uploadId = randomBytes(24).toString('base64url');
    const dir = path.join(this.uploadsDir, uploadId);
    await mkdir(dir, { recursive: true });
    const record: UploadRecord = { bucket, key, initiated: Date.now(), options };
    await writeFile(path.join(dir, 'upload.json'), JSON.stringify(record), { flag: 'wx' });
    return uploadId;
  }

  async uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: Readable, verifiedCrc32?: () => string | undefined): Promise<UploadedPart & { size: number; checksumCrc32: string }> {
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
      throw new StorageError('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
    }
    const { dir } = await this.open(bucket, key, uploadId);
    const tmp = await this.files.writeTemp(body, verifiedCrc32);
    const file = `part-${partNumber}-${randomUUID()}`;
    const record: PartRecord = { file, etag: tmp.md5.toString('hex'), size: tmp.size, lastModified: Date.now() };
    try {
      await rename(tmp.path, path.join(dir, file));
    } catch (err) {
      await unlink(tmp.path).catch(() => {});
      // The upload was completed or aborted while this part streamed in.
      if (isErrno(err, 'ENOENT')) throw noSuchUpload();
      throw err;
    }
    // The part's JSON record is the commit point: a re-uploaded part number replaces it
    // atomically; the superseded data file goes away with the upload folder.
    await this.files.writeJsonAtomic(path.join(dir, `part-${partNumber}.json`), record);
    return { partNumber, etag: `"${record.etag}"`, size: record.size, checksumCrc32: tmp.crc32 };
  }

  async listParts(bucket: string, key: string, uploadId: string): Promise<PartInfo[]> {
    const { dir } = await this.open(bucket, key, uploadId);
    const parts: PartInfo[] = [];
    for (const name of await readdir(dir)) {
      const match = /^part-(\d+)\.json$/.exec(name);
      if (!match) continue;
      const record = await this.readPart(dir, Number(match[1]));
      if (record) parts.push({ partNumber: Number(match[1]), etag: `"${record.etag}"`, size: record.size, lastModified: new Date(record.lastModified) });
    }
    return parts.sort((a, b) => a.partNumber - b.partNumber);
  }

  /** Validates the part list like S3, concatenates the parts into the object, drops the upload. */
  async complete(bucket: string, key: string, uploadId: string, parts: UploadedPart[], target: ObjectFilePaths): Promise<Sidecar> {
    const { dir, record } = await this.open(bucket, key, uploadId);
    if (parts.length === 0) throw new StorageError('InvalidArgument', 'You must specify at least one part');
    const records: PartRecord[] = [];
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (i > 0 && part.partNumber <= parts[i - 1].partNumber) {
        throw new StorageError('InvalidPartOrder', 'The list of parts was not in ascending order. Parts must be ordered by part number.');
      }
      const stored = await this.readPart(dir, part.partNumber);
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
    const partFiles = records.map((r) => path.join(dir, r.file));
    const tmp = await this.files.writeTemp(async function* () {
      for (const file of partFiles) yield* createReadStream(file);
    });
    // S3's multipart ETag: MD5 of the concatenated binary part MD5s, then "-<part count>".
    const etag = createHash('md5');
    for (const r of records) etag.update(Buffer.from(r.etag, 'hex'));
    const sidecar: Sidecar = {
      v: 1,
      size: tmp.size,
      etag: `"${etag.digest('hex')}-${records.length}"`,
      ino: tmp.ino,
      lastModified: Date.now(),
      contentType: record.options.contentType,
      crc32: tmp.crc32,
      parts: records.length,
      metadata: record.options.metadata,
      headers: record.options.httpHeaders,
    };
    await this.files.commit(target, tmp.path, sidecar);
    await rm(dir, { recursive: true, force: true });
    return sidecar;
  }

  async abort(bucket: string, key: string, uploadId: string): Promise<void> {
    const { dir } = await this.open(bucket, key, uploadId);
    await rm(dir, { recursive: true, force: true });
  }

  /** Removes uploads started longer ago than `olderThanMs`; returns how many. */
  async removeStale(olderThanMs: number): Promise<number> {
    const now = Date.now();
    let removed = 0;
    for (const id of await readdir(this.uploadsDir).catch(() => [] as string[])) {
      const dir = path.join(this.uploadsDir, id);
      const started = (await this.readRecord(id))?.initiated ?? (await stat(dir).catch(() => undefined))?.mtimeMs ?? now;
      if (now - started > olderThanMs) {
        await rm(dir, { recursive: true, force: true });
        removed++;
      }
    }
    return removed;
  }

  /** Bytes held by the uploads in progress of keys under `prefix` (superseded part files too). */
  async bytesUnder(bucket: string, prefix: string): Promise<number> {
    let bytes = 0;
    for (const dir of await this.uploadsUnder(bucket, prefix)) {
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        bytes += (await stat(path.join(dir, name)).catch(() => undefined))?.size ?? 0;
      }
    }
    return bytes;
  }

  /** Aborts the uploads in progress of keys under `prefix` (the prefix is being deleted). */
  async removeUnder(bucket: string, prefix: string): Promise<number> {
    const dirs = await this.uploadsUnder(bucket, prefix);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    return dirs.length;
  }

  /** The ids of the uploads in progress of keys under `prefix`. */
  async idsUnder(bucket: string, prefix: string): Promise<string[]> {
    const ids: string[] = [];
    for (const id of await readdir(this.uploadsDir).catch(() => [] as string[])) {
      const record = await this.readRecord(id);
      if (record && record.bucket === bucket && record.key.startsWith(prefix)) ids.push(id);
    }
    return ids;
  }

  private async uploadsUnder(bucket: string, prefix: string): Promise<string[]> {
    return (await this.idsUnder(bucket, prefix)).map((id) => path.join(this.uploadsDir, id));
  }

  /** The upload's folder and record; NoSuchUpload unless it exists for this bucket and key. */
  private async open(bucket: string, key: string, uploadId: string): Promise<{ dir: string; record: UploadRecord }> {
    const record = await this.readRecord(uploadId);
    if (!record || record.bucket !== bucket || record.key !== key) throw noSuchUpload();
    return { dir: path.join(this.uploadsDir, uploadId), record };
  }

  private async readRecord(uploadId: string): Promise<UploadRecord | undefined> {
    // Checked before it becomes part of a path.
    if (!UPLOAD_ID.test(uploadId)) return undefined;
    try {
      return JSON.parse(await readFile(path.join(this.uploadsDir, uploadId, 'upload.json'), 'utf8')) as UploadRecord;
    } catch {
      return undefined;
    }
  }

  private async readPart(dir: string, partNumber: number): Promise<PartRecord | undefined> {
    try {
      return JSON.parse(await readFile(path.join(dir, `part-${partNumber}.json`), 'utf8')) as PartRecord;
    } catch {
      return undefined;
    }
  }
}
