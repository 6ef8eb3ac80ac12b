// Races at 100-way (issue 10, finding 8 and the redesign): concurrent deletes of one annotation,
// measurement, asset, inspection (inspection service) and project (cloud service) give exactly
// one 2xx and 404 for the rest, never a 5xx; 100 process calls across 100 inspections sharing a
// balance of N spend exactly N. And the inspection repository's transitions: a move applies only
// from the expected status, and a move outside the transition table is refused as a bug.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { cloudClient } from './helpers/cloud-api.ts';
import { assertNoServerErrors, waitFor } from './helpers/inspection-fixtures.ts';
import { mapConcurrently } from '../src/shared/concurrency.ts';
import { InspectionRepository } from '../src/inspection/inspections/inspection.repository.ts';
import { Status } from '../src/inspection/inspections/statuses.ts';

const WAYS = 100;

/** Status -> how many answers had it. */
function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

/** Fires `WAYS` copies of one request at once; returns the tally of their statuses. */
async function race(call: () => Promise<{ status: number }>): Promise<Record<number, number>> {
  const results = await Promise.all(Array.from({ length: WAYS }, call));
  return tally(results.map((r) => r.status));
}

function assertOneWinner(counts: Record<number, number>, success: number, what: string): void {
  assert.deepEqual(counts, { [success]: 1, 404: WAYS - 1 }, `${what}: ${JSON.stringify(counts)}`);
}

