// The `storage` command (the embedded S3 endpoint alone, with STS AssumeRole) as a separate process
// over real HTTP, used through the services' S3 store (s3-object-store.ts) and STS issuer
// (sts-credential-issuer.ts) exactly as they would use MinIO: root credentials, AssumeRole, prefix
// scoping both ways, multipart, ranges, paging, presigned URLs, expiry.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { S3ObjectStore } from '../src/infra/storage/s3-object-store.ts';
import { StsCredentialIssuer, prefixSessionPolicy } from '../src/infra/storage/sts-credential-issuer.ts';
import type { TemporaryCredentials } from '../src/infra/storage/object-store.ts';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { freshDatabaseUrl } from './helpers/test-system.ts';
import { bootstrapFile, type DemoCredentials } from '../src/admin/bootstrap.ts';
import { InspectionClient } from '../src/sdk/inspection-client.ts';
import { generateDemoImageSet } from '../scripts/generate-demo-images.ts';
import { s3Outcome } from './helpers/s3-outcome.ts';

const BUCKET = 'oi-objects';
const ROOT = { accessKeyId: 'OITESTROOT0000000001', secretAccessKey: crypto.randomBytes(30).toString('base64url') };

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function clientFor(endpoint: string, c: Pick<TemporaryCredentials, 'accessKeyId' | 'secretAccessKey'> & { sessionToken?: string }): S3Client {
  return new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: c });
}

