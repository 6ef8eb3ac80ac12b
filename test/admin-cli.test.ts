// The admin CLI end to end: the accounts it creates can log in, act for their organization,
// spend the allowance it granted, and use the cloud credentials it made.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freshDatabaseUrl, tempDir } from './helpers/test-system.ts';
import { startServerProcess, WASM_TEST_FLAGS, type ServerProcess } from './helpers/server-process.ts';
import { InspectionClient } from '../src/sdk/inspection-client.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('admin CLI', () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let server: ServerProcess | undefined;
  const env = () => ({ ...process.env, DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', LOG_LEVEL: 'warn' });
  const admin = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, [...WASM_TEST_FLAGS, '--import', 'tsx', 'src/main.ts', 'admin', ...args], { cwd: ROOT, env: env() });
    return JSON.parse(stdout.trim().split('\n').pop()!);
  };
  before(async () => {
    dataDir = tempDir();
    database = await freshDatabaseUrl();
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates an organization, a user, an API key, allowance and cloud credentials that work', async () => {
    const { organization_uuid } = await admin('create-org', '--name', 'Survey Co');
    await admin('create-user', '--username', 'alice', '--password', 'correct horse battery', '--org', organization_uuid);
    const { api_key } = await admin('create-api-key', '--name', 'field app');
    assert.deepEqual(await admin('grant', '--type', 'projects', '--amount', '7', '--org', organization_uuid), { granted: 7, type: 'projects' });
    const cloud = await admin('create-cloud-client', '--org', organization_uuid);
    assert.match(cloud.client_secret, /^cs_/);

    server = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', BOOTSTRAP_DEMO: 'false' });
    const client = new InspectionClient({ baseUrl: server.urls.inspection, apiKey: api_key, organizationUuid: organization_uuid });
    await client.login('alice', 'correct horse battery');
    const balance = await client.expect(200, 'GET', '/v1/allowance/');
    assert.equal(balance.find((b: any) => b.allowance_type === 'projects').balance, 7);

    const token = await fetch(`${server.urls.cloud}/oauth2/token/`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: cloud.client_id, client_secret: cloud.client_secret }),
    });
    assert.equal(token.status, 200);
    // Nothing secret was logged.
    for (const secret of [api_key, cloud.client_secret, 'correct horse battery']) assert.ok(!server.output().includes(secret));
    apiKey = api_key;
  });

  let apiKey = '';
  it('lists API keys and revokes one: its tokens and new sign-ins stop working', async () => {
    assert.ok(apiKey, 'needs the key of the first test');
    server?.child.kill('SIGTERM'); // the embedded database is locked by a running server
    await server?.exited;
    const { stdout } = await promisify(execFile)(process.execPath, [...WASM_TEST_FLAGS, '--import', 'tsx', 'src/main.ts', 'admin', 'list-api-keys'], { cwd: ROOT, env: env() });
    const keys = stdout.trim().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const fieldApp = keys.find((k) => k.name === 'field app');
    assert.ok(fieldApp && fieldApp.revoked_at === null, stdout);
    assert.ok(!stdout.includes(apiKey), 'the listing never shows a key');
    assert.deepEqual(await admin('revoke-api-key', '--id', String(fieldApp.id)), { revoked: fieldApp.id });

    server = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', BOOTSTRAP_DEMO: 'false' });
    const response = await fetch(`${server.urls.inspection}/v1/auth/token/`, { method: 'POST', headers: { 'X-Api-Key': apiKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'alice', password: 'correct horse battery' }) });
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { code: string }).code, 'invalid_api_key');
  });

  it('create-user with an organization that does not exist creates nothing (issue 27, finding 11)', async () => {
    server?.child.kill('SIGTERM'); // the embedded database is locked by a running server
    await server?.exited;
    server = undefined;
    for (const org of ['7d4f3c2a-1111-4222-8333-944455556666', 'not-a-uuid']) {
      const failed = await admin('create-user', '--username', 'bob', '--password', 'first password', '--org', org).then(
        () => assert.fail('create-user succeeded with a bad --org'),
        (err: Error & { code?: number; stderr?: string }) => err,
      );
      assert.equal(failed.code, 1);
      assert.match(failed.stderr ?? '', new RegExp(`No organization ${org}\\.`));
    }
    // bob was not created: the name is free, and the password is this one.
    const { user_id } = await admin('create-user', '--username', 'bob', '--password', 'second password');
    assert.ok(Number.isInteger(user_id));
    const { api_key } = await admin('create-api-key', '--name', 'bob app');
    server = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', BOOTSTRAP_DEMO: 'false' });
    await new InspectionClient({ baseUrl: server.urls.inspection, apiKey: api_key }).login('bob', 'second password');
  });

  it('set-retention: an organization\'s own retention period, back to RETENTION_DAYS with default; bad values refused (issue 30 §3)', async () => {
    server?.child.kill('SIGTERM'); // the embedded database is locked by a running server
    await server?.exited;
    server = undefined;
    const { organization_uuid } = await admin('create-org', '--name', 'Archive Co');
    assert.deepEqual(await admin('set-retention', '--org', organization_uuid, '--days', '90'), { organization_uuid, retention_days: 90 });
    assert.deepEqual(await admin('set-retention', '--org', organization_uuid, '--days', '0'), { organization_uuid, retention_days: 0 });
    assert.deepEqual(await admin('set-retention', '--org', organization_uuid, '--days', 'default'), { organization_uuid, retention_days: null });
    for (const days of ['-1', '1.5', 'ever', '36501']) {
      const failed = await admin('set-retention', '--org', organization_uuid, `--days=${days}`).then(
        () => assert.fail(`set-retention accepted --days ${days}`),
        (err: Error & { code?: number; stderr?: string }) => err,
      );
      assert.equal(failed.code, 1);
      assert.match(failed.stderr ?? '', /--days must be an integer from 0 to 36500, or default/);
    }
  });
});
