// Debian's aws-cli against the embedded endpoint with nothing but the issued credentials:
// `aws s3 cp` up (multipart for the large file) and back down, `aws s3 ls`, and a refused copy
// outside the prefix. Always /usr/bin/aws: another, unrelated "aws" may come first on PATH.
// When it is missing the test tries `apt-get install -y awscli`; if that is impossible it is
// skipped with the reason, except under CI=true where a missing aws-cli is a failure.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import pino from 'pino';
import { startEmbeddedS3 } from '../src/infra/storage/embedded-s3.ts';

const run = promisify(execFile);
const AWS = '/usr/bin/aws';

async function ensureAwsCli(): Promise<string | undefined> {
  if (existsSync(AWS)) return undefined;
  if (process.getuid?.() !== 0) return 'aws-cli is not installed at /usr/bin/aws and apt-get needs root';
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await run('apt-get', ['install', '-y', '-q', 'awscli'], { env, timeout: 300_000 }).catch(async () => {
      await run('apt-get', ['update', '-q'], { env, timeout: 300_000 });
      await run('apt-get', ['install', '-y', '-q', 'awscli'], { env, timeout: 300_000 });
    });
  } catch (err) {
    return `aws-cli is not installed and apt-get could not install it: ${(err as Error).message.split('\n')[0]}`;
  }
  return existsSync(AWS) ? undefined : 'apt-get ran but /usr/bin/aws is still missing';
}

test('aws-cli copies files up and down with issued credentials only', { timeout: 10 * 60_000 }, async (t) => {
  const missing = await ensureAwsCli();
  if (missing) {
    assert.notEqual(process.env.CI, 'true', `CI requires aws-cli: ${missing}`);
    console.log(`# skipping the aws-cli test: ${missing}`);
    t.skip(missing);
    return;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'storage-awscli-'));
  const s3 = await startEmbeddedS3({ rootDir: path.join(dir, 'data'), buckets: ['survey'], masterKey: randomBytes(32), logger: pino({ level: 'silent' }) });
  try {
    const creds = await s3.issuer.issue('survey', 'projects/5/', 3600);
    const env = {
      AWS_ACCESS_KEY_ID: creds.accessKeyId,
      AWS_SECRET_ACCESS_KEY: creds.secretAccessKey,
      AWS_SESSION_TOKEN: creds.sessionToken,
      AWS_DEFAULT_REGION: creds.region,
      // Not an AWS setting: an empty home keeps this machine's ~/.aws config out of the test.
      HOME: dir,
    };
    const aws = (...args: string[]) => run(AWS, ['--endpoint-url', creds.endpoint as string, ...args], { env, timeout: 120_000 });

    const small = path.join(dir, 'flight log.csv');
    const large = path.join(dir, 'DJI_0001.JPG');
    await writeFile(small, 'lat,lon\n1,2\n');
    // Above aws-cli's 8 MiB threshold, so it uploads in parts and downloads in ranges.
    await writeFile(large, randomBytes(20 * 1024 * 1024 + 123));

    await aws('s3', 'cp', '--only-show-errors', small, 's3://survey/projects/5/flight log.csv');
    await aws('s3', 'cp', '--only-show-errors', large, 's3://survey/projects/5/images/DJI_0001.JPG');
    const listed = await aws('s3', 'ls', '--recursive', 's3://survey/projects/5/');
    assert.match(listed.stdout, /flight log\.csv/);
    assert.match(listed.stdout, /20971643 projects\/5\/images\/DJI_0001\.JPG/);

    const back = path.join(dir, 'back');
    await aws('s3', 'cp', '--only-show-errors', 's3://survey/projects/5/images/DJI_0001.JPG', path.join(back, 'large'));
    await aws('s3', 'cp', '--only-show-errors', 's3://survey/projects/5/flight log.csv', path.join(back, 'small'));
    assert.ok((await readFile(path.join(back, 'large'))).equals(await readFile(large)));
    assert.equal(await readFile(path.join(back, 'small'), 'utf8'), 'lat,lon\n1,2\n');
    // The multipart upload left a multipart ETag.
    assert.match((await s3.store.headObject('survey', 'projects/5/images/DJI_0001.JPG'))?.etag ?? '', /-\d+"$/);

    const denied = await aws('s3', 'cp', '--only-show-errors', small, 's3://survey/projects/6/x.csv').then(
      () => undefined,
      (err: { stderr: string }) => err.stderr,
    );
    assert.match(denied ?? '', /AccessDenied/);

    await aws('s3', 'rm', '--only-show-errors', 's3://survey/projects/5/flight log.csv');
    assert.equal(await s3.store.headObject('survey', 'projects/5/flight log.csv'), undefined);
  } finally {
    await s3.close();
    await rm(dir, { recursive: true, force: true });
  }
});
