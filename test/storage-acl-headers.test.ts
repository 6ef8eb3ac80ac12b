// Issue 27, finding 15, on the embedded store (the `storage` command, which `serve` embeds too):
// it keeps no ACLs, so a write asking for a public one is refused (400 AccessControlListNotSupported,
// as AWS answers on a bucket whose ACLs are disabled) instead of being accepted and ignored; and the
// start-up self-check of an external store (s3-role-self-check.ts) passes on it, the services'
// session policy (with its Deny of ACL headers) accepted by its STS.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { CopyObjectCommand, CreateMultipartUploadCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { tempDir } from './helpers/test-system.ts';
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
    storage = await startServerProcess({ DATA_DIR: dataDir, STORAGE_BUCKET: BUCKET, STORAGE_ROOT_ACCESS_KEY: ROOT.accessKeyId, STORAGE_ROOT_SECRET_KEY: ROOT.secretAccessKey }, 60_000, 'storage');
  });
  after(async () => {
    storage?.child.kill('SIGTERM');
    await storage?.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a public ACL or a grant header is refused on PutObject, CopyObject and CreateMultipartUpload; "private" is accepted', async () => {
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
      s3.destroy();
    }
    const anonymous = await fetch(`${storage.urls.storage}/${BUCKET}/uploads/acl/plain`);
    assert.equal(anonymous.status, 403, 'objects stay private');
  });

  it('the start-up self-check of an external store passes on the `storage` command (shared mode: its session policies hold)', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    await openExternalStore(loadConfig(env()).s3!, { credentialsTtlSeconds: 3600, selfCheck: true, logger });
    const passed = lines.map((l) => JSON.parse(l) as { msg: string; tampered?: { tried: number; wroteOutside: number } }).find((l) => /self-check: the issued credentials stay within their prefix/.test(l.msg));
    assert.deepEqual(passed?.tampered, { tried: 24, wroteOutside: 0 });
  });
});
