// Issue 27, finding 17 (storage part), on the `storage` command (the embedded endpoint alone):
// CreateBucket of a new bucket answered NoSuchBucket; it now says that creating buckets is not
// supported (501 NotImplemented; the configured bucket: 409 BucketAlreadyOwnedByYou, as S3
// answers its owner). And a 501 is the client asking for something this endpoint does not do: it
// is logged at warn, with its code, without a stack trace (it was an error with the stack).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CreateBucketCommand, GetObjectTaggingCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { tempDir } from './helpers/test-system.ts';
import { waitFor } from './helpers/inspection-fixtures.ts';

const BUCKET = 'oi-objects';
const ROOT = { accessKeyId: 'OITESTROOT0000000002', secretAccessKey: crypto.randomBytes(30).toString('base64url') };

async function failure(promise: Promise<unknown>): Promise<S3ServiceException> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof S3ServiceException) return err;
    throw err;
  }
  assert.fail('expected the call to fail');
}

describe('storage command: CreateBucket and the log of unsupported requests (issue 27, finding 17)', () => {
  let storage: ServerProcess;
  let dataDir: string;
  let client: S3Client;
  before(async () => {
    dataDir = tempDir('oi-storage-mb-');
    storage = await startServerProcess({ DATA_DIR: dataDir, STORAGE_BUCKET: BUCKET, STORAGE_ROOT_ACCESS_KEY: ROOT.accessKeyId, STORAGE_ROOT_SECRET_KEY: ROOT.secretAccessKey }, 'storage');
    client = new S3Client({ endpoint: storage.urls.storage, region: 'us-east-1', forcePathStyle: true, credentials: ROOT, maxAttempts: 1 });
  });
  after(async () => {
    storage?.child.kill('SIGTERM');
    await storage?.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('CreateBucket of a new bucket: 501 NotImplemented saying buckets are configured; of the configured one: 409', async () => {
    const created = await failure(client.send(new CreateBucketCommand({ Bucket: 'another-bucket' })));
    assert.equal(created.name, 'NotImplemented');
    assert.equal(created.$metadata.httpStatusCode, 501);
    assert.match(created.message, /Creating buckets is not supported: this endpoint serves the buckets it is configured with \(oi-objects\)/);

    const existing = await failure(client.send(new CreateBucketCommand({ Bucket: BUCKET })));
    assert.equal(existing.name, 'BucketAlreadyOwnedByYou');
    assert.equal(existing.$metadata.httpStatusCode, 409);
  });

  it('a 501 is logged at warn with its code, no error line and no stack trace', async () => {
    const tagging = await failure(client.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: 'a.jpg' })));
    assert.equal(tagging.$metadata.httpStatusCode, 501);
    const logLines = () =>
      storage
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; code?: string; operation?: string; err?: unknown });
    // Written once the answer is sent: wait for it.
    await waitFor('the log line of the tagging request', async () => logLines().some((line) => line.operation === 'object?tagging'), 10_000);
    const lines = logLines();
    const requests = lines.filter((line) => line.msg === 's3 request' && line.code === 'NotImplemented');
    assert.deepEqual(
      requests.map((line) => [line.level, line.operation]),
      [
        [40, 'CreateBucket'],
        [40, 'object?tagging'],
      ],
    );
    assert.deepEqual(lines.filter((line) => line.level >= 50), [], 'no error lines');
    assert.doesNotMatch(storage.output(), /"stack"|\n\s+at /);
  });
});
