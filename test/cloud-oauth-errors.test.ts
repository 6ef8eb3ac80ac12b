// The cloud token endpoint's errors as RFC 6749 section 5.2 has them (issue 12, part 5): `error`
// and `error_description` beside CONTRACT.md's `detail`/`code` (or its field errors), 401 with
// WWW-Authenticate for invalid_client, client authentication by HTTP Basic (RFC 6749 2.3.1), no
// caching of token answers; and, when /usr/bin/python3 has oauthlib, that a stock OAuth library
// turns each error into its own exception class.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, type CloudTestClient } from './helpers/cloud-api.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';

const run = promisify(execFile);

describe('cloud token endpoint: RFC 6749 errors', () => {
  let system: TestSystem;
  let api: CloudTestClient;

  before(async () => {
    // A generous throttle: this file makes many failed attempts on purpose.
    system = await startTestSystem({ authRateLimitPerAddress: 0, authRateLimitPerAccount: 0 });
    api = await cloudClient(system, 'OAuth');
  });
  after(async () => {
    assertNoServerErrors(system);
    await system?.stop();
  });

  const tokenUrl = () => `${system.urls.cloud}/oauth2/token/`;
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  async function token(params: Record<string, string>, headers: Record<string, string> = {}, raw?: string) {
    const response = await fetch(tokenUrl(), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: raw ?? new URLSearchParams(params) });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  }
  /** RFC 6749's fields beside CONTRACT's, agreeing. */
  function assertOAuthError(answer: { status: number; body: any }, status: number, error: string) {
    assert.equal(answer.status, status, JSON.stringify(answer.body));
    assert.equal(answer.body.error, error, JSON.stringify(answer.body));
    assert.equal(typeof answer.body.error_description, 'string');
    assert.ok(answer.body.error_description.length > 0);
  }
  const credentials = () => ({ grant_type: 'client_credentials', client_id: api.clientId, client_secret: api.clientSecret });

  it('invalid_request: grant_type missing or empty; a parameter repeated; a parameter too long; an unparsable body (CONTRACT\'s fields kept)', async () => {
    const missing = await token({ client_id: api.clientId, client_secret: api.clientSecret });
    assertOAuthError(missing, 400, 'invalid_request');
    assert.equal(missing.body.code, 'invalid_request');
    assert.equal(missing.body.detail, missing.body.error_description);
    assertOAuthError(await token({ ...credentials(), grant_type: '' }), 400, 'invalid_request');

    const repeated = await token({}, {}, `grant_type=client_credentials&grant_type=client_credentials&client_id=${api.clientId}&client_secret=${api.clientSecret}`);
    assertOAuthError(repeated, 400, 'invalid_request');
    assert.ok(Array.isArray(repeated.body.grant_type), 'CONTRACT\'s field errors kept beside it');
    assert.match(repeated.body.error_description, /^grant_type: /);

    const long = await token({ ...credentials(), client_secret: 'x'.repeat(1025) });
    assertOAuthError(long, 400, 'invalid_request');
    assert.ok(Array.isArray(long.body.client_secret));

    const json = await fetch(tokenUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type": ' });
    const body = (await json.json()) as any;
    assertOAuthError({ status: json.status, body }, 400, 'invalid_request');
    assert.equal(body.code, 'parse_error');
  });

  it('invalid_client (401 with WWW-Authenticate): no credentials, an unknown client, a wrong secret', async () => {
    const cases: Record<string, string>[] = [{ grant_type: 'client_credentials' }, { ...credentials(), client_id: 'cid_unknown' }, { ...credentials(), client_secret: 'wrong' }, { grant_type: 'client_credentials', client_id: api.clientId }];
    for (const params of cases) {
      const answer = await token(params);
      assertOAuthError(answer, 401, 'invalid_client');
      assert.equal(answer.body.code, 'invalid_client');
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Basic realm="/);
    }
  });

  it('HTTP Basic client authentication: accepted; wrong, malformed or doubled is refused as RFC 6749 says', async () => {
    const ok = await token({ grant_type: 'client_credentials' }, { authorization: basic(api.clientId, api.clientSecret) });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.token_type, 'Bearer');
    assert.equal(ok.headers.get('cache-control'), 'no-store');
    assert.equal(ok.headers.get('pragma'), 'no-cache');
    // client_id may be repeated in the body when it is the same client.
    assert.equal((await token({ grant_type: 'client_credentials', client_id: api.clientId }, { authorization: basic(api.clientId, api.clientSecret) })).status, 200);

    for (const header of [basic(api.clientId, 'wrong'), basic('cid_unknown', api.clientSecret), 'Basic !!!not-base64', `Basic ${Buffer.from('no colon').toString('base64')}`, 'Basic']) {
      const refused = await token({ grant_type: 'client_credentials' }, { authorization: header });
      assertOAuthError(refused, 401, 'invalid_client');
      assert.match(refused.headers.get('www-authenticate') ?? '', /^Basic realm="oauth2"/, header);
      assert.equal(refused.headers.get('cache-control'), 'no-store');
    }
    // Two authentication methods at once, or Basic naming another client than client_id.
    assertOAuthError(await token({ ...credentials() }, { authorization: basic(api.clientId, api.clientSecret) }), 400, 'invalid_request');
    assertOAuthError(await token({ grant_type: 'client_credentials', client_id: 'cid_other' }, { authorization: basic(api.clientId, api.clientSecret) }), 400, 'invalid_request');
    // Another scheme is not client authentication: ignored.
    assert.equal((await token(credentials(), { authorization: 'Bearer stale' })).status, 200);
  });

  it('unsupported_grant_type: any grant but client_credentials', async () => {
    for (const grant of ['password', 'authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer']) {
      const answer = await token({ ...credentials(), grant_type: grant });
      assertOAuthError(answer, 400, 'unsupported_grant_type');
      assert.equal(answer.body.code, 'unsupported_grant_type');
      assert.ok(answer.body.detail);
    }
  });

  it('invalid_scope: a scope beyond read:cloud write:cloud; the known ones are granted', async () => {
    assertOAuthError(await token({ ...credentials(), scope: 'read:cloud admin' }), 400, 'invalid_scope');
    for (const [scope, granted] of [
      ['read:cloud', 'read:cloud'], // a read-only token: cloud-read-only-token.test.ts
      ['read:cloud write:cloud', 'read:cloud write:cloud'],
      ['write:cloud', 'read:cloud write:cloud'],
    ]) {
      const answer = await token({ ...credentials(), scope });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.scope, granted, 'the token says what it grants');
    }
  });

  it('a stock OAuth library (Python oauthlib) raises the error class of each answer', async (t) => {
    try {
      await run('/usr/bin/python3', ['-c', 'import oauthlib']);
    } catch {
      const reason = 'oauthlib is not importable by /usr/bin/python3 (Debian package python3-oauthlib)';
      if (process.env.CI === 'true') throw new Error(`${reason}; CI must install it`);
      t.skip(reason);
      return;
    }
    const answers = {
      invalid_request: await token({ client_id: api.clientId, client_secret: api.clientSecret }),
      invalid_client: await token({ ...credentials(), client_secret: 'wrong' }),
      unsupported_grant_type: await token({ ...credentials(), grant_type: 'password' }),
      invalid_scope: await token({ ...credentials(), scope: 'admin' }),
      ok: await token(credentials()),
    };
    const script = [
      'import json, sys',
      'from oauthlib.oauth2 import BackendApplicationClient',
      'from oauthlib.oauth2.rfc6749.errors import OAuth2Error',
      'client = BackendApplicationClient(client_id="x")',
      'out = {}',
      'for name, body in json.load(sys.stdin).items():',
      '    try:',
      '        token = client.parse_request_body_response(json.dumps(body))',
      '        out[name] = "token " + token["token_type"]',
      '    except OAuth2Error as err:',
      '        out[name] = err.error + (" (described)" if err.description == body["error_description"] else " (no description)")',
      'print(json.dumps(out))',
    ].join('\n');
    const child = execFile('/usr/bin/python3', ['-c', script]);
    child.stdin!.end(JSON.stringify(Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, v.body]))));
    let stdout = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    await new Promise((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve(null) : reject(new Error(`python exited ${code}`)))));
    // oauthlib raises its OAuth2Error subclass named by `error`, with `error_description` as its description.
    assert.deepEqual(JSON.parse(stdout), {
      invalid_request: 'invalid_request (described)',
      invalid_client: 'invalid_client (described)',
      unsupported_grant_type: 'unsupported_grant_type (described)',
      invalid_scope: 'invalid_scope (described)',
      ok: 'token Bearer',
    });
  });
});
