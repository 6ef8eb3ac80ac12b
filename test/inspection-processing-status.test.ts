// GET /v1/inspections/{id}/processing/: the inspection's status with its cloud project's detail
// (the web console's processing page), access rules as every inspection route.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, uploadedInspection } from './helpers/inspection-fixtures.ts';

test('processing state: cloud detail before and after processing, 404 for others', async (t) => {
  const system = await startTestSystem();
  t.after(() => system.stop());
  const owner = await system.newAccount();
  const other = await system.newAccount();

  const { inspection: waiting } = await uploadedInspection(owner);
  const before = await owner.client.expect(200, 'GET', `/v1/inspections/${waiting.id}/processing/`);
  assert.equal(before.status, 2);
  assert.equal(before.error_reason, null);
  assert.equal(before.cloud.public_status, 'UPLOADING');
  assert.equal(before.cloud.image_count, 3);

  const { inspection: done } = await processedInspection(owner);
  const after = await owner.client.expect(200, 'GET', `/v1/inspections/${done.id}/processing/`);
  assert.equal(after.status, 7);
  assert.equal(after.cloud.public_status, 'DONE');
  assert.equal(after.cloud.progress, 100);
  assert.equal(after.cloud.engine, 'exif');
  assert.equal(after.cloud.error_code, null);
  assert.ok(after.cloud.processing_started && after.cloud.processing_ended);

  await other.client.expect(404, 'GET', `/v1/inspections/${done.id}/processing/`);
  await owner.client.expect(404, 'GET', '/v1/inspections/999999/processing/');
  assertNoServerErrors(system);
});
