// Issue 27, finding 10 (storage part): 300 open multipart uploads were accepted on one prefix.
// Now the embedded endpoint holds at most STORAGE_PREFIX_MAX_MULTIPART_UPLOADS open under one
// temporary credential's prefix: one more is refused with 403 QuotaExceeded, which a stock client
// prints with its message; exact under 30 concurrent creations; a completed, aborted or deleted
// upload frees its slot.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import pino from 'pino';
import { startEmbeddedS3, type EmbeddedS3 } from '../src/infra/storage/embedded-s3.ts';
import type { TemporaryCredentials } from '../src/infra/storage/object-store.ts';
import { requireTool } from './helpers/system-tools.ts';
import { tempDir } from './helpers/test-system.ts';

const BUCKET = 'inspections';
const PREFIX = 'projects/7/';
const CAP = 10;

function clientFor(creds: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }, endpoint: string): S3Client {
  return new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: creds, maxAttempts: 1 });
}

describe('cap on open multipart uploads per prefix (issue 27, finding 10)', () => {
  let dir: string;
  let s3: EmbeddedS3;
  let creds: TemporaryCredentials;
  let client: S3Client;
  before(async () => {
    dir = tempDir('oi-multipart-cap-');
    s3 = await startEmbeddedS3({ rootDir: dir, buckets: [BUCKET], masterKey: randomBytes(32), logger: pino({ level: 'silent' }), maxOpenUploadsPerPrefix: CAP });
    creds = await s3.issuer.issue(BUCKET, PREFIX, 3600);
    client = clientFor(creds, s3.url);
  });
  after(async () => {
    await s3?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const create = (key: string, c = client) => c.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));

  it('30 concurrent creations: exactly 10 accepted, the others 403 QuotaExceeded saying why', async () => {
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => create(`${PREFIX}race/${i}.jpg`)));
    const accepted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as S3ServiceException);
    assert.equal(accepted.length, CAP);
    assert.equal(refused.length, 30 - CAP);
    for (const err of refused) {
      assert.ok(err instanceof S3ServiceException, String(err));
      assert.equal(err.name, 'QuotaExceeded');
      assert.equal(err.$metadata.httpStatusCode, 403);
      assert.match(err.message, /Too many multipart uploads in progress under projects\/7\/: at most 10/);
    }
  });

  it('another prefix has its own slots; the root credential is not capped', async () => {
    const other = clientFor(await s3.issuer.issue(BUCKET, 'projects/8/', 3600), s3.url);
    for (let i = 0; i < CAP; i++) assert.ok((await create(`projects/8/${i}.jpg`, other)).UploadId);
    await assert.rejects(create('projects/8/one-more.jpg', other), { name: 'QuotaExceeded' });
    const root = clientFor(s3.issuer.rootCredentials(), s3.url);
    assert.ok((await create('projects/8/by-the-server.bin', root)).UploadId);
  });

  it('an aborted or completed upload frees its slot; so does deleting the prefix', async () => {
    await assert.rejects(create(`${PREFIX}one-more.jpg`), { name: 'QuotaExceeded' });
    const [abortable, completable] = await s3.store.multipartUploadIdsUnder(BUCKET, `${PREFIX}race/`).then(async (ids) => {
      // The keys of two of the race's uploads, as a client would have kept them.
      const records = await Promise.all(ids.map(async (id) => ({ id, key: JSON.parse(fs.readFileSync(path.join(dir, '.uploads', id, 'upload.json'), 'utf8')).key as string })));
      return records.slice(0, 2);
    });
    await client.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: abortable.key, UploadId: abortable.id }));
    const freed = await create(`${PREFIX}after-abort.jpg`);
    assert.ok(freed.UploadId);
    await assert.rejects(create(`${PREFIX}one-more.jpg`), { name: 'QuotaExceeded' });

    const part = await client.send(new UploadPartCommand({ Bucket: BUCKET, Key: completable.key, UploadId: completable.id, PartNumber: 1, Body: Buffer.from('photo') }));
    await client.send(
      new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: completable.key, UploadId: completable.id, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }),
    );
    assert.ok((await create(`${PREFIX}after-complete.jpg`)).UploadId);
    await assert.rejects(create(`${PREFIX}one-more.jpg`), { name: 'QuotaExceeded' });

    await s3.store.deletePrefix(BUCKET, PREFIX); // the inspection was deleted: its uploads go too
    assert.ok((await create(`${PREFIX}fresh.jpg`)).UploadId);
  });

  it('aws-cli shows the refusal with its code and message', async (t) => {
    if (!requireTool(t, '/usr/bin/aws', 'awscli')) return;
    while ((await s3.store.multipartUploadIdsUnder(BUCKET, PREFIX)).length < CAP) await create(`${PREFIX}fill/${randomBytes(4).toString('hex')}`);
    const env = {
      AWS_ACCESS_KEY_ID: creds.accessKeyId,
      AWS_SECRET_ACCESS_KEY: creds.secretAccessKey,
      AWS_SESSION_TOKEN: creds.sessionToken,
      AWS_DEFAULT_REGION: creds.region,
      HOME: dir, // keeps this machine's ~/.aws out
    };
    const stderr = await promisify(execFile)('/usr/bin/aws', ['--endpoint-url', s3.url, 's3api', 'create-multipart-upload', '--bucket', BUCKET, '--key', `${PREFIX}cli.jpg`], { env, timeout: 60_000 }).then(
      () => assert.fail('aws-cli created an upload beyond the cap'),
      (err: { stderr: string }) => err.stderr,
    );
    assert.match(stderr, /An error occurred \(QuotaExceeded\) when calling the CreateMultipartUpload operation: Too many multipart uploads in progress under projects\/7\/: at most 10/);
  });
});
