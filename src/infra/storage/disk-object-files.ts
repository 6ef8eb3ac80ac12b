// The file-level mechanics of the disk store: writing bodies atomically, the JSON sidecar that
// carries an object's metadata, and reading a data file together with a sidecar that really
// describes it.
//
// Atomicity: bodies stream into <rootDir>/.tmp (same filesystem), then one rename() makes the
// object appear whole; a reader never sees a half-written file. The sidecar (etag, size, content
// type, CRC32, user metadata) is renamed into place right after the data. It records the data
// file's inode, so a reader that catches the moment between the two renames (or a crash between
// them) notices the mismatch, waits briefly and, failing that, rebuilds the sidecar from the data.
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rmdir, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { noteStreamedBytes } from '../runtime/streamed-garbage.ts';
import { Crc32 } from './checksums.ts';
import { OffThreadHash } from './off-thread-hash.ts';

/** Standard HTTP headers S3 stores with an object and returns on GET/HEAD. */
export interface StoredHttpHeaders {
  cacheControl?: string;
  contentDisposition?: string;
  contentEncoding?: string;
  contentLanguage?: string;
  expires?: string;
}

export interface Sidecar {
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

export interface TempFile {
  path: string;
  size: number;
  md5: Buffer;
  /** Base64 CRC-32, as in x-amz-checksum-crc32. */
  crc32: string;
  ino: string;
}

export interface ObjectFilePaths {
  dir: string;
  data: string;
  meta: string;
}

export type TempSource = Readable | (() => AsyncGenerator<Buffer>);

/**
 * Bytes a temp file's write stream buffers while a write is in flight; they go to the disk in
 * one writev. Node hands a request body over in 64 KiB chunks, and with the stream's default
 * (16 KiB) every chunk was its own write system call: `writeBuffer` was the server's hottest
 * function in the upload benchmark (29 % of its busy time; 100 x 4 MiB PutObjects at 0.86x the
 * verifying sink on session 15's machine, where system calls are dear). 256 KiB: 1.06x, and the
 * 1 GiB multipart's peak unchanged (239 MB on PGlite). 1 MiB: 1.21x (with the profiler on), but that
 * peak ~10 MB higher (buffers held longer live into older generations). bench/README.md, "Session 15".
 */
export const WRITE_BATCH_BYTES = 256 * 1024;

export function isErrno(err: unknown, ...codes: string[]): boolean {
  return codes.includes((err as NodeJS.ErrnoException)?.code ?? '');
}

export class DiskObjectFiles {
  readonly tmpDir: string;
  /** Per-path promise chains: serialise commits and deletes of one key within this process. */
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    rootDir: string,
    private readonly fsync: boolean,
  ) {
    this.tmpDir = path.join(rootDir, '.tmp');
  }

  /**
   * Streams a body into a fresh temp file, hashing it on the way; removes the file on error.
   * `verifiedCrc32`: the body's CRC32 as an upstream stage computed it (read once the body has
   * ended); the CRC32 is then not computed again here. The MD5 (the ETag) is computed on a worker
   * thread while this one writes.
   */
  async writeTemp(source: TempSource, verifiedCrc32?: () => string | undefined): Promise<TempFile> {
    await mkdir(this.tmpDir, { recursive: true });
    const tmpPath = path.join(this.tmpDir, randomUUID());
    const md5 = new OffThreadHash('md5');
    const crc = verifiedCrc32 ? undefined : new Crc32();
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        crc?.update(chunk);
        size += chunk.length;
        noteStreamedBytes(chunk.length); // runtime/streamed-garbage.ts
        // Passed on once the MD5 worker has taken it: a worker that falls behind slows the upload.
        md5.update(chunk).then(() => callback(null, chunk), callback);
      },
    });
    try {
      // "flush" fsyncs before close when durability across power loss is asked for.
      await pipeline(source, tap, createWriteStream(tmpPath, { flags: 'wx', flush: this.fsync, highWaterMark: WRITE_BATCH_BYTES }));
      const crc32 = crc ? crc.digestBase64() : verifiedCrc32!();
      if (crc32 === undefined) throw new Error('writeTemp: the verified CRC32 is missing');
      const [st, digest] = await Promise.all([stat(tmpPath, { bigint: true }), md5.digest()]);
      return { path: tmpPath, size, md5: digest, crc32, ino: st.ino.toString() };
    } catch (err) {
      md5.drop();
      await unlink(tmpPath).catch(() => {});
      throw err;
    }
  }

  /** Moves a finished temp file into place, then its sidecar; the temp file is gone either way. */
  async commit(paths: ObjectFilePaths, tmpPath: string, sidecar: Sidecar): Promise<void> {
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

  /** Deletes an object's files (missing ones are fine) and prunes folders left empty. */
  async remove(paths: ObjectFilePaths, stopAtDir: string): Promise<void> {
    await this.withLock(paths.data, async () => {
      for (const file of [paths.data, paths.meta]) {
        await unlink(file).catch((err) => {
          if (!isErrno(err, 'ENOENT')) throw err;
        });
      }
    });
    let current = paths.dir;
    while (current.startsWith(stopAtDir + path.sep)) {
      try {
        await rmdir(current);
      } catch {
        return; // not empty (or already gone): stop here
      }
      current = path.dirname(current);
    }
  }

  async writeJsonAtomic(target: string, value: unknown): Promise<void> {
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

  async readSidecar(metaPath: string): Promise<Sidecar | undefined> {
    try {
      const parsed = JSON.parse(await readFile(metaPath, 'utf8')) as Sidecar;
      return parsed?.v === 1 ? parsed : undefined;
    } catch {
      return undefined; // missing or unreadable: the careful path rebuilds it
    }
  }

  /**
   * The sidecar of an object when a stat of its data file shows that it describes it (same inode
   * and size), without opening the data file: 'missing' when there is no data file, undefined when
   * inconclusive (the caller takes the careful path, openConsistent).
   */
  async statConsistent(paths: ObjectFilePaths): Promise<Sidecar | 'missing' | undefined> {
    let st;
    try {
      st = await stat(paths.data, { bigint: true });
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return 'missing';
      throw err;
    }
    const sidecar = await this.readSidecar(paths.meta);
    return sidecar && st.isFile() && sidecar.ino === st.ino.toString() && sidecar.size === Number(st.size) ? sidecar : undefined;
  }

  /** Opens the data file with a sidecar that really describes it (same inode and size). */
  async openConsistent(paths: ObjectFilePaths): Promise<{ handle: FileHandle; sidecar: Sidecar } | undefined> {
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

  private async rebuildSidecar(paths: ObjectFilePaths, handle: FileHandle, stale: Sidecar | undefined): Promise<Sidecar> {
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
