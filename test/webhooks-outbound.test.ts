// The outbound safety module of webhooks (src/infra/webhooks/outbound.ts): which addresses are
// refused, DNS resolved once and the connection pinned to the checked address, redirects not
// followed, a time limit, bounded bodies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, ConfigError } from '../src/config.ts';
import { DEFAULT_RETRY_POLICY, nextRetrySeconds } from '../src/infra/webhooks/signing.ts';
import { CircuitBreaker, PAUSE_SECONDS } from '../src/infra/webhooks/circuit-breaker.ts';
import { isForbiddenAddress, MAX_BODY_BYTES, MAX_RESPONSE_BYTES, OutboundError, postSafely, urlProblem } from '../src/infra/webhooks/outbound.ts';

async function server(handler: http.RequestListener): Promise<{ port: number; requests: http.IncomingMessage[]; close(): Promise<void> }> {
  const requests: http.IncomingMessage[] = [];
  const s = http.createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return {
    port: (s.address() as AddressInfo).port,
    requests,
    close: () => new Promise((resolve) => {
      s.closeAllConnections();
      s.close(() => resolve());
    }),
  };
}

test('forbidden addresses: private, loopback, link-local, unique-local, unspecified, IPv4-mapped; public ones pass', () => {
  for (const address of [
    '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '224.0.0.1', '255.255.255.255',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', '::127.0.0.1', 'not-an-address',
  ]) {
    assert.equal(isForbiddenAddress(address), true, address);
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2a00:1450:4001::200e']) {
    assert.equal(isForbiddenAddress(address), false, address);
  }
});

test('receiver URLs: http(s) only, at most 2000 characters, no private literal or localhost without the setting', () => {
  assert.equal(urlProblem('https://hooks.example.com/in', false), undefined);
  assert.match(urlProblem('ftp://hooks.example.com/', false)!, /http and https/);
  assert.match(urlProblem('not a url', false)!, /valid URL/);
  assert.match(urlProblem(`https://example.com/${'a'.repeat(2000)}`, false)!, /2000/);
  for (const url of ['http://127.0.0.1:8080/', 'http://[::1]/', 'http://localhost/', 'http://[::ffff:127.0.0.1]/', 'http://10.0.0.8/', 'http://169.254.169.254/latest/meta-data/']) {
    assert.match(urlProblem(url, false)!, /Private/, url);
    assert.equal(urlProblem(url, true), undefined, url);
  }
});

test('delivery: a loopback receiver is refused without the setting and reached with it', async () => {
  const receiver = await server((_req, res) => res.end('ok'));
  try {
    await assert.rejects(postSafely(`http://127.0.0.1:${receiver.port}/`, '{}', {}, { allowPrivate: false }), OutboundError);
    assert.equal(receiver.requests.length, 0);
    const answer = await postSafely(`http://127.0.0.1:${receiver.port}/`, '{"a":1}', { 'webhook-id': 'msg_1' }, { allowPrivate: true });
    assert.equal(answer.status, 200);
    assert.equal(receiver.requests[0].headers['webhook-id'], 'msg_1');
  } finally {
    await receiver.close();
  }
});

