// The S3 object store (src/infra/storage/s3-object-store.ts) against s3rver, a third-party S3
// implementation from the registry, with static credentials: every ObjectStore operation the
// services use, streamed bodies, ranges, paging, prefix deletion, multipart and presigned URLs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import { S3ObjectStore } from '../src/infra/storage/s3-object-store.ts';
import { StorageError } from '../src/infra/storage/object-store.ts';

const BUCKET = 'store-test';

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const rejectsWithCode = (promise: Promise<unknown>, code: string) =>
  assert.rejects(promise, (err) => {
    assert.ok(err instanceof StorageError, `a StorageError, not ${String(err)}`);
    assert.equal(err.code, code);
    return true;
  });

describe('S3 object store against s3rver (static credentials)', () => {
  let server: S3rver;
  let dir: string;
  let store: S3ObjectStore;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oi-s3rver-'));
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: BUCKET, configs: [] }] });
    const { port } = await server.run();
    store = new S3ObjectStore({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true });
  });
  after(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('put (buffer and stream), head, get, ranged get, delete', async () => {
    const body = crypto.randomBytes(100_000);
    const put = await store.putObject(BUCKET, 'a/photo.jpg', body, { contentType: 'image/jpeg' });
    assert.equal(put.etag, `"${crypto.createHash('md5').update(body).digest('hex')}"`);
    const head = await store.headObject(BUCKET, 'a/photo.jpg');
    assert.equal(head?.size, body.length);
    assert.equal(head?.contentType, 'image/jpeg');
    assert.equal(await store.headObject(BUCKET, 'a/missing.jpg'), undefined);

    const got = await store.getObject(BUCKET, 'a/photo.jpg');
    assert.deepEqual(await readAll(got.body), body);
    const ranged = await store.getObject(BUCKET, 'a/photo.jpg', { start: 10, end: 19 });
    assert.deepEqual(await readAll(ranged.body), body.subarray(10, 20));
    assert.deepEqual(ranged.range, { start: 10, end: 19 });
    assert.equal(ranged.info.size, body.length, 'the size is the whole object, not the range');

    // A stream of unknown length, small (one PutObject) and large (multipart of 8 MiB parts).
    const small = crypto.randomBytes(1000);
    await store.putObject(BUCKET, 'a/small.bin', Readable.from([small.subarray(0, 500), small.subarray(500)]));
    assert.deepEqual(await readAll((await store.getObject(BUCKET, 'a/small.bin')).body), small);
    const large = crypto.randomBytes(17 * 1024 * 1024);
    const chunks = Array.from({ length: 17 }, (_, i) => large.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024));
    const info = await store.putObject(BUCKET, 'a/large.bin', Readable.from(chunks));
    assert.equal(info.size, large.length);
    assert.ok(crypto.createHash('sha256').update(await readAll((await store.getObject(BUCKET, 'a/large.bin')).body)).digest().equals(crypto.createHash('sha256').update(large).digest()));

    await store.deleteObject(BUCKET, 'a/small.bin');
    assert.equal(await store.headObject(BUCKET, 'a/small.bin'), undefined);
    await store.deleteObject(BUCKET, 'a/small.bin'); // deleting a missing key succeeds, as in S3
  });

  it('errors become StorageErrors: NoSuchKey, NoSuchBucket, InvalidRange', async () => {
    await rejectsWithCode(store.getObject(BUCKET, 'nope'), 'NoSuchKey');
    await rejectsWithCode(store.getObject('no-such-bucket', 'nope'), 'NoSuchBucket');
    await store.putObject(BUCKET, 'r/ten.bin', Buffer.alloc(10));
    await rejectsWithCode(store.getObject(BUCKET, 'r/ten.bin', { start: 50, end: 60 }), 'InvalidRange');
  });

  it('lists with prefix and delimiter; deletes a prefix and only that prefix', async () => {
    for (let i = 0; i < 7; i++) await store.putObject(BUCKET, `list/p/${i}.txt`, Buffer.from(String(i)));
    await store.putObject(BUCKET, 'list/q/x.txt', Buffer.from('x'));
    await store.putObject(BUCKET, 'list-other/y.txt', Buffer.from('y'));
    const folders = await store.listObjects(BUCKET, { prefix: 'list/', delimiter: '/' });
    assert.deepEqual(folders.commonPrefixes.sort(), ['list/p/', 'list/q/']);
    // Paging (a truncated listing) is tested against the storage process: s3rver 3.7.1 cannot make a
    // continuation token on Node >= 17 (its cipher is gone from OpenSSL 3: ERR_OSSL_EVP_UNSUPPORTED).
    const seen = (await store.listObjects(BUCKET, { prefix: 'list/p/' })).objects.map((o) => o.key);
    assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6].map((i) => `list/p/${i}.txt`));

    assert.equal(await store.deletePrefix(BUCKET, 'list/'), 8);
    assert.equal((await store.listObjects(BUCKET, { prefix: 'list/' })).objects.length, 0);
    assert.ok(await store.headObject(BUCKET, 'list-other/y.txt'), 'a sibling prefix is kept');
  });

  it('multipart upload by parts (s3rver has no abort: tested against the storage process), and presigned GET URLs a plain HTTP client can use', async () => {
    const part1 = crypto.randomBytes(5 * 1024 * 1024);
    const part2 = crypto.randomBytes(1234);
    const { uploadId } = await store.createMultipartUpload(BUCKET, 'm/video.mp4', { contentType: 'video/mp4' });
    const parts = [await store.uploadPart(BUCKET, 'm/video.mp4', uploadId, 1, part1), await store.uploadPart(BUCKET, 'm/video.mp4', uploadId, 2, Readable.from([part2]))];
    const done = await store.completeMultipartUpload(BUCKET, 'm/video.mp4', uploadId, parts);
    assert.equal(done.size, part1.length + part2.length);


    const url = await store.presignGetUrl(BUCKET, 'm/video.mp4', 60);
    assert.match(url, /X-Amz-Signature=/);
    const response = await fetch(url);
    assert.equal(response.status, 200);
    assert.ok(Buffer.from(await response.arrayBuffer()).equals(Buffer.concat([part1, part2])));
  });
});
