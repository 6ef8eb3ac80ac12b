// Webhooks of the inspection service (src/inspection/webhooks), as a customer's receiver sees
// them: a receiver on loopback verifies every delivery with the Standard Webhooks library
// (`Webhook.verify`) through an inspection's life; retries after 500s and the delivery log;
// disabling after repeated failure and the owner's e-mail, enabling again by PATCH; private addresses refused without
// WEBHOOK_ALLOW_PRIVATE_ADDRESSES; other organizations' 404; the secret never shown or logged again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import os from 'node:os';
import { Writable } from 'node:stream';
import net, { type AddressInfo } from 'node:net';
import pino from 'pino';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { isForbiddenAddress } from '../src/infra/webhooks/outbound.ts';
import { WebhookCore } from '../src/infra/webhooks/webhook-core.ts';
import { DEFAULT_RETRY_POLICY, SecretBox } from '../src/infra/webhooks/signing.ts';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, outbox, processedInspection, waitFor } from './helpers/inspection-fixtures.ts';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A receiver on an ephemeral loopback port; `answer` decides each response's status. */
async function receiver(answer: (path: string, count: number) => number = () => 204) {
  const received: Received[] = [];
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const count = (counts.get(path) ?? 0) + 1;
      counts.set(path, count);
      received.push({ path, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(answer(path, count));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const ALL_EVENTS = ['inspection.status_changed', 'inspection.additional_status_changed', 'report.ready', 'inputs_zip.ready'];

let system: TestSystem;
let strict: TestSystem;
const logLines: string[] = [];
let rx: Awaited<ReturnType<typeof receiver>>;
/** What the receiver's /down answers (503 until a test says it is back). */
let downStatus = 503;

before(async () => {
  const logs = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  // Private addresses allowed (the receiver is on loopback), retries at once, 3 attempts per event.
  system = await startTestSystem({ webhookAllowPrivateAddresses: true, webhookRetryBaseSeconds: 0, webhookMaxAttempts: 3 }, pino({ level: 'debug' }, logs));
  strict = await startTestSystem();
  rx = await receiver((path, count) => (path === '/flaky' && count <= 2 ? 500 : path === '/down' ? downStatus : 204));
});

after(async () => {
  await rx?.close();
  await system?.stop();
  await strict?.stop();
});

function verified(secret: string, delivery: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(delivery.body, delivery.headers) as never;
}

test("an inspection's life: every event arrives, signed, in order, with old and new status; the secret is shown once and never logged", async (t) => {
  const account = await system.newAccount();
  const created = await account.client.expect(201, 'POST', '/v1/webhooks/', { url: `${rx.base}/life`, events: ALL_EVENTS });
  assert.match(created.secret, /^whsec_[A-Za-z0-9+/=]+$/);
  assert.equal(created.active, true);

  const { inspection } = await processedInspection(account);
  await account.client.expect(202, 'POST', `/v1/inspections/${inspection.id}/report/`, {});
  await account.client.request('GET', `/v1/inspections/${inspection.id}/inputs/`);
  await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { additional_statuses: { rust: 14 } });
  const life = () => rx.received.filter((r) => r.path === '/life');
  await waitFor('report.ready, inputs_zip.ready and the additional status delivered', async () => {
    const events = life().map((r) => JSON.parse(r.body));
    const types = events.map((e) => e.type);
    return types.includes('report.ready') && types.includes('inputs_zip.ready') && events.some((e) => e.type === 'inspection.additional_status_changed' && e.data.new_additional_statuses.rust === 14);
  });

  const events = life().map((r) => verified(created.secret, r));
  // A wrong secret does not verify.
  assert.throws(() => new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`).verify(life()[0].body, life()[0].headers));
  for (const r of life()) assert.match(r.headers['webhook-signature'], /^v1,/);

  const statuses = events.filter((e) => e.type === 'inspection.status_changed').map((e) => e.data);
  assert.ok(statuses.length >= 3, `status changes: ${JSON.stringify(statuses)}`);
  assert.equal(statuses[0].old_status, 1, 'from New');
  for (let i = 1; i < statuses.length; i++) assert.equal(statuses[i].old_status, statuses[i - 1].new_status, 'each change starts where the last ended');
  assert.equal(statuses.at(-1)!.new_status, 7);
  t.diagnostic(`events: ${events.map((e) => (e.type === 'inspection.status_changed' ? `${e.data.old_status}->${e.data.new_status}` : e.type)).join(', ')}`);
  for (const s of statuses) assert.equal(s.inspection_id, inspection.id);
  const report = events.find((e) => e.type === 'report.ready')!;
  assert.equal(report.data.inspection_id, inspection.id);
  // Its link answers, with the report's files.
  const outputs = await account.client.expect(200, 'GET', report.data.report as string);
  assert.deepEqual(outputs.map((o: { output_type: string }) => o.output_type).filter((type: string) => type.startsWith('report_')).sort(), ['report_json', 'report_pdf']);
  assert.equal(events.find((e) => e.type === 'inputs_zip.ready')!.data.inspection_id, inspection.id);
  const additional = events.filter((e) => e.type === 'inspection.additional_status_changed').at(-1)!;
  assert.equal((additional.data.new_additional_statuses as { rust: number }).rust, 14);
  assert.notEqual((additional.data.old_additional_statuses as { rust: number | null }).rust, 14);

  // The log: one successful attempt per event.
  const log = await account.client.expect(200, 'GET', `/v1/webhooks/${created.id}/deliveries/`);
  assert.equal(log.length, life().length);
  assert.ok(log.every((d: { succeeded: boolean; attempt: number; status_code: number }) => d.succeeded && d.attempt === 1 && d.status_code === 204));

  // The secret: in no GET, in no log line.
  const one = await account.client.expect(200, 'GET', `/v1/webhooks/${created.id}/`);
  const all = await account.client.expect(200, 'GET', '/v1/webhooks/');
  assert.equal('secret' in one, false);
  assert.ok(!JSON.stringify(all).includes(created.secret) && !JSON.stringify(one).includes(created.secret) && !JSON.stringify(log).includes(created.secret));
  assert.ok(logLines.length > 0, 'the system logged');
  const secretBody = created.secret.slice('whsec_'.length);
  assert.ok(!logLines.some((line) => line.includes(secretBody)), 'the secret is in no log line');
  const stored = await system.inspection.db.selectFrom('inspection.webhooks').select('secret_sealed').where('id', '=', created.id).executeTakeFirstOrThrow();
  assert.ok(!stored.secret_sealed.includes(secretBody), 'stored sealed, not as it is');
});

test('a receiver answering 500 twice gets the event on the third attempt; the log shows the three', async () => {
  const account = await system.newAccount();
  const hook = await account.client.expect(201, 'POST', '/v1/webhooks/', { url: `${rx.base}/flaky`, events: ['inspection.status_changed'] });
  const asset = await account.client.createAsset({ name: 'Mast', type: 1, latitude: '46.5', longitude: '6.5' } as never);
  const inspection = await account.client.createInspection({ asset: asset.id, name: 'Retry' });
  await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: 2 });
  const log = await waitFor('three attempts', async () => {
    const entries = await account.client.expect(200, 'GET', `/v1/webhooks/${hook.id}/deliveries/`);
    return entries.length >= 3 && entries;
  });
  assert.deepEqual(
    log.map((d: { attempt: number; status_code: number; event: string }) => [d.attempt, d.status_code, d.event]).reverse(),
    [
      [1, 500, 'inspection.status_changed'],
      [2, 500, 'inspection.status_changed'],
      [3, 204, 'inspection.status_changed'],
    ],
  );
  assert.equal(new Set(log.map((d: { message_id: string }) => d.message_id)).size, 1, 'one message, three attempts');
  const deliveries = rx.received.filter((r) => r.path === '/flaky');
  assert.equal(deliveries.length, 3);
  assert.equal(new Set(deliveries.map((d) => d.headers['webhook-id'])).size, 1, 'the same webhook-id each time');
  const event = verified(hook.secret, deliveries[2]);
  assert.deepEqual([event.data.old_status, event.data.new_status], [1, 2]);
});

test('a subscription whose events all fail five times in a row is disabled and its owner told by e-mail', async () => {
  const account = await system.newAccount();
  const hook = await account.client.expect(201, 'POST', '/v1/webhooks/', { url: `${rx.base}/down`, events: ['inspection.status_changed'] });
  const asset = await account.client.createAsset({ name: 'Mast', type: 1, latitude: '46.5', longitude: '6.5' } as never);
  const inspection = await account.client.createInspection({ asset: asset.id, name: 'Down' });
  for (let i = 0; i < 5; i++) {
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: i % 2 === 0 ? 2 : 1 });
  }
  const disabled = await waitFor('the subscription disabled', async () => {
    const current = await account.client.expect(200, 'GET', `/v1/webhooks/${hook.id}/`);
    return !current.active && current;
  });
  assert.match(disabled.disabled_reason, /5 events/);
  const log = await account.client.expect(200, 'GET', `/v1/webhooks/${hook.id}/deliveries/`);
  assert.equal(log.length, 15, '5 events x 3 attempts');
  assert.ok(log.every((d: { status_code: number }) => d.status_code === 503));
  const mail = await waitFor('the e-mail', async () => outbox(system).find((m) => m.subject.includes(`Webhook ${hook.id} disabled`)));
  assert.match(mail.to, new RegExp(account.username));
  // Disabled: the next change sends nothing.
  const before = rx.received.filter((r) => r.path === '/down').length;
  await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: 2 });
  await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: 1 });
  assert.equal(rx.received.filter((r) => r.path === '/down').length, before);
  const messages = await system.inspection.db.selectFrom('inspection.webhook_messages').select('id').where('webhook_id', '=', hook.id).execute();
  assert.equal(messages.length, 5, 'no message queued for a disabled subscription');
  assert.match(mail.body, new RegExp(`PATCH /v1/webhooks/${hook.id}/ with \\{"enabled": true\\}`));

  // The receiver is back: enabled again by PATCH, the state and the count of failures cleared, the next event delivered.
  downStatus = 204;
  try {
    const stranger = await system.newAccount();
    assert.equal((await stranger.client.request('PATCH', `/v1/webhooks/${hook.id}/`, { enabled: true })).status, 404);
    for (const bad of [{}, { enabled: 'yes' }, { enabled: 7 }]) {
      assert.equal((await account.client.request('PATCH', `/v1/webhooks/${hook.id}/`, bad)).status, 400, JSON.stringify(bad));
    }
    assert.equal((await account.client.expect(200, 'GET', `/v1/webhooks/${hook.id}/`)).active, false, 'refused requests change nothing');
    const enabled = await account.client.expect(200, 'PATCH', `/v1/webhooks/${hook.id}/`, { enabled: true });
    assert.deepEqual([enabled.active, enabled.disabled_at, enabled.disabled_reason], [true, null, null]);
    const row = await system.inspection.db.selectFrom('inspection.webhooks').select('failed_events').where('id', '=', hook.id).executeTakeFirstOrThrow();
    assert.equal(row.failed_events, 0);
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: 2 });
    const delivered = await waitFor('the event after enabling delivered', async () => rx.received.filter((r) => r.path === '/down').slice(before).find((r) => JSON.parse(r.body).data.new_status === 2));
    assert.equal(JSON.parse(delivered.body).type, 'inspection.status_changed');
    // The receiver sees the request before the sender has written the attempt down: wait for the log.
    const lastAttempt = await waitFor('the delivered attempt logged', async () => {
      const latest = (await account.client.expect(200, 'GET', `/v1/webhooks/${hook.id}/deliveries/`))[0];
      return latest.succeeded === true && latest;
    });
    assert.equal(lastAttempt.status_code, 204);

    // Disabled by hand: the owner's reason, and nothing more sent.
    const off = await account.client.expect(200, 'PATCH', `/v1/webhooks/${hook.id}/`, { enabled: false });
    assert.deepEqual([off.active, off.disabled_reason], [false, 'Disabled by its owner.']);
    const count = await system.inspection.db.selectFrom('inspection.webhook_messages').select('id').where('webhook_id', '=', hook.id).execute();
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: 1 });
    assert.equal((await system.inspection.db.selectFrom('inspection.webhook_messages').select('id').where('webhook_id', '=', hook.id).execute()).length, count.length);
  } finally {
    downStatus = 503;
  }
});

test("another organization neither sees nor deletes a subscription (404); the owner deletes it once", async () => {
  const owner = await system.newAccount();
  const other = await system.newAccount();
  const hook = await owner.client.expect(201, 'POST', '/v1/webhooks/', { url: `${rx.base}/mine`, events: ['report.ready'] });
  assert.equal((await other.client.request('GET', `/v1/webhooks/${hook.id}/`)).status, 404);
  assert.equal((await other.client.request('GET', `/v1/webhooks/${hook.id}/deliveries/`)).status, 404);
  assert.equal((await other.client.request('DELETE', `/v1/webhooks/${hook.id}/`)).status, 404);
  assert.deepEqual(await other.client.expect(200, 'GET', '/v1/webhooks/'), []);
  assert.equal((await owner.client.expect(200, 'GET', '/v1/webhooks/')).length, 1);
  assert.equal((await owner.client.request('DELETE', `/v1/webhooks/${hook.id}/`)).status, 204);
  assert.equal((await owner.client.request('DELETE', `/v1/webhooks/${hook.id}/`)).status, 404);
});

test('without WEBHOOK_ALLOW_PRIVATE_ADDRESSES a private receiver is a 400 at subscription; bad URLs and events too', async () => {
  const account = await strict.newAccount();
  for (const url of [`${rx.base}/x`, 'http://[::1]:9/', 'http://localhost:9/', 'http://[::ffff:127.0.0.1]/', 'http://10.0.0.5/', 'http://169.254.169.254/',
    // IPv6 forms carrying a private IPv4 address: translated, local-use NAT64, 6to4, Teredo (client 127.0.0.1).
    'http://[::ffff:0:127.0.0.1]/', 'http://[64:ff9b:1::a00:1]/', 'http://[2002:c0a8:101::1]/', 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/']) {
    const answer = await account.client.request('POST', '/v1/webhooks/', { url, events: ['report.ready'] });
    assert.equal(answer.status, 400, url);
    assert.match(answer.body.url[0], /Private/, url);
  }
  const bad = [
    { url: 'ftp://hooks.example.com/', events: ['report.ready'] },
    { url: `https://hooks.example.com/${'a'.repeat(2000)}`, events: ['report.ready'] },
    { url: 'https://hooks.example.com/', events: ['inspection.exploded'] },
    { url: 'https://hooks.example.com/', events: [] },
  ];
  for (const body of bad) assert.equal((await account.client.request('POST', '/v1/webhooks/', body)).status, 400, JSON.stringify(body).slice(0, 80));
  assert.equal((await account.client.expect(201, 'POST', '/v1/webhooks/', { url: 'https://hooks.example.com/in', events: ['report.ready'] })).url, 'https://hooks.example.com/in');
  assertNoServerErrors(strict);
  assertNoServerErrors(system);
});

test('without the setting, a host name that resolves to a private address passes subscription but is refused at delivery', async (t) => {
  // The machine's own name resolves to itself (loopback or a private address) on ordinary hosts.
  const host = os.hostname();
  const addresses = await dns.promises.lookup(host, { all: true }).catch(() => []);
  if (addresses.length === 0 || !addresses.some((a) => isForbiddenAddress(a.address))) {
    t.skip(`${host} does not resolve to a private address here`);
    return;
  }
  const account = await strict.newAccount();
  const port = new URL(rx.base).port;
  const hook = await account.client.expect(201, 'POST', '/v1/webhooks/', { url: `http://${host}:${port}/rebound`, events: ['inspection.status_changed'] });
  const asset = await account.client.createAsset({ name: 'Mast', type: 1, latitude: '46.5', longitude: '6.5' } as never);
  const inspection = await account.client.createInspection({ asset: asset.id, name: 'Rebound' });
  await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: 2 });
  const [first] = await waitFor('the first attempt logged', async () => {
    const log = await account.client.expect(200, 'GET', `/v1/webhooks/${hook.id}/deliveries/`);
    return log.length > 0 && log;
  });
  assert.equal(first.status_code, null);
  assert.match(first.error, /private/);
  assert.equal(first.succeeded, false);
  assert.equal(rx.received.filter((r) => r.path === '/rebound').length, 0, 'nothing reached the receiver');
});