describe('storage process: S3 store and STS AssumeRole over HTTP', () => {
  let storage: ServerProcess;
  let dataDir: string;
  let endpoint: string;
  let store: S3ObjectStore;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oi-storage-'));
    storage = await startServerProcess(
      { DATA_DIR: dataDir, STORAGE_BUCKET: BUCKET, STORAGE_ROOT_ACCESS_KEY: ROOT.accessKeyId, STORAGE_ROOT_SECRET_KEY: ROOT.secretAccessKey, STORAGE_STS_MIN_DURATION_SECONDS: '1' },
      'storage',
      { timeoutMs: 60_000 },
    );
    endpoint = storage.urls.storage;
    store = new S3ObjectStore({ endpoint, region: 'us-east-1', ...ROOT, forcePathStyle: true });
  });
  after(async () => {
    storage?.child.kill('SIGTERM');
    await storage?.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('root credentials: every object operation, paging, multipart with abort, ranges, presigned URLs', async () => {
    const body = crypto.randomBytes(300_000);
    await store.putObject(BUCKET, 'root/a.bin', body, { contentType: 'application/octet-stream' });
    assert.equal((await store.headObject(BUCKET, 'root/a.bin'))?.size, body.length);
    const ranged = await store.getObject(BUCKET, 'root/a.bin', { start: 1000, end: 1999 });
    assert.deepEqual(await readAll(ranged.body), body.subarray(1000, 2000));
    assert.equal(ranged.info.size, body.length);

    for (let i = 0; i < 7; i++) await store.putObject(BUCKET, `root/page/${i}`, Buffer.from(String(i)));
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await store.listObjects(BUCKET, { prefix: 'root/page/', maxKeys: 3, continuationToken: token });
      seen.push(...page.objects.map((o) => o.key));
      token = page.isTruncated ? page.nextContinuationToken : undefined;
      pages++;
    } while (token);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6].map((i) => `root/page/${i}`));

    // A 20 MiB stream of unknown length goes up as a multipart upload (8 MiB parts).
    const large = crypto.randomBytes(20 * 1024 * 1024);
    const info = await store.putObject(BUCKET, 'root/large.bin', Readable.from(Array.from({ length: 20 }, (_, i) => large.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024))));
    assert.match(info.etag, /-3"$/, 'three parts');
    assert.ok(crypto.createHash('sha256').update(await readAll((await store.getObject(BUCKET, 'root/large.bin')).body)).digest().equals(crypto.createHash('sha256').update(large).digest()));
    const aborted = await store.createMultipartUpload(BUCKET, 'root/aborted.bin');
    await store.uploadPart(BUCKET, 'root/aborted.bin', aborted.uploadId, 1, Buffer.alloc(1000));
    await store.abortMultipartUpload(BUCKET, 'root/aborted.bin', aborted.uploadId);
    await assert.rejects(store.completeMultipartUpload(BUCKET, 'root/aborted.bin', aborted.uploadId, []), /NoSuchUpload|upload/i);

    const url = await store.presignGetUrl(BUCKET, 'root/a.bin', 2);
    const response = await fetch(url);
    assert.equal(response.status, 200);
    assert.ok(Buffer.from(await response.arrayBuffer()).equals(body));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.equal((await fetch(url)).status, 403, 'an expired presigned URL is refused');

    assert.equal(await store.deletePrefix(BUCKET, 'root/'), 9);
    assert.equal((await store.listObjects(BUCKET, { prefix: 'root/' })).objects.length, 0);
  });

  it('AssumeRole: credentials confined to the policy prefix, both ways', async () => {
    const issuer = new StsCredentialIssuer({ stsEndpoint: endpoint, region: 'us-east-1', ...ROOT, roleArn: undefined, publicEndpoint: endpoint });
    const credentials = await issuer.issue(BUCKET, 'projects/p1/', 3600);
    assert.equal(credentials.prefix, 'projects/p1/');
    assert.equal(credentials.endpoint, endpoint);
    assert.ok(credentials.expiration.getTime() - Date.now() > 3500_000, 'the duration asked for');
    const client = clientFor(endpoint, credentials);

    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'projects/p1/photo.jpg', Body: 'inside' }));
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'projects/p1/photo.jpg' }));
    assert.equal(await got.Body!.transformToString(), 'inside');
    assert.equal((await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'projects/p1/' }))).KeyCount, 1);

    // Outward: no write, read or listing outside the prefix, nor in a sibling that shares its start.
    await store.putObject(BUCKET, 'projects/p2/secret.txt', Buffer.from('other project'));
    assert.equal(await s3Outcome(client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'projects/p2/x', Body: 'x' }))), 'AccessDenied');
    assert.equal(await s3Outcome(client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'projects/p10/x', Body: 'x' }))), 'AccessDenied');
    assert.equal(await s3Outcome(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'projects/p2/secret.txt' }))), 'AccessDenied');
    assert.equal(await s3Outcome(client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'projects/' }))), 'AccessDenied');
    // Inward: what the credentials wrote is there for the root (the services), and nothing else moved.
    assert.equal((await store.headObject(BUCKET, 'projects/p1/photo.jpg'))?.size, 'inside'.length);
    assert.equal(await store.headObject(BUCKET, 'projects/p2/x'), undefined);

    // A read-only prefix beside it (a cloud project's results): read and listed, never written.
    await store.putObject(BUCKET, 'results/p1/run/ortho.tif', Buffer.from('result'));
    const reader = await issuer.issue(BUCKET, 'projects/p1/', 3600, { readOnlyPrefixes: ['results/p1/'] });
    assert.deepEqual(reader.readOnlyPrefixes, ['results/p1/']);
    const readerClient = clientFor(endpoint, reader);
    assert.equal(await (await readerClient.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'results/p1/run/ortho.tif' }))).Body!.transformToString(), 'result');
    assert.equal((await readerClient.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'results/p1/' }))).KeyCount, 1);
    assert.equal(await s3Outcome(readerClient.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'results/p1/run/ortho.tif', Body: 'overwritten' }))), 'AccessDenied');
    assert.equal(await s3Outcome(readerClient.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'results/p10/x' }))), 'AccessDenied');
    await readerClient.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'projects/p1/still-writable', Body: 'x' }));
    assert.equal(await (await store.getObject(BUCKET, 'results/p1/run/ortho.tif')).body.toArray().then((c) => Buffer.concat(c).toString()), 'result');

    // Read-only credentials (a read-only cloud token's): the prefix and the results read, nothing written.
    const readOnly = await issuer.issue(BUCKET, 'projects/p1/', 3600, { readOnlyPrefixes: ['results/p1/'], writable: false });
    assert.equal(readOnly.writable, false);
    const readOnlyClient = clientFor(endpoint, readOnly);
    assert.equal(await (await readOnlyClient.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'projects/p1/photo.jpg' }))).Body!.transformToString(), 'inside');
    assert.equal(await (await readOnlyClient.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'results/p1/run/ortho.tif' }))).Body!.transformToString(), 'result');
    assert.equal((await readOnlyClient.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'projects/p1/' }))).KeyCount, 2);
    assert.equal(await s3Outcome(readOnlyClient.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'projects/p1/photo.jpg', Body: 'overwritten' }))), 'AccessDenied');
    assert.equal(await s3Outcome(readOnlyClient.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'projects/p1/photo.jpg' }))), 'AccessDenied');
    assert.equal(await s3Outcome(readOnlyClient.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'projects/p2/secret.txt' }))), 'AccessDenied');
    assert.equal((await store.headObject(BUCKET, 'projects/p1/photo.jpg'))?.size, 'inside'.length);
  });

  it('AssumeRole refuses what it cannot grant, callers other than the root, bad signatures; credentials expire', async () => {
    const sts = (c: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }) => new STSClient({ endpoint, region: 'us-east-1', credentials: c });
    const assume = (client: STSClient, policy: string, duration = 900) =>
      client.send(new AssumeRoleCommand({ RoleArn: 'arn:aws:iam::000000000000:role/x', RoleSessionName: 'test', Policy: policy, DurationSeconds: duration }));
    const root = sts(ROOT);
    const writeOnly = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: [`arn:aws:s3:::${BUCKET}/p/*`] }] });
    // The code on the wire is MalformedPolicyDocument (as AWS); the SDK names its class ...Exception.
    assert.equal(await s3Outcome(assume(root, writeOnly)), 'MalformedPolicyDocumentException', 'writing without reading cannot be expressed: refused, not widened');
    const twoPrefixes = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: [`arn:aws:s3:::${BUCKET}/a/*`, `arn:aws:s3:::${BUCKET}/b/*`] }] });
    assert.equal(await s3Outcome(assume(root, twoPrefixes)), 'MalformedPolicyDocumentException');
    assert.equal(await s3Outcome(assume(root, prefixSessionPolicy(BUCKET, 'p/'), 50_000)), 'InvalidParameterValue', 'longer than 12 hours');
    assert.equal(await s3Outcome(assume(sts({ ...ROOT, secretAccessKey: 'wrong' }), prefixSessionPolicy(BUCKET, 'p/'))), 'SignatureDoesNotMatch');

    const short = (await assume(root, prefixSessionPolicy(BUCKET, 'p/'), 1)).Credentials!;
    const temporary = { accessKeyId: short.AccessKeyId!, secretAccessKey: short.SecretAccessKey!, sessionToken: short.SessionToken! };
    assert.equal(await s3Outcome(assume(sts(temporary), prefixSessionPolicy(BUCKET, 'p/'))), 'AccessDenied', 'temporary credentials cannot assume again');
    // Issue 40 §7: whether a role exists is not revealed: whatever role is named, the same refusal in the same words.
    const refusal = async (roleArn: string) => {
      try {
        await sts(temporary).send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: 'probe', Policy: prefixSessionPolicy(BUCKET, 'p/'), DurationSeconds: 900 }));
        return 'ok';
      } catch (err) {
        return `${(err as Error).name} ${(err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode}: ${(err as Error).message}`;
      }
    };
    const roles = ['arn:aws:iam::000000000000:role/open-inspection-uploads', `arn:aws:iam:::role/open-inspection/oi-${'0'.repeat(40)}`, 'arn:aws:iam::000000000000:role/no-such-role'];
    const refusals = await Promise.all(roles.map(refusal));
    assert.deepEqual(new Set(refusals), new Set([refusals[0]]), refusals.join(' | '));
    assert.match(refusals[0], /^AccessDenied 403: /);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    assert.equal(await s3Outcome(clientFor(endpoint, temporary).send(new PutObjectCommand({ Bucket: BUCKET, Key: 'p/late', Body: 'x' }))), 'ExpiredToken');
  });

  it('the services on the S3 store: serve keeps no object on its disk; upload, register, process to 7, outputs through presigned URLs of the store', async () => {
    const serveDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oi-serve-s3-'));
    // A database of its own on PostgreSQL: the demo account (and its credentials file) is made on a first start only.
    const database = await freshDatabaseUrl();
    const serve = await startServerProcess({
      DATA_DIR: serveDir,
      DATABASE_URL: database?.url,
      S3_ENDPOINT: endpoint,
      S3_BUCKET: BUCKET,
      S3_ACCESS_KEY_ID: ROOT.accessKeyId,
      S3_SECRET_ACCESS_KEY: ROOT.secretAccessKey,
    });
    try {
      assert.match(serve.output(), new RegExp(`S3 endpoint:\\s+${endpoint.replace(/[.]/g, '\\.')}`), 'the banner names the store');
      const demo = JSON.parse(fs.readFileSync(bootstrapFile(serveDir), 'utf8')) as DemoCredentials;
      const client = new InspectionClient({ baseUrl: serve.urls.inspection, apiKey: demo.api_key, organizationUuid: demo.organization_uuid });
      await client.login(demo.username, demo.password);
      const asset = await client.createAsset({ name: 'Tower on S3', type: 1, latitude: '46.51830000', longitude: '6.56190000' });
      const inspection = await client.createInspection({ asset: asset.id, name: 'On the S3 store' });
      const credentials = await client.storageCredentials(inspection.id);
      assert.equal(credentials.endpoint_override, endpoint, 'clients upload to the store, not through the services');
      const images = (await generateDemoImageSet(4, { latitude: 46.5183, longitude: 6.5619, altitude: 420 })).map((i) => ({ name: i.filename, body: i.data }));
      const keys = await client.upload(credentials, images);
      assert.equal((await client.register(inspection.id, keys)).nb_images_registered, 4);
      await client.process(inspection.id);
      const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 120_000 });
      assert.equal(done.status, 7, JSON.stringify(done));
      const outputs = await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/outputs/`);
      const cameras = outputs.find((o: { output_type: string }) => o.output_type === 'calibrated_camera_parameters_json');
      assert.ok(cameras?.url.startsWith(`${endpoint}/${BUCKET}/`), `a presigned URL of the store: ${cameras?.url}`);
      const download = await fetch(cameras.url);
      assert.equal(download.status, 200);
      assert.ok(JSON.parse(await download.text()).cameras.length === 4);
      assert.ok(!fs.existsSync(path.join(serveDir, 'objects')), 'serve kept no object on its own disk');
      assert.ok((await store.listObjects(BUCKET, { prefix: 'uploads/' })).objects.length >= 4, 'the photos are in the store');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
      await database?.drop();
      fs.rmSync(serveDir, { recursive: true, force: true });
    }
  });
});
