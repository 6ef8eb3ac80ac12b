// Helmet's headers computed once (infra/http/security-headers.ts) are the headers @fastify/helmet
// sets per request, on answers, on errors thrown by a hook, on 404s, with the services' options.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import { addSecurityHeaders } from '../src/infra/http/security-headers.ts';

const OPTIONS: FastifyHelmetOptions[] = [
  {
    contentSecurityPolicy: { directives: { 'frame-ancestors': ["'none'"], 'upgrade-insecure-requests': null } },
    frameguard: { action: 'deny' },
  },
  {
    contentSecurityPolicy: { directives: { 'connect-src': ["'self'", 'http://127.0.0.1:9000'], 'img-src': ["'self'", 'data:', 'blob:'], 'frame-ancestors': ["'none'"], 'upgrade-insecure-requests': null } },
    frameguard: { action: 'deny' },
  },
];

async function app(install: (app: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const server = Fastify({ logger: false });
  await install(server);
  server.get('/ok', async () => ({ ok: true }));
  server.register(async (scope) => {
    scope.addHook('onRequest', async () => {
      throw Object.assign(new Error('no'), { statusCode: 401 });
    });
    scope.get('/refused', async () => ({ ok: true }));
  });
  return server;
}

describe('security headers computed once', () => {
  for (const [i, options] of OPTIONS.entries()) {
    it(`are @fastify/helmet's, per answer (options ${i + 1})`, async () => {
      const reference = await app(async (server) => {
        await server.register(helmet, options);
      });
      const ours = await app((server) => addSecurityHeaders(server, options));
      for (const url of ['/ok', '/refused', '/missing']) {
        const [a, b] = [await reference.inject(url), await ours.inject(url)];
        assert.equal(b.statusCode, a.statusCode, url);
        const { date: _a, ...expected } = a.headers;
        const { date: _b, ...actual } = b.headers;
        assert.deepEqual(actual, expected, url);
        assert.equal(actual['x-frame-options'], 'DENY');
        assert.match(String(actual['content-security-policy']), /frame-ancestors 'none'/);
      }
      await Promise.all([reference.close(), ours.close()]);
    });
  }
});
