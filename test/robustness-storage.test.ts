// Issue 10, findings 5-7, against the embedded S3 endpoint with stock clients (@aws-sdk/client-s3)
// and raw signed requests where a client would hide what is checked (100 Continue, a body cut in
// two around a deletion):
//   5. temporary credentials stop when their inspection / project is deleted, and nothing written
//      with them outlives the deletion;
//   6. S3's size limits (5 GiB per PutObject / UploadPart, refused before "100 Continue") and the
//      per-prefix quota STORAGE_PREFIX_QUOTA_BYTES;
//   7. temp files and multipart uploads abandoned by a crash or a client are swept at start and
//      periodically (STORAGE_MULTIPART_EXPIRY_SECONDS).
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import pino from 'pino';
import { startEmbeddedS3 } from '../src/infra/storage/embedded-s3.ts';
import { Sha256 } from '../src/infra/storage/sigv4-common.ts';
import { s3ClientFor, type StorageCredentialsRecord } from '../src/sdk/inspection-client.ts';
import { startSystem } from '../src/system.ts';
import { cloudClient, type CloudTestClient } from './helpers/cloud-api.ts';
import { waitFor } from './helpers/inspection-fixtures.ts';
import { freshDatabaseUrl, startTestSystem, tempDir, testConfig, type TestSystem } from './helpers/test-system.ts';

const P = '/project/api/v3/projects';
const QUOTA = 100_000;

/** The S3 error a failed SDK call carries, or undefined when it succeeded. */
async function failure(call: Promise<unknown>): Promise<{ code: string; status: number | undefined } | undefined> {
  try {
    await call;
    return undefined;
  } catch (err) {
    const e = err as { name: string; $metadata?: { httpStatusCode?: number } };
    return { code: e.name, status: e.$metadata?.httpStatusCode };
  }
}

interface RawResponse {
  status: number;
  body: string;
  /** Whether the server sent "100 Continue". */
  continued: boolean;
}

/**
 * A signed request (UNSIGNED-PAYLOAD) over node:http, so that the test controls Expect, the
 * declared length and when (or whether) the body is sent. `sendBody` gets the request once the
 * server asked for the body (or at once without Expect) and writes what it likes.
 */
async function rawRequest(
  c: StorageCredentialsRecord,
  method: string,
  key: string,
  options: { query?: Record<string, string>; headers?: Record<string, string>; expectContinue?: boolean; sendBody?: (req: http.ClientRequest) => void },
): Promise<RawResponse> {
  const url = new URL(`${c.endpoint_override}/${c.bucket}/${key}`);
  const signer = new SignatureV4({
    service: 's3',
    region: c.region,
    credentials: { accessKeyId: c.access_key, secretAccessKey: c.secret_key, sessionToken: c.session_token },
    sha256: Sha256,
    uriEscapePath: false,
  });
  const query = options.query ?? {};
  const signed = await signer.sign({
    method,
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query,
    headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...options.headers },
  });
  const search = new URLSearchParams(query).toString();
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = http.request({
      method,
      host: url.hostname,
      port: url.port,
      path: url.pathname + (search ? `?${search}` : ''),
      headers: { ...signed.headers, ...(options.expectContinue ? { expect: '100-continue' } : {}) },
      agent: false,
    });
    req.on('continue', () => {
      continued = true;
      options.sendBody?.(req);
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body, continued });
      });
    });
    req.on('error', reject);
    if (options.expectContinue) req.flushHeaders();
    else options.sendBody?.(req);
  });
}

function codeOf(xml: string): string | undefined {
  return /<Code>([^<]+)<\/Code>/.exec(xml)?.[1];
}

