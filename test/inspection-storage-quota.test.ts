// Issue 27, finding 10 (the organization's part): the files an organization registers, summed over
// all its inspections, are held to STORAGE_ORGANIZATION_QUOTA_BYTES. A registration beyond it is
// refused whole, and at the quota no storage credentials are issued until inspections are
// deleted; other organizations and users without one are not affected.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, demoImages } from './helpers/inspection-fixtures.ts';

describe('organization storage quota (issue 27)', () => {
  let system: TestSystem;
  let photosBytes: number;

  before(async () => {
    photosBytes = (await demoImages()).reduce((sum, image) => sum + image.body.length, 0);
    // Exactly two inspections' photos.
    system = await startTestSystem({ storageOrganizationQuotaBytes: 2 * photosBytes } as never);
  });
  after(async () => {
    await system?.stop();
  });

  const newInspection = async (account: TestAccount) => {
    const asset = await account.client.createAsset({ name: 'Tower', type: 2 });
    return account.client.createInspection({ asset: asset.id, name: 'Flight' });
  };

  it('a registration beyond the quota is refused whole; at the quota no credentials; deleting an inspection makes room', async () => {
    const account = await system.newAccount();
    const [first, second, third] = [await newInspection(account), await newInspection(account), await newInspection(account)];
    const firstKeys = await account.client.upload(await account.client.storageCredentials(first.id), await demoImages());
    assert.equal((await account.client.register(first.id, firstKeys)).nb_images_registered, 3);
    const credentials = await account.client.storageCredentials(second.id);
    const secondKeys = await account.client.upload(credentials, await demoImages());
    assert.equal((await account.client.register(second.id, secondKeys)).nb_images_registered, 3, 'up to the quota');

    // At the quota: no new upload session for any inspection of the organization.
    const noCredentials = await account.client.request('GET', `/v1/inspections/${third.id}/s3_credentials/`);
    assert.equal(noCredentials.status, 403, JSON.stringify(noCredentials.body));
    assert.equal(noCredentials.body.code, 'storage_quota_exceeded');
    assert.match(noCredentials.body.detail, new RegExp(`stores ${2 * photosBytes} bytes .*quota is ${2 * photosBytes} bytes`));

    // One more photo, uploaded with credentials issued before: its registration is refused, and nothing of it is registered.
    const [extra] = await account.client.upload(credentials, [{ name: 'extra.jpg', body: (await demoImages())[0].body }]);
    const refused = await account.client.request('POST', `/v1/inspections/${second.id}/register_images/`, { image_keys: [secondKeys[0], extra] });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'storage_quota_exceeded');
    assert.match(refused.body.detail, /nothing was registered/);
    // Registering again what is registered adds nothing, so it passes, and shows the count unchanged.
    assert.equal((await account.client.register(second.id, secondKeys)).nb_images_registered, 3);

    // Other accounts are not affected: another organization, a user without one.
    for (const other of [await system.newAccount(), await system.newAccount({ organization: false })]) {
      const theirs = await newInspection(other);
      assert.equal((await other.client.request('GET', `/v1/inspections/${theirs.id}/s3_credentials/`)).status, 200);
    }

    // Deleting an inspection (once processed: one in status 2 cannot be deleted) makes room again.
    await account.client.process(second.id);
    assert.equal((await account.client.waitUntilSettled(second.id, { timeoutMs: 90_000 })).status, 7);
    await account.client.expect(204, 'DELETE', `/v1/inspections/${second.id}/`);
    assert.equal((await account.client.request('GET', `/v1/inspections/${third.id}/s3_credentials/`)).status, 200);
    assertNoServerErrors(system);
  });
});
