// Issue 40 §1: a member removed from an organization loses everything they held in it, at once.
// The attack as the audit made it: a member creates an asset and an inspection in the
// organization (with the organization header), is removed, then calls without the header; on
// main they still read and changed them and got their storage credentials. Now: 404 everywhere,
// their old token reaches nothing of the organization, their share link, storage credentials
// (PutObject and ListObjects) and webhook stop. Removal over the API (admins only) and with
// `admin remove-member`. And spec rule 4 (issue 40 §8): credentials obtained before processing
// no longer write once it has started, on the embedded store, with the AWS SDK.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { InspectionClient, s3ClientFor } from '../src/sdk/inspection-client.ts';
import { startSystem } from '../src/system.ts';
import { freshDatabaseUrl, startTestSystem, tempDir, testConfig, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, uploadedInspection, waitFor } from './helpers/inspection-fixtures.ts';
import { adminJson } from './helpers/admin-cli.ts';

/** A webhook receiver on loopback that counts the events per path. */
async function receiver() {
  const received: { path: string; type: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', type: JSON.parse(Buffer.concat(chunks).toString('utf8')).type });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    count: (path: string) => received.filter((r) => r.path === path).length,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** A user of `organizationUuid`, logged in with and without the organization header (one token). */
async function memberClients(system: TestSystem, organizationId: number, organizationUuid: string) {
  const accounts = system.inspection.accounts;
  const username = `member-${crypto.randomBytes(3).toString('hex')}`;
  const password = crypto.randomBytes(12).toString('base64url');
  const user = await accounts.createUser(username, password, `${username}@example.test`, organizationId);
  const apiKey = (await accounts.createApiKey(`key of ${username}`)).key;
  const withHeader = new InspectionClient({ baseUrl: system.urls.inspection, apiKey, organizationUuid });
  await withHeader.login(username, password);
  const withoutHeader = new InspectionClient({ baseUrl: system.urls.inspection, apiKey });
  withoutHeader.token = withHeader.token;
  return { userId: user.id, username, password, apiKey, withHeader, withoutHeader };
}

function s3Code(err: unknown): string {
  return (err as { name?: string; Code?: string }).Code ?? (err as { name: string }).name;
}

describe('removing a member from an organization', () => {
  let system: TestSystem;
  let admin: TestAccount;
  let rx: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    system = await startTestSystem({ webhookAllowPrivateAddresses: true, webhookRetryBaseSeconds: 0 });
    admin = await system.newAccount();
    await system.inspection.memberships.setMember(admin.userId, admin.organizationId!, 'admin');
    rx = await receiver();
  });
  after(async () => {
    await rx?.close();
    await system?.stop();
  });

  it('the ex-member reaches nothing they made in it: records, token, share link, storage credentials, webhook', async () => {
    const member = await memberClients(system, admin.organizationId!, admin.organizationUuid!);
    // With the header, as the audit did: the records are the organization's.
    const { asset, inspection, credentials, keys } = await uploadedInspection({ client: member.withHeader } as TestAccount);
    const share = await member.withHeader.expect(201, 'POST', `/v1/inspections/${inspection.id}/share_tokens/`, {});
    const hook = await member.withHeader.expect(201, 'POST', '/v1/webhooks/', { url: `${rx.base}/member`, events: ['inspection.status_changed'] });
    assert.deepEqual(hook.created_by, { id: member.userId, username: member.username }, 'each subscription names its creator');
    await admin.client.expect(201, 'POST', '/v1/webhooks/', { url: `${rx.base}/admin`, events: ['inspection.status_changed'] });
    const listed = await admin.client.expect(200, 'GET', '/v1/webhooks/');
    assert.deepEqual(listed.map((w: any) => w.created_by.username).sort(), [admin.username, member.username].sort());

    // While a member: without the header too (their own records of an organization they belong to).
    const paths = [
      ['GET', `/v1/inspections/${inspection.id}/`],
      ['GET', `/v1/assets/${asset.id}/`],
      ['GET', `/v1/inspections/${inspection.id}/cameras/`],
      ['GET', `/v1/inspections/${inspection.id}/outputs/`],
      ['GET', `/v1/inspections/${inspection.id}/s3_credentials/`],
      ['PATCH', `/v1/inspections/${inspection.id}/`, { name: 'renamed by the member' }],
      ['PATCH', `/v1/assets/${asset.id}/`, { name: 'renamed by the member' }],
    ] as const;
    for (const [method, path, body] of paths) assert.equal((await member.withoutHeader.request(method, path, body)).status, 200, `${method} ${path} while a member`);
    // Its event reaches both receivers.
    await admin.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: 1 });
    await waitFor('both receivers get the event', async () => rx.count('/member') >= 1 && rx.count('/admin') >= 1);

    // A member who is not an admin cannot remove anyone; an outsider does not see the organization.
    const other = await memberClients(system, admin.organizationId!, admin.organizationUuid!);
    const route = `/v1/organizations/${admin.organizationUuid}/members/${member.userId}/`;
    assert.equal((await other.withoutHeader.request('DELETE', route)).status, 403);
    const outsider = await system.newAccount();
    assert.equal((await outsider.client.request('DELETE', route)).status, 404);
    assert.equal((await admin.client.request('DELETE', `/v1/organizations/${admin.organizationUuid}/members/${admin.userId}/`)).status, 409, 'an admin does not remove themselves');
    const members = await other.withoutHeader.expect(200, 'GET', `/v1/organizations/${admin.organizationUuid}/members/`);
    assert.deepEqual(members.find((m: any) => m.user_id === admin.userId)?.role, 'admin');
    // The audit's own steps: a membership row deleted in the database; what its user made there is out of reach at once.
    const theirs = await other.withHeader.createAsset({ name: 'Made by the other member', type: 1 });
    assert.equal((await other.withoutHeader.request('GET', `/v1/assets/${theirs.id}/`)).status, 200);
    await system.inspection.db.deleteFrom('inspection.memberships').where('user_id', '=', other.userId).execute();
    assert.equal((await other.withoutHeader.request('GET', `/v1/assets/${theirs.id}/`)).status, 404);
    assert.equal((await other.withoutHeader.request('PATCH', `/v1/assets/${theirs.id}/`, { name: 'still mine?' })).status, 404);

    // The admin removes the member.
    const removed = await admin.client.expect(200, 'DELETE', route);
    assert.deepEqual(removed, { user_id: member.userId, organization_uuid: admin.organizationUuid, share_tokens_revoked: 1, webhooks_deleted: 1, storage_credentials_revoked: 2 });
    assert.equal((await admin.client.request('DELETE', route)).status, 404, 'no longer a member');

    // Without the header: 404 on every record they made there, and nothing in the lists.
    for (const [method, path, body] of paths) assert.equal((await member.withoutHeader.request(method, path, body)).status, 404, `${method} ${path} after removal`);
    assert.deepEqual(await member.withoutHeader.expect(200, 'GET', '/v1/inspections/'), []);
    assert.deepEqual(await member.withoutHeader.expect(200, 'GET', '/v1/assets/'), []);
    // With it (the same token, whose answers were cached a moment ago): 403 at once.
    assert.equal((await member.withHeader.request('GET', `/v1/inspections/${inspection.id}/`)).status, 403);
    assert.equal((await member.withHeader.request('GET', '/v1/webhooks/')).status, 403);
    // The share link they made: 401.
    const shared = await fetch(`${system.urls.inspection}/v1/share/`, { headers: { 'x-share-token': share.token } });
    assert.equal(shared.status, 401);
    // Their storage credentials: every request refused, at once.
    const s3 = s3ClientFor(credentials);
    try {
      await assert.rejects(s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: `${credentials.key}after-removal.jpg`, Body: Buffer.from('x') })), (err) => s3Code(err) === 'AccessDenied');
      await assert.rejects(s3.send(new ListObjectsV2Command({ Bucket: credentials.bucket, Prefix: credentials.key })), (err) => s3Code(err) === 'AccessDenied');
      await assert.rejects(s3.send(new GetObjectCommand({ Bucket: credentials.bucket, Key: keys[0] })), (err) => s3Code(err) === 'AccessDenied');
    } finally {
      s3.destroy();
    }
    // Their webhook is gone: the next event reaches the admin's receiver only.
    const memberEvents = rx.count('/member');
    const adminEvents = rx.count('/admin');
    await admin.client.expect(200, 'PATCH', `/v1/inspections/${inspection.id}/`, { status: 2 });
    await waitFor("the admin's receiver gets the next event", async () => rx.count('/admin') > adminEvents);
    assert.equal(rx.count('/member'), memberEvents, "the ex-member's receiver got nothing more");
    // The records stay the organization's.
    assert.equal((await admin.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/`)).name, 'renamed by the member');
    assertNoServerErrors(system);
  });

  it('spec rule 4: credentials obtained before processing no longer write once it started; reads go on', async () => {
    const { inspection, credentials, keys } = await uploadedInspection(admin);
    const s3 = s3ClientFor(credentials);
    try {
      await s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: `${credentials.key}before.jpg`, Body: Buffer.from('before') }));
      await admin.client.process(inspection.id);
      await assert.rejects(s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: `${credentials.key}after.jpg`, Body: Buffer.from('after') })), (err) => s3Code(err) === 'AccessDenied');
      await assert.rejects(s3.send(new PutObjectCommand({ Bucket: credentials.bucket, Key: keys[0], Body: Buffer.from('overwritten') })), (err) => s3Code(err) === 'AccessDenied');
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: credentials.bucket, Prefix: credentials.key }));
      assert.ok((listed.Contents ?? []).some((o) => o.Key === keys[0]), 'reading goes on');
    } finally {
      s3.destroy();
    }
    // Credentials asked for after processing started only read (the spec: uploads before processing only).
    const later = await admin.client.storageCredentials(inspection.id);
    const s3Later = s3ClientFor(later);
    try {
      await assert.rejects(s3Later.send(new PutObjectCommand({ Bucket: later.bucket, Key: `${later.key}later.jpg`, Body: Buffer.from('x') })), (err) => s3Code(err) === 'AccessDenied');
      const head = await s3Later.send(new GetObjectCommand({ Bucket: later.bucket, Key: keys[0] }));
      assert.ok((await head.Body!.transformToByteArray()).length > 1000, 'the photo was not overwritten');
    } finally {
      s3Later.destroy();
    }
    assertNoServerErrors(system);
  });
});

it('admin add-member and remove-member: the removed member loses the organization and their share links', async () => {
  const dataDir = tempDir();
  const database = await freshDatabaseUrl();
  const config = testConfig(dataDir, { databaseUrl: database?.url });
  const logger = pino({ level: 'warn' });
  // The CLI opens the database itself: the server is stopped around it (the embedded one is locked).
  let system = await startSystem(config, 'serve', logger);
  let organization: { id: number; uuid: string };
  let apiKey: string;
  let inspectionId: number;
  let shareToken: string;
  try {
    const accounts = system.inspection.accounts;
    organization = await accounts.createOrganization('Removals Ltd');
    await accounts.createUser('leaver', 'leaver-password-1', '', organization.id);
    await accounts.createUser('boss', 'boss-password-1');
    apiKey = (await accounts.createApiKey('app')).key;
    const leaver = new InspectionClient({ baseUrl: system.urls.inspection, apiKey, organizationUuid: organization.uuid });
    await leaver.login('leaver', 'leaver-password-1');
    await system.inspection.allowance.grant({ organizationId: organization.id }, 'projects', 1, 'test');
    const asset = await leaver.createAsset({ name: 'Mast', type: 1 } as never);
    inspectionId = (await leaver.createInspection({ asset: asset.id })).id;
    shareToken = (await leaver.expect(201, 'POST', `/v1/inspections/${inspectionId}/share_tokens/`, {})).token;
  } finally {
    await system.stop();
  }
  try {
    assert.equal((await adminJson(config, 'add-member', '--org', organization.uuid, '--username', 'boss', '--role', 'admin')).role, 'admin');
    const removed = await adminJson(config, 'remove-member', '--org', organization.uuid, '--username', 'leaver');
    assert.equal(removed.share_tokens_revoked, 1);
    system = await startSystem(config, 'serve', logger);
    try {
      const leaver = new InspectionClient({ baseUrl: system.urls.inspection, apiKey });
      await leaver.login('leaver', 'leaver-password-1');
      assert.equal((await leaver.request('GET', `/v1/inspections/${inspectionId}/`)).status, 404);
      assert.equal((await fetch(`${system.urls.inspection}/v1/share/`, { headers: { 'x-share-token': shareToken } })).status, 401);
      const boss = new InspectionClient({ baseUrl: system.urls.inspection, apiKey, organizationUuid: organization.uuid });
      await boss.login('boss', 'boss-password-1');
      assert.equal((await boss.request('GET', `/v1/inspections/${inspectionId}/`)).status, 200, "the inspection stays the organization's");
      const members = await boss.expect(200, 'GET', `/v1/organizations/${organization.uuid}/members/`);
      assert.deepEqual(members, [{ user_id: members[0].user_id, username: 'boss', role: 'admin' }]);
    } finally {
      await system.stop();
    }
  } finally {
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
