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
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';
import { InspectionClient } from '../src/sdk/inspection-client.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('admin CLI', () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let server: ServerProcess | undefined;
  const env = () => ({ ...process.env, DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', LOG_LEVEL: 'warn' });
  const admin = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', 'admin', ...args], { cwd: ROOT, env: env() });
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
  });
});
