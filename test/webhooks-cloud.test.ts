// Webhooks of the cloud service (src/cloud/webhooks): a client subscribes to its organization's
// project events under /project/api/v3/webhooks/; a receiver on loopback verifies each
// project.status_changed with the Standard Webhooks library through a project's processing; a
// client of another organization gets 404; private receivers are a 400 without the setting;
// PATCH {"enabled": false/true} stops and resumes deliveries (the disabled e-mail: cloud-mail.test.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { startTestSystem, type TestSystem } from './helpers/test-system.ts';
import { cloudClient } from './helpers/cloud-api.ts';
import { demoImages, waitFor } from './helpers/inspection-fixtures.ts';

const P = '/project/api/v3/projects';
const W = '/project/api/v3/webhooks';

let system: TestSystem;
let strict: TestSystem;
let server: http.Server;
let base: string;
const received: { headers: Record<string, string>; body: string }[] = [];

before(async () => {
  system = await startTestSystem({ webhookAllowPrivateAddresses: true, webhookRetryBaseSeconds: 0, webhookMaxAttempts: 3 });
  strict = await startTestSystem();
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server?.closeAllConnections();
  server?.close();
  await system?.stop();
  await strict?.stop();
});

test("a project's processing: project.status_changed arrives signed, with old and new status, until DONE", async () => {
  const api = await cloudClient(system, 'Hooks');
  const hook = await api.call('POST', `${W}/`, { url: `${base}/cloud`, events: ['project.status_changed'] }, { expect: 201 });
  assert.match(hook.secret, /^whsec_/);
  const project = await api.call('POST', `${P}/`, { name: 'Webhooks' }, { expect: 201 });
  const keys: string[] = [];
  for (const image of await demoImages()) keys.push(await api.put(project, image.name, image.body));
  await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: keys }, { expect: 200 });
  await api.call('POST', `${P}/${project.id}/start_processing/`, undefined, { expect: 202 });
  await api.waitFor(project.id, (p) => p.public_status === 'DONE' || p.public_status === 'ERROR', 90_000);

  const events = await waitFor('DONE delivered', async () => {
    const verified = received.map((r) => new Webhook(hook.secret).verify(r.body, r.headers) as { type: string; data: Record<string, unknown> });
    const mine = verified.filter((e) => e.data.project_id === project.id);
    return mine.some((e) => e.data.new_status === 'DONE') && mine;
  });
  const moves = events.map((e) => [e.data.old_status, e.data.new_status]);
  assert.deepEqual(moves[0], ['NEW', 'UPLOADING']);
  for (let i = 1; i < moves.length; i++) assert.equal(moves[i][0], moves[i - 1][1], `a chain: ${JSON.stringify(moves)}`);
  assert.deepEqual(moves.at(-1), ['PROCESSING', 'DONE']);
  assert.ok(events.every((e) => e.type === 'project.status_changed' && e.data.project_uuid === project.uuid));

  const log = await api.call('GET', `${W}/${hook.id}/deliveries/`, undefined, { expect: 200 });
  assert.equal(log.length, events.length);
  assert.ok(log.every((d: { succeeded: boolean }) => d.succeeded));
  const listed = await api.call('GET', `${W}/`, undefined, { expect: 200 });
  assert.equal(listed.length, 1);
  assert.ok(!JSON.stringify(listed).includes(hook.secret));

  // Another organization's client: 404, an empty list.
  const other = await cloudClient(system, 'Other');
  await other.call('GET', `${W}/${hook.id}/`, undefined, { expect: 404 });
  await other.call('GET', `${W}/${hook.id}/deliveries/`, undefined, { expect: 404 });
  await other.call('DELETE', `${W}/${hook.id}/`, undefined, { expect: 404 });
  assert.deepEqual(await other.call('GET', `${W}/`, undefined, { expect: 200 }), []);
  await api.call('DELETE', `${W}/${hook.id}/`, undefined, { expect: 204 });
});

test('without WEBHOOK_ALLOW_PRIVATE_ADDRESSES a private receiver is a 400; unknown events too', async () => {
  const api = await cloudClient(strict, 'Strict');
  const refused = await api.call('POST', `${W}/`, { url: `${base}/x`, events: ['project.status_changed'] }, { expect: 400 });
  assert.match(refused.url[0], /Private/);
  await api.call('POST', `${W}/`, { url: 'https://hooks.example.com/', events: ['inspection.status_changed'] }, { expect: 400 });
  await api.call('POST', `${W}/`, { url: 'https://hooks.example.com/', events: ['project.status_changed'] }, { expect: 201 });
});

test('PATCH {"enabled": false} stops deliveries, {"enabled": true} resumes them with the next event; bad bodies are 400s, other organizations 404', async () => {
  const api = await cloudClient(system, 'Toggle');
  const hook = await api.call('POST', `${W}/`, { url: `${base}/toggle`, events: ['project.status_changed'] }, { expect: 201 });
  const off = await api.call('PATCH', `${W}/${hook.id}/`, { enabled: false }, { expect: 200 });
  assert.deepEqual([off.active, off.disabled_reason], [false, 'Disabled by its owner.']);
  const register = async (name: string) => {
    const project = await api.call('POST', `${P}/`, { name }, { expect: 201 });
    const key = await api.put(project, 'a.jpg', Buffer.from('not an image'));
    await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
    return project;
  };
  await register('While off');
  const messages = async () => (await sql<{ n: number }>`select count(*)::int as n from cloud.webhook_messages where webhook_id = ${hook.id}`.execute(system.cloud.db)).rows[0].n;
  assert.equal(await messages(), 0, 'nothing queued for a disabled subscription');

  const other = await cloudClient(system, 'Stranger');
  await other.call('PATCH', `${W}/${hook.id}/`, { enabled: true }, { expect: 404 });
  for (const bad of [{}, { enabled: 'yes' }, { enabled: 7 }]) await api.call('PATCH', `${W}/${hook.id}/`, bad, { expect: 400 });
  const on = await api.call('PATCH', `${W}/${hook.id}/`, { enabled: true }, { expect: 200 });
  assert.deepEqual([on.active, on.disabled_at, on.disabled_reason], [true, null, null]);
  const project = await register('After');
  const delivered = await waitFor('the event after enabling', async () =>
    received.find((r) => r.body.includes(`"project_id":${project.id},`) && JSON.parse(r.body).data.new_status === 'UPLOADING'),
  );
  new Webhook(hook.secret).verify(delivered.body, delivered.headers);
  assert.equal(await messages(), 1, 'only the event after enabling');
});