/** A receiver that accepts connections and never answers; `open` counts the connections it holds. */
async function deadReceiver() {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted: () => accepted,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

test("one organization's 20 receivers that never answer do not hold back another organization's event", async (t) => {
  const dead = await deadReceiver();
  const slow = await system.newAccount();
  const other = await system.newAccount();
  try {
    const hooks = [];
    for (let i = 0; i < 20; i++) hooks.push(await slow.client.expect(201, 'POST', '/v1/webhooks/', { url: `${dead.base}/dead-${i}`, events: ['inspection.status_changed'] }));
    await other.client.expect(201, 'POST', '/v1/webhooks/', { url: `${rx.base}/fair`, events: ['inspection.status_changed'] });
    const asset = await slow.client.createAsset({ name: 'Mast', type: 1, latitude: '46.5', longitude: '6.5' } as never);
    const inspection = await slow.client.createInspection({ asset: asset.id, name: 'Dead receivers' });
    for (let i = 0; i < 5; i++) await slow.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: i % 2 === 0 ? 2 : 1 });
    await waitFor('the dead receivers holding deliveries', async () => dead.accepted() > 0);

    const otherAsset = await other.client.createAsset({ name: 'Mast', type: 1, latitude: '46.5', longitude: '6.5' } as never);
    const otherInspection = await other.client.createInspection({ asset: otherAsset.id, name: 'Next door' });
    const started = Date.now();
    await other.client.expect(200, 'PATCH', `/v1/inspections/${otherInspection.id}/`, { status: 2 });
    const hookIds = hooks.map((h) => h.id);
    const slowAttempts = () => system.inspection.db.selectFrom('inspection.webhook_attempts').select('id').where('webhook_id', 'in', hookIds).execute();
    // Fair: the other organization's event arrives while the 100 dead deliveries still wait
    // (none of their first attempts has even timed out yet); unfair: it waits behind them.
    const outcome = await waitFor('the other organization’s event, or a dead delivery’s time-out first', async () => {
      if (rx.received.some((r) => r.path === '/fair')) return 'delivered';
      return (await slowAttempts()).length > 0 && 'a dead delivery timed out first';
    });
    const elapsed = Date.now() - started;
    assert.equal(outcome, 'delivered');
    console.log(`webhook fairness: the other organization's event delivered in ${elapsed} ms, next to 20 receivers that never answer (${dead.accepted()} connections held)`);
    t.diagnostic(`other organization's delivery: ${elapsed} ms`);
    const pending = await system.inspection.db.selectFrom('inspection.webhook_messages').select('id').where('webhook_id', 'in', hookIds).where('state', '=', 'pending').execute();
    assert.equal(pending.length, 100, "the slow organization's 100 deliveries are all still pending");
  } finally {
    // Nothing more for the rest of the file: the subscriptions go, the dead receiver too.
    for (const id of (await slow.client.expect(200, 'GET', '/v1/webhooks/')).map((h: { id: number }) => h.id)) await slow.client.expect(204, 'DELETE', `/v1/webhooks/${id}/`);
    await dead.close();
  }
});

