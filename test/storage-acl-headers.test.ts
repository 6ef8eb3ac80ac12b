// Issue 27, finding 15, on the embedded store (the `storage` command, which `serve` embeds too):
// it keeps no ACLs, so a write asking for a public one is refused (400 AccessControlListNotSupported,
// as AWS answers on a bucket whose ACLs are disabled) instead of being accepted and ignored; and the
// start-up self-check of an external store (s3-role-self-check.ts) passes on it, the services'
// session policy (with its Deny of ACL headers) accepted by its STS.
// Issue 40 §0: as AWS with ACLs disabled, `bucket-owner-full-control` (and the equivalent grant to
// the bucket owner) is accepted: Pix4D's own "Create Project" notebook uploads every photo with it,
// which boto3 does here exactly as the notebook does, with the cloud's temporary credentials.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { CopyObjectCommand, CreateMultipartUploadCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { startTestSystem, tempDir, type TestSystem } from './helpers/test-system.ts';
import { cloudClient } from './helpers/cloud-api.ts';
import { requireBoto3 } from './helpers/system-tools.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { BUCKET_OWNER_ID } from '../src/infra/storage/acl-headers.ts';
import { loadConfig } from '../src/config.ts';
import { openExternalStore } from '../src/infra/storage/external-store.ts';
import { s3Outcome } from './helpers/s3-outcome.ts';

const BUCKET = 'oi-objects';
const ROOT = { accessKeyId: 'OITESTROOT0000000003', secretAccessKey: crypto.randomBytes(30).toString('base64url') };

describe('embedded store: ACL headers (issue 27, finding 15)', () => {
  let storage: ServerProcess;
  let dataDir: string;
  const env = () => ({ S3_BUCKET: BUCKET, S3_ENDPOINT: storage.urls.storage, S3_ACCESS_KEY_ID: ROOT.accessKeyId, S3_SECRET_ACCESS_KEY: ROOT.secretAccessKey });

  before(async () => {
    dataDir = tempDir('oi-storage-acl-');
    storage = await startServerProcess({ DATA_DIR: dataDir, STORAGE_BUCKET: BUCKET, STORAGE_ROOT_ACCESS_KEY: ROOT.accessKeyId, STORAGE_ROOT_SECRET_KEY: ROOT.secretAccessKey }, 'storage');
  });
  after(async () => {
    storage?.child.kill('SIGTERM');
    await storage?.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a public ACL or a grant header is refused on PutObject, CopyObject and CreateMultipartUpload; "private", "bucket-owner-full-control" and a full-control grant to the bucket owner are accepted', async () => {
    const config = loadConfig(env());
    const { issuer } = await openExternalStore(config.s3!, { credentialsTtlSeconds: 3600, selfCheck: false, logger: pino({ level: 'silent' }) });
    const c = await issuer.issue(BUCKET, 'uploads/acl/', 3600);
    for (const credentials of [c, ROOT]) {
      const s3 = new S3Client({ endpoint: storage.urls.storage, region: 'us-east-1', forcePathStyle: true, credentials, maxAttempts: 1 });
      assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/plain', Body: 'x' }))), 'ok');
      assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/private', Body: 'x', ACL: 'private' }))), 'ok');
      assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/public', Body: 'x', ACL: 'public-read' }))), 'AccessControlListNotSupported');
      assert.equal(
        await s3Outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/grant', Body: 'x', GrantRead: 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' }))),
        'AccessControlListNotSupported',
      );
      assert.equal(await s3Outcome(s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/copy', CopySource: `${BUCKET}/uploads/acl/plain`, ACL: 'public-read-write' }))), 'AccessControlListNotSupported');
      assert.equal(await s3Outcome(s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'uploads/acl/parts', ACL: 'authenticated-read' }))), 'AccessControlListNotSupported');
      // Issue 40 §0: what changes nothing on a bucket whose owner owns every object.
      const owner = `id="${BUCKET_OWNER_ID}"`;
      assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/owner', Body: 'x', ACL: 'bucket-owner-full-control' }))), 'ok');
      assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/owner-grant', Body: 'x', GrantFullControl: owner }))), 'ok');
      assert.equal(await s3Outcome(s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/owner-copy', CopySource: `${BUCKET}/uploads/acl/plain`, ACL: 'bucket-owner-full-control' }))), 'ok');
      assert.equal(await s3Outcome(s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'uploads/acl/owner-parts', ACL: 'bucket-owner-full-control' }))), 'ok');
      assert.equal(await s3Outcome(s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'uploads/acl/owner-parts', GrantFullControl: owner }))), 'ok');
      for (const grant of ['id="someone-else"', `${owner}, id="someone-else"`, 'uri="http://acs.amazonaws.com/groups/global/AllUsers"', 'emailAddress="x@example.com"']) {
        assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/other-grant', Body: 'x', GrantFullControl: grant }))), 'AccessControlListNotSupported', grant);
      }
      assert.equal(
        await s3Outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/owner-read', Body: 'x', ACL: 'bucket-owner-full-control', GrantRead: owner }))),
        'AccessControlListNotSupported',
        'a read grant is not the equivalent of bucket-owner-full-control',
      );
      for (const acl of ['bucket-owner-read', 'aws-exec-read', 'log-delivery-write', 'public-read']) {
        assert.equal(await s3Outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'uploads/acl/other', Body: 'x', ACL: acl as 'private' }))), 'AccessControlListNotSupported', acl);
      }
      s3.destroy();
    }
    for (const key of ['uploads/acl/plain', 'uploads/acl/owner', 'uploads/acl/owner-grant']) {
      const anonymous = await fetch(`${storage.urls.storage}/${BUCKET}/${key}`);
      assert.equal(anonymous.status, 403, `objects stay private: ${key}`);
    }
  });

  it('the start-up self-check of an external store passes on the `storage` command (shared mode: its session policies hold)', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    await openExternalStore(loadConfig(env()).s3!, { credentialsTtlSeconds: 3600, selfCheck: true, logger });
    const passed = lines.map((l) => JSON.parse(l) as { msg: string; tampered?: { tried: number; wroteOutside: number } }).find((l) => /self-check: the issued credentials stay within their prefix/.test(l.msg));
    assert.deepEqual(passed?.tampered, { tried: 24, wroteOutside: 0 });
  });
});

