// Issue 27, finding 10 (the organization's part): an organization's uploads, summed over all its
// inspections, are held to STORAGE_ORGANIZATION_QUOTA_BYTES. Beyond it registration is refused
// (nothing registered) and no storage credentials are issued until inspections are deleted; other
// organizations and users without one are not affected.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, demoImages } from './helpers/inspection-fixtures.ts';

describe('organization storage quota (issue 27)', () => {
  let system: TestSystem;
  let photosBytes: number;

  before(async () => {
    photosBytes = (await demoImages()).reduce((sum, image) => sum + image.body.length, 0);
    // Room for one inspection's photos and a half.
    system = await startTestSystem({ storageOrganizationQuotaBytes: Math.floor(photosBytes * 1.5) } as never);
  });
  after(async () => {
    await system?.stop();
  });

  const newInspection = async (account: TestAccount) => {
    const asset = await account.client.createAsset({ name: 'Tower', type: 2 });
    return account.client.createInspection({ asset: asset.id, name: 'Flight' });
  };
  const upload = async (account: TestAccount, inspectionId: number) => account.client.upload(await account.client.storageCredentials(inspectionId), await demoImages());

  it('beyond the quota: registration refused, nothing registered; credentials refused; deleting an inspection makes room', async () => {
    const account = await system.newAccount();
    const first = await newInspection(account);
    assert.equal((await account.client.register(first.id, await upload(account, first.id))).nb_images_registered, 3);

    // A second inspection of the organization: credentials while there is room, but its photos take it past the quota.
    const second = await newInspection(account);
    const keys = await upload(account, second.id);
    const refused = await account.client.request('POST', `/v1/inspections/${second.id}/register_images/`, { image_keys: keys });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'storage_quota_exceeded');
    assert.match(refused.body.detail, new RegExp(`stores ${2 * photosBytes} bytes .*quota is ${Math.floor(photosBytes * 1.5)} bytes`));
    const stillNew = await account.client.getInspection(second.id);
    assert.equal(stillNew.status, 1, 'nothing registered: the inspection is still New');
    assert.equal((await account.client.request('POST', `/v1/inspections/${second.id}/process/`)).status, 409);

    // No new upload session for any inspection of the organization.
    const third = await newInspection(account);
    const noCredentials = await account.client.request('GET', `/v1/inspections/${third.id}/s3_credentials/`);
    assert.equal(noCredentials.status, 403);
    assert.equal(noCredentials.body.code, 'storage_quota_exceeded');

    // Other accounts are not affected: another organization, a user without one.
    for (const other of [await system.newAccount(), await system.newAccount({ organization: false })]) {
      const theirs = await newInspection(other);
      assert.equal((await other.client.request('GET', `/v1/inspections/${theirs.id}/s3_credentials/`)).status, 200);
    }

    // Deleting the inspection over the quota makes room again.
    await account.client.expect(204, 'DELETE', `/v1/inspections/${second.id}/`);
    assert.equal((await account.client.request('GET', `/v1/inspections/${third.id}/s3_credentials/`)).status, 200);
    assertNoServerErrors(system);
  });
});
