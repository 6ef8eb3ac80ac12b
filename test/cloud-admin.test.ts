// Cloud client credentials from the admin CLI (cloud spec, Authentication 1): created for an
// organization, the secret shown once and stored hashed, disabled by deleting them.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import pino from 'pino';
import { freshDatabaseUrl, tempDir, testConfig } from './helpers/test-system.ts';
import { adminJson } from './helpers/admin-cli.ts';
import { startSystem } from '../src/system.ts';

it('admin CLI: create-cloud-client stores the secret hashed; delete-cloud-client disables it', async () => {
  const dataDir = tempDir();
  const database = await freshDatabaseUrl();
  const config = testConfig(dataDir, { databaseUrl: database?.url });
  try {
    const { organization_uuid } = await adminJson(config, 'create-org', '--name', 'Acme Surveys');
    const { client_id, client_secret } = await adminJson(config, 'create-cloud-client', '--org', organization_uuid, '--name', 'ci');
    assert.match(client_id, /^cid_/);
    assert.ok(client_secret.length >= 40);

    const token = async (url: string) =>
      fetch(`${url}/oauth2/token/`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret }) });

    let system = await startSystem(config, 'serve', pino({ level: 'warn' }));
    try {
      const row = await system.cloud.db.selectFrom('cloud.clients').selectAll().where('client_id', '=', client_id).executeTakeFirstOrThrow();
      assert.equal(row.secret_hash, crypto.createHash('sha256').update(client_secret).digest('hex'));
      assert.ok(!JSON.stringify(row).includes(client_secret), 'the secret itself is not stored');
      const response = await token(system.urls.cloud);
      assert.equal(response.status, 200);
      const { access_token } = (await response.json()) as any;
      const claims = JSON.parse(Buffer.from(access_token.split('.')[1], 'base64url').toString());
      assert.equal(claims[`${new URL(config.cloudIssuer).host}/org`], organization_uuid);
    } finally {
      await system.stop();
    }

    assert.deepEqual(await adminJson(config, 'delete-cloud-client', '--client-id', client_id), { deleted: true });
    system = await startSystem(config, 'serve', pino({ level: 'warn' }));
    try {
      const refused = await token(system.urls.cloud);
      assert.equal(refused.status, 401);
      assert.equal(((await refused.json()) as any).code, 'invalid_client');
    } finally {
      await system.stop();
    }
  } finally {
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
