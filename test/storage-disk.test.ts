// LocalDiskObjectStore on a real temp folder: key mapping, atomic writes, listing order and
// paging, multipart uploads.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import { compareUtf8, objectPaths } from '../src/infra/storage/key-layout.ts';
import { LocalDiskObjectStore } from '../src/infra/storage/local-disk-store.ts';
import { StorageError } from '../src/infra/storage/object-store.ts';

let root: string;
let store: LocalDiskObjectStore;

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'storage-disk-'));
  store = new LocalDiskObjectStore({ rootDir: root, buckets: ['bkt'], minPartSize: 10 });
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

function isStorageError(code: string) {
  return (err: unknown) => err instanceof StorageError && err.code === code;
}

const md5 = (data: Buffer | string) => createHash('md5').update(data).digest('hex');

describe('single objects', () => {
  test('put, head, get, delete round trip with metadata', async () => {
    const info = await store.putObject('bkt', 'dir/hello.txt', Buffer.from('hello'), { contentType: 'text/plain', metadata: { who: 'me' } });
    assert.equal(info.etag, `"${md5('hello')}"`);
    assert.equal(info.size, 5);
    const head = await store.headObject('bkt', 'dir/hello.txt');
    assert.equal(head?.contentType, 'text/plain');
    assert.equal(head?.etag, info.etag);
    const got = await store.getObject('bkt', 'dir/hello.txt');
    assert.equal(await text(got.body), 'hello');
    assert.deepEqual(got.info.metadata, { who: 'me' });
    await store.deleteObject('bkt', 'dir/hello.txt');
    assert.equal(await store.headObject('bkt', 'dir/hello.txt'), undefined);
    await assert.rejects(store.getObject('bkt', 'dir/hello.txt'), isStorageError('NoSuchKey'));
    // Deleting again is fine, and the emptied folder is gone.
    await store.deleteObject('bkt', 'dir/hello.txt');
    assert.deepEqual(await readdir(path.join(root, 'bkt')), []);
  });

  test('streams in, and overwrites atomically', async () => {
    await store.putObject('bkt', 'stream', Readable.from([Buffer.from('ab'), Buffer.from('cd')]));
    await store.putObject('bkt', 'stream', Buffer.from('second'));
    assert.equal(await text((await store.getObject('bkt', 'stream')).body), 'second');
    // No temp files left behind.
    assert.deepEqual(await readdir(path.join(root, '.tmp')), []);
    await store.deleteObject('bkt', 'stream');
  });

  test('a failing body stores nothing', async () => {
    const failing = new Readable({
      read() {
        this.push(Buffer.from('partial'));
        this.destroy(new Error('client went away'));
      },
    });
    await assert.rejects(store.putObject('bkt', 'never', failing), /client went away/);
    assert.equal(await store.headObject('bkt', 'never'), undefined);
    assert.deepEqual(await readdir(path.join(root, '.tmp')), []);
  });

  test('concurrent overwrites and reads: a body always comes with its own ETag', async () => {
    const versions = Array.from({ length: 8 }, (_, i) => Buffer.from(`version ${i} `.repeat(1000 + i)));
    await store.putObject('bkt', 'race', versions[0]);
    const readers = Array.from({ length: 40 }, async () => {
      const got = await store.getObject('bkt', 'race');
      const chunks: Buffer[] = [];
      for await (const c of got.body) chunks.push(c as Buffer);
      assert.equal(got.info.etag, `"${md5(Buffer.concat(chunks))}"`);
    });
    const writers = versions.map((v) => store.putObject('bkt', 'race', v));
    await Promise.all([...readers, ...writers]);
    await store.deleteObject('bkt', 'race');
  });

  test('ranges', async () => {
    await store.putObject('bkt', 'range', Buffer.from('0123456789'));
    const r = await store.getObject('bkt', 'range', { start: 2, end: 4 });
    assert.equal(await text(r.body), '234');
    const clamped = await store.getObject('bkt', 'range', { start: 8, end: 100 });
    assert.deepEqual(clamped.range, { start: 8, end: 9 });
    assert.equal(await text(clamped.body), '89');
    await assert.rejects(store.getObject('bkt', 'range', { start: 10, end: 12 }), isStorageError('InvalidRange'));
    await store.deleteObject('bkt', 'range');
  });

  test('keys that clash as plain paths all coexist', async () => {
    const keys = ['a', 'a/b', 'a/', 'a//b', '%2E', '.hidden', 'x/.tmp', 'sp ace', 'ümlaut/日本', 'emoji😀', 'a%o', 'a%m'];
    for (const key of keys) await store.putObject('bkt', key, Buffer.from(key));
    for (const key of keys) assert.equal(await text((await store.getObject('bkt', key)).body), key, key);
    const listed = await store.listObjects('bkt');
    assert.deepEqual(
      listed.objects.map((o) => o.key),
      [...keys].sort(compareUtf8),
    );
    assert.equal(await store.deletePrefix('bkt', ''), keys.length);
    assert.deepEqual(await readdir(path.join(root, 'bkt')), []);
  });

  test('rejects path traversal and invalid keys or buckets', async () => {
    for (const key of ['../x', 'a/../../x', 'a/./b', '..', '', 'nul\0byte']) {
      await assert.rejects(store.putObject('bkt', key, Buffer.from('x')), isStorageError('InvalidArgument'), JSON.stringify(key));
    }
    await assert.rejects(store.putObject('other', 'k', Buffer.from('x')), isStorageError('NoSuchBucket'));
    await assert.rejects(store.putObject('../b', 'k', Buffer.from('x')), isStorageError('NoSuchBucket'));
    // Every mapped path stays inside the bucket folder.
    const bucketDir = path.join(root, 'bkt');
    for (const key of ['.../x', '%2E%2E/x', 'a/...']) assert.ok(objectPaths(bucketDir, key).data.startsWith(bucketDir + path.sep));
  });

  test('a sidecar that does not match its data (crash between renames) is rebuilt', async () => {
    await store.putObject('bkt', 'heal', Buffer.from('old'), { contentType: 'text/plain' });
    const paths = objectPaths(path.join(root, 'bkt'), 'heal');
    await writeFile(paths.data + '.new', 'new data');
    const { rename } = await import('node:fs/promises');
    await rename(paths.data + '.new', paths.data);
    const head = await store.headObject('bkt', 'heal');
    assert.equal(head?.etag, `"${md5('new data')}"`);
    assert.equal(head?.size, 8);
    assert.equal(head?.contentType, 'text/plain');
    await store.deleteObject('bkt', 'heal');
  });
});

