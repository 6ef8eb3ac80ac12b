// E-mails of the cloud service (src/cloud/notifications/cloud-mail.ts), read from the outbox: the
// creator client's notification address is told when processing starts, completes and fails (the
// error code in words); nothing for a client without an address, nothing for a service client's
// projects (the inspection service mails its users); a disabled webhook tells the client that
// subscribed; a mail server that is down delays the e-mail, never the project. The admin CLI sets
// and clears the address.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { freshDatabaseUrl, startTestSystem, tempDir, testConfig, type TestSystem } from './helpers/test-system.ts';
import { cloudClient, settled, type CloudTestClient } from './helpers/cloud-api.ts';
import { demoImages, outbox, waitFor, type Mail } from './helpers/inspection-fixtures.ts';
import { adminJson } from './helpers/admin-cli.ts';

const P = '/project/api/v3/projects';

let system: TestSystem;
let image: Buffer;

before(async () => {
  system = await startTestSystem({ webhookAllowPrivateAddresses: true, webhookRetryBaseSeconds: 0, webhookMaxAttempts: 1 });
  image = (await demoImages())[0].body;
});

after(async () => {
  await system?.stop();
});

/** A new client of a new organization with `email` as its notification address (what the admin CLI sets). */
async function clientWithEmail(name: string, email: string | null): Promise<CloudTestClient> {
  const api = await cloudClient(system, name);
  assert.equal(await system.cloud.oauth.setClientEmail(api.clientId, email), true);
  return api;
}

/** A project of `api` with one input, processing started; settled (DONE or ERROR). */
async function processedProject(api: CloudTestClient, body: Record<string, unknown>): Promise<any> {
  const project = await api.call('POST', `${P}/`, body, { expect: 201 });
  const key = await api.put(project, 'a.jpg', image);
  await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
  await api.call('POST', `${P}/${project.id}/start_processing/`, undefined, { expect: 202 });
  return api.waitFor(project.id, settled, 90_000);
}

/** The outbox's e-mails about project `id`, once `count` have arrived. */
async function mailsAbout(id: number, count: number): Promise<Mail[]> {
  return waitFor(`${count} e-mail(s) about project ${id}`, async () => {
    const mails = outbox(system).filter((m) => m.subject.includes(`(${id})`));
    return mails.length >= count && mails;
  });
}

it('processing started, then completed: two e-mails to the creator client, with the project and its routes', async () => {
  const address = `pilot-${crypto.randomBytes(3).toString('hex')}@example.test`;
  const api = await clientWithEmail('Mailed', address);
  const done = await processedProject(api, { name: 'Quarry North' });
  assert.equal(done.public_status, 'DONE', done.error_reason);
  const [started, completed, ...more] = await mailsAbout(done.id, 2);
  assert.deepEqual(more, []);
  assert.equal(started.to, address);
  assert.equal(started.subject, `Project "Quarry North" (${done.id}): processing started`);
  assert.match(started.body, /Processing of your project "Quarry North" has started/);
  assert.match(started.body, new RegExp(`Project uuid: ${done.uuid}`));
  assert.match(started.body, new RegExp(`GET ${system.urls.cloud}/project/api/v3/projects/${done.id}/`));
  assert.equal(completed.to, address);
  assert.equal(completed.subject, `Project "Quarry North" (${done.id}): processing completed`);
  assert.match(completed.body, new RegExp(`Its outputs: GET ${system.urls.cloud}/project/api/v3/projects/${done.id}/outputs/`));
  assert.match(completed.body, /Images: 1/);
});

it('processing failed: the error code, what it means, the reason and what to do', async () => {
  const address = `failing-${crypto.randomBytes(3).toString('hex')}@example.test`;
  const api = await clientWithEmail('Failing', address);
  const failed = await processedProject(api, { name: 'Geoid', geoid_model: 'EGM2008' });
  assert.equal(failed.public_status, 'ERROR');
  assert.equal(failed.error_code, 10614);
  const mails = await mailsAbout(failed.id, 2);
  assert.deepEqual(
    mails.map((m) => [m.to, m.subject]),
    [
      [address, `Project "Geoid" (${failed.id}): processing started`],
      [address, `Project "Geoid" (${failed.id}): processing failed (error 10614)`],
    ],
  );
  const body = mails[1].body;
  assert.match(body, /Error 10614: Geoid model or geoid height given without a vertical CRS component\./);
  assert.ok(body.includes(`Reason: ${failed.error_reason}`), body);
  assert.match(body, /What to do: Remove it or add a vertical component\./);
});

it('no e-mail for a client without an address, nor for the projects of a service client (even with one)', async () => {
  const silent = await cloudClient(system, 'Silent');
  const quiet = await processedProject(silent, { name: 'No address' });
  // A service client acting for an organization, as the inspection service does.
  const org = await system.cloud.ensureOrganization('Service home');
  const service = await system.cloud.oauth.createClient(org.id, 'service', { actsForOrganizations: true, email: 'service@example.test' });
  const customer = crypto.randomUUID();
  const tokenResponse = await fetch(`${system.urls.cloud}/oauth2/token/`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: service.clientId, client_secret: service.clientSecret, organization_uuid: customer }),
  });
  assert.equal(tokenResponse.status, 200);
  const { access_token } = (await tokenResponse.json()) as { access_token: string };
  const asService: CloudTestClient = { ...silent, token: access_token, call: bearerCall(access_token) };
  asService.waitFor = async (id, done) => waitFor(`project ${id}`, async () => {
    const p = await asService.call('GET', `${P}/${id}/`, undefined, { expect: 200 });
    return done(p) && p;
  }, 90_000);
  const made = await processedProject(asService, { name: 'For a customer' });

  // A project of a mailed client, processed after both, shows the outbox is being written.
  const mailed = await clientWithEmail('Witness', 'witness@example.test');
  const witness = await processedProject(mailed, { name: 'Witness' });
  await mailsAbout(witness.id, 2);
  for (const id of [quiet.id, made.id]) assert.deepEqual(outbox(system).filter((m) => m.subject.includes(`(${id})`)), [], `no e-mail about project ${id}`);
  assert.ok(!outbox(system).some((m) => m.to.includes('service@example.test')));
});