describe('robustness: races', () => {
  let system: TestSystem;
  let account: TestAccount;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
  });
  after(async () => {
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  it('100 concurrent deletes of one annotation: one 204, 99 404', async () => {
    const asset = await account.client.createAsset({ name: 'Mast', type: 1 });
    const inspection = await account.client.createInspection({ asset: asset.id });
    // A camera is what image analysis writes; inserted here to spare processing.
    const camera = await system.inspection.db
      .insertInto('inspection.cameras')
      .values({ inspection_id: inspection.id, image_key: `${inspection.id}/a.jpg`, filename: 'a.jpg', latitude: null, longitude: null, elevation: null, width: 320, height: 240, quaternion: null, make: null, model: null, calibration: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    const coords = [
      [0.1, 0.1],
      [0.3, 0.1],
      [0.3, 0.3],
      [0.1, 0.3],
    ];
    const annotation = await account.client.expect(201, 'POST', '/v1/annotations/', { type: 'Corrosion', inspection: inspection.id, photo_id: camera.id, data: { coords_2d: coords } });
    const counts = await race(() => account.client.request('DELETE', `/v1/annotations/${annotation.id}/`));
    console.log(`annotation delete x${WAYS}: ${JSON.stringify(counts)}`);
    assertOneWinner(counts, 204, 'annotation');
    assert.equal((await account.client.request('GET', `/v1/annotations/${annotation.id}/`)).status, 404);
  });

  it('100 concurrent deletes of one measurement: one 204, 99 404', async () => {
    const asset = await account.client.createAsset({ name: 'Roof', type: 8 });
    const inspection = await account.client.createInspection({ asset: asset.id });
    const base = `/v1/inspections/${inspection.id}/measurements/`;
    const created = await account.client.expect(201, 'POST', base, { annotations: [{ properties: {}, tags: [], geometry: { type: 'Point', coordinates: [1, 2, 3] } }] });
    const id = created.annotations[0].id;
    const counts = await race(() => account.client.request('DELETE', `${base}${id}/`));
    console.log(`measurement delete x${WAYS}: ${JSON.stringify(counts)}`);
    assertOneWinner(counts, 204, 'measurement');
    assert.deepEqual(await account.client.expect(200, 'GET', base), { results: [] });
  });

  it('100 concurrent deletes of one asset (with an inspection): one 204, 99 404', async () => {
    const asset = await account.client.createAsset({ name: 'Bridge', type: 3 });
    const inspection = await account.client.createInspection({ asset: asset.id });
    const counts = await race(() => account.client.request('DELETE', `/v1/assets/${asset.id}/`));
    console.log(`asset delete x${WAYS}: ${JSON.stringify(counts)}`);
    assertOneWinner(counts, 204, 'asset');
    assert.equal((await account.client.request('GET', `/v1/assets/${asset.id}/`)).status, 404);
    assert.equal((await account.client.request('GET', `/v1/inspections/${inspection.id}/`)).status, 404);
  });

  it('100 concurrent deletes of one inspection: one 204, 99 404', async () => {
    const asset = await account.client.createAsset({ name: 'Tower', type: 1 });
    const inspection = await account.client.createInspection({ asset: asset.id });
    const counts = await race(() => account.client.request('DELETE', `/v1/inspections/${inspection.id}/`));
    console.log(`inspection delete x${WAYS}: ${JSON.stringify(counts)}`);
    assertOneWinner(counts, 204, 'inspection');
    assert.equal((await account.client.request('GET', `/v1/inspections/${inspection.id}/`)).status, 404);
  });

  it('100 concurrent deletes of one cloud project: one 204, 99 404', async () => {
    const api = await cloudClient(system, 'Race org');
    const project = await api.call('POST', '/project/api/v3/projects/', { name: 'Doomed' }, { expect: 201 });
    const results = await Promise.all(
      Array.from({ length: WAYS }, async () => (await fetch(`${system.urls.cloud}/project/api/v3/projects/${project.id}/`, { method: 'DELETE', headers: { authorization: `Bearer ${api.token}` } })).status),
    );
    const counts = tally(results);
    console.log(`project delete x${WAYS}: ${JSON.stringify(counts)}`);
    assert.equal(counts[204] ?? 0, 1, JSON.stringify(counts));
    assert.equal(counts[404] ?? 0, WAYS - 1, JSON.stringify(counts));
    await api.call('GET', `/project/api/v3/projects/${project.id}/`, undefined, { expect: 404 });
  });

  it('100 process calls across 100 inspections sharing a balance of 7: exactly 7 accepted, 93 insufficient_allowance', async () => {
    const BALANCE = 7;
    const owner = await system.newAccount({ projects: BALANCE });
    const asset = await owner.client.createAsset({ name: 'Farm', type: 1 });
    const photo = Buffer.from('not really a photo: processing ends in status 19');
    const ids = await mapConcurrently(
      Array.from({ length: WAYS }, (_, i) => i),
      8,
      async () => {
        const inspection = await owner.client.createInspection({ asset: asset.id });
        const credentials = await owner.client.storageCredentials(inspection.id);
        const key = `${credentials.key}photo.jpg`;
        await system.store.putObject(credentials.bucket, key, photo); // straight into the store: uploads are tested elsewhere
        await owner.client.register(inspection.id, [key]);
        return inspection.id as number;
      },
    );
    const results = await Promise.all(ids.map((id) => owner.client.request('POST', `/v1/inspections/${id}/process/`, {})));
    const counts = tally(results.map((r) => r.status));
    console.log(`process x${WAYS} over ${WAYS} inspections, balance ${BALANCE}: ${JSON.stringify(counts)}`);
    assert.deepEqual(counts, { 202: BALANCE, 403: WAYS - BALANCE }, JSON.stringify(counts));
    assert.ok(results.filter((r) => r.status === 403).every((r) => r.body.code === 'insufficient_allowance'));
    const balances = await owner.client.expect(200, 'GET', '/v1/allowance/');
    assert.equal(balances.find((b: any) => b.allowance_type === 'projects').balance, 0);
    const egress = (await owner.client.expect(200, 'GET', '/v1/allowance/history/')).filter((h: any) => h.direction === 'egress');
    assert.equal(egress.length, BALANCE);
    const accepted = ids.filter((_, i) => results[i].status === 202);
    assert.deepEqual(new Set(egress.map((h: any) => h.inspection)), new Set(accepted), 'one egress per accepted inspection');
    // The refused ones are untouched (status 2, not started); the accepted ones run to an end.
    for (const [i, id] of ids.entries()) {
      if (results[i].status === 403) assert.equal((await owner.client.getInspection(id)).status, Status.Uploading);
    }
    for (const id of accepted) {
      const done = await waitFor(`inspection ${id} settled`, async () => {
        const s = (await owner.client.getInspection(id)).status;
        return s === Status.ErrorNotEnoughImages || s === Status.Completed ? s : undefined;
      });
      assert.equal(done, Status.ErrorNotEnoughImages, 'one unreadable image: too few valid images');
    }
  });

  it('repository: a transition from a wrong status changes nothing; one outside the table throws', async () => {
    const rows = new InspectionRepository(system.inspection.db);
    const asset = await account.client.createAsset({ name: 'Unit', type: 1 });
    const inspection = await account.client.createInspection({ asset: asset.id });
    const before = await rows.findAny(inspection.id);
    assert.equal(before.status, Status.New);

    assert.equal(await rows.transition(inspection.id, Status.Analyzing, Status.Photogrammetry, { images_valid: 99 }), false);
    assert.equal(await rows.transition(inspection.id, [Status.Waiting, Status.Analyzing], Status.Analyzing), false);
    assert.deepEqual(await rows.findAny(inspection.id), before, 'nothing written');

    await assert.rejects(rows.transition(inspection.id, Status.Completed, Status.New), /not in TRANSITIONS/);
    await assert.rejects(rows.transition(inspection.id, [Status.New, Status.Completed], Status.Uploading), /not in TRANSITIONS/, 'every `from` must be allowed');
    assert.deepEqual(await rows.findAny(inspection.id), before, 'nothing written by a refused move');

    assert.equal(await rows.transition(inspection.id, Status.New, Status.Uploading), true);
    assert.equal((await rows.findAny(inspection.id)).status, Status.Uploading);
    assert.equal(await rows.transition(inspection.id, Status.New, Status.Uploading), false, 'applies once');

    const doomed = await account.client.createInspection({ asset: asset.id });
    await account.client.expect(204, 'DELETE', `/v1/inspections/${doomed.id}/`);
    assert.equal(await rows.transition(doomed.id, Status.New, Status.Uploading), false, 'a deleted inspection never moves');
    assert.equal((await rows.findAny(doomed.id)).status, Status.New);
  });
});
