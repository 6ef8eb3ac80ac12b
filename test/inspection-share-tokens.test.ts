// Share tokens (auth/share-tokens.ts): a read-only key to one inspection for people without an
// account. What an anonymous holder reads (the inspection, its photos and previews, annotations,
// measurements, extras, outputs and report), and the 401/403/404 answers for everything else:
// another inspection of the same organization, any write, any other route, a revoked or unknown
// token. Tokens are stored as SHA-256 only and shown once; the link (a report's too) opens the console's
// read-only viewer at /share/<token>, whose token the request log never holds.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, waitFor } from './helpers/inspection-fixtures.ts';
import { sha256Hex } from '../src/infra/auth/secrets.ts';
import { createLogger } from '../src/system.ts';
import { registerConsole } from '../src/inspection/console/console.routes.ts';
import type { HttpServer } from '../src/infra/http/http-server.ts';

describe('inspection service: share tokens', () => {
  let system: TestSystem;
  let owner: TestAccount;
  let ids: { asset: number; inspection: number; other: number; annotation: number; otherAnnotation: number; measurement: string; photo: number; key: string };
  let share: { id: number; token: string; url: string };

  /** A request with no account: no API key, no Authorization; the token as a header unless given in the path. */
  async function anonymous(method: string, path: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${system.urls.inspection}${path}`, {
      method,
      headers: { ...(token ? { 'x-share-token': token } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  before(async () => {
    system = await startTestSystem();
    owner = await system.newAccount();
    const processed = await processedInspection(owner, {}, { name: 'Shared tower' });
    const other = await processedInspection(owner, { name: 'Not shared' }, { name: 'Other tower' });
    const photo = processed.cameras[0].photo_id;
    const rect = { coords_2d: [[0.1, 0.1], [0.3, 0.1], [0.3, 0.3], [0.1, 0.3]] };
    const annotation = await owner.client.expect(201, 'POST', '/v1/annotations/', { type: 'Corrosion', severity_level: 3, inspection: processed.inspection.id, photo_id: photo, data: rect });
    const otherAnnotation = await owner.client.expect(201, 'POST', '/v1/annotations/', { type: 'Crack', inspection: other.inspection.id, photo_id: other.cameras[0].photo_id, data: rect });
    const measurement = (
      await owner.client.expect(201, 'POST', `/v1/inspections/${processed.inspection.id}/measurements/`, { annotations: [{ geometry: { type: 'LineString', coordinates: [[0, 0, 0], [3, 4, 0]] } }] })
    ).annotations[0];
    ids = { asset: processed.asset.id, inspection: processed.inspection.id, other: other.inspection.id, annotation: annotation.id, otherAnnotation: otherAnnotation.id, measurement: measurement.id, photo, key: processed.keys[0] };
  });
  after(async () => {
    await system?.stop();
  });

  it('is made by a user who sees the inspection, shown once, and stored as a SHA-256 only', async () => {
    const created = await owner.client.expect(201, 'POST', `/v1/inspections/${ids.inspection}/share_tokens/`, { label: 'for the client' });
    assert.match(created.token, /^ist_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    // The link opens the console's read-only viewer, which asks GET /v1/share/ what the token opens.
    assert.equal(created.url, `${system.urls.inspection}/share/${created.token}`);
    assert.equal(created.inspection, ids.inspection);
    assert.equal(created.label, 'for the client');
    assert.equal(created.created_by, owner.userId);
    assert.equal(created.revoked_at, null);
    share = created;
    const listed = await owner.client.expect(200, 'GET', `/v1/inspections/${ids.inspection}/share_tokens/`);
    assert.deepEqual(listed, [{ id: created.id, inspection: ids.inspection, label: 'for the client', created_by: owner.userId, created_at: created.created_at, revoked_at: null, expires_at: created.expires_at }]);
    const { rows } = await sql<Record<string, unknown>>`select * from inspection.share_tokens`.execute(system.inspection.db);
    const secret = created.token.split('.')[1];
    assert.ok(!JSON.stringify(rows).includes(secret), 'the secret part is stored nowhere');
    assert.equal(rows[0].token_hash, sha256Hex(created.token));
    // Two tokens are never alike; an empty body is fine.
    const second = await owner.client.expect(201, 'POST', `/v1/inspections/${ids.inspection}/share_tokens/`);
    assert.notEqual(second.token, created.token);
    assert.equal(second.label, '');
    await owner.client.expect(204, 'DELETE', `/v1/inspections/${ids.inspection}/share_tokens/${second.id}/`);
  });

  it('lets an anonymous holder read the inspection, its photos and previews, annotations, measurements, extras and outputs', async () => {
    const { inspection, annotation, measurement, photo } = ids;
    const record = await anonymous('GET', `/v1/inspections/${inspection}/`, share.token);
    assert.equal(record.status, 200, JSON.stringify(record.body));
    assert.equal(record.body.id, inspection);
    assert.equal(record.body.status, 7);
    const cameras = await anonymous('GET', `/v1/inspections/${inspection}/cameras/`, share.token);
    assert.equal(cameras.status, 200);
    assert.equal(cameras.body.length, 3);
    const preview = await anonymous('GET', `/v1/inspections/${inspection}/photos/${photo}/preview/?size=thumb`, share.token);
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    const jpeg = await fetch(preview.body.url);
    assert.equal(jpeg.status, 200);
    assert.equal((await jpeg.arrayBuffer()).byteLength > 100, true);
    const annotations = await anonymous('GET', `/v1/inspections/${inspection}/annotations/`, share.token);
    assert.deepEqual(annotations.body.map((a: any) => a.id), [annotation]);
    assert.equal((await anonymous('GET', `/v1/annotations/${annotation}/`, share.token)).body.type, 'Corrosion');
    const measurements = await anonymous('GET', `/v1/inspections/${inspection}/measurements/`, share.token);
    assert.deepEqual(measurements.body.results.map((m: any) => [m.id, m.extension.computed.length_m]), [[measurement, 5]]);
    assert.equal((await anonymous('GET', `/v1/inspections/${inspection}/extras/`, share.token)).status, 200);
    const outputs = await anonymous('GET', `/v1/inspections/${inspection}/outputs/`, share.token);
    assert.equal(outputs.status, 200);
    assert.ok(Array.isArray(outputs.body));
    // The token in the query string, nothing else.
    const byQuery = await fetch(`${system.urls.inspection}/v1/inspections/${inspection}/?share_token=${encodeURIComponent(share.token)}`);
    assert.equal(byQuery.status, 200);
    assert.equal(((await byQuery.json()) as any).id, inspection);
    assert.equal((await anonymous('GET', `/v1/inspections/${inspection}/cameras/?share_token=${encodeURIComponent(share.token)}`, undefined)).status, 200);
    // An API key, when sent, must be valid; a valid one changes nothing.
    assert.equal((await anonymous('GET', `/v1/inspections/${inspection}/`, share.token, undefined, { 'x-api-key': owner.apiKey })).status, 200);
    const badKey = await anonymous('GET', `/v1/inspections/${inspection}/`, share.token, undefined, { 'x-api-key': 'oik_wrong' });
    assert.equal(badKey.status, 401);
    assert.equal(badKey.body.code, 'invalid_api_key');
  });

  it('opens its one inspection only: another inspection of the same organization is a 404, its records too', async () => {
    const { other, otherAnnotation } = ids;
    for (const path of [
      `/v1/inspections/${other}/`,
      `/v1/inspections/${other}/cameras/`,
      `/v1/inspections/${other}/annotations/`,
      `/v1/inspections/${other}/measurements/`,
      `/v1/inspections/${other}/extras/`,
      `/v1/inspections/${other}/outputs/`,
      `/v1/inspections/${other}/photos/1/preview/`,
      `/v1/annotations/${otherAnnotation}/`,
    ]) {
      const response = await anonymous('GET', path, share.token);
      assert.equal(response.status, 404, `${path}: ${response.status} ${JSON.stringify(response.body)}`);
      assert.equal(response.body.code, 'not_found');
      assert.ok(!JSON.stringify(response.body).includes('Other tower'));
    }
    // The record shows nothing of the organization's other inspections either.
    assert.deepEqual((await anonymous('GET', `/v1/inspections/${ids.inspection}/`, share.token)).body.retries, []);
  });

  it('changes nothing: every write, and every other route, is a 403 in the CONTRACT format', async () => {
    const { asset, inspection, annotation, measurement, key, photo } = ids;
    const rect = { coords_2d: [[0.1, 0.1], [0.3, 0.1], [0.3, 0.3], [0.1, 0.3]] };
    const forbidden: [string, string, unknown?][] = [
      // Writes on the shared inspection and its records.
      ['PUT', `/v1/inspections/${inspection}/`, { name: 'changed' }],
      ['PATCH', `/v1/inspections/${inspection}/`, { name: 'changed' }],
      ['DELETE', `/v1/inspections/${inspection}/`],
      ['POST', `/v1/inspections/${inspection}/register_images/`, { image_keys: [key] }],
      ['POST', `/v1/inspections/${inspection}/process/`, {}],
      ['POST', `/v1/inspections/${inspection}/report/`, {}],
      ['POST', '/v1/inspections/retry/', { inspection }],
      ['POST', `/v1/inspections/${inspection}/measurements/`, { annotations: [{ geometry: { type: 'Point', coordinates: [0, 0, 0] } }] }],
      ['PUT', `/v1/inspections/${inspection}/measurements/${measurement}/`, { properties: {}, tags: [], geometry: { type: 'Point', coordinates: [0, 0, 0] } }],
      ['PATCH', `/v1/inspections/${inspection}/measurements/${measurement}/`, { tags: ['changed'] }],
      ['DELETE', `/v1/inspections/${inspection}/measurements/${measurement}/`],
      ['POST', '/v1/annotations/', { type: 'x', inspection, photo_id: photo, data: rect }],
      ['PUT', `/v1/annotations/${annotation}/`, { type: 'x', inspection, data: rect }],
      ['PATCH', `/v1/annotations/${annotation}/`, { severity_level: 5 }],
      ['DELETE', `/v1/annotations/${annotation}/`],
      ['POST', `/v1/inspections/${inspection}/share_tokens/`, {}],
      ['DELETE', `/v1/inspections/${inspection}/share_tokens/${share.id}/`],
      ['POST', '/v1/assets/', { name: 'x', type: 1 }],
      ['PATCH', `/v1/assets/${asset}/`, { name: 'changed' }],
      ['DELETE', `/v1/assets/${asset}/`],
      ['POST', '/v1/inspections', { asset }],
      // Reads a share token does not open.
      ['GET', `/v1/assets/${asset}/`],
      ['GET', '/v1/assets/'],
      ['GET', '/v1/inspections/'],
      ['GET', `/v1/inspections/${inspection}/s3_credentials/`],
      ['GET', `/v1/inspections/${inspection}/inputs/`],
      ['GET', `/v1/inspections/${inspection}/bundle/`],
      ['GET', `/v1/inspections/${inspection}/inventory/`],
      ['GET', `/v1/inspections/${inspection}/share_tokens/`],
      ['GET', `/v1/inspections/${inspection}/processing/`],
      ['GET', '/v1/allowance/'],
      ['GET', '/v1/me/'],
    ];
    for (const [method, path, body] of forbidden) {
      const response = await anonymous(method, path, share.token, body);
      assert.equal(response.status, 403, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
      assert.deepEqual(Object.keys(response.body).sort(), ['code', 'detail'], `${method} ${path}`);
      assert.equal(response.body.code, 'permission_denied');
    }
    // Nothing changed.
    const record = await owner.client.getInspection(inspection);
    assert.equal(record.name, 'Flight');
    assert.equal(record.report_status, 'not available');
    assert.equal((await owner.client.expect(200, 'GET', `/v1/annotations/${annotation}/`)).severity_level, 3);
    const measurements = await owner.client.expect(200, 'GET', `/v1/inspections/${inspection}/measurements/`);
    assert.deepEqual(measurements.results.map((m: any) => [m.id, m.tags]), [[measurement, []]]);
    assert.equal((await owner.client.expect(200, 'GET', `/v1/assets/${asset}/`)).name, 'Shared tower');
    assert.equal((await owner.client.expect(200, 'GET', `/v1/inspections/${inspection}/share_tokens/`)).filter((t: any) => t.revoked_at === null).length, 1);
  });

  it('answers 401 to an unknown or malformed token, and without any credentials', async () => {
    const path = `/v1/inspections/${ids.inspection}/`;
    const forged = share.token.slice(0, -4) + (share.token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const token of [forged, 'ist_0000000000000000.' + 'A'.repeat(43), 'not-a-token', share.token.split('.')[0]]) {
      const response = await anonymous('GET', path, token);
      assert.equal(response.status, 401, token);
      assert.equal(response.body.code, 'authentication_failed');
    }
    const none = await anonymous('GET', path, undefined);
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'invalid_api_key');
  });

  it('a stranger cannot make, list or revoke tokens of the inspection (404)', async () => {
    const stranger = await system.newAccount();
    for (const [method, path] of [
      ['POST', `/v1/inspections/${ids.inspection}/share_tokens/`],
      ['GET', `/v1/inspections/${ids.inspection}/share_tokens/`],
      ['DELETE', `/v1/inspections/${ids.inspection}/share_tokens/${share.id}/`],
    ] as const) {
      const response = await stranger.client.request(method, path, method === 'POST' ? {} : undefined);
      assert.equal(response.status, 404, `${method} ${path}`);
    }
    // A token id of another inspection is not found through this one.
    assert.equal((await owner.client.request('DELETE', `/v1/inspections/${ids.other}/share_tokens/${share.id}/`)).status, 404);
    assert.equal((await anonymous('GET', `/v1/inspections/${ids.inspection}/`, share.token)).status, 200, 'still valid');
  });

  it('the report carries a working link when include_sharetoken asks for it (the default)', async () => {
    await owner.client.expect(202, 'POST', `/v1/inspections/${ids.inspection}/report/`, {});
    await waitFor('report', async () => (await owner.client.getInspection(ids.inspection)).report_status === 'available');
    // The account holder's copy (a share holder's has no token: inspection-share-token-lifetime.test.ts).
    const outputs = await owner.client.expect(200, 'GET', `/v1/inspections/${ids.inspection}/outputs/`);
    const json = (await (await fetch(outputs.find((o: any) => o.output_type === 'report_json').url)).json()) as any;
    assert.match(json.share_token, /^ist_/);
    assert.equal(json.share_link, `${system.urls.inspection}/share/${json.share_token}`);
    // The link is the viewer's page (served below, 'keeps a share link's token out of the request log'), whose token opens the inspection.
    assert.equal((await anonymous('GET', '/v1/share/', json.share_token)).body.inspection, ids.inspection);
    const tokens = await owner.client.expect(200, 'GET', `/v1/inspections/${ids.inspection}/share_tokens/`);
    const made = tokens.find((t: any) => t.label.startsWith('report '));
    assert.ok(made, JSON.stringify(tokens));
    assert.equal(made.created_by, owner.userId);
    // Asked not to: no token made, none printed.
    await owner.client.expect(202, 'POST', `/v1/inspections/${ids.inspection}/report/`, { include_sharetoken: false });
    await waitFor('report', async () => (await owner.client.getInspection(ids.inspection)).report_status === 'available');
    const plain = (await (await fetch((await owner.client.expect(200, 'GET', `/v1/inspections/${ids.inspection}/outputs/`)).find((o: any) => o.output_type === 'report_json').url)).json()) as any;
    assert.ok(!('share_token' in plain) && !('share_link' in plain));
    assert.equal((await owner.client.expect(200, 'GET', `/v1/inspections/${ids.inspection}/share_tokens/`)).length, tokens.length);
  });

  it('revoked means gone: 401 at once, for the header and the query parameter alike', async () => {
    await owner.client.expect(204, 'DELETE', `/v1/inspections/${ids.inspection}/share_tokens/${share.id}/`);
    for (const response of [await anonymous('GET', `/v1/inspections/${ids.inspection}/`, share.token), await anonymous('GET', `/v1/inspections/${ids.inspection}/?share_token=${encodeURIComponent(share.token)}`, undefined)]) {
      assert.equal(response.status, 401);
      assert.deepEqual(response.body, { detail: 'Invalid, expired or revoked share token.', code: 'authentication_failed' });
    }
    const listed = await owner.client.expect(200, 'GET', `/v1/inspections/${ids.inspection}/share_tokens/`);
    assert.ok(listed.find((t: any) => t.id === share.id).revoked_at);
    await owner.client.expect(204, 'DELETE', `/v1/inspections/${ids.inspection}/share_tokens/${share.id}/`); // again: nothing to do
    // A Bearer token wins over a share token sent with it: the owner is still the owner.
    assert.equal((await owner.client.request('GET', `/v1/inspections/${ids.inspection}/`, undefined, { 'x-share-token': share.token })).status, 200);
  });

  it('keeps a share link\'s token out of the request log', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const app = Fastify({ loggerInstance: createLogger({ logLevel: 'info' }, sink).child({ service: 'inspection' }) });
    app.get('/v1/inspections/:id/', async () => ({}));
    // The viewer's page as the service serves it (a stand-in build of the console).
    const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'oi-console-'));
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>console</title>');
    await registerConsole(app as unknown as HttpServer, { apiKey: 'k', storageUrl: 'http://127.0.0.1:1', basemapUrl: undefined, distDir: dist });
    await app.inject({ url: `/v1/inspections/1/?share_token=${share.token}&x=1`, headers: { 'x-share-token': share.token } });
    const page = await app.inject({ url: `/share/${share.token}` });
    await app.inject({ url: `/share/${share.token}?x=1` });
    await app.close();
    fs.rmSync(dist, { recursive: true });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>console<\/title>/);
    assert.equal(page.headers['referrer-policy'], 'no-referrer', 'no Referer carries the token to the storage or a basemap');
    const log = lines.join('');
    assert.ok(log.includes('share_token=[redacted]&x=1'), log);
    assert.ok(log.includes('"url":"/share/[redacted]"') && log.includes('"url":"/share/[redacted]?x=1"'), log);
    assert.ok(!log.includes(share.token.split('.')[1]) && !log.includes(share.token.split('.')[0]), log);
  });

  it('tells the viewer which inspection a token opens (GET /v1/share/), and nothing without a share token', async () => {
    const fresh = await owner.client.expect(201, 'POST', `/v1/inspections/${ids.inspection}/share_tokens/`, { expires_in: 3600 });
    const opened = await anonymous('GET', '/v1/share/', fresh.token);
    assert.deepEqual(opened, { status: 200, body: { inspection: ids.inspection, expires_at: fresh.expires_at } });
    assert.equal((await anonymous('GET', '/v1/share/', 'ist_0000000000000000.' + 'A'.repeat(43))).status, 401);
    assert.equal((await owner.client.request('GET', '/v1/share/')).status, 404, 'an account holder holds no share token');
    await owner.client.expect(204, 'DELETE', `/v1/inspections/${ids.inspection}/share_tokens/${fresh.id}/`);
    assert.equal((await anonymous('GET', '/v1/share/', fresh.token)).status, 401, 'revoked');
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
