// The cloud service's OAuth2 client-credentials token: every way of sending the parameters, the
// RS256 JWT verified with nothing but the published JWKS, refusal after expiry and after deletion.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, importSPKI } from 'jose';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';

describe('cloud OAuth2 tokens', () => {
  let system: TestSystem;
  let client: { clientId: string; clientSecret: string };
  let orgUuid: string;
  before(async () => {
    system = await startTestSystem({ cloudTokenTtl: 2 });
    orgUuid = crypto.randomUUID();
    const org = await system.cloud.ensureOrganization('Acme', orgUuid);
    client = await system.cloud.oauth.createClient(org.id, 'test');
  });
  after(async () => {
    await system?.stop();
  });

  const tokenUrl = () => `${system.urls.cloud}/oauth2/token/`;
  const params = () => ({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, token_format: 'jwt' });

  it('accepts urlencoded, multipart, JSON and query-string parameters', async () => {
    const form = new FormData();
    for (const [k, v] of Object.entries({ ...params(), token_type: 'access_token' })) form.append(k, v);
    const responses = [
      await fetch(tokenUrl(), { method: 'POST', body: new URLSearchParams(params()) }),
      await fetch(tokenUrl(), { method: 'POST', body: form }),
      await fetch(tokenUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params()) }),
      await fetch(`${tokenUrl()}?${new URLSearchParams(params())}`, { method: 'POST' }),
    ];
    for (const [i, response] of responses.entries()) {
      const body = (await response.json()) as any;
      assert.equal(response.status, 200, `request ${i}: ${JSON.stringify(body)}`);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 2);
      assert.equal(body.scope, 'read:cloud write:cloud');
    }
    const wrong = await fetch(tokenUrl(), { method: 'POST', body: new URLSearchParams({ ...params(), client_secret: 'nope' }) });
    assert.equal(wrong.status, 401);
    assert.deepEqual(Object.keys((await wrong.json()) as object).sort(), ['code', 'detail', 'error', 'error_description'], 'CONTRACT\'s fields and RFC 6749\'s (cloud-oauth-errors.test.ts)');
    const grant = await fetch(tokenUrl(), { method: 'POST', body: new URLSearchParams({ ...params(), grant_type: 'password' }) });
    assert.equal(grant.status, 400);
    assert.equal(((await grant.json()) as any).code, 'unsupported_grant_type');
    const noClient = await fetch(tokenUrl(), { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials' }) });
    assert.equal(noClient.status, 401);
    const noSlash = await fetch(tokenUrl().slice(0, -1), { method: 'POST', body: new URLSearchParams(params()) });
    assert.equal(noSlash.status, 200, 'served without its trailing slash too');
  });

  it('the JWT verifies with the published JWKS and PEM and carries the org claim; it lives at least expires_in, then is refused', async () => {
    const issuedAfter = Date.now();
    const { access_token, expires_in } = (await (await fetch(tokenUrl(), { method: 'POST', body: new URLSearchParams(params()) })).json()) as any;
    const jwks = createRemoteJWKSet(new URL(`${system.urls.cloud}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(access_token, jwks, { issuer: system.config.cloudIssuer });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.sub, client.clientId);
    assert.equal(payload[`${new URL(system.config.cloudIssuer).host}/org`], orgUuid);
    assert.ok(typeof payload.iat === 'number' && typeof payload.exp === 'number');
    assert.ok(payload.exp * 1000 >= issuedAfter + expires_in * 1000, 'exp rounds the issue time up: the token lives at least expires_in');
    const pem = await (await fetch(`${system.urls.cloud}/oauth2/public-key/`)).text();
    await jwtVerify(access_token, await importSPKI(pem, 'RS256'));

    const projects = `${system.urls.cloud}/project/api/v3/projects/`;
    assert.equal((await fetch(projects, { headers: { authorization: `Bearer ${access_token}` } })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, payload.exp! * 1000 - Date.now() + 100));
    await assert.rejects(jwtVerify(access_token, jwks), /exp/);
    const expired = await fetch(projects, { headers: { authorization: `Bearer ${access_token}` } });
    assert.equal(expired.status, 401);
    assert.equal(((await expired.json()) as any).code, 'token_expired');
    assert.equal((await fetch(projects)).status, 401);
  });

  it('deleting the credentials disables them', async () => {
    const org = await system.cloud.ensureOrganization('Temp');
    const temp = await system.cloud.oauth.createClient(org.id, 'temp');
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: temp.clientId, client_secret: temp.clientSecret });
    const { access_token } = (await (await fetch(tokenUrl(), { method: 'POST', body })).json()) as any;
    await system.cloud.oauth.deleteClient(temp.clientId);
    assert.equal((await fetch(tokenUrl(), { method: 'POST', body })).status, 401);
    assert.equal((await fetch(`${system.urls.cloud}/project/api/v3/projects/`, { headers: { authorization: `Bearer ${access_token}` } })).status, 401);
  });
});
