// CORS on the embedded S3 endpoint (src/infra/storage/s3-cors.ts): the web console, served by the
// inspection service (another origin), uploads with the AWS SDK in the browser and reads presigned
// URLs. Preflights from the console's origins are answered without a signature; real requests
// from them (answers and errors alike) carry Access-Control-Allow-Origin and expose the ETag; any
// other origin gets no CORS headers and a 403 preflight. Real HTTP, a real S3 client.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { s3ClientFor } from '../src/sdk/inspection-client.ts';
import type { StorageCredentialsRecord } from '../src/shared/schemas/storage-credentials.ts';

const EXTRA_ORIGIN = 'http://console.example.test:5173';
let system: TestSystem;
let account: TestAccount;
let credentials: StorageCredentialsRecord;

before(async () => {
  system = await startTestSystem({ consoleOrigins: [EXTRA_ORIGIN] });
  account = await system.newAccount();
  const asset = await account.client.createAsset({ name: 'Tower', type: 1 });
  const inspection = await account.client.createInspection({ asset: asset.id, name: 'Flight' });
  credentials = await account.client.storageCredentials(inspection.id);
});
after(() => system?.stop());

function consoleOrigin(): string {
  return new URL(system.urls.inspection).origin;
}

/** A raw request to the S3 endpoint; answers status, headers and body. */
function raw(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, system.urls.storage), { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function preflight(origin: string, method = 'PUT', requestHeaders = 'authorization, x-amz-date, x-amz-content-sha256, x-amz-security-token, content-type, amz-sdk-invocation-id, amz-sdk-request, x-amz-checksum-crc32, x-not-allowed') {
  const key = `${credentials.key}photo.jpg`;
  return raw('OPTIONS', `/${credentials.bucket}/${key}`, {
    Origin: origin,
    'Access-Control-Request-Method': method,
    'Access-Control-Request-Headers': requestHeaders,
  });
}

/** An S3 client whose requests carry an Origin header and which records the last answer's headers. */
function browserLikeClient(origin: string): { s3: S3Client; last: () => Record<string, string> } {
  const s3 = s3ClientFor(credentials);
  let headers: Record<string, string> = {};
  s3.middlewareStack.add(
    (next) => async (args) => {
      (args.request as { headers: Record<string, string> }).headers.origin = origin;
      return next(args);
    },
    { step: 'build', name: 'addOrigin' },
  );
  s3.middlewareStack.add(
    (next) => async (args) => {
      try {
        const out = await next(args);
        headers = (out.response as { headers: Record<string, string> }).headers;
        return out;
      } catch (err) {
        headers = ((err as { $response?: { headers: Record<string, string> } }).$response?.headers ?? {}) as Record<string, string>;
        throw err;
      }
    },
    { step: 'deserialize', name: 'recordHeaders', priority: 'low' },
  );
  return { s3, last: () => headers };
}

test('a preflight from the console origin is answered without a signature, echoing only allowed headers', async () => {
  const res = await preflight(consoleOrigin());
  assert.equal(res.status, 204);
  assert.equal(res.headers['access-control-allow-origin'], consoleOrigin());
  assert.deepEqual(String(res.headers['access-control-allow-methods']).split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'POST', 'PUT']);
  const allowed = String(res.headers['access-control-allow-headers']).split(', ');
  for (const h of ['authorization', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token', 'content-type', 'amz-sdk-invocation-id', 'x-amz-checksum-crc32']) {
    assert.ok(allowed.includes(h), `${h} allowed`);
  }
  assert.ok(!allowed.includes('x-not-allowed'));
  assert.ok(Number(res.headers['access-control-max-age']) > 0);
  assert.match(String(res.headers.vary), /Origin/);
});

test('the loopback spellings of the console origin are the same page', async () => {
  const port = new URL(system.urls.inspection).port;
  const res = await preflight(`http://localhost:${port}`);
  assert.equal(res.status, 204);
  assert.equal(res.headers['access-control-allow-origin'], `http://localhost:${port}`);
});

test('a preflight from another origin, or for another method, is refused with no CORS headers', async () => {
  for (const res of [await preflight('http://evil.example.test'), await preflight(consoleOrigin(), 'PATCH')]) {
    assert.equal(res.status, 403);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-methods'], undefined);
  }
});

test('an origin from CONSOLE_ORIGINS is allowed too', async () => {
  const res = await preflight(EXTRA_ORIGIN);
  assert.equal(res.status, 204);
  assert.equal(res.headers['access-control-allow-origin'], EXTRA_ORIGIN);
});

test('a real PutObject from the console origin gets the CORS headers and the ETag exposed; errors too', async () => {
  const { s3, last } = browserLikeClient(consoleOrigin());
  try {
    const key = `${credentials.key}cors/photo.jpg`;
    const put = await s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: key, Body: Buffer.from('not really a jpeg'), ContentType: 'image/jpeg' }));
    assert.ok(put.ETag);
    assert.equal(last()['access-control-allow-origin'], consoleOrigin());
    assert.match(last().vary, /Origin/);
    const exposed = last()['access-control-expose-headers'].split(', ');
    for (const h of ['ETag', 'Content-Length', 'Content-Range', 'x-amz-request-id']) assert.ok(exposed.includes(h), `${h} exposed`);

    // An error answer (a missing key) carries them as well, so the page can read the S3 error.
    await assert.rejects(s3.send(new GetObjectCommand({ Bucket: credentials.bucket, Key: `${credentials.key}missing.jpg` })), { name: 'NoSuchKey' });
    assert.equal(last()['access-control-allow-origin'], consoleOrigin());
  } finally {
    s3.destroy();
  }
});

test('requests from an origin not allowed get no CORS headers (the browser then refuses the answer)', async () => {
  const { s3, last } = browserLikeClient('http://evil.example.test');
  try {
    await s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: `${credentials.key}cors/other.jpg`, Body: Buffer.from('x') }));
    assert.equal(last()['access-control-allow-origin'], undefined);
    assert.equal(last()['access-control-expose-headers'], undefined);
  } finally {
    s3.destroy();
  }
});

test('a presigned GET URL (point clouds, thumbnails) can be read cross-origin', async () => {
  const key = `${credentials.key}cors/cloud.bin`;
  await system.store.putObject(credentials.bucket, key, Buffer.from('points'));
  const url = new URL(await system.store.presignGetUrl(credentials.bucket, key, 300));
  const res = await raw('GET', url.pathname + url.search, { Origin: consoleOrigin(), Range: 'bytes=0-2' });
  assert.equal(res.status, 206);
  assert.equal(res.body, 'poi');
  assert.equal(res.headers['access-control-allow-origin'], consoleOrigin());
  assert.ok(String(res.headers['access-control-expose-headers']).includes('Content-Range'));
});
