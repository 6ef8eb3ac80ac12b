// What an inspection gives back: extras, outputs (presigned, >= 1 hour), inventory items, and the
// inputs ZIP (202 then 200 {url}, built in the background, e-mailed to the creator).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, demoImages, outbox, processedInspection, readZip, uploadedInspection, waitFor } from './helpers/inspection-fixtures.ts';
import { generateDemoImageSet } from '../scripts/generate-demo-images.ts';
import { utmWithEgm96Wkt } from '../src/shared/geo/utm-wkt.ts';

describe('inspection service: extras, outputs, inventory, inputs', () => {
  let system: TestSystem;
  let account: TestAccount;
  let processed: Awaited<ReturnType<typeof processedInspection>>;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    processed = await processedInspection(account);
  });
  after(async () => {
    await system?.stop();
  });

  it('extras: the UTM zone of the photos and their centre as offset; the asset position before processing', async () => {
    const extras = await account.client.expect(200, 'GET', `/v1/inspections/${processed.inspection.id}/extras/`);
    // One format whatever the engine: OGC WKT (here exif's, the cloud's default system).
    assert.match(extras.coordinate_system, /^COMPD_CS\["WGS 84 \/ UTM zone 32N \+ EGM96 height",PROJCS\[.*AUTHORITY\["EPSG","32632"\]\],VERT_CS\[.*"5773"\]\]\]$/, '6.56 E, 46.5 N is UTM zone 32 north');
    const cloudProject: any = await (await system.inspection.cloudFor(processed.inspection.id)).getProject(processed.inspection.project_id);
    assert.equal(extras.coordinate_system, cloudProject.coordinate_system, 'the system the cloud wrote its outputs in');
    assert.equal(extras.offset_3d_xyz.length, 3);
    const [e, n, z] = extras.offset_3d_xyz;
    assert.ok(Number.isInteger(e) && Number.isInteger(n) && Number.isInteger(z));
    assert.ok(Math.abs(e - 313_000) < 1000 && Math.abs(n - 5_154_500) < 1000, `${e}, ${n}`); // 2.44 deg west of the 9 E central meridian
    assert.ok(Math.abs(z - 420) <= 1);

    const southern = await account.client.createAsset({ name: 'South', type: 2, latitude: '-33.9', longitude: '18.4' });
    const before = await account.client.createInspection({ asset: southern.id });
    assert.deepEqual(await account.client.expect(200, 'GET', `/v1/inspections/${before.id}/extras/`), { coordinate_system: utmWithEgm96Wkt(32734), offset_3d_xyz: [0, 0, 0] });
    assert.match(utmWithEgm96Wkt(32734), /^COMPD_CS\["WGS 84 \/ UTM zone 34S \+ EGM96 height"/);
    const nowhere = await account.client.createInspection({ asset: (await account.client.createAsset({ name: 'Nowhere', type: 6 })).id });
    assert.deepEqual(await account.client.expect(200, 'GET', `/v1/inspections/${nowhere.id}/extras/`), { coordinate_system: '', offset_3d_xyz: [0, 0, 0] });
  });

  it('outputs: presigned GET URLs, valid at least an hour, of the cloud outputs that are done', async () => {
    const outputs = await account.client.expect(200, 'GET', `/v1/inspections/${processed.inspection.id}/outputs/`);
    const calibrated = outputs.find((o: any) => o.output_type === 'calibrated_camera_parameters_json');
    assert.ok(calibrated, JSON.stringify(outputs));
    assert.ok(!outputs.some((o: any) => o.output_type === 'point_cloud'), 'not available outputs are not listed');
    const url = new URL(calibrated.url);
    assert.ok(Number(url.searchParams.get('X-Amz-Expires')) >= 3600);
    const download = await fetch(calibrated.url);
    assert.equal(download.status, 200);
    const body = (await download.json()) as any;
    assert.ok(body, 'JSON content');
    const fresh = await account.client.createInspection({ asset: processed.asset.id });
    assert.deepEqual(await account.client.expect(200, 'GET', `/v1/inspections/${fresh.id}/outputs/`), []);
  });

  it('inventory: an empty list until detection exists', async () => {
    assert.deepEqual(await account.client.expect(200, 'GET', `/v1/inspections/${processed.inspection.id}/inventory/`), []);
    assert.deepEqual(await account.client.expect(200, 'GET', `/v1/inspections/${processed.inspection.id}/inventory/?page=1`), { count: 0, next: null, previous: null, results: [] });
  });

  it('inputs: 404 for an unknown inspection, 409 without inputs, 202 while building, then 200 {url} of a ZIP of the inputs; the creator gets an e-mail', async () => {
    assert.equal((await account.client.request('GET', '/v1/inspections/999999/inputs/')).status, 404);
    const empty = await account.client.createInspection({ asset: processed.asset.id });
    assert.equal((await account.client.request('GET', `/v1/inspections/${empty.id}/inputs/`)).status, 409);

    const id = processed.inspection.id;
    const first = await account.client.request('GET', `/v1/inspections/${id}/inputs/`);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    const ready = await waitFor('inputs ZIP', async () => {
      const r = await account.client.request('GET', `/v1/inspections/${id}/inputs/`);
      assert.ok(r.status === 200 || r.status === 202, String(r.status));
      return r.status === 200 ? r.body : undefined;
    });
    assert.ok(new URL(ready.url).searchParams.get('X-Amz-Expires'));
    const zip = Buffer.from(await (await fetch(ready.url)).arrayBuffer());
    const entries = readZip(zip);
    const images = await demoImages();
    assert.deepEqual(entries.map((e) => e.name).sort(), images.map((i) => i.name).sort(), 'entries named relative to the upload prefix');
    for (const image of images) assert.ok(entries.find((e) => e.name === image.name)!.data!.equals(image.body), `${image.name} intact`);

    const mail = await waitFor('inputs e-mail', async () => outbox(system).find((m) => /inputs ready/.test(m.subject) && m.to.includes(account.username)));
    assert.match(mail.body, /inputs-\d+\.zip/);
    const outputs = await account.client.expect(200, 'GET', `/v1/inspections/${id}/outputs/`);
    assert.ok(outputs.some((o: any) => o.output_type === 'input_zip'));
  });

  it('inputs: registering more images makes the ZIP stale; the next call builds a new one', async () => {
    const { inspection, credentials } = await uploadedInspection(account);
    assert.equal((await account.client.request('GET', `/v1/inspections/${inspection.id}/inputs/`)).status, 202);
    await waitFor('first ZIP', async () => (await account.client.request('GET', `/v1/inspections/${inspection.id}/inputs/`)).status === 200);
    const [extra] = await generateDemoImageSet(1, { latitude: 46.5, longitude: 6.5, altitude: 400 }, { width: 160, height: 120, seed: 7 });
    const keys = await account.client.upload(credentials, [{ name: 'extra/late.jpg', body: extra.data }]);
    await account.client.register(inspection.id, keys);
    assert.equal((await account.client.request('GET', `/v1/inspections/${inspection.id}/inputs/`)).status, 202);
    const ready = await waitFor('second ZIP', async () => {
      const r = await account.client.request('GET', `/v1/inspections/${inspection.id}/inputs/`);
      return r.status === 200 ? r.body : undefined;
    });
    const entries = readZip(Buffer.from(await (await fetch(ready.url)).arrayBuffer()));
    assert.equal(entries.length, 4);
    assert.ok(entries.some((e) => e.name === 'extra/late.jpg'));
  });

  it('inputs: a registered file missing from storage fails the build (no ZIP); the next call starts again', async () => {
    const { inspection, keys, credentials } = await uploadedInspection(account);
    await system.store.deleteObject(credentials.bucket, keys[1]);
    assert.equal((await account.client.request('GET', `/v1/inspections/${inspection.id}/inputs/`)).status, 202);
    const state = () =>
      system.inspection.db.selectFrom('inspection.inspections').select(['inputs_zip_status', 'inputs_zip_key']).where('id', '=', inspection.id).executeTakeFirstOrThrow();
    await waitFor('build failed', async () => (await state()).inputs_zip_status === 'error');
    assert.equal((await state()).inputs_zip_key, null);
    const listing = await system.store.listObjects(system.config.storageBucket, { prefix: `inspection-service/inspections/${inspection.id}/` });
    assert.deepEqual(listing.objects, [], 'no partial ZIP left behind');
    assert.equal((await account.client.request('GET', `/v1/inspections/${inspection.id}/inputs/`)).status, 202, 'asked again');
    assert.equal((await state()).inputs_zip_status, 'processing');
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