describe("Pix4D's Create Project notebook with boto3 (issue 40 §0): uploads with ACL=bucket-owner-full-control", () => {
  let system: TestSystem;
  before(async () => {
    system = await startTestSystem({ engine: 'exif' });
  });
  after(async () => {
    await system?.stop();
  });

  it('put_object and upload_file with ACL="bucket-owner-full-control" and the cloud\'s credentials succeed and register; public-read and grants to others stay refused', async (t) => {
    if (!requireBoto3(t)) return;
    const api = await cloudClient(system, 'Notebook Co');
    const work = tempDir('oi-notebook-');
    try {
      const photos = await Promise.all(
        [1, 2, 3].map(async (i) => {
          const file = path.join(work, `IMG_000${i}.JPG`);
          fs.writeFileSync(file, await generateGeotaggedJpeg({ latitude: 46.5 + i * 0.0001, longitude: 6.5, altitude: 420, seed: i, width: 64, height: 48 }));
          return file;
        }),
      );
      const script = path.join(import.meta.dirname, 'fixtures', 'pix4d_create_project.py');
      const { stdout } = await promisify(execFile)('/usr/bin/python3', [script, system.urls.cloud, api.clientId, api.clientSecret, ...photos], {
        timeout: 60_000,
        env: { ...process.env, BUCKET_OWNER_ID, AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null' },
      });
      const result = JSON.parse(stdout);
      console.log(`# Create Project notebook with boto3: ${JSON.stringify({ nb_images_registered: result.nb_images_registered, refused: result.refused, owner_grant: result.owner_grant })}`);
      assert.equal(result.nb_images_registered, 3, 'the three photos, each uploaded with ACL=bucket-owner-full-control, are registered');
      const project = await api.call('GET', `/project/api/v3/projects/${result.project_id}/`, undefined, { expect: 200 });
      for (const key of result.keys) assert.ok((await system.store.headObject(project.bucket_name, key)) !== undefined, key);
      assert.deepEqual(result.refused, { 'public-read': 'AccessControlListNotSupported', 'public-read upload_file': 'AccessControlListNotSupported', 'grant to AllUsers': 'AccessControlListNotSupported' });
      assert.equal(result.owner_grant, 'ok', 'the grant equivalent to bucket-owner-full-control');
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