test('DNS is resolved once: a name resolving to a private address is refused; the connection goes to the checked address', async () => {
  const receiver = await server((_req, res) => res.end('ok'));
  try {
    let lookups = 0;
    // A name that now resolves inside (DNS rebinding): refused before any connection.
    await assert.rejects(
      postSafely(`http://rebind.example:${receiver.port}/`, '{}', {}, { allowPrivate: false, resolve: async () => (lookups++, [{ address: '127.0.0.1', family: 4 }]) }),
      (err: Error) => err instanceof OutboundError && /private/.test(err.message),
    );
    // One address public, another private: refused as a whole.
    await assert.rejects(
      postSafely(`http://mixed.example:${receiver.port}/`, '{}', {}, { allowPrivate: false, resolve: async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }] }),
      OutboundError,
    );
    // A resolver that never answers counts against the time limit.
    await assert.rejects(
      postSafely(`http://slow-dns.example:${receiver.port}/`, '{}', {}, { allowPrivate: true, timeoutMs: 200, resolve: () => new Promise(() => undefined) }),
      (err: Error) => err instanceof OutboundError && /ETIMEOUT/.test(err.message),
    );
    assert.equal(receiver.requests.length, 0);
    // Allowed: the name is resolved once by our resolver and the socket connects to that address
    // (the name itself resolves nowhere).
    lookups = 0;
    const answer = await postSafely(`http://pinned.invalid:${receiver.port}/hook`, '{}', {}, { allowPrivate: true, resolve: async () => (lookups++, [{ address: '127.0.0.1', family: 4 }]) });
    assert.equal(answer.status, 200);
    assert.equal(lookups, 1);
    assert.equal(receiver.requests[0].headers.host, `pinned.invalid:${receiver.port}`);
  } finally {
    await receiver.close();
  }
});

test('redirects are not followed, bodies are bounded, a receiver that does not answer times out', async () => {
  const target = await server((_req, res) => res.end('reached'));
  const redirecting = await server((_req, res) => {
    res.writeHead(302, { location: `http://127.0.0.1:${target.port}/` });
    res.end();
  });
  const big = await server((_req, res) => res.end(Buffer.alloc(MAX_RESPONSE_BYTES * 4, 'x')));
  const silent = await server(() => undefined);
  try {
    const answer = await postSafely(`http://127.0.0.1:${redirecting.port}/`, '{}', {}, { allowPrivate: true });
    assert.equal(answer.status, 302);
    assert.equal(target.requests.length, 0, 'the redirect was not followed');

    const large = await postSafely(`http://127.0.0.1:${big.port}/`, '{}', {}, { allowPrivate: true });
    assert.equal(large.status, 200);
    assert.ok(large.body.length <= MAX_RESPONSE_BYTES);

    await assert.rejects(postSafely(`http://127.0.0.1:${target.port}/`, 'x'.repeat(MAX_BODY_BYTES + 1), {}, { allowPrivate: true }), /body over/);

    await assert.rejects(postSafely(`http://127.0.0.1:${silent.port}/`, '{}', {}, { allowPrivate: true, timeoutMs: 300 }), (err: Error) => err instanceof OutboundError && /No answer/.test(err.message));
  } finally {
    await Promise.all([target.close(), redirecting.close(), big.close(), silent.close()]);
  }
});

test('WEBHOOK_* settings: defaults, and a bad value stops the start naming the variable', () => {
  const defaults = loadConfig({});
  assert.deepEqual([defaults.webhookAllowPrivateAddresses, defaults.webhookRetryBaseSeconds, defaults.webhookMaxAttempts], [false, 30, 20]);
  assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' }).webhookAllowPrivateAddresses, true);
  assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'maybe' }), (err: Error) => err instanceof ConfigError && /WEBHOOK_ALLOW_PRIVATE_ADDRESSES/.test(err.message));
  assert.throws(() => loadConfig({ WEBHOOK_MAX_ATTEMPTS: '0' }), (err: Error) => err instanceof ConfigError && /WEBHOOK_MAX_ATTEMPTS/.test(err.message));
  assert.throws(() => loadConfig({ WEBHOOK_RETRY_BASE_SECONDS: '-1' }), (err: Error) => err instanceof ConfigError && /WEBHOOK_RETRY_BASE_SECONDS/.test(err.message));
});

test('retry schedule: 30 s doubling, at most 6 h apart, within 24 h of the first attempt', () => {
  const delays: number[] = [];
  let elapsed = 0;
  for (let attempt = 1; ; attempt++) {
    const next = nextRetrySeconds(DEFAULT_RETRY_POLICY, attempt, elapsed);
    if (next === undefined) break;
    delays.push(next);
    elapsed += next;
  }
  assert.deepEqual(delays.slice(0, 4), [30, 60, 120, 240]);
  assert.equal(delays.length + 1, 13, '13 attempts');
  assert.ok(elapsed <= 24 * 3600 && Math.max(...delays) === 6 * 3600);
  assert.equal(nextRetrySeconds({ baseSeconds: 0, maxAttempts: 3, windowSeconds: 86400 }, 3, 0), undefined, 'WEBHOOK_MAX_ATTEMPTS bounds them');
});