describe('storage robustness (issue 10, findings 5 and 6)', () => {
  let system: TestSystem;
  let cloud: CloudTestClient;
  const tmpDir = () => path.join(system.dataDir, 'objects', '.tmp');
  const uploadsDir = () => path.join(system.dataDir, 'objects', '.uploads');

  before(async () => {
    system = await startTestSystem({ storagePrefixQuotaBytes: QUOTA });
    cloud = await cloudClient(system, 'Storage robustness');
  });
  after(async () => {
    await system?.stop();
  });

  async function newProject(): Promise<{ id: number; credentials: StorageCredentialsRecord; s3: S3Client }> {
    const project = await cloud.call('POST', `${P}/`, { name: 'Storage robustness' }, { expect: 201 });
    const credentials = await cloud.call('GET', `${P}/${project.id}/s3_credentials/`, undefined, { expect: 200 });
    return { id: project.id, credentials, s3: s3ClientFor(credentials) };
  }

  // ---- finding 5 ------------------------------------------------------------------------------

  test('5: after DELETE /v1/inspections/{id}/ the old storage credentials get AccessDenied and nothing they wrote stays', async () => {
    const { client } = await system.newAccount();
    const asset = await client.createAsset({ name: 'Mast 5', type: 1 });
    const inspection = await client.createInspection({ asset: asset.id });
    const c = await client.storageCredentials(inspection.id);
    const s3 = s3ClientFor(c);
    try {
      const before = `${c.key}before.jpg`;
      await s3.send(new PutObjectCommand({ Bucket: c.bucket, Key: before, Body: randomBytes(1000) }));
      await client.expect(204, 'DELETE', `/v1/inspections/${inspection.id}/`);
      // The cloud project and its files go in a job.
      await waitFor('the cloud project deleted', async () => (await system.cloud.projects.projects.findById(inspection.project_id)) === undefined, 30_000);
      await waitFor('the uploaded file removed', async () => (await system.store.headObject(c.bucket, before)) === undefined, 30_000);

      const late = `${c.key}after.jpg`;
      assert.deepEqual(await failure(s3.send(new PutObjectCommand({ Bucket: c.bucket, Key: late, Body: randomBytes(1000) }))), { code: 'AccessDenied', status: 403 });
      assert.deepEqual(await failure(s3.send(new GetObjectCommand({ Bucket: c.bucket, Key: before }))), { code: 'AccessDenied', status: 403 });
      assert.equal(await system.store.headObject(c.bucket, late), undefined, 'nothing written');
    } finally {
      s3.destroy();
    }
  });

  test('5: an upload that streams in while its project is deleted is refused and removed, with the multipart uploads in progress', async () => {
    const { id, credentials: c, s3 } = await newProject();
    try {
      await s3.send(new PutObjectCommand({ Bucket: c.bucket, Key: `${c.key}first.jpg`, Body: randomBytes(100) })); // the answer is cached now
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: c.bucket, Key: `${c.key}big.bin` }));
      assert.ok(fs.readdirSync(uploadsDir()).includes(UploadId!));

      const key = `${c.key}racing.jpg`;
      const half = randomBytes(2000);
      const tmpBefore = new Set(fs.readdirSync(tmpDir()));
      let held: http.ClientRequest | undefined;
      const response = rawRequest(c, 'PUT', key, {
        headers: { 'content-length': String(2 * half.length) },
        sendBody: (req) => {
          held = req;
          req.write(half);
        },
      });
      // The first half is being written to a temp file: the request passed every check already.
      await waitFor('the upload under way', async () => fs.readdirSync(tmpDir()).some((name) => !tmpBefore.has(name)), 10_000);
      await cloud.call('DELETE', `${P}/${id}/`, undefined, { expect: 204 });
      assert.equal(await system.store.headObject(c.bucket, `${c.key}first.jpg`), undefined);
      assert.ok(!fs.readdirSync(uploadsDir()).includes(UploadId!), 'the multipart upload in progress went with the project');
      held!.end(half);
      const raw = await response;
      assert.equal(raw.status, 403, raw.body);
      assert.equal(codeOf(raw.body), 'AccessDenied');
      assert.equal(await system.store.headObject(c.bucket, key), undefined, 'the racing upload did not survive');
    } finally {
      s3.destroy();
    }
  });

  // ---- finding 6 ------------------------------------------------------------------------------

  test('6: a PUT declaring 6 GB with Expect: 100-continue gets EntityTooLarge, without 100 Continue; so do a 6 GB part and part 10001', async () => {
    const { credentials: c, s3 } = await newProject();
    try {
      const big = { 'content-length': String(6_000_000_000) };
      const put = await rawRequest(c, 'PUT', `${c.key}huge.bin`, { headers: big, expectContinue: true, sendBody: (req) => req.destroy() });
      assert.deepEqual([put.status, codeOf(put.body), put.continued], [400, 'EntityTooLarge', false]);

      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: c.bucket, Key: `${c.key}huge.bin` }));
      const part = await rawRequest(c, 'PUT', `${c.key}huge.bin`, {
        query: { partNumber: '1', uploadId: UploadId! },
        headers: big,
        expectContinue: true,
        sendBody: (req) => req.destroy(),
      });
      assert.deepEqual([part.status, codeOf(part.body), part.continued], [400, 'EntityTooLarge', false]);
      const tooMany = await rawRequest(c, 'PUT', `${c.key}huge.bin`, {
        query: { partNumber: '10001', uploadId: UploadId! },
        headers: { 'content-length': '10' },
        expectContinue: true,
        sendBody: (req) => req.destroy(),
      });
      assert.deepEqual([tooMany.status, codeOf(tooMany.body), tooMany.continued], [400, 'InvalidArgument', false]);
      await s3.send(new AbortMultipartUploadCommand({ Bucket: c.bucket, Key: `${c.key}huge.bin`, UploadId }));
    } finally {
      s3.destroy();
    }
  });

  test('6: STORAGE_PREFIX_QUOTA_BYTES caps what one project stores, parts of multipart uploads in progress included', async () => {
    const { credentials: c, s3 } = await newProject();
    const put = (name: string, size: number) => s3.send(new PutObjectCommand({ Bucket: c.bucket, Key: `${c.key}${name}`, Body: randomBytes(size) }));
    try {
      await put('a.bin', 60_000);
      assert.deepEqual(await failure(put('b.bin', 50_000)), { code: 'QuotaExceeded', status: 403 });
      assert.equal(await system.store.headObject(c.bucket, `${c.key}b.bin`), undefined);

      const key = `${c.key}multi.bin`;
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: c.bucket, Key: key }));
      await s3.send(new UploadPartCommand({ Bucket: c.bucket, Key: key, UploadId, PartNumber: 1, Body: randomBytes(30_000) }));
      assert.deepEqual(await failure(put('c.bin', 20_000)), { code: 'QuotaExceeded', status: 403 }, 'the part counts');
      assert.deepEqual(
        await failure(s3.send(new UploadPartCommand({ Bucket: c.bucket, Key: key, UploadId, PartNumber: 2, Body: randomBytes(20_000) }))),
        { code: 'QuotaExceeded', status: 403 },
      );
      await s3.send(new AbortMultipartUploadCommand({ Bucket: c.bucket, Key: key, UploadId }));
      await put('c.bin', 20_000); // 80 000 bytes
      await s3.send(new DeleteObjectCommand({ Bucket: c.bucket, Key: `${c.key}a.bin` }));
      await put('b.bin', 50_000); // deletions free space at once
      // The server's own writes (processing results, root credential) are not the client's quota.
      await system.store.putObject(c.bucket, `${c.key}server.bin`, randomBytes(10_000));
    } finally {
      s3.destroy();
    }
  });
});

