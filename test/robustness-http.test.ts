// Issue 10, the HTTP edge and the configuration of both services: broken multipart bodies (4),
// brute-force throttling of the token calls (9), request timeouts and the cap on unfinished
// bodies (10), security headers (13), pagination links on the public URL (14), 405 with Allow
// (16), and the configuration checked at start (17).
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, type CloudTestClient } from './helpers/cloud-api.ts';
import { startServerProcess } from './helpers/server-process.ts';

/** A raw request, so that the Host header is the one given (fetch sets its own). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      })
      .on('error', reject);
  });
}

describe('HTTP edge (issue 10)', () => {
  let system: TestSystem;
  let account: TestAccount;
  let cloud: CloudTestClient;
  let token: string;

  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    cloud = await cloudClient(system);
    token = await login(system, account, account.password).then((r) => r.body.api_token);
  });
  after(() => system.stop());

  it('4: a broken multipart body is 400 on the cloud service, 415 where multipart is not taken', async () => {
    const multipart = { 'content-type': 'multipart/form-data; boundary=x' };
    for (const body of ['garbage', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nv']) {
      const response = await fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', headers: multipart, body });
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { code: string }).code, 'parse_error');
    }
    const noBoundary = await fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'x' });
    assert.equal(noBoundary.status, 400);
    const project = await cloud.call('POST', '/project/api/v3/projects/', { name: 'p' }, { expect: 201 });
    await cloud.call('POST', `/project/api/v3/projects/${project.id}/start_processing/`, undefined, { expect: 400, headers: multipart, raw: 'garbage' });
    const refused = await cloud.call('POST', '/project/api/v3/projects/', undefined, { expect: 415, headers: multipart, raw: 'garbage' });
    assert.equal(refused.code, 'unsupported_media_type');
    // A well-formed form still works.
    const form = new FormData();
    for (const [k, v] of Object.entries({ grant_type: 'client_credentials', client_id: cloud.clientId, client_secret: cloud.clientSecret })) form.append(k, v);
    assert.equal((await fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', body: form })).status, 200);
  });

  it('13: security headers on API answers and on the docs page, whose assets still load', async () => {
    const api = [
      `${system.urls.inspection}/v1/assets/`,
      `${system.urls.inspection}/v1/no-such-route/`,
      `${system.urls.cloud}/project/api/v3/projects/`,
      `${system.urls.cloud}/common/api/v4/drive/folders/`,
      `${system.urls.cloud}/oauth2/token/`,
    ];
    const pages = [`${system.urls.inspection}/docs`, `${system.urls.cloud}/docs`, `${system.urls.inspection}/`];
    for (const url of [...api, ...pages]) {
      const response = await fetch(url);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', url);
      assert.equal(response.headers.get('x-frame-options'), 'DENY', url);
      assert.match(response.headers.get('strict-transport-security') ?? '', /max-age=\d+/, url);
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.match(csp, /frame-ancestors 'none'/, url);
      if (api.includes(url)) {
        // JSON answers: a CSP that allows nothing, and no header that only matters for documents.
        assert.match(csp, /^default-src 'none'/, url);
        assert.equal(response.headers.get('referrer-policy'), null, url);
      } else {
        assert.match(csp, /script-src 'self'/, url);
        assert.equal(response.headers.get('referrer-policy'), 'no-referrer', url);
      }
    }
    const page = await (await fetch(`${system.urls.inspection}/docs`)).text();
    const assets = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(assets.some((a) => a.endsWith('swagger-ui-bundle.js')));
    assert.doesNotMatch(page, /<script>(?!\s*<\/script>)/, 'no inline script (the CSP forbids them)');
    for (const asset of assets) {
      assert.ok(!/^https?:/.test(asset), `${asset} is served locally`);
      const response = await fetch(new URL(asset, `${system.urls.inspection}/docs/`));
      assert.equal(response.status, 200, asset);
    }
  });

  it('14: pagination links are built on the public URL, not on the Host header', async () => {
    const inspection = await rawGet(`${system.urls.inspection}/v1/allowance/types/?page_size=1`, {
      host: 'evil.example',
      'x-api-key': account.apiKey,
      authorization: `Bearer ${token}`,
    });
    assert.equal(inspection.status, 200);
    assert.ok(inspection.body.next.startsWith(`${system.urls.inspection}/v1/allowance/types/`), inspection.body.next);
    await cloud.call('POST', '/project/api/v3/project-groups/', { name: 'g1' }, { expect: 201 });
    await cloud.call('POST', '/project/api/v3/project-groups/', { name: 'g2' }, { expect: 201 });
    const groups = await rawGet(`${system.urls.cloud}/project/api/v3/project-groups/?page_size=1`, { host: 'evil.example', authorization: `Bearer ${cloud.token}` });
    assert.equal(groups.status, 200);
    assert.ok(groups.body.next.startsWith(`${system.urls.cloud}/project/api/v3/project-groups/`), groups.body.next);
  });

  it('16: a wrong method is 405 method_not_allowed with Allow, on both services', async () => {
    const cases: [string, string, string][] = [
      ['POST', `${system.urls.inspection}/v1/assets/1/`, 'GET'],
      ['DELETE', `${system.urls.inspection}/v1/auth/token`, 'POST'],
      ['GET', `${system.urls.cloud}/oauth2/token/`, 'POST'],
      ['PUT', `${system.urls.cloud}/project/api/v3/projects/`, 'POST'],
    ];
    for (const [method, url, allowed] of cases) {
      const response = await fetch(url, { method });
      assert.equal(response.status, 405, `${method} ${url}`);
      assert.ok(response.headers.get('allow')?.split(', ').includes(allowed), `${method} ${url}: Allow ${response.headers.get('allow')}`);
      assert.equal(((await response.json()) as { code: string }).code, 'method_not_allowed');
    }
    assert.equal((await fetch(`${system.urls.inspection}/v1/no-such-thing/`, { method: 'POST' })).status, 404);
  });
});

/** A login attempt; `from` is the client address the (trusted) proxy reports. */
function login(system: TestSystem, account: TestAccount, password: string, username = account.username, from = '203.0.113.1') {
  return fetch(`${system.urls.inspection}/v1/auth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey, 'x-forwarded-for': from },
    body: JSON.stringify({ username, password }),
  }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as any }));
}

describe('9: brute-force throttling of the token calls', () => {
  let system: TestSystem;
  before(async () => {
    system = await startTestSystem({ authRateLimitPerAccount: 5, authRateLimitPerAddress: 40, authRateLimitWindowSeconds: 600, trustProxy: true });
  });
  after(() => system.stop());

  it('per username, then per address, on /v1/auth/token/; the right password of another user still works', async () => {
    const victim = await system.newAccount();
    const other = await system.newAccount();
    // A burst in parallel: the per-username limit still holds (attempts on one account are serialised).
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => login(system, victim, `wrong-${i}`)));
    assert.equal(burst.filter((r) => r.status === 401).length, 5);
    const throttled = burst.filter((r) => r.status === 429);
    assert.equal(throttled.length, 7);
    assert.equal(throttled[0].body.code, 'throttled');
    assert.ok(Number(throttled[0].retryAfter) > 0);
    // The hammered account is locked for the window from the guessing address, even with its right password ...
    assert.equal((await login(system, victim, victim.password)).status, 429);
    // ... while its owner, from another address, logs in with the right password, and so does another user.
    assert.equal((await login(system, victim, victim.password, victim.username, '198.51.100.7')).status, 200);
    assert.equal((await login(system, victim, 'wrong', victim.username, '198.51.100.7')).status, 401);
    assert.equal((await login(system, other, other.password)).status, 200);
    // Spreading guesses over usernames meets the per-address limit of 40 (14 attempts so far from
    // this address: the burst and two logins).
    const spread = [];
    for (let i = 0; i < 30; i++) spread.push(await login(system, other, 'x', `nobody-${i}`));
    assert.ok(spread.some((r) => r.status === 429), 'per-address limit reached');
    assert.ok(spread.every((r) => r.status === 401 || r.status === 429));
  });

  it('per client_id and per address on /oauth2/token/', async () => {
    const client = await cloudClient(system, 'Throttled org');
    const good = await cloudClient(system, 'Other org');
    const token = (clientId: string, secret: string) =>
      fetch(`${system.urls.cloud}/oauth2/token/`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }) });
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push((await token(client.clientId, `wrong-${i}`)).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
    const refused = await token(client.clientId, client.clientSecret);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.equal(((await refused.json()) as { code: string }).code, 'throttled');
    assert.equal((await token(good.clientId, good.clientSecret)).status, 200);
  });
});

/** Writes `request` in one go on a new connection; resolves with everything read until the server closes it. */
function exchange(url: URL, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

describe('10: request timeouts and the cap on unfinished bodies', () => {
  let system: TestSystem;
  before(async () => {
    system = await startTestSystem({ httpRequestTimeoutSeconds: 5, httpHeadersTimeoutSeconds: 5, httpMaxUnfinishedBodies: 1 });
  });
  after(() => system.stop());

  // The timeout makes a server that never closes either connection (the code as it landed) fail, not hang.
  it('a body trickled at a byte every 2 s is cut off (configured: 5 s), and a second unfinished body meanwhile is 503', { timeout: 90_000 }, async () => {
    const url = new URL(system.urls.inspection);
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    socket.write('POST /v1/auth/token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    const trickle = setInterval(() => socket.writable && socket.write(' '), 2000);
    socket.on('error', () => {});
    socket.on('data', () => {});
    const closed = new Promise<boolean>((resolve) => {
      socket.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 60_000).unref();
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      // A second request whose body is not all there: over the cap of 1.
      const refused = await exchange(url, 'POST /v1/auth/token/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
      assert.match(refused, /^HTTP\/1\.1 503 /);
      assert.match(refused, /"code":"unavailable"/);
      assert.match(refused, /retry-after: 1/i);
      // A body sent whole meanwhile holds nothing up: it is served.
      const served = await exchange(url, 'POST /v1/auth/token/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
      assert.match(served, /^HTTP\/1\.1 4\d\d /);
      assert.ok(await closed, 'the trickling connection was closed within 60 s');
      assert.ok(Date.now() - started < 60_000);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
    // Once it is gone, bodies are taken again.
    const later = await fetch(`${system.urls.inspection}/v1/auth/token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.notEqual(later.status, 503);
  });
});