describe('listing', () => {
  const keys = [
    'p/a.jpg',
    'p/b/1.jpg',
    'p/b/2.jpg',
    'p/b-c.jpg', // "-" sorts before "/": must come before p/b/...
    'p/c/deep/x.jpg',
    'p/\uE000.jpg', // UTF-16 order puts this after astral characters, UTF-8 order before
    'p/\u{1F600}.jpg',
    'q/other.jpg',
  ];
  before(async () => {
    for (const key of keys) await store.putObject('bkt', key, Buffer.from(key));
  });
  after(async () => {
    await store.deletePrefix('bkt', '');
  });

  test('returns keys in UTF-8 byte order', async () => {
    const result = await store.listObjects('bkt', { prefix: 'p/' });
    const expected = keys.filter((k) => k.startsWith('p/')).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    assert.deepEqual(
      result.objects.map((o) => o.key),
      expected,
    );
    assert.equal(result.isTruncated, false);
  });

  test('delimiter rolls folders up into common prefixes', async () => {
    const result = await store.listObjects('bkt', { prefix: 'p/', delimiter: '/' });
    assert.deepEqual(
      result.objects.map((o) => o.key),
      ['p/a.jpg', 'p/b-c.jpg', 'p/\uE000.jpg', 'p/\u{1F600}.jpg'],
    );
    assert.deepEqual(result.commonPrefixes, ['p/b/', 'p/c/']);
    const top = await store.listObjects('bkt', { delimiter: '/' });
    assert.deepEqual(top.commonPrefixes, ['p/', 'q/']);
    // A prefix that ends mid-name.
    const partial = await store.listObjects('bkt', { prefix: 'p/b', delimiter: '/' });
    assert.deepEqual(
      partial.objects.map((o) => o.key),
      ['p/b-c.jpg'],
    );
    assert.deepEqual(partial.commonPrefixes, ['p/b/']);
    // A delimiter other than "/".
    const dash = await store.listObjects('bkt', { prefix: 'p/b', delimiter: '-' });
    assert.deepEqual(dash.commonPrefixes, ['p/b-']);
    assert.deepEqual(
      dash.objects.map((o) => o.key),
      ['p/b/1.jpg', 'p/b/2.jpg'],
    );
  });

  test('pages with maxKeys and continuation tokens cover everything exactly once', async () => {
    for (const delimiter of [undefined, '/']) {
      for (const maxKeys of [1, 2, 3]) {
        const seen: string[] = [];
        let token: string | undefined;
        do {
          const page = await store.listObjects('bkt', { maxKeys, delimiter, continuationToken: token });
          assert.ok(page.objects.length + page.commonPrefixes.length <= maxKeys);
          seen.push(...page.objects.map((o) => o.key), ...page.commonPrefixes);
          token = page.nextContinuationToken;
          assert.equal(Boolean(token), page.isTruncated);
        } while (token);
        const all = await store.listObjects('bkt', { delimiter });
        assert.deepEqual(seen.sort(compareUtf8), [...all.objects.map((o) => o.key), ...all.commonPrefixes].sort(compareUtf8), `${delimiter} ${maxKeys}`);
      }
    }
  });

  test('startAfter skips up to and including the marker', async () => {
    const result = await store.listObjects('bkt', { startAfter: 'p/b/1.jpg' });
    assert.equal(result.objects[0].key, 'p/b/2.jpg');
    const afterFolder = await store.listObjects('bkt', { startAfter: 'p/b/', delimiter: '/', prefix: 'p/' });
    assert.deepEqual(afterFolder.commonPrefixes, ['p/c/']);
  });

  test('defaults to 1000 keys per page', async () => {
    const many = 'many/';
    await Promise.all(Array.from({ length: 1005 }, (_, i) => store.putObject('bkt', `${many}${String(i).padStart(4, '0')}`, Buffer.alloc(0))));
    const page = await store.listObjects('bkt', { prefix: many });
    assert.equal(page.objects.length, 1000);
    assert.equal(page.isTruncated, true);
    const rest = await store.listObjects('bkt', { prefix: many, continuationToken: page.nextContinuationToken });
    assert.equal(rest.objects.length, 5);
    assert.equal(await store.deletePrefix('bkt', many), 1005);
  });
});

