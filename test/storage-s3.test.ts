// The embedded S3 endpoint over real HTTP on an ephemeral port, driven by the AWS SDK v3 with
// credentials from the embedded issuer, plus plain fetch for presigned URLs and raw requests.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
  type UploadPartCommandOutput,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import pino from 'pino';
import { EmbeddedCredentialIssuer } from '../src/infra/storage/embedded-credentials.ts';
import { startEmbeddedS3, type EmbeddedS3 } from '../src/infra/storage/embedded-s3.ts';
import type { TemporaryCredentials } from '../src/infra/storage/object-store.ts';
import { Sha256 } from '../src/infra/storage/sigv4-common.ts';

const BUCKET = 'inspections';
const PREFIX = 'projects/42/';
const MiB = 1024 * 1024;

let dataDir: string;
let masterKey: Buffer;
let s3: EmbeddedS3;
let creds: TemporaryCredentials;
let client: S3Client;

function clientFor(c: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }, endpoint = s3.url): S3Client {
  return new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken },
    maxAttempts: 1,
  });
}

/** Resolves to the S3 error code (and HTTP status) the call failed with. */
async function failure(promise: Promise<unknown>): Promise<{ code: string; status?: number }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof S3ServiceException) return { code: err.name, status: err.$metadata.httpStatusCode };
    throw err;
  }
  assert.fail('expected the call to fail');
}

async function bodyOf(result: { Body?: { transformToByteArray(): Promise<Uint8Array> } }): Promise<Buffer> {
  return Buffer.from(await (result.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
}

const md5 = (data: Buffer) => createHash('md5').update(data).digest();

before(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'storage-s3-'));
  masterKey = randomBytes(32);
  s3 = await startEmbeddedS3({ rootDir: dataDir, buckets: [BUCKET, 'other-bucket'], masterKey, logger: pino({ level: 'silent' }) });
  creds = await s3.issuer.issue(BUCKET, PREFIX, 3600);
  assert.equal(creds.endpoint, s3.url);
  client = clientFor(creds);
});