describe('storage robustness (issue 10, finding 6: a smaller upload limit, for tests)', () => {
  test('a body above maxUploadSize is refused: declared (before 100 Continue) or streamed without a length', async () => {
    const dir = tempDir();
    const s3 = await startEmbeddedS3({ rootDir: dir, buckets: ['bkt'], masterKey: randomBytes(32), logger: pino({ level: 'silent' }), maxUploadSize: 1000 });
    try {
      const issued = await s3.issuer.issue('bkt', 'p/', 600);
      const c: StorageCredentialsRecord = {
        access_key: issued.accessKeyId,
        secret_key: issued.secretAccessKey,
        session_token: issued.sessionToken,
        expiration: issued.expiration.toISOString(),
        bucket: 'bkt',
        key: 'p/',
        server_time: new Date().toISOString(),
        region: issued.region,
        is_bucket_accelerated: false,
        endpoint_override: s3.url,
      };
      const client = s3ClientFor(c);
      await client.send(new PutObjectCommand({ Bucket: 'bkt', Key: 'p/ok.bin', Body: randomBytes(1000) }));
      assert.deepEqual(await failure(client.send(new PutObjectCommand({ Bucket: 'bkt', Key: 'p/big.bin', Body: randomBytes(1001) }))), {
        code: 'EntityTooLarge',
        status: 400,
      });
      client.destroy();

      const declared = await rawRequest(c, 'PUT', 'p/declared.bin', { headers: { 'content-length': '1001' }, expectContinue: true, sendBody: (req) => req.destroy() });
      assert.deepEqual([declared.status, codeOf(declared.body), declared.continued], [400, 'EntityTooLarge', false]);
      // Transfer-Encoding: chunked declares nothing: the limit holds while the body streams.
      const chunked = await rawRequest(c, 'PUT', 'p/chunked.bin', {
        headers: { 'transfer-encoding': 'chunked' },
        sendBody: (req) => {
          req.write(randomBytes(600));
          req.end(randomBytes(600));
        },
      });
      assert.deepEqual([chunked.status, codeOf(chunked.body)], [400, 'EntityTooLarge']);
      assert.equal(await s3.store.headObject('bkt', 'p/chunked.bin'), undefined);
      assert.equal(await s3.store.headObject('bkt', 'p/big.bin'), undefined);
      assert.deepEqual(fs.readdirSync(path.join(dir, '.tmp')), [], 'no temp file left');
    } finally {
      await s3.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---- finding 7 ----------------------------------------------------------------------------------

function age(file: string, ms: number): void {
  const when = new Date(Date.now() - ms);
  fs.utimesSync(file, when, when);
}

/** A multipart upload folder as disk-multipart.ts writes it, started `ms` ago. */
function leaveUpload(root: string, bucket: string, ms: number): string {
  const id = randomBytes(24).toString('base64url');
  const dir = path.join(root, '.uploads', id);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'upload.json'), JSON.stringify({ bucket, key: 'uploads/x/part.bin', initiated: Date.now() - ms, options: {} }));
  fs.writeFileSync(path.join(dir, `part-1-${randomUUID()}`), randomBytes(1000));
  return id;
}

describe('storage robustness (issue 10, finding 7)', () => {
  test('temp files of interrupted writes and expired multipart uploads are removed at start; STORAGE_MULTIPART_EXPIRY_SECONDS sets the expiry', async () => {
    const dataDir = tempDir();
    const database = await freshDatabaseUrl();
    const root = path.join(dataDir, 'objects');
    fs.mkdirSync(path.join(root, '.tmp'), { recursive: true });
    // Left by a kill -9 two hours ago (an UploadPart streaming into a temp file), and one being written now.
    const oldTmp = path.join(root, '.tmp', randomUUID());
    fs.writeFileSync(oldTmp, randomBytes(5000));
    age(oldTmp, 2 * 3600_000);
    const freshTmp = path.join(root, '.tmp', randomUUID());
    fs.writeFileSync(freshTmp, randomBytes(10));
    const config = testConfig(dataDir, { databaseUrl: database?.url, storageMultipartExpirySeconds: 3600 });
    const expired = leaveUpload(root, config.storageBucket, 2 * 3600_000);
    const recent = leaveUpload(root, config.storageBucket, 60_000);
    const system = await startSystem(config, 'serve', pino({ level: config.logLevel }));
    try {
      assert.equal(fs.existsSync(oldTmp), false, 'the abandoned temp file is gone');
      assert.equal(fs.existsSync(freshTmp), true, 'a temp file being written is kept');
      assert.deepEqual(fs.readdirSync(path.join(root, '.uploads')).sort(), [recent].sort(), `upload ${expired} expired, the recent one is kept`);
    } finally {
      await system.stop();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('the sweep runs periodically while the endpoint serves, and stops with it', async () => {
    const dir = tempDir();
    const s3 = await startEmbeddedS3({
      rootDir: dir,
      buckets: ['bkt'],
      masterKey: randomBytes(32),
      logger: pino({ level: 'silent' }),
      tmpExpiryMs: 60_000,
      multipartExpiryMs: 60_000,
      sweepIntervalMs: 50,
    });
    try {
      fs.mkdirSync(path.join(dir, '.tmp'), { recursive: true });
      const tmp = path.join(dir, '.tmp', randomUUID());
      fs.writeFileSync(tmp, randomBytes(10));
      age(tmp, 120_000);
      const upload = leaveUpload(dir, 'bkt', 120_000);
      await waitFor('the periodic sweep', async () => !fs.existsSync(tmp) && !fs.existsSync(path.join(dir, '.uploads', upload)), 10_000);
    } finally {
      await s3.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
