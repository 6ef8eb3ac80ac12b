// The inspection service's side of the web console: the console's settings (its API key, storage
// endpoint, basemap), GET /v1/me/ for the organizations a user may act for, the built files at `/`
// with a CSP that lets the page reach the S3 endpoint, and the generated client kept in step with
// the OpenAPI document (style-anchors §6: a stale client fails here, not in a user's browser).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ServerSecretRepository } from '../src/infra/secrets/server-secrets.ts';
import { startTestSystem } from './helpers/test-system.ts';
import { WEB_CLIENT_SCHEMA_FILE, webClientSource } from '../scripts/generate-web-client.ts';

test('web console: settings, profile, static files, CSP, generated client', async (t) => {
  const system = await startTestSystem();
  t.after(() => system.stop());
  const base = system.urls.inspection;

  await t.test('the generated client matches the served OpenAPI document (run npm run generate:web-client)', async () => {
    const openapi = await (await fetch(`${base}/v1/openapi.json`)).json();
    const expected = await webClientSource(openapi);
    assert.ok(expected.includes('"/v1/console/settings/"'));
    assert.equal(fs.readFileSync(WEB_CLIENT_SCHEMA_FILE, 'utf8'), expected, 'web/src/api/schema.d.ts is stale: run `npm run generate:web-client`');
  });

  let consoleKey = '';
  await t.test('GET /v1/console/settings/ is open and hands out a working, named API key', async () => {
    const response = await fetch(`${base}/v1/console/settings/`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const settings = (await response.json()) as { api_key: string; storage_url: string; basemap_url: string | null };
    assert.match(settings.api_key, /^oik_/);
    assert.equal(settings.storage_url, system.urls.storage);
    assert.equal(settings.basemap_url, null);
    consoleKey = settings.api_key;
    // The key is a real one: a wrong password is 401 authentication_failed, not invalid_api_key.
    const token = await fetch(`${base}/v1/auth/token/`, { method: 'POST', headers: { 'X-Api-Key': consoleKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'nobody', password: 'x' }) });
    assert.equal(token.status, 401);
    assert.notEqual(((await token.json()) as { code: string }).code, 'invalid_api_key');
    // Kept in the database (server-secrets.ts), where every API process finds the same key.
    const stored = await new ServerSecretRepository(system.inspection.db as never, 'inspection').read('console-api-key.json');
    assert.equal(JSON.parse(stored!).api_key, consoleKey);
  });

  await t.test('GET /v1/me/ names the user and the organizations they may act for', async () => {
    const account = await system.newAccount();
    const response = await fetch(`${base}/v1/me/`, { headers: { 'X-Api-Key': account.apiKey, Authorization: `Bearer ${await tokenOf(base, account)}` } });
    assert.equal(response.status, 200);
    const me = (await response.json()) as { username: string; organization_uuid: string | null; organizations: { uuid: string; name: string }[] };
    assert.equal(me.username, account.username);
    assert.equal(me.organization_uuid, null);
    assert.deepEqual(me.organizations.map((o) => o.uuid), [account.organizationUuid]);
    const unauthenticated = await fetch(`${base}/v1/me/`, { headers: { 'X-Api-Key': account.apiKey } });
    assert.equal(unauthenticated.status, 401);
  });

  await t.test('`/` serves the console (or says how to build it) under a CSP that allows the S3 endpoint', async () => {
    const response = await fetch(`${base}/`);
    const csp = response.headers.get('content-security-policy') ?? '';
    const storageOrigin = new URL(system.urls.storage).origin;
    assert.match(csp, new RegExp(`connect-src 'self' ${storageOrigin.replace(/[.]/g, '\\.')}`));
    assert.match(csp, new RegExp(`img-src [^;]*${storageOrigin.replace(/[.]/g, '\\.')}`));
    assert.match(csp, /frame-ancestors 'none'/);
    const built = fs.existsSync(path.resolve(import.meta.dirname, '../web/dist/index.html'));
    if (built) {
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /text\/html/);
      const html = await response.text();
      assert.ok(!html.includes(consoleKey), 'no key in the static page');
      const script = /src="(\/static\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(script, 'the page loads a hashed bundle');
      const bundle = await fetch(`${base}${script}`);
      assert.equal(bundle.status, 200);
      assert.match(bundle.headers.get('cache-control') ?? '', /immutable/);
    } else {
      assert.equal(response.status, 503);
    }
    // No catch-all: unknown paths are still the API's 404 and 405 answers.
    assert.equal((await fetch(`${base}/no-such-page`)).status, 404);
    assert.equal((await fetch(`${base}/v1/console/settings/`, { method: 'DELETE' })).status, 405);
  });

  await t.test('a revoked console key is replaced at the next start', async () => {
    const id = await system.inspection.db.selectFrom('inspection.api_keys').select('id').where('name', '=', 'web console').executeTakeFirstOrThrow();
    await system.inspection.accounts.revokeApiKey(id.id);
    const { ensureConsoleApiKey } = await import('../src/admin/bootstrap.ts');
    const replaced = await ensureConsoleApiKey(new ServerSecretRepository(system.inspection.db as never, 'inspection'), system.inspection.accounts);
    assert.notEqual(replaced, consoleKey);
    assert.equal(await system.inspection.accounts.isActiveApiKey(replaced), true);
    assert.equal(await system.inspection.accounts.isActiveApiKey(consoleKey), false);
  });
});

async function tokenOf(base: string, account: { apiKey: string; username: string; password: string }): Promise<string> {
  const response = await fetch(`${base}/v1/auth/token/`, { method: 'POST', headers: { 'X-Api-Key': account.apiKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ username: account.username, password: account.password }) });
  return ((await response.json()) as { api_token: string }).api_token;
}