after(async () => {
  client?.destroy();
  await s3?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('object round trip', () => {
  test('put, head, get, list, delete', async () => {
    const key = `${PREFIX}images/IMG 0001+x.jpg`;
    const body = randomBytes(1000);
    const put = await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body, ContentType: 'image/jpeg', Metadata: { camera: 'm3e' } }));
    assert.equal(put.ETag, `"${md5(body).toString('hex')}"`);

    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    assert.equal(head.ContentLength, 1000);
    assert.equal(head.ContentType, 'image/jpeg');
    assert.equal(head.ETag, put.ETag);
    assert.deepEqual(head.Metadata, { camera: 'm3e' });

    // The SDK asks for and validates the CRC32 of the whole object on GET.
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    assert.ok(got.ChecksumCRC32);
    assert.deepEqual(await bodyOf(got), body);

    const list = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: PREFIX }));
    assert.deepEqual(
      list.Contents?.map((o) => [o.Key, o.Size, o.ETag]),
      [[key, 1000, put.ETag]],
    );
    assert.equal(list.KeyCount, 1);

    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
    assert.equal((await failure(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })))).status, 404);
    assert.deepEqual(await failure(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))), { code: 'NoSuchKey', status: 404 });
  });

  test('a streamed upload of unknown chunking arrives as aws-chunked with a CRC32 trailer', async () => {
    const key = `${PREFIX}streamed.bin`;
    const data = randomBytes(300_000);
    const chunks = [data.subarray(0, 1), data.subarray(1, 70_000), data.subarray(70_000)];
    const put = await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: Readable.from(chunks), ContentLength: data.length }));
    assert.ok(put.ChecksumCRC32, 'the verified trailer checksum is echoed');
    assert.deepEqual(await bodyOf(await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))), data);
  });

  test('range GETs', async () => {
    const key = `${PREFIX}range.txt`;
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: '0123456789' }));
    const cases: Array<[string, string, string]> = [
      ['bytes=2-5', '2345', 'bytes 2-5/10'],
      ['bytes=7-', '789', 'bytes 7-9/10'],
      ['bytes=-3', '789', 'bytes 7-9/10'],
      ['bytes=8-100', '89', 'bytes 8-9/10'],
    ];
    for (const [range, expected, contentRange] of cases) {
      const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: range }));
      assert.equal(got.$metadata.httpStatusCode, 206, range);
      assert.equal(got.ContentRange, contentRange, range);
      assert.equal((await bodyOf(got)).toString(), expected, range);
    }
    assert.deepEqual(await failure(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: 'bytes=10-' }))), { code: 'InvalidRange', status: 416 });
  });

  test('conditional GET, copy, delete of many, url-encoded listing, v1 listing, bucket calls', async () => {
    const key = `${PREFIX}cond/a b.txt`;
    const put = await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'x' }));
    assert.equal((await failure(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, IfNoneMatch: put.ETag })))).status, 304);
    assert.equal((await failure(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, IfMatch: '"nope"' })))).status, 412);

    await client.send(new CopyObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}cond/copy.txt`, CopySource: encodeURIComponent(`${BUCKET}/${key}`) }));
    assert.equal((await bodyOf(await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}cond/copy.txt` })))).toString(), 'x');

    const encoded = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}cond/`, EncodingType: 'url' }));
    assert.deepEqual(
      encoded.Contents?.map((o) => o.Key),
      [`${PREFIX}cond/a%20b.txt`, `${PREFIX}cond/copy.txt`],
    );
    const v1 = await client.send(new ListObjectsCommand({ Bucket: BUCKET, Prefix: PREFIX, Delimiter: '/' }));
    assert.deepEqual(
      v1.CommonPrefixes?.map((p) => p.Prefix),
      [`${PREFIX}cond/`],
    );

    const deleted = await client.send(
      new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: key }, { Key: `${PREFIX}cond/copy.txt` }, { Key: 'projects/43/x' }] } }),
    );
    assert.deepEqual(deleted.Deleted?.map((d) => d.Key).sort(), [key, `${PREFIX}cond/copy.txt`].sort());
    assert.deepEqual(
      deleted.Errors?.map((e) => [e.Key, e.Code]),
      [['projects/43/x', 'AccessDenied']],
    );

    await client.send(new HeadBucketCommand({ Bucket: BUCKET }));
    const location = await client.send(new GetBucketLocationCommand({ Bucket: BUCKET }));
    assert.ok(!location.LocationConstraint);
  });

  test('paging through a listing with continuation tokens', async () => {
    const keys = Array.from({ length: 7 }, (_, i) => `${PREFIX}page/${i}.jpg`);
    for (const key of keys) await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: key }));
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}page/`, MaxKeys: 3, ContinuationToken: token }));
      seen.push(...(page.Contents ?? []).map((o) => o.Key as string));
      token = page.NextContinuationToken;
    } while (token);
    assert.deepEqual(seen, keys);
    const startAfter = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}page/`, StartAfter: keys[4] }));
    assert.deepEqual(
      startAfter.Contents?.map((o) => o.Key),
      keys.slice(5),
    );
  });
});

describe('multipart uploads', () => {
  test('three 5 MiB parts (the last one streamed) complete into one object', async () => {
    const key = `${PREFIX}orthomosaic.tif`;
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(5 * MiB)];
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key, ContentType: 'image/tiff' }));
    assert.ok(UploadId);
    const etags: string[] = [];
    for (const [i, part] of parts.entries()) {
      const body = i === 2 ? Readable.from([part.subarray(0, MiB), part.subarray(MiB)]) : part;
      const res: UploadPartCommandOutput = await client.send(
        new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: i + 1, Body: body, ContentLength: part.length }),
      );
      assert.equal(res.ETag, `"${md5(part).toString('hex')}"`);
      etags.push(res.ETag as string);
    }
    const listed = await client.send(new ListPartsCommand({ Bucket: BUCKET, Key: key, UploadId }));
    assert.deepEqual(
      listed.Parts?.map((p) => [p.PartNumber, p.Size, p.ETag]),
      parts.map((_, i) => [i + 1, 5 * MiB, etags[i]]),
    );
    const done = await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }),
    );
    const expectedEtag = createHash('md5').update(Buffer.concat(parts.map(md5))).digest('hex');
    assert.equal(done.ETag, `"${expectedEtag}-3"`);
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    assert.equal(got.ContentType, 'image/tiff');
    assert.equal(got.ETag, done.ETag);
    assert.ok((await bodyOf(got)).equals(Buffer.concat(parts)));
    // No upload folder left behind.
    assert.deepEqual(await readdir(path.join(dataDir, '.uploads')), []);
  });

  test('abort removes the upload and its parts; unknown uploads are NoSuchUpload', async () => {
    const key = `${PREFIX}aborted.bin`;
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
    await client.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 1, Body: randomBytes(1000) }));
    await client.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId }));
    assert.deepEqual(await readdir(path.join(dataDir, '.uploads')), []);
    assert.deepEqual(await failure(client.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 2, Body: 'x' }))), {
      code: 'NoSuchUpload',
      status: 404,
    });
    assert.equal(
      (await failure(client.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"x"' }] } })))).code,
      'NoSuchUpload',
    );
    assert.equal((await failure(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })))).status, 404);
  });

  test('parts below 5 MiB (but the last) are refused at completion', async () => {
    const key = `${PREFIX}small-parts.bin`;
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
    const a = await client.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 1, Body: 'aaa' }));
    const b = await client.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 2, Body: 'bbb' }));
    const complete = new CompleteMultipartUploadCommand({
      Bucket: BUCKET,
      Key: key,
      UploadId,
      MultipartUpload: { Parts: [{ PartNumber: 1, ETag: a.ETag }, { PartNumber: 2, ETag: b.ETag }] },
    });
    assert.equal((await failure(client.send(complete))).code, 'EntityTooSmall');
    await client.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId }));
  });
});

describe('authorisation', () => {
  test('temporary credentials only reach their own prefix', async () => {
    const outside = 'projects/43/secret.txt';
    assert.deepEqual(await failure(client.send(new PutObjectCommand({ Bucket: BUCKET, Key: outside, Body: 'x' }))), { code: 'AccessDenied', status: 403 });
    // Not even a neighbouring prefix that merely starts the same way.
    assert.equal((await failure(client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'projects/420/x', Body: 'x' })))).code, 'AccessDenied');
    await s3.store.putObject(BUCKET, outside, Buffer.from('not yours'));
    assert.equal((await failure(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: outside })))).code, 'AccessDenied');
    assert.equal((await failure(client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: outside })))).code, 'AccessDenied');
    assert.equal((await failure(client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: outside })))).code, 'AccessDenied');
    assert.equal((await failure(client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'projects/' })))).code, 'AccessDenied');
    assert.equal((await failure(client.send(new ListObjectsV2Command({ Bucket: BUCKET })))).code, 'AccessDenied');
    assert.equal((await failure(client.send(new CopyObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}stolen`, CopySource: `${BUCKET}/${outside}` })))).code, 'AccessDenied');
    // Another bucket is denied, not revealed.
    assert.equal((await failure(client.send(new GetObjectCommand({ Bucket: 'other-bucket', Key: `${PREFIX}x` })))).code, 'AccessDenied');
    assert.equal((await failure(client.send(new GetObjectCommand({ Bucket: 'no-such-bucket', Key: `${PREFIX}x` })))).code, 'AccessDenied');
    assert.equal((await s3.store.headObject(BUCKET, outside))?.size, 9);
  });

  test('an upload refused before its body is read still gets its error answer', async () => {
    const big = randomBytes(8 * MiB);
    assert.equal((await failure(client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'projects/9/big.bin', Body: big })))).code, 'AccessDenied');
    assert.equal((await failure(client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'projects/9/big.bin', Body: Readable.from([big]), ContentLength: big.length })))).code, 'AccessDenied');
    // The server is still fine afterwards.
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}after-refusal`, Body: 'ok' }));
  });

  test('the root credential sees every bucket; unknown buckets are NoSuchBucket', async () => {
    const root = clientFor(s3.issuer.rootCredentials());
    const buckets = await root.send(new ListBucketsCommand({}));
    assert.deepEqual(buckets.Buckets?.map((b) => b.Name), [BUCKET, 'other-bucket']);
    const own = await client.send(new ListBucketsCommand({}));
    assert.deepEqual(own.Buckets?.map((b) => b.Name), [BUCKET]);
    assert.deepEqual(await failure(root.send(new GetObjectCommand({ Bucket: 'no-such-bucket', Key: 'x' }))), { code: 'NoSuchBucket', status: 404 });
    await root.send(new PutObjectCommand({ Bucket: 'other-bucket', Key: 'x', Body: 'y' }));
    root.destroy();
  });

  test('expired session token → ExpiredToken', async () => {
    const past = new EmbeddedCredentialIssuer({ masterKey, now: () => Date.now() - 2 * 3600_000 });
    const expired = clientFor(await past.issue(BUCKET, PREFIX, 3600));
    assert.equal((await failure(expired.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}x` })))).code, 'ExpiredToken');
    expired.destroy();
  });

  test('unknown access key, forged token, wrong secret', async () => {
    const unknown = clientFor({ accessKeyId: 'AKIAUNKNOWNKEY000000', secretAccessKey: 'x'.repeat(40) });
    assert.deepEqual(await failure(unknown.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: PREFIX }))), { code: 'InvalidAccessKeyId', status: 403 });
    const foreign = await new EmbeddedCredentialIssuer({ masterKey: randomBytes(32) }).issue(BUCKET, PREFIX, 3600);
    assert.equal((await failure(clientFor(foreign).send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: PREFIX })))).code, 'InvalidToken');
    const wrongSecret = clientFor({ ...creds, secretAccessKey: creds.secretAccessKey.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) });
    assert.deepEqual(await failure(wrongSecret.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}w`, Body: 'x' }))), {
      code: 'SignatureDoesNotMatch',
      status: 403,
    });
    assert.equal((await failure(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}w` })))).status, 404);
    unknown.destroy();
    wrongSecret.destroy();
  });

  test('a wrong x-amz-content-sha256 is refused and nothing is stored', async () => {
    const lying = clientFor(creds);
    // Replace the payload hash before signing: the signature is valid, the hash is not.
    lying.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers: Record<string, string> };
        request.headers['x-amz-content-sha256'] = createHash('sha256').update('something else').digest('hex');
        return next(args);
      },
      { step: 'build', name: 'lieAboutPayload' },
    );
    const key = `${PREFIX}lied.txt`;
    assert.deepEqual(await failure(lying.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'actual body' }))), {
      code: 'XAmzContentSHA256Mismatch',
      status: 400,
    });
    assert.equal((await failure(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })))).status, 404);
    assert.deepEqual(await readdir(path.join(dataDir, '.tmp')), []);
    lying.destroy();
  });

  test('a request signed 20 minutes ago → RequestTimeTooSkewed', async () => {
    const url = new URL(`${s3.url}/${BUCKET}/${PREFIX}x`);
    const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: creds, sha256: Sha256, uriEscapePath: false });
    const signed = await signer.sign(
      { method: 'GET', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } },
      { signingDate: new Date(Date.now() - 20 * 60_000) },
    );
    const res = await fetch(url, { headers: signed.headers });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /<Code>RequestTimeTooSkewed<\/Code>/);
  });
});

