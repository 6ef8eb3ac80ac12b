// Server secrets live in each service's schema (src/infra/secrets/server-secrets.ts): processes with
// data folders of their own, on one PostgreSQL database, sign and verify with the same keys; a key an
// older installation kept in DATA_DIR/secrets is imported on first use.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { freshDatabaseUrl, startTestSystem, tempDir } from './helpers/test-system.ts';
import { ServerSecretRepository } from '../src/infra/secrets/server-secrets.ts';

describe('server secrets in the database', () => {
  it('two API processes with their own data folders accept each other\'s tokens (PostgreSQL)', async (t) => {
    const database = await freshDatabaseUrl();
    if (!database) return t.skip('needs PostgreSQL (DATABASE_URL): the embedded database serves one process');
    const a = await startTestSystem({ databaseUrl: database.url });
    const b = await startTestSystem({ databaseUrl: database.url, runWorkers: false });
    try {
      const account = await a.newAccount();
      const login = await fetch(`${a.urls.inspection}/v1/auth/token/`, {
        method: 'POST',
        headers: { 'X-Api-Key': account.apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: account.username, password: account.password }),
      });
      const { api_token } = (await login.json()) as { api_token: string };
      const me = await fetch(`${b.urls.inspection}/v1/me/`, { headers: { 'X-Api-Key': account.apiKey, Authorization: `Bearer ${api_token}` } });
      assert.equal(me.status, 200, 'a token signed by one process is valid at the other');
      for (const dir of [a.dataDir, b.dataDir]) {
        const files = fs.existsSync(path.join(dir, 'secrets')) ? fs.readdirSync(path.join(dir, 'secrets')) : [];
        assert.ok(!files.includes('inspection-jwt.key') && !files.includes('cloud-jwt-rsa.pem'), `no signing key on disk in ${dir}: ${files}`);
      }
      const secrets = new ServerSecretRepository(a.inspection.db as never, 'inspection');
      assert.ok(await secrets.read('inspection-cloud-client.json'), 'one cloud client for the inspection service, in the database');
    } finally {
      await b.stop();
      await a.stop();
      await database.drop();
    }
  });

  it('a key kept in DATA_DIR/secrets by an older installation is imported, not replaced', async () => {
    const dataDir = tempDir();
    const legacy = crypto.randomBytes(32).toString('hex');
    fs.mkdirSync(path.join(dataDir, 'secrets'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(dataDir, 'secrets', 'inspection-jwt.key'), legacy, { mode: 0o600 });
    const system = await startTestSystem({ dataDir });
    try {
      const stored = await new ServerSecretRepository(system.inspection.db as never, 'inspection').read('inspection-jwt.key');
      assert.equal(stored, legacy);
    } finally {
      await system.stop();
    }
  });
});
