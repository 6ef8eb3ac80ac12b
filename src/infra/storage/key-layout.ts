// How object keys become file paths on disk, and the ordering S3 lists keys in.
//
// S3 keys are arbitrary UTF-8 strings, so "a" and "a/b" can both exist, "a//b" differs from
// "a/b", and a key may end in "/". A plain key→path mapping cannot hold both a file "a" and a
// folder "a", so each key segment is escaped and object files carry a suffix that no escaped
// folder name can end with:
//   - every "%" in a segment becomes "%25";
//   - a leading "." becomes "%2E" (so "." and ".." can never walk up, and our own hidden
//     folders such as ".tmp" cannot collide with keys);
//   - an empty segment becomes "%_";
//   - the object's data file is "<escaped last segment>%o", its metadata sidecar "...%m".
// After escaping, "%" is only ever followed by "25", "2E" or "_", so "%o" / "%m" are
// unambiguous and the mapping is injective. Readable names stay readable: "img/IMG_1.JPG"
// is stored as "img/IMG_1.JPG%o".
import path from 'node:path';
import { StorageError } from './object-store.ts';

export const DATA_SUFFIX = '%o';
export const META_SUFFIX = '%m';
const MAX_KEY_BYTES = 1024;
// Linux NAME_MAX is 255 bytes; keep room for the suffix.
const MAX_SEGMENT_BYTES = 250;

// With the u flag a proper surrogate pair is one code point, so only lone halves match.
const LONE_SURROGATE = /\p{Cs}/u;
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function assertValidBucketName(bucket: string): void {
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..')) {
    throw new StorageError('InvalidArgument', `Invalid bucket name: ${JSON.stringify(bucket)}`);
  }
}

/**
 * Rejects keys we refuse to store. "." and ".." segments are refused even though escaping makes
 * them harmless on disk, because URL parsers (fetch, browsers) collapse them, so such objects
 * could never be downloaded with a presigned URL anyway.
 */
export function assertValidKey(key: string): void {
  if (key.length === 0) throw new StorageError('InvalidArgument', 'Object key must not be empty');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) {
    throw new StorageError('InvalidArgument', 'Object key is longer than 1024 bytes');
  }
  if (key.includes('\0')) throw new StorageError('InvalidArgument', 'Object key must not contain NUL');
  if (LONE_SURROGATE.test(key)) throw new StorageError('InvalidArgument', 'Object key is not valid UTF-8');
  for (const segment of key.split('/')) {
    if (segment === '.' || segment === '..') {
      throw new StorageError('InvalidArgument', 'Object key must not contain "." or ".." segments');
    }
  }
}

export function encodeSegment(segment: string): string {
  if (segment === '') return '%_';
  let escaped = segment.replace(/%/g, '%25');
  if (escaped.startsWith('.')) escaped = '%2E' + escaped.slice(1);
  if (Buffer.byteLength(escaped, 'utf8') > MAX_SEGMENT_BYTES) {
    throw new StorageError('InvalidArgument', 'A "/"-separated part of the object key is too long to store');
  }
  return escaped;
}

export function decodeSegment(name: string): string {
  if (name === '%_') return '';
  let rest = name;
  let head = '';
  if (rest.startsWith('%2E')) {
    head = '.';
    rest = rest.slice(3);
  }
  return head + rest.replace(/%25/g, '%');
}

/** Folder names on disk for the key's parent "folders" and the base name of its files. */
export function keyToRelativeParts(key: string): { dirs: string[]; base: string } {
  const segments = key.split('/');
  const last = segments.pop() as string;
  return { dirs: segments.map(encodeSegment), base: encodeSegment(last) };
}

/** Absolute paths of an object's data file and metadata sidecar under a bucket folder. */
export function objectPaths(bucketDir: string, key: string): { dir: string; data: string; meta: string } {
  assertValidKey(key);
  const { dirs, base } = keyToRelativeParts(key);
  const dir = path.join(bucketDir, ...dirs);
  const data = path.join(dir, base + DATA_SUFFIX);
  // Belt and braces: escaping makes this impossible, but never touch anything outside the bucket.
  if (!data.startsWith(bucketDir + path.sep)) {
    throw new StorageError('InvalidArgument', 'Object key resolves outside its bucket');
  }
  return { dir, data, meta: path.join(dir, base + META_SUFFIX) };
}

/**
 * Compares two strings in UTF-8 byte order, which is the order S3 lists keys in. JavaScript's
 * own comparison works on UTF-16 code units and puts U+E000..U+FFFF after astral characters;
 * comparing code points gives the UTF-8 order without encoding anything.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // Only differing surrogates need the code-point view.
    const sa = ca >= 0xd800 && ca <= 0xdfff;
    const sb = cb >= 0xd800 && cb <= 0xdfff;
    // A surrogate starts an astral character (code point >= 0x10000), above every BMP one.
    if (sa && !sb) return 1;
    if (sb && !sa) return -1;
    return ca - cb;
  }
  return a.length - b.length;
}