describe('presigned URLs', () => {
  test('presignGetUrl downloads with plain fetch; a tampered or expired one does not', async () => {
    const key = `${PREFIX}report/inspection report (final).pdf`;
    const body = randomBytes(2048);
    await s3.store.putObject(BUCKET, key, body, { contentType: 'application/pdf', metadata: { title: 'Pylône n°7 – 日本' } });
    const url = await s3.store.presignGetUrl(BUCKET, key, 300);
    assert.ok(url.startsWith(`${s3.url}/${BUCKET}/`));
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), body);
    assert.equal(res.headers.get('x-amz-meta-title'), `=?UTF-8?B?${Buffer.from('Pylône n°7 – 日本').toString('base64')}?=`);

    const signature = new URL(url).searchParams.get('X-Amz-Signature') as string;
    const flipped = signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');
    const tampered = await fetch(url.replace(`X-Amz-Signature=${signature}`, `X-Amz-Signature=${flipped}`));
    assert.equal(tampered.status, 403);
    const xml = await tampered.text();
    assert.match(xml, /<Code>SignatureDoesNotMatch<\/Code>/);
    assert.match(xml, /<RequestId>[0-9A-F]+<\/RequestId>/);
    assert.ok(tampered.headers.get('x-amz-request-id'));

    const bad = await fetch(await s3.store.presignGetUrl(BUCKET, key, 300, { contentDisposition: 'a\r\nX-Injected: 1' }));
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('x-injected'), null);
    await bad.arrayBuffer();
    const named = await fetch(await s3.store.presignGetUrl(BUCKET, key, 300, { contentDisposition: 'attachment; filename="report.pdf"' }));
    assert.equal(named.status, 200);
    assert.equal(named.headers.get('content-disposition'), 'attachment; filename="report.pdf"');
    await named.arrayBuffer();

    // The signature covers the path: the same URL for another key fails.
    const otherKey = await fetch(url.replace('report/', 'reports/'));
    assert.equal(otherKey.status, 403);

    const shortLived = await s3.store.presignGetUrl(BUCKET, key, 1);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const expired = await fetch(shortLived);
    assert.equal(expired.status, 403);
    assert.match(await expired.text(), /Request has expired/);
  });

  test('anonymous requests are refused', async () => {
    const res = await fetch(`${s3.url}/${BUCKET}/${PREFIX}x`);
    assert.equal(res.status, 403);
    assert.match(await res.text(), /<Code>AccessDenied<\/Code>/);
  });
});