test('a receiver that gives no answer three times in a row is paused: its next deliveries wait for the pause without an attempt', async () => {
  // A port nobody listens on: every connection is refused at once (no answer).
  const closed = await deadReceiver();
  await closed.close();
  const account = await system.newAccount();
  const hook = await account.client.expect(201, 'POST', '/v1/webhooks/', { url: `${closed.base}/gone`, events: ['inspection.status_changed'] });
  try {
    const asset = await account.client.createAsset({ name: 'Mast', type: 1, latitude: '46.5', longitude: '6.5' } as never);
    const inspection = await account.client.createInspection({ asset: asset.id, name: 'Paused' });
    for (let i = 0; i < 3; i++) await account.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: i % 2 === 0 ? 2 : 1 });
    // Without the pause: 3 events x 3 attempts (retries at once). With it: the third unanswered
    // attempt pauses the subscription and what is left waits for the pause's end (60 s).
    const deferred = await waitFor('a delivery deferred to the end of the pause', async () => {
      const pending = await system.inspection.db.selectFrom('inspection.webhook_messages').select('id').where('webhook_id', '=', hook.id).where('state', '=', 'pending').execute();
      if (pending.length === 0) return []; // every event given up: no pause
      const ids = pending.map((m) => String(m.id));
      const { rows } = await sql<{ start_after: Date }>`select start_after from pgboss.job where name = 'inspection.deliver-webhook' and state = 'created' and data->>'messageId' in (${sql.join(ids)})`.execute(system.inspection.db);
      return rows.length === pending.length && rows.every((r) => new Date(r.start_after).getTime() > Date.now() + 30_000) && rows;
    });
    assert.ok(deferred.length >= 1, 'deliveries wait for the pause');
    const log = await account.client.expect(200, 'GET', `/v1/webhooks/${hook.id}/deliveries/`);
    assert.ok(log.length >= 3 && log.length <= 4, `attempts before the pause: ${log.length} (two may have been under way at once)`);
    assert.ok(log.every((d: { status_code: number | null; error: string }) => d.status_code === null && /Connection failed/.test(d.error)), JSON.stringify(log));
  } finally {
    await account.client.expect(204, 'DELETE', `/v1/webhooks/${hook.id}/`);
  }
});

