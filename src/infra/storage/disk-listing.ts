// Lists the keys of one bucket folder in S3 order (UTF-8 byte order) without reading the whole
// tree: it walks folders in sorted order, starts at the deepest folder the prefix names, skips
// sub-trees that lie entirely before the start marker, rolls whole folders up into a common
// prefix when the delimiter falls inside the folder's path, and stops one item after maxKeys.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { DATA_SUFFIX, compareUtf8, decodeSegment, encodeSegment } from './key-layout.ts';

export type ListedItem = { kind: 'key'; key: string; dataPath: string } | { kind: 'prefix'; prefix: string };

export interface KeyListingOptions {
  prefix: string;
  delimiter?: string;
  maxKeys: number;
  /** Only items strictly after this one are returned; an equal common prefix is skipped too. */
  after?: string;
}

interface DirEntry {
  /** The key (object) or the key prefix ending in "/" (folder) this entry stands for. */
  sortKey: string;
  isDir: boolean;
  fsPath: string;
}

async function readEntries(dirPath: string, keyBase: string): Promise<DirEntry[]> {
  let dirents;
  try {
    dirents = await readdir(dirPath, { withFileTypes: true });
  } catch (err) {
    // A folder removed while we walk (a concurrent delete prunes empty folders) is just empty.
    if (isNotFound(err)) return [];
    throw err;
  }
  const entries: DirEntry[] = [];
  for (const d of dirents) {
    if (d.isDirectory()) {
      entries.push({ sortKey: keyBase + decodeSegment(d.name) + '/', isDir: true, fsPath: path.join(dirPath, d.name) });
    } else if (d.name.endsWith(DATA_SUFFIX)) {
      const segment = decodeSegment(d.name.slice(0, -DATA_SUFFIX.length));
      entries.push({ sortKey: keyBase + segment, isDir: false, fsPath: path.join(dirPath, d.name) });
    }
    // Anything else (sidecars, stray files) is not an object.
  }
  entries.sort((a, b) => compareUtf8(a.sortKey, b.sortKey));
  return entries;
}

function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** True when the folder holds at least one object somewhere below it. */
async function containsObject(dirPath: string): Promise<boolean> {
  for (const entry of await readEntries(dirPath, '')) {
    if (!entry.isDir) return true;
    if (await containsObject(entry.fsPath)) return true;
  }
  return false;
}

export async function listBucketKeys(bucketDir: string, options: KeyListingOptions): Promise<{ items: ListedItem[]; isTruncated: boolean }> {
  const { prefix, delimiter, maxKeys, after } = options;
  const items: ListedItem[] = [];
  let isTruncated = false;
  let lastPrefix: string | undefined;

  // Returns false once the page is full and one more item proved it truncated.
  const push = (item: ListedItem): boolean => {
    if (items.length >= maxKeys) {
      isTruncated = true;
      return false;
    }
    items.push(item);
    return true;
  };
  const emitPrefix = (commonPrefix: string): boolean => {
    if (commonPrefix === lastPrefix || commonPrefix === after) return true;
    lastPrefix = commonPrefix;
    return push({ kind: 'prefix', prefix: commonPrefix });
  };
  const emitKey = (key: string, dataPath: string): boolean => {
    if (!key.startsWith(prefix)) return true;
    if (after !== undefined && compareUtf8(key, after) <= 0) return true;
    if (delimiter) {
      const at = key.indexOf(delimiter, prefix.length);
      if (at >= 0) return emitPrefix(key.slice(0, at + delimiter.length));
    }
    return push({ kind: 'key', key, dataPath });
  };

  const visit = async (dirPath: string, keyBase: string): Promise<boolean> => {
    for (const entry of await readEntries(dirPath, keyBase)) {
      const k = entry.sortKey;
      if (!entry.isDir) {
        if (!emitKey(k, entry.fsPath)) return false;
        continue;
      }
      if (!k.startsWith(prefix) && !prefix.startsWith(k)) continue;
      // Every key below starts with k: if the marker is past k without being inside it, the
      // whole folder lies before the marker.
      if (after !== undefined && compareUtf8(k, after) < 0 && !after.startsWith(k)) continue;
      if (delimiter && k.startsWith(prefix)) {
        const at = k.indexOf(delimiter, prefix.length);
        if (at >= 0) {
          // The delimiter lies inside the folder's own path: every key below shares one
          // common prefix, so there is no need to descend (beyond checking it is not empty).
          const commonPrefix = k.slice(0, at + delimiter.length);
          if (commonPrefix === lastPrefix || commonPrefix === after) continue;
          if ((await containsObject(entry.fsPath)) && !emitPrefix(commonPrefix)) return false;
          continue;
        }
      }
      if (!(await visit(entry.fsPath, k))) return false;
    }
    return true;
  };

  // Start in the deepest folder that the prefix fully names: nothing outside it can match.
  const prefixDirs = prefix.split('/').slice(0, -1);
  let startDir: string;
  try {
    startDir = path.join(bucketDir, ...prefixDirs.map(encodeSegment));
  } catch {
    return { items, isTruncated }; // a segment too long to exist on disk: nothing can match
  }
  const startBase = prefixDirs.length > 0 ? prefixDirs.join('/') + '/' : '';
  await visit(startDir, startBase);
  return { items, isTruncated };
}
