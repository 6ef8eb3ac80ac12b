// Each request's logger is made on its first enabled line (infra/http/request-logger.ts): the
// lines it writes are those of pino's child (the request id, the service's bindings, redaction),
// levels are honoured, and a request that logs nothing makes no child.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../src/system.ts';
import { createHttpServer } from '../src/infra/http/http-server.ts';
import { LazyChildLogger } from '../src/infra/http/request-logger.ts';

async function serverLogging(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(...String(chunk).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)), done()) });
  const logger = createLogger({ logLevel: level }, sink).child({ service: 'test' });
  const app = await createHttpServer({ logger, title: 't', description: 't', version: '1', openapiPath: '/openapi.json' });
  app.get('/v1/logs/', async (request) => {
    request.log.info({ body: { password: 'hunter2' } }, 'an info line');
    request.log.warn('a warning');
    request.log.child({ step: 'inner' }).error('from a child');
    return { level: request.log.level, lazy: request.log instanceof LazyChildLogger };
  });
  app.get('/v1/quiet/', async () => ({ ok: true }));
  return { app, lines };
}

describe('request logger', () => {
  it('writes what pino\'s child would, with the request id, the bindings and the redaction', async () => {
    const { app, lines } = await serverLogging('info');
    const answer = await app.inject({ url: '/v1/logs/', headers: { 'x-api-key': 'secret-key' } });
    await app.close();
    assert.deepEqual(answer.json(), { level: 'info', lazy: true });
    const mine = lines.filter((l) => l.reqId === lines.find((x) => x.msg === 'incoming request')?.reqId);
    assert.deepEqual(
      mine.map((l) => l.msg),
      ['incoming request', 'an info line', 'a warning', 'from a child', 'request completed'],
    );
    for (const line of mine) assert.equal(line.service, 'test');
    assert.equal(mine.find((l) => l.msg === 'from a child')?.step, 'inner');
    assert.deepEqual(mine.find((l) => l.msg === 'an info line')?.body, { password: '[redacted]' });
    assert.ok(!JSON.stringify(lines).includes('hunter2') && !JSON.stringify(lines).includes('secret-key'));
    assert.equal(typeof mine[0].reqId, 'string');
  });

  it('honours the level, and makes no child for a request that logs nothing', async () => {
    const { app, lines } = await serverLogging('warn');
    const answer = await app.inject({ url: '/v1/logs/' });
    assert.equal(answer.json().level, 'warn');
    assert.deepEqual(
      lines.map((l) => l.msg),
      ['a warning', 'from a child'],
    );
    assert.equal(typeof lines[0].reqId, 'string');
    assert.equal(lines[0].reqId, lines[1].reqId);

    // The child is made on the first enabled line only.
    let made = 0;
    const parent = createLogger({ logLevel: 'warn' }, new Writable({ write: (_c, _e, done) => done() }));
    const child = parent.child.bind(parent);
    Object.assign(parent, { child: (...args: Parameters<typeof child>) => (made++, child(...args)) });
    const lazy = new LazyChildLogger(parent as never, { reqId: 'r1' }, {});
    lazy.info('not written');
    lazy.debug('not written');
    assert.equal(made, 0);
    lazy.error('written');
    lazy.warn('written');
    assert.equal(made, 1);
    await app.inject({ url: '/v1/quiet/' });
    await app.close();
  });
});
