// Retention (issue 30 §3): the daily sweep gives up an inspection older than its organization's
// period, the purge job deletes its photos, outputs, inputs ZIP and cloud project and sets status
// 24; every route that served them answers 410 `purged`, while the record, annotations,
// measurements and report stay. Objects are counted in the store before and after, for the purged
// inspection and for one of the same organization and one of another, which must not change.
// The clock is the sweep's `now` (RetentionService.sweep), never a wait.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, setCreatedAt, uploadedInspection, waitFor } from './helpers/inspection-fixtures.ts';
import { StorageQuota } from '../src/inspection/limits/storage-quota.ts';
import { ConfigError, loadConfig } from '../src/config.ts';

const DAY_MS = 24 * 3600 * 1000;
const RECT = [[0.1, 0.1], [0.2, 0.1], [0.2, 0.2], [0.1, 0.2]];

describe('inspection service: retention that deletes', () => {
  let system: TestSystem;
  let owner: TestAccount;
  let stranger: TestAccount;
  let purged: Awaited<ReturnType<typeof processedInspection>>;
  let sameOrg: Awaited<ReturnType<typeof processedInspection>>;
  let otherOrg: Awaited<ReturnType<typeof processedInspection>>;
  let annotationId: number;
  let shareToken: string;

  /** Objects of an inspection in the store: its uploads, its cloud results, this service's own files (by folder). */
  async function objectsOf(inspection: { id: number; storage_prefix?: string; project_uuid?: string }) {
    const bucket = system.config.storageBucket;
    const count = async (prefix: string) => {
      const keys: string[] = [];
      let continuationToken: string | undefined;
      do {
        const page = await system.store.listObjects(bucket, { prefix, continuationToken });
        keys.push(...page.objects.map((o) => o.key));
        continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
      } while (continuationToken);
      return keys;
    };
    const row = await system.inspection.inspectionRows.findAny(inspection.id);
    const own = await count(`inspection-service/inspections/${inspection.id}/`);
    return {
      uploads: (await count(row.storage_prefix!)).length,
      results: (await count(`results/${row.project_uuid}/`)).length,
      report: own.filter((k) => k.includes('/report/')).length,
      ownOther: own.filter((k) => !k.includes('/report/')).length,
    };
  }

  before(async () => {
    system = await startTestSystem({ retentionDays: 30 });
    owner = await system.newAccount();
    stranger = await system.newAccount();
    purged = await processedInspection(owner, { name: 'Old flight' });
    sameOrg = await processedInspection(owner, { name: 'Recent flight' });
    otherOrg = await processedInspection(stranger, { name: 'Another organization' });

    const id = purged.inspection.id;
    // What stays: an annotation, a measurement, a report. What goes: the inputs ZIP and a preview too.
    annotationId = (await owner.client.expect(201, 'POST', '/v1/annotations/', { type: 'Crack', inspection: id, photo_id: purged.cameras[0].photo_id, data: { coords_2d: RECT } })).id;
    await owner.client.expect(201, 'POST', `/v1/inspections/${id}/measurements/`, { annotations: [{ properties: { name: 'Spot' }, tags: [], geometry: { type: 'Point', coordinates: [1, 2, 3] } }] });
    await owner.client.expect(202, 'POST', `/v1/inspections/${id}/report/`, {});
    await waitFor('report', async () => (await owner.client.getInspection(id)).report_status === 'available');
    await waitFor('inputs ZIP', async () => (await owner.client.request('GET', `/v1/inspections/${id}/inputs/`)).status === 200);
    await owner.client.expect(200, 'GET', `/v1/inspections/${id}/photos/${purged.cameras[0].photo_id}/preview/`);
    shareToken = (await owner.client.expect(201, 'POST', `/v1/inspections/${id}/share_tokens/`, {})).token;
  });
  after(async () => {
    await system?.stop();
  });

  it('the daily sweep purges only what its organization\'s period has passed: objects counted before and after', async () => {
    const id = purged.inspection.id;
    const before = { purged: await objectsOf(purged.inspection), sameOrg: await objectsOf(sameOrg.inspection), otherOrg: await objectsOf(otherOrg.inspection) };
    assert.ok(before.purged.uploads >= 3 && before.purged.results >= 1 && before.purged.report >= 2 && before.purged.ownOther >= 2, JSON.stringify(before.purged));
    assert.ok(before.sameOrg.uploads >= 3 && before.otherOrg.uploads >= 3, JSON.stringify(before));

    const quota = new StorageQuota(system.inspection.db, 1);
    const account = { organization_id: owner.organizationId!, user_id: owner.userId };
    const bytesBefore = await quota.registeredBytes(account);

    // 29 days old: kept. 31 days old: given up by the sweep, whose clock is its argument.
    await setCreatedAt(system, id, new Date(Date.now() - 29 * DAY_MS));
    assert.equal(await system.inspection.retention.sweep(new Date()), 0);
    await setCreatedAt(system, id, new Date(Date.now() - 31 * DAY_MS));
    assert.equal(await system.inspection.retention.sweep(new Date()), 1, 'the old inspection only');
    assert.equal(await system.inspection.retention.sweep(new Date()), 0, 'given up once');

    const done = await waitFor('status 24', async () => {
      const record = await owner.client.getInspection(id);
      return record.status === 24 ? record : undefined;
    });
    assert.equal(done.name, 'Old flight', 'the record stays');
    const after = { purged: await objectsOf(purged.inspection), sameOrg: await objectsOf(sameOrg.inspection), otherOrg: await objectsOf(otherOrg.inspection) };
    console.log(`# objects before -> after the purge: purged ${JSON.stringify(before.purged)} -> ${JSON.stringify(after.purged)}; same organization ${JSON.stringify(before.sameOrg)} -> ${JSON.stringify(after.sameOrg)}; other organization ${JSON.stringify(before.otherOrg)} -> ${JSON.stringify(after.otherOrg)}`);
    assert.deepEqual(after.purged, { uploads: 0, results: 0, report: before.purged.report, ownOther: 0 }, 'photos, outputs, inputs ZIP and previews gone; the report kept');
    assert.deepEqual(after.sameOrg, before.sameOrg, 'another inspection of the same organization untouched');
    assert.deepEqual(after.otherOrg, before.otherOrg, 'an inspection of another organization untouched');

    // The storage quota no longer counts the deleted uploads; the other inspection's still count.
    const bytesAfter = await quota.registeredBytes(account);
    assert.ok(bytesAfter > 0 && bytesAfter < bytesBefore, `${bytesBefore} -> ${bytesAfter}`);
    // The cloud project went through the cloud's API.
    await assert.rejects((await system.inspection.cloudFor(id)).getProject(purged.inspection.project_id), (err: any) => err.statusCode === 404);
    // A purge job run again (a retry after a crash) finishes without harm.
    await system.inspection.retention.purge(id);
    assert.equal((await owner.client.getInspection(id)).status, 24);
  });

  it('every route that served the purged data answers 410 purged with the reason in words', async () => {
    const id = purged.inspection.id;
    const photo = purged.cameras[0].photo_id;
    const gone: [string, string, unknown?][] = [
      ['GET', `/v1/inspections/${id}/cameras/`],
      ['GET', `/v1/inspections/${id}/cameras/?page=1`],
      ['GET', `/v1/inspections/${id}/photos/${photo}/preview/`],
      ['GET', `/v1/inspections/${id}/photos/${photo}/preview/?size=original`],
      ['GET', `/v1/inspections/${id}/inputs/`],
      ['GET', `/v1/inspections/${id}/s3_credentials/`],
      ['GET', `/v1/inspections/${id}/ortho/`],
      ['GET', `/v1/inspections/${id}/ortho/tiles/10/530/360.png`],
      ['POST', `/v1/inspections/${id}/register_images/`, { image_keys: [`${purged.inspection.storage_prefix}x.jpg`] }],
      ['POST', `/v1/inspections/${id}/process/`, {}],
      ['POST', `/v1/inspections/${id}/report/`, {}],
      ['POST', '/v1/inspections/retry/', { inspection: id }],
      ['PATCH', `/v1/inspections/${id}/`, { status: 7 }],
    ];
    for (const [method, path, body] of gone) {
      const answer = await owner.client.request(method, path, body);
      assert.equal(answer.status, 410, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.code, 'purged', `${method} ${path}`);
      console.log(`# ${answer.status} ${answer.body.code}: ${method} ${path}`);
      assert.match(answer.body.detail, new RegExp(`^The data of inspection ${id} was deleted by its organization's retention period on \\d{4}-\\d{2}-\\d{2}: its photos, cameras, outputs, inputs ZIP and cloud project are gone\\. Its record, annotations, measurements and report remain\\.$`));
    }
    // A share-token holder too.
    const shared = await fetch(`${system.urls.inspection}/v1/inspections/${id}/cameras/`, { headers: { 'x-share-token': shareToken } });
    assert.equal(shared.status, 410);
    assert.equal(((await shared.json()) as any).code, 'purged');
    // Another organization's inspection still serves its data; a stranger still gets 404 for the purged one.
    await stranger.client.expect(200, 'GET', `/v1/inspections/${otherOrg.inspection.id}/cameras/`);
    assert.equal((await stranger.client.request('GET', `/v1/inspections/${id}/cameras/`)).status, 404);
  });

  it('the record, annotations, measurements, extras and the report stay readable', async () => {
    const id = purged.inspection.id;
    assert.equal((await owner.client.expect(200, 'GET', `/v1/inspections/${id}/`)).status, 24);
    assert.equal((await owner.client.expect(200, 'GET', `/v1/annotations/${annotationId}/`)).id, annotationId);
    assert.equal((await owner.client.expect(200, 'GET', `/v1/inspections/${id}/annotations/`)).length, 1);
    assert.equal((await owner.client.expect(200, 'GET', `/v1/inspections/${id}/measurements/`)).results.length, 1);
    assert.ok((await owner.client.expect(200, 'GET', `/v1/inspections/${id}/extras/`)).coordinate_system);
    await owner.client.expect(200, 'GET', `/v1/inspections/${id}/processing/`);
    // Outputs: the report alone, downloadable.
    const outputs = await owner.client.expect(200, 'GET', `/v1/inspections/${id}/outputs/`);
    assert.deepEqual(outputs.map((o: any) => o.output_type).sort(), ['report_json', 'report_pdf']);
    const pdf = await fetch(outputs.find((o: any) => o.output_type === 'report_pdf').url);
    assert.equal(pdf.status, 200);
    assert.equal(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString(), '%PDF-');
    // Fields of the record may still change; the status stays 24.
    assert.equal((await owner.client.expect(200, 'PATCH', `/v1/inspections/${id}/`, { name: 'Old flight (archived)' })).name, 'Old flight (archived)');
    await owner.client.expect(200, 'PATCH', `/v1/inspections/${id}/`, { status: 24 });
  });

  it('a PATCH to status 24 purges the same way; 409 while work is under way', async () => {
    const id = sameOrg.inspection.id;
    const before = await objectsOf(otherOrg.inspection);
    const record = await owner.client.expect(200, 'PATCH', `/v1/inspections/${id}/`, { status: 24 });
    assert.equal(record.status, 24);
    // Refused at once, before the purge job has run.
    assert.equal((await owner.client.request('GET', `/v1/inspections/${id}/s3_credentials/`)).status, 410);
    await waitFor('purge', async () => {
      const now = await objectsOf(sameOrg.inspection);
      return now.uploads === 0 && now.results === 0 ? now : undefined;
    });
    assert.equal((await owner.client.request('GET', `/v1/inspections/${id}/cameras/`)).status, 410);
    assert.deepEqual(await objectsOf(otherOrg.inspection), before, 'nothing of another organization touched');

    // Work under way: 409, nothing given up.
    const busy = await owner.client.createInspection({ asset: sameOrg.asset.id });
    await sql`update inspection.inspections set status = 4 where id = ${busy.id}`.execute(system.inspection.db);
    const refused = await owner.client.request('PATCH', `/v1/inspections/${busy.id}/`, { status: 24 });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal((await system.inspection.inspectionRows.findAny(busy.id)).purged_at, null);
    // A report being built from the photos: 409 too, and the sweep leaves it for the next day.
    const reporting = await owner.client.createInspection({ asset: sameOrg.asset.id });
    await sql`update inspection.inspections set report_status = 'processing', report_requested_at = now() where id = ${reporting.id}`.execute(system.inspection.db);
    const waiting = await owner.client.request('PATCH', `/v1/inspections/${reporting.id}/`, { status: 24 });
    assert.equal(waiting.status, 409, JSON.stringify(waiting.body));
    assert.match(waiting.body.detail, /report being built/);
    await setCreatedAt(system, reporting.id, new Date(Date.now() - 40 * DAY_MS));
    assert.equal(await system.inspection.retention.sweep(new Date()), 0);
    assert.equal((await system.inspection.inspectionRows.findAny(reporting.id)).purged_at, null);
  });

  it('an organization\'s own period overrides RETENTION_DAYS (0: kept for ever); an inspection set to 24 before purging existed is purged', async () => {
    const far = new Date(Date.now() + 1000 * DAY_MS);
    await system.inspection.accounts.setRetentionDays(stranger.organizationId!, 0);
    // Work under way is left to finish, whatever its age.
    const busy = await owner.client.createInspection({ asset: purged.asset.id });
    await sql`update inspection.inspections set status = 3 where id = ${busy.id}`.execute(system.inspection.db);
    // Status 24 written by a client before this service purged anything: purged by the next sweep.
    const legacy = await owner.client.createInspection({ asset: purged.asset.id });
    await sql`update inspection.inspections set status = 24 where id = ${legacy.id}`.execute(system.inspection.db);
    const fresh = await owner.client.createInspection({ asset: purged.asset.id });

    assert.equal(await system.inspection.retention.sweep(new Date()), 1, 'the status-24 inspection only');
    assert.ok((await system.inspection.inspectionRows.findAny(legacy.id)).purged_at);
    assert.equal(await system.inspection.retention.sweep(far), 1, 'in 1000 days: the new inspection of the 30-day organization, not the busy one, not the kept-for-ever organization\'s');
    assert.ok((await system.inspection.inspectionRows.findAny(fresh.id)).purged_at);
    assert.equal((await system.inspection.inspectionRows.findAny(busy.id)).purged_at, null);
    assert.equal((await system.inspection.inspectionRows.findAny(otherOrg.inspection.id)).purged_at, null);
    await stranger.client.expect(200, 'GET', `/v1/inspections/${otherOrg.inspection.id}/cameras/`);
    await system.inspection.accounts.setRetentionDays(stranger.organizationId!, null);
    assert.equal(await system.inspection.retention.sweep(far), 1, 'back on RETENTION_DAYS');
  });

  it('a retry of a retry whose main inspection was purged is refused with 410: its inputs are copied from the main one', async () => {
    const main = await processedInspection(owner, { name: 'Main' });
    const retry = await owner.client.expect(201, 'POST', '/v1/inspections/retry/', { inspection: main.inspection.id });
    await owner.client.expect(200, 'PATCH', `/v1/inspections/${main.inspection.id}/`, { status: 24 });
    const refused = await owner.client.request('POST', '/v1/inspections/retry/', { inspection: retry.id });
    assert.equal(refused.status, 410, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'purged');
    assert.match(refused.body.detail, new RegExp(`^The data of inspection ${main.inspection.id} was deleted`));
  });

  it('the sweep is a daily pg-boss schedule; its job judges by the time it is given', async () => {
    const rows = await sql<{ name: string; cron: string }>`select name, cron from pgboss.schedule where name = 'inspection.retention-sweep'`.execute(system.inspection.db);
    assert.deepEqual(rows.rows, [{ name: 'inspection.retention-sweep', cron: '0 3 * * *' }]);
    const later = await owner.client.createInspection({ asset: purged.asset.id });
    await system.jobs.send('inspection.retention-sweep', { now: new Date(Date.now() + 31 * DAY_MS).toISOString() });
    await waitFor('the job gives it up', async () => (await owner.client.getInspection(later.id)).status === 24);
    assert.equal((await owner.client.request('GET', `/v1/inspections/${later.id}/s3_credentials/`)).status, 410);
    assertNoServerErrors(system);
  });

  it('a purged inspection can still be deleted (a stable status): the kept report goes with it', async () => {
    const id = purged.inspection.id;
    await owner.client.expect(204, 'DELETE', `/v1/inspections/${id}/`);
    assert.equal((await owner.client.request('GET', `/v1/inspections/${id}/`)).status, 404);
    await waitFor('the report deleted', async () => (await objectsOf(purged.inspection)).report === 0);
    assertNoServerErrors(system);
  });

  it('an inputs ZIP build queued before the inspection was given up builds nothing', async () => {
    const up = await uploadedInspection(owner);
    const id = up.inspection.id;
    await sql`update inspection.inspections set inputs_zip_status = 'processing', inputs_zip_requested_at = now(), purged_at = now() where id = ${id}`.execute(system.inspection.db);
    await system.inspection.inputs.build(id);
    assert.equal((await objectsOf(up.inspection)).ownOther, 0, 'no ZIP written');
    assert.equal((await system.inspection.inspectionRows.findAny(id)).inputs_zip_key, null);
  });

  it('RETENTION_DAYS and RETENTION_SCHEDULE are checked at start', () => {
    assert.deepEqual([loadConfig({}).retentionDays, loadConfig({}).retentionSchedule], [0, '0 3 * * *'], 'by default nothing is deleted by age');
    assert.deepEqual([loadConfig({ RETENTION_DAYS: '30' }).retentionDays, loadConfig({ RETENTION_SCHEDULE: '30 1 * * 0' }).retentionSchedule], [30, '30 1 * * 0']);
    assert.throws(() => loadConfig({ RETENTION_DAYS: 'a year' }), (err: Error) => err instanceof ConfigError && /RETENTION_DAYS must be an integer from 0 to 36500, got "a year"/.test(err.message));
    assert.throws(() => loadConfig({ RETENTION_SCHEDULE: 'daily' }), (err: Error) => err instanceof ConfigError && /RETENTION_SCHEDULE must be a cron expression of five fields/.test(err.message));
  });
});