it('a webhook subscription disabled after five failed events: the client that subscribed is told, with the way to enable it', async () => {
  const down = http.createServer((_req, res) => {
    res.writeHead(503);
    res.end();
  });
  await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
  try {
    const address = `hooks-${crypto.randomBytes(3).toString('hex')}@example.test`;
    const api = await clientWithEmail('Hooked', address);
    const hook = await api.call('POST', '/project/api/v3/webhooks/', { url: `http://127.0.0.1:${(down.address() as AddressInfo).port}/down`, events: ['project.status_changed'] }, { expect: 201 });
    // Five events: five projects whose inputs are registered (NEW -> UPLOADING).
    for (let i = 0; i < 5; i++) {
      const project = await api.call('POST', `${P}/`, { name: `Hook ${i}` }, { expect: 201 });
      const key = await api.put(project, 'a.jpg', image);
      await api.call('POST', `${P}/${project.id}/inputs/bulk_register/`, { input_file_keys: [key] }, { expect: 200 });
    }
    await waitFor('the subscription disabled', async () => !(await api.call('GET', `/project/api/v3/webhooks/${hook.id}/`, undefined, { expect: 200 })).active);
    const mail = await waitFor('the e-mail', async () => outbox(system).find((m) => m.subject === `Webhook ${hook.id} disabled after failed deliveries`));
    assert.equal(mail.to, address);
    assert.match(mail.body, /The last 5 events could not be delivered/);
    assert.ok(mail.body.includes(`PATCH ${system.urls.cloud}/project/api/v3/webhooks/${hook.id}/ with {"enabled": true}`), mail.body);
  } finally {
    down.closeAllConnections();
    down.close();
  }
});

it('a mail server that is down: the project is processed all the same, the failed sending is logged', async () => {
  const lines: string[] = [];
  const logs = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  // Nothing listens on port 1: every sending fails (and is retried by the queue).
  const broken = await startTestSystem({ smtpUrl: 'smtp://127.0.0.1:1' }, pino({ level: 'warn' }, logs));
  try {
    const api = await cloudClient(broken, 'No mail server');
    assert.equal(await broken.cloud.oauth.setClientEmail(api.clientId, 'nobody@example.test'), true);
    const done = await processedProject(api, { name: 'Unmailed' });
    assert.equal(done.public_status, 'DONE', done.error_reason);
    await waitFor('the failed sending logged', async () => lines.some((l) => l.includes('cloud.send-email') && l.includes('job failed')));
  } finally {
    await broken.stop();
  }
});

it('admin CLI: create-cloud-client --email and set-cloud-client-email set the address (none clears it); a bad address or an unknown client is refused', async () => {
  const dataDir = tempDir();
  const database = await freshDatabaseUrl();
  const config = testConfig(dataDir, { databaseUrl: database?.url });
  const admin = (...argv: string[]) => adminJson(config, ...argv);
  try {
    const { organization_uuid } = await admin('create-org', '--name', 'Mail Co');
    const { client_id } = await admin('create-cloud-client', '--org', organization_uuid, '--email', 'ops@mail.example');
    await assert.rejects(admin('create-cloud-client', '--org', organization_uuid, '--email', 'not an address'), /--email: "not an address" is not an e-mail address/);
    assert.deepEqual(await admin('set-cloud-client-email', '--client-id', client_id, '--email', 'team@mail.example'), { client_id, email: 'team@mail.example' });
    await assert.rejects(admin('set-cloud-client-email', '--client-id', client_id, '--email', 'a@b'), /not an e-mail address/);
    await assert.rejects(admin('set-cloud-client-email', '--client-id', 'cid_unknown', '--email', 'x@mail.example'), /No cloud client cid_unknown/);
    const system = await (await import('../src/system.ts')).startSystem(config, 'admin', pino({ level: 'warn' }));
    const email = async () => (await system.cloud.db.selectFrom('cloud.clients').select('email').where('client_id', '=', client_id).executeTakeFirstOrThrow()).email;
    try {
      assert.equal(await email(), 'team@mail.example');
      const clients = await system.cloud.db.selectFrom('cloud.clients').select('email').where('organization_id', '=', (await system.cloud.ensureOrganization('Mail Co', organization_uuid)).id).execute();
      assert.equal(clients.length, 1, 'the refused create made no client');
    } finally {
      await system.stop();
    }
    assert.deepEqual(await admin('set-cloud-client-email', '--client-id', client_id, '--email', 'none'), { client_id, email: null });
  } finally {
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

/** `call` of a CloudTestClient with another token. */
function bearerCall(token: string): CloudTestClient['call'] {
  return async (method, path, body, options = {}) => {
    const response = await fetch(`${system.urls.cloud}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (options.expect !== undefined) assert.equal(response.status, options.expect, `${method} ${path}: ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : undefined;
  };
}
