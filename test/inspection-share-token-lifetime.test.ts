// Issue 27, finding 5: a share token's access ends (auth/share-tokens.ts). Revoking it leaves its
// holder no other way in: the report files a holder reads carry no share token (nor e-mail
// addresses), and the presigned URLs a holder gets last minutes, not hours. A token expires (a
// default and a maximum, configured here below their defaults), and stops when its creator no
// longer sees the inspection (removed from its organization).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, waitFor } from './helpers/inspection-fixtures.ts';
import { requireTool } from './helpers/system-tools.ts';
import { InspectionClient } from '../src/sdk/inspection-client.ts';

const TTL_SECONDS = 2 * 24 * 3600;
const MAX_TTL_SECONDS = 7 * 24 * 3600;
const URL_SECONDS = 300;
const ACCOUNT_URL_SECONDS = 6 * 3600;

describe('share tokens end (issue 27, finding 5)', () => {
  let system: TestSystem;
  let owner: TestAccount;
  let inspection: number;
  let photo: number;
  let annotation: number;

  /** A request with the token and nothing else (no account, no API key). */
  async function asHolder(requestPath: string, token: string) {
    const response = await fetch(`${system.urls.inspection}${requestPath}`, { headers: { 'x-share-token': token } });
    const text = await response.text();
    return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
  }
  const share = (account: TestAccount, id: number, body: Record<string, unknown> = {}) => account.client.expect(201, 'POST', `/v1/inspections/${id}/share_tokens/`, body);
  const shareablePaths = () => [
    `/v1/inspections/${inspection}/`,
    `/v1/inspections/${inspection}/cameras/`,
    `/v1/inspections/${inspection}/photos/${photo}/preview/?size=thumb`,
    `/v1/inspections/${inspection}/annotations/`,
    `/v1/annotations/${annotation}/`,
    `/v1/inspections/${inspection}/measurements/`,
    `/v1/inspections/${inspection}/extras/`,
    `/v1/inspections/${inspection}/outputs/`,
  ];
  const expiresOf = (url: string) => Number(new URL(url).searchParams.get('X-Amz-Expires'));
  const ownerEmail = () => `${owner.username}@example.test`;

  before(async () => {
    system = await startTestSystem({ shareTokenTtlSeconds: TTL_SECONDS, shareTokenMaxTtlSeconds: MAX_TTL_SECONDS, shareTokenUrlTtlSeconds: URL_SECONDS });
    owner = await system.newAccount();
    const processed = await processedInspection(owner);
    inspection = processed.inspection.id;
    photo = processed.cameras[0].photo_id;
    const rect = { coords_2d: [[0.1, 0.1], [0.3, 0.1], [0.3, 0.3], [0.1, 0.3]] };
    annotation = (await owner.client.expect(201, 'POST', '/v1/annotations/', { type: 'Corrosion', severity_level: 3, inspection, photo_id: photo, data: rect })).id;
    await owner.client.expect(202, 'POST', `/v1/inspections/${inspection}/report/`, {}); // include_sharetoken and include_email: the defaults
    await waitFor('report', async () => (await owner.client.getInspection(inspection)).report_status === 'available');
  });
  after(() => system?.stop());

  it('what a holder reads carries no share token and no e-mail: the report JSON and PDF, and every JSON answer; revoked, nothing opens', async (t) => {
    const given = await share(owner, inspection, { label: 'for the client' });
    // The account holder's report is as asked: its own token, the e-mail addresses.
    const ownerOutputs = await owner.client.expect(200, 'GET', `/v1/inspections/${inspection}/outputs/`);
    const ownerJson = (await (await fetch(ownerOutputs.find((o: any) => o.output_type === 'report_json').url)).json()) as any;
    assert.match(ownerJson.share_token, /^ist_/);
    assert.equal(ownerJson.user.email, ownerEmail());
    // The holder's: neither, nor anywhere else in what the holder reads.
    const outputs = await asHolder(`/v1/inspections/${inspection}/outputs/`, given.token);
    assert.equal(outputs.status, 200);
    const jsonUrl = outputs.body.find((o: any) => o.output_type === 'report_json')?.url;
    const pdfUrl = outputs.body.find((o: any) => o.output_type === 'report_pdf')?.url;
    assert.ok(jsonUrl && pdfUrl, outputs.text);
    const jsonText = await (await fetch(jsonUrl)).text();
    const json = JSON.parse(jsonText);
    assert.equal(json.inspection.id, inspection, 'the report itself');
    assert.equal(json.annotations.length, 1);
    assert.ok(!('share_token' in json) && !('share_link' in json), 'no share token in the JSON');
    assert.ok(!('email' in json.user) && !('email' in json.reported_by), 'no e-mail in the JSON');
    const pdf = Buffer.from(await (await fetch(pdfUrl)).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    // The PDF's link annotations are plain text in the file (its text is compressed: pdftotext below).
    assert.ok(!pdf.toString('latin1').includes('share_token'), 'no share link in the PDF');
    const read = [jsonText];
    for (const requestPath of shareablePaths()) {
      const answer = await asHolder(requestPath, given.token);
      assert.equal(answer.status, 200, `${requestPath}: ${answer.text}`);
      read.push(answer.text);
    }
    for (const [i, text] of read.entries()) {
      assert.ok(!text.includes('ist_') && !text.includes('share_token'), `no share token in answer ${i}`);
      assert.ok(!text.includes(ownerEmail()), `no e-mail in answer ${i}`);
    }
    if (requireTool(t, '/usr/bin/pdftotext', 'poppler-utils')) {
      const file = path.join(tempDir('oi-share-pdf-'), 'report.pdf');
      fs.writeFileSync(file, pdf);
      const { stdout } = await promisify(execFile)('/usr/bin/pdftotext', [file, '-']);
      assert.match(stdout, /Corrosion/, 'the PDF is the report');
      assert.ok(!stdout.includes('ist_') && !stdout.includes('share_token') && !stdout.includes(ownerEmail()), stdout);
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
    // Revoked: every route is a 401, and the holder kept nothing that opens another way in.
    await owner.client.expect(204, 'DELETE', `/v1/inspections/${inspection}/share_tokens/${given.id}/`);
    for (const requestPath of shareablePaths()) {
      const answer = await asHolder(requestPath, given.token);
      assert.equal(answer.status, 401, requestPath);
      assert.equal(answer.body.code, 'authentication_failed');
    }
  });

  it('the presigned URLs a holder gets last minutes (never past the token\'s end); an account holder\'s, 6 hours', async () => {
    const given = await share(owner, inspection);
    const preview = await asHolder(`/v1/inspections/${inspection}/photos/${photo}/preview/?size=large`, given.token);
    assert.equal(expiresOf(preview.body.url), URL_SECONDS);
    const outputs = await asHolder(`/v1/inspections/${inspection}/outputs/`, given.token);
    assert.ok(outputs.body.length >= 2);
    for (const output of outputs.body) assert.equal(expiresOf(output.url), URL_SECONDS, output.output_type);
    assert.equal((await fetch(preview.body.url)).status, 200, 'the URL works');
    // A token ending sooner gives URLs that end with it.
    const brief = await share(owner, inspection, { expires_in: 90 });
    const briefPreview = await asHolder(`/v1/inspections/${inspection}/photos/${photo}/preview/?size=thumb`, brief.token);
    assert.ok(expiresOf(briefPreview.body.url) <= 90 && expiresOf(briefPreview.body.url) >= 85, briefPreview.body.url);
    // The account holder's are as before.
    const own = await owner.client.expect(200, 'GET', `/v1/inspections/${inspection}/photos/${photo}/preview/?size=large`);
    assert.equal(expiresOf(own.url), ACCOUNT_URL_SECONDS);
    for (const output of await owner.client.expect(200, 'GET', `/v1/inspections/${inspection}/outputs/`)) assert.equal(expiresOf(output.url), ACCOUNT_URL_SECONDS);
  });

  it('a token expires: SHARE_TOKEN_TTL_SECONDS by default, `expires_in` up to SHARE_TOKEN_MAX_TTL_SECONDS; expired, a 401', async () => {
    const near = (iso: string, seconds: number) => Math.abs(Date.parse(iso) - (Date.now() + seconds * 1000)) < 60_000;
    const byDefault = await share(owner, inspection);
    assert.ok(near(byDefault.expires_at, TTL_SECONDS), byDefault.expires_at);
    const hour = await share(owner, inspection, { expires_in: 3600 });
    assert.ok(near(hour.expires_at, 3600), hour.expires_at);
    const listed = await owner.client.expect(200, 'GET', `/v1/inspections/${inspection}/share_tokens/`);
    assert.equal(listed.find((r: any) => r.id === hour.id).expires_at, hour.expires_at);
    // The report's token has the default lifetime too.
    const reportToken = listed.find((r: any) => r.label.startsWith('report '));
    assert.ok(Math.abs(Date.parse(reportToken.expires_at) - Date.parse(reportToken.created_at) - TTL_SECONDS * 1000) < 60_000, reportToken.expires_at);
    // Beyond the maximum, or below a minute: 400 on the field.
    for (const expires_in of [MAX_TTL_SECONDS + 1, 59, 0, -5]) {
      const refused = await owner.client.request('POST', `/v1/inspections/${inspection}/share_tokens/`, { expires_in });
      assert.equal(refused.status, 400, `expires_in ${expires_in}`);
      assert.ok(JSON.stringify(refused.body).includes('expires_in'), JSON.stringify(refused.body));
    }
    assert.ok(near((await share(owner, inspection, { expires_in: MAX_TTL_SECONDS })).expires_at, MAX_TTL_SECONDS));
    // Its time passed: 401, for every read, the viewer's too.
    assert.equal((await asHolder(`/v1/inspections/${inspection}/`, hour.token)).status, 200);
    await sql`update inspection.share_tokens set expires_at = now() - interval '1 second' where id = ${hour.id}`.execute(system.inspection.db);
    const expired = await asHolder(`/v1/inspections/${inspection}/`, hour.token);
    assert.equal(expired.status, 401);
    assert.equal(expired.body.code, 'authentication_failed');
    assert.equal((await asHolder('/v1/share/', hour.token)).status, 401, 'the viewer learns it too');
    // Made longer ago than the maximum (a maximum lowered since): over, whatever its own expiry.
    await sql`update inspection.share_tokens set created_at = now() - interval '8 days', expires_at = now() + interval '30 days' where id = ${byDefault.id}`.execute(system.inspection.db);
    assert.equal((await asHolder(`/v1/inspections/${inspection}/`, byDefault.token)).status, 401);
    const relisted = await owner.client.expect(200, 'GET', `/v1/inspections/${inspection}/share_tokens/`);
    assert.ok(Date.parse(relisted.find((r: any) => r.id === byDefault.id).expires_at) < Date.now(), 'listed with the end that holds');
  });

  it('the creator\'s access is checked on every use: removed from the organization, their tokens stop; a personal inspection\'s work', async () => {
    const admin = system.inspection.accounts;
    const password = 'colleague-password-1';
    const username = `colleague-${Date.now()}`;
    const user = await admin.createUser(username, password, `${username}@example.test`);
    await admin.addMember(user.id, owner.organizationId!);
    const colleague = new InspectionClient({ baseUrl: system.urls.inspection, apiKey: owner.apiKey, organizationUuid: owner.organizationUuid });
    await colleague.login(username, password);
    const theirs = await colleague.expect(201, 'POST', `/v1/inspections/${inspection}/share_tokens/`, {});
    const ownersToken = await share(owner, inspection);
    assert.equal((await asHolder(`/v1/inspections/${inspection}/`, theirs.token)).status, 200);
    await sql`delete from inspection.memberships where user_id = ${user.id}`.execute(system.inspection.db);
    for (const requestPath of shareablePaths()) {
      const answer = await asHolder(requestPath, theirs.token);
      assert.equal(answer.status, 401, `${requestPath}: ${answer.text}`);
      assert.equal(answer.body.code, 'authentication_failed');
    }
    assert.equal((await asHolder(`/v1/inspections/${inspection}/`, ownersToken.token)).status, 200, 'a member\'s token still works');
    // A user of no organization shares their own inspection.
    const solo = await system.newAccount({ organization: false });
    const own = await processedInspection(solo);
    const soloToken = await share(solo, own.inspection.id);
    assert.equal((await asHolder(`/v1/inspections/${own.inspection.id}/`, soloToken.token)).status, 200);
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
