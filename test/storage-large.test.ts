// A large multipart upload and download through the embedded endpoint with streamed bodies on
// both sides: parts in order, S3 ETags, whole-object checksum. The peak RSS is printed, not
// asserted: memory is measured by the upload benchmark (bench/, 1 GiB against a 250 MB ceiling).
// STORAGE_LARGE_TEST_MIB changes the size (default 96).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import pino from 'pino';
import { startEmbeddedS3 } from '../src/infra/storage/embedded-s3.ts';

const MiB = 1024 * 1024;
const TOTAL_MIB = Number(process.env.STORAGE_LARGE_TEST_MIB ?? 96);
const PART_MIB = Math.min(32, TOTAL_MIB);

test(`a ${TOTAL_MIB} MiB multipart upload and download stream through intact`, { timeout: 10 * 60_000 }, async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'storage-large-'));
  const s3 = await startEmbeddedS3({ rootDir: dataDir, buckets: ['big'], masterKey: randomBytes(32), logger: pino({ level: 'silent' }) });
  const creds = await s3.issuer.issue('big', 'p/', 3600);
  const client = new S3Client({ region: creds.region, endpoint: creds.endpoint, forcePathStyle: true, credentials: creds, maxAttempts: 1 });
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 20);
  try {
    const block = randomBytes(MiB);
    const key = 'p/big.bin';
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: 'big', Key: key }));
    const parts: Array<{ PartNumber: number; ETag: string }> = [];
    const partMd5s: Buffer[] = [];
    const whole = createHash('md5');
    for (let offset = 0, partNumber = 1; offset < TOTAL_MIB; offset += PART_MIB, partNumber++) {
      const mib = Math.min(PART_MIB, TOTAL_MIB - offset);
      const partHash = createHash('md5');
      // Each MiB differs (its first bytes carry its index), so misordered data would show.
      const body = Readable.from(
        (function* () {
          for (let i = 0; i < mib; i++) {
            const chunk = Buffer.from(block);
            chunk.writeUInt32BE(offset + i, 0);
            partHash.update(chunk);
            whole.update(chunk);
            yield chunk;
          }
        })(),
      );
      const res = await client.send(new UploadPartCommand({ Bucket: 'big', Key: key, UploadId, PartNumber: partNumber, Body: body, ContentLength: mib * MiB }));
      const md5 = partHash.digest();
      partMd5s.push(md5);
      assert.equal(res.ETag, `"${md5.toString('hex')}"`);
      parts.push({ PartNumber: partNumber, ETag: res.ETag as string });
    }
    const done = await client.send(new CompleteMultipartUploadCommand({ Bucket: 'big', Key: key, UploadId, MultipartUpload: { Parts: parts } }));
    assert.equal(done.ETag, `"${createHash('md5').update(Buffer.concat(partMd5s)).digest('hex')}-${parts.length}"`);

    // Download: the SDK validates the whole-object CRC32 as the stream ends.
    const got = await client.send(new GetObjectCommand({ Bucket: 'big', Key: key }));
    assert.equal(got.ContentLength, TOTAL_MIB * MiB);
    const downloaded = createHash('md5');
    let size = 0;
    for await (const chunk of got.Body as Readable) {
      downloaded.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    assert.equal(size, TOTAL_MIB * MiB);
    assert.equal(downloaded.digest('hex'), whole.digest('hex'));
  } finally {
    clearInterval(sampler);
    client.destroy();
    await s3.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  console.log(`# peak RSS ${Math.round(peakRss / 1e6)} MB for ${TOTAL_MIB} MiB`);
});