test('circuit breaker: three unanswered attempts pause a subscription; after the pause one probe goes, the others wait for it; an answer closes it', () => {
  let now = 1_000_000;
  const breaker = new CircuitBreaker(10_000, () => now);
  assert.equal(breaker.admit(1), true);
  assert.deepEqual([breaker.unanswered(1), breaker.unanswered(1)], [false, false]);
  breaker.answered(1); // any answer, even a 500, clears the count
  assert.deepEqual([breaker.unanswered(1), breaker.unanswered(1), breaker.unanswered(1)], [false, false, true]);
  assert.equal(breaker.waitSeconds(1), PAUSE_SECONDS);
  assert.equal(breaker.admit(1), false, 'paused');
  assert.equal(breaker.waitSeconds(2), 0, 'another subscription is not paused');
  now += PAUSE_SECONDS * 1000;
  assert.equal(breaker.admit(1), true, 'the probe');
  assert.equal(breaker.admit(1), false, 'the others wait for the probe');
  assert.equal(breaker.waitSeconds(1), 11, 'for at most the time limit and a second');
  assert.equal(breaker.unanswered(1), true, 'the probe got no answer: paused again');
  assert.equal(breaker.waitSeconds(1), PAUSE_SECONDS);
  now += PAUSE_SECONDS * 1000;
  assert.equal(breaker.admit(1), true);
  breaker.answered(1);
  assert.deepEqual([breaker.admit(1), breaker.admit(1), breaker.waitSeconds(1)], [true, true, 0], 'closed');
});

/** IPv6 forms carrying an IPv4 address (issue 40 §8), with a private/loopback one inside, and with a public one. */
const EMBEDDED_PRIVATE = [
  '::ffff:0:127.0.0.1', // IPv4-translated
  '::ffff:0:7f00:1',
  '::ffff:127.0.0.1', // IPv4-mapped
  '64:ff9b::10.0.0.1', // NAT64, well-known prefix
  '64:ff9b::a9fe:a9fe',
  '64:ff9b:1::8.8.8.8', // local-use NAT64: refused whatever it carries
  '64:ff9b:1:7f00:1::',
  '2002:7f00:1::1', // 6to4 of 127.0.0.1
  '2002:c0a8:101::', // 6to4 of 192.168.1.1
  '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo, client 127.0.0.1 (inverted in the last 32 bits)
  '2001:0:4136:e378:8000:63bf:f5ff:fffe', // Teredo, client 10.0.0.1
  '2001:0:a00:1::a247:27dd', // Teredo, server 10.0.0.1
];
const EMBEDDED_PUBLIC = ['::ffff:0:8.8.8.8', '64:ff9b::808:808', '2002:5db8:d822::1', '2001:0:4136:e378:8000:63bf:a247:27dd'];

test('IPv6 forms that carry an IPv4 address are judged by it: refused at subscription and in DNS answers at delivery', async () => {
  for (const address of EMBEDDED_PRIVATE) {
    assert.equal(isForbiddenAddress(address), true, address);
    assert.match(urlProblem(`http://[${address}]:8080/in`, false)!, /Private/, address);
  }
  for (const address of EMBEDDED_PUBLIC) {
    assert.equal(isForbiddenAddress(address), false, address);
    assert.equal(urlProblem(`https://[${address}]/in`, false), undefined, address);
  }
  for (const address of EMBEDDED_PRIVATE) {
    await assert.rejects(
      postSafely('http://hooks.example:8080/in', '{}', {}, { allowPrivate: false, resolve: async () => [{ address, family: 6 }] }),
      (err: Error) => err instanceof OutboundError && /private/.test(err.message),
      address,
    );
  }
});