test("a subscription's backlog is bounded: beyond it the oldest waiting event is given up, and its delivery log says so", async () => {
  const account = await system.newAccount();
  const hook = await account.client.expect(201, 'POST', '/v1/webhooks/', { url: `${rx.base}/backlog`, events: ['inspection.status_changed'] });
  // The service's own core, with a bound of 3 and no delivery jobs: the events stay waiting.
  const core = new WebhookCore({
    db: system.inspection.db,
    schema: 'inspection',
    sendJob: async () => undefined,
    tenantOf: () => 'test',
    box: new SecretBox(crypto.randomBytes(32)),
    options: { allowPrivate: true, retry: DEFAULT_RETRY_POLICY, timeoutMs: 1000, maxPendingEvents: 3 },
    logger: pino({ level: 'silent' }),
  });
  const events = [1, 2, 3, 4, 5].map((n) => ({ type: 'inspection.status_changed', data: { n } }));
  await system.inspection.db.transaction().execute((trx) => core.emit(trx, (q) => q.where('id', '=', hook.id) as typeof q, events));
  const messages = await system.inspection.db.selectFrom('inspection.webhook_messages').select(['body', 'state']).where('webhook_id', '=', hook.id).orderBy('id').execute();
  assert.deepEqual(
    messages.map((m) => [JSON.parse(m.body).data.n, m.state]),
    [[1, 'failed'], [2, 'failed'], [3, 'pending'], [4, 'pending'], [5, 'pending']],
  );
  const log = await account.client.expect(200, 'GET', `/v1/webhooks/${hook.id}/deliveries/`);
  assert.equal(log.length, 2);
  assert.ok(log.every((d: { status_code: number | null; error: string; succeeded: boolean }) => d.status_code === null && /Given up: more than 3 events were waiting/.test(d.error) && !d.succeeded));
  await account.client.expect(204, 'DELETE', `/v1/webhooks/${hook.id}/`);
});