describe('multipart uploads', () => {
  test('complete concatenates parts with an S3-style ETag', async () => {
    const parts = [randomBytes(12), randomBytes(15), randomBytes(3)];
    const { uploadId } = await store.createMultipartUpload('bkt', 'mp/file.bin', { contentType: 'application/x-test' });
    const uploaded = [];
    for (const [i, data] of parts.entries()) uploaded.push(await store.uploadPart('bkt', 'mp/file.bin', uploadId, i + 1, data));
    assert.deepEqual(
      (await store.listParts('bkt', 'mp/file.bin', uploadId)).map((p) => p.size),
      [12, 15, 3],
    );
    const info = await store.completeMultipartUpload('bkt', 'mp/file.bin', uploadId, uploaded);
    const expectedEtag = createHash('md5')
      .update(Buffer.concat(parts.map((p) => createHash('md5').update(p).digest())))
      .digest('hex');
    assert.equal(info.etag, `"${expectedEtag}-3"`);
    const got = await store.getObject('bkt', 'mp/file.bin');
    assert.equal(got.info.contentType, 'application/x-test');
    const chunks: Buffer[] = [];
    for await (const c of got.body) chunks.push(c as Buffer);
    assert.deepEqual(Buffer.concat(chunks), Buffer.concat(parts));
    // The upload is gone once completed.
    await assert.rejects(store.uploadPart('bkt', 'mp/file.bin', uploadId, 4, Buffer.from('x')), isStorageError('NoSuchUpload'));
    await store.deleteObject('bkt', 'mp/file.bin');
  });

  test('validation: order, unknown parts, ETag mismatch, small parts, wrong key', async () => {
    const { uploadId } = await store.createMultipartUpload('bkt', 'mp/v');
    const p1 = await store.uploadPart('bkt', 'mp/v', uploadId, 1, randomBytes(10));
    const p2 = await store.uploadPart('bkt', 'mp/v', uploadId, 2, randomBytes(5));
    const p3 = await store.uploadPart('bkt', 'mp/v', uploadId, 3, randomBytes(10));
    await assert.rejects(store.completeMultipartUpload('bkt', 'mp/v', uploadId, [p2, p1]), isStorageError('InvalidPartOrder'));
    await assert.rejects(store.completeMultipartUpload('bkt', 'mp/v', uploadId, [p1, { partNumber: 9, etag: p1.etag }]), isStorageError('InvalidPart'));
    await assert.rejects(store.completeMultipartUpload('bkt', 'mp/v', uploadId, [{ partNumber: 1, etag: '"00"' }]), isStorageError('InvalidPart'));
    await assert.rejects(store.completeMultipartUpload('bkt', 'mp/v', uploadId, [p1, p2, p3]), isStorageError('EntityTooSmall'));
    await assert.rejects(store.completeMultipartUpload('bkt', 'mp/other', uploadId, [p1]), isStorageError('NoSuchUpload'));
    await assert.rejects(store.uploadPart('bkt', 'mp/v', uploadId, 0, Buffer.from('x')), isStorageError('InvalidArgument'));
    // Re-uploading a part number replaces it.
    const p2b = await store.uploadPart('bkt', 'mp/v', uploadId, 2, randomBytes(10));
    const info = await store.completeMultipartUpload('bkt', 'mp/v', uploadId, [p1, p2b, p3]);
    assert.equal(info.size, 30);
    await store.deleteObject('bkt', 'mp/v');
  });

  test('abort removes the parts', async () => {
    const { uploadId } = await store.createMultipartUpload('bkt', 'mp/aborted');
    await store.uploadPart('bkt', 'mp/aborted', uploadId, 1, randomBytes(100));
    assert.deepEqual(await readdir(path.join(root, '.uploads')), [uploadId]);
    await store.abortMultipartUpload('bkt', 'mp/aborted', uploadId);
    assert.deepEqual(await readdir(path.join(root, '.uploads')), []);
    await assert.rejects(store.abortMultipartUpload('bkt', 'mp/aborted', uploadId), isStorageError('NoSuchUpload'));
    await assert.rejects(store.abortMultipartUpload('bkt', 'mp/aborted', '../../etc'), isStorageError('NoSuchUpload'));
    assert.equal(await store.headObject('bkt', 'mp/aborted'), undefined);
  });

  test('removeStale clears old temp files and abandoned uploads', async () => {
    const { uploadId } = await store.createMultipartUpload('bkt', 'mp/stale');
    await mkdir(path.join(root, '.tmp'), { recursive: true });
    await writeFile(path.join(root, '.tmp', 'leftover'), 'x');
    assert.deepEqual(await store.removeStale(), { tmpFiles: 0, uploads: 0 });
    assert.deepEqual(await store.removeStale({ tmpOlderThanMs: -1, uploadsOlderThanMs: -1 }), { tmpFiles: 1, uploads: 1 });
    await assert.rejects(store.abortMultipartUpload('bkt', 'mp/stale', uploadId), isStorageError('NoSuchUpload'));
  });
});