describe('17: the configuration is checked at start', () => {
  it('loadConfig names every bad variable', () => {
    assert.throws(() => loadConfig({ RUN_WORKERS: 'ture' }), (err: Error) => err instanceof ConfigError && /RUN_WORKERS/.test(err.message));
    const bad = {
      BOOTSTRAP_DEMO: 'maybe',
      INSPECTION_PORT: '80000',
      STORAGE_CREDENTIALS_TTL: '12h',
      LOG_LEVEL: 'loud',
      ENGINE: 'magic',
      ENGINES: 'exif,magic',
      CLOUD_PUBLIC_URL: 'not a url',
      DATABASE_URL: 'mysql://x',
      NODEODM_OPTIONS: '[1]',
      AUTH_RATE_LIMIT_PER_ACCOUNT: '-1',
      HTTP_REQUEST_TIMEOUT_SECONDS: '1.5',
      TRUST_PROXY: 'everyone',
    };
    try {
      loadConfig(bad);
      assert.fail('accepted');
    } catch (err) {
      for (const name of Object.keys(bad)) assert.match((err as Error).message, new RegExp(`\\b${name}\\b`), name);
    }
    const good = loadConfig({ RUN_WORKERS: 'False', BOOTSTRAP_DEMO: 'yes', INSPECTION_PORT: '8080', LOG_LEVEL: 'DEBUG', TRUST_PROXY: '10.0.0.0/8', DATABASE_URL: '' });
    assert.equal(good.runWorkers, false);
    assert.equal(good.bootstrapDemo, true);
    assert.equal(good.inspectionPort, 8080);
    assert.equal(good.logLevel, 'debug');
    assert.deepEqual(good.trustProxy, ['10.0.0.0/8']);
    assert.equal(good.databaseUrl, undefined);
  });

  it('the S3 store variables: all or nothing, keyed on S3_BUCKET; the storage root key pair goes together', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    assert.match(problems({ S3_ENDPOINT: 'http://store:9000' }), /S3_ENDPOINT is set but S3_BUCKET is not/);
    assert.match(problems({ S3_BUCKET: 'b' }), /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are needed/);
    assert.match(problems({ S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's', S3_ENDPOINT: 'store:9000' }), /S3_ENDPOINT must be a URL/);
    assert.match(problems({ STORAGE_ROOT_ACCESS_KEY: 'ROOTKEY' }), /STORAGE_ROOT_ACCESS_KEY and STORAGE_ROOT_SECRET_KEY go together/);
    assert.match(problems({ STORAGE_ROOT_ACCESS_KEY: 'ASIAX', STORAGE_ROOT_SECRET_KEY: 's' }), /must not start with ASIA/);
    const minio = loadConfig({ S3_BUCKET: 'photos', S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's', S3_REGION: 'eu-west-1' });
    assert.deepEqual(minio.s3, { endpoint: 'http://minio:9000', region: 'eu-west-1', bucket: 'photos', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true, stsEndpoint: 'http://minio:9000', roleArn: undefined, publicEndpoint: 'http://minio:9000', roleMode: 'shared', userArn: undefined, iamEndpoint: 'http://minio:9000', unsafeRoleOk: false });
    assert.equal(minio.storageBucket, 'photos', 'the services use the S3 bucket');
    const aws = loadConfig({ S3_BUCKET: 'photos', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's', S3_ROLE_ARN: 'arn:aws:iam::1:role/r' });
    assert.equal(aws.s3?.endpoint, undefined);
    assert.equal(aws.s3?.forcePathStyle, false, 'virtual-hosted style on AWS');
    assert.equal(loadConfig({}).s3, undefined, 'the embedded store by default');
  });

  it('serve stops with a message naming the variable', async () => {
    const dataDir = tempDir();
    await assert.rejects(startServerProcess({ DATA_DIR: dataDir, RUN_WORKERS: 'ture' }), (err: Error) => /exited with 1/.test(err.message) && /RUN_WORKERS/.test(err.message));
  });
});
