// GET /v1/inspections/{id}/processing/: the inspection's status with its cloud project's detail
// (the web console's processing page), access rules as every inspection route.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, uploadedInspection } from './helpers/inspection-fixtures.ts';
import { reportFigures } from '../src/inspection/processing-status/processing-summary.ts';

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

test('processing summary: what a DONE project made and did not make, with sizes and reasons', async (t) => {
  const system = await startTestSystem();
  t.after(() => system.stop());
  const owner = await system.newAccount();
  const { inspection: waiting } = await uploadedInspection(owner);
  assert.equal((await owner.client.expect(200, 'GET', `/v1/inspections/${waiting.id}/processing/`)).summary, null, 'no summary before the project is DONE');

  const { inspection: done } = await processedInspection(owner);
  const { summary } = await owner.client.expect(200, 'GET', `/v1/inspections/${done.id}/processing/`);
  assert.equal(summary.photos_total, 3);
  assert.equal(summary.photos_placed, null, 'the exif engine places no photo: null, not 0 or 3');
  const calibrated = summary.outputs_made.find((o: { output_type: string }) => o.output_type === 'calibrated_camera_parameters_json');
  assert.ok(calibrated && calibrated.size_bytes > 100, 'a made output carries its size in bytes');
  const pointCloud = summary.outputs_not_made.find((o: { output_type: string }) => o.output_type === 'point_cloud');
  assert.ok(pointCloud && pointCloud.reason.length > 10, `a missing output says why: ${JSON.stringify(summary.outputs_not_made)}`);
  assert.equal(summary.points, null, 'no quality report: no figures');
  assert.deepEqual(summary.stage_seconds, []);
  assertNoServerErrors(system);
});

test('reportFigures reads the local engine\'s and NodeODM\'s reports and ignores what is malformed', () => {
  const local = reportFigures({ points: 1600, dense: { points: 42000 }, mean_reprojection_error_px: 0.71, gsd_cm: 2.4, stage_timings_s: { features: 63.34, matching: 10, bogus: 'x' }, stage_titles: { features: 'Extracting features' } });
  assert.deepEqual(local, { points: 42000, dense: true, mean_reprojection_error_px: 0.71, gsd_cm: 2.4, stage_seconds: [{ stage: 'features', title: 'Extracting features', seconds: 63.3 }, { stage: 'matching', title: 'matching', seconds: 10 }] });
  assert.equal(reportFigures({ points: 1600, dense: { enabled: false, points: null } }).points, 1600, 'no dense cloud: the sparse points');
  assert.equal(reportFigures({ points: 1600, dense: { enabled: false, points: null } }).dense, false);
  const odm = reportFigures({ odm_stats: { reconstruction_statistics: { reconstructed_points_count: 5000, reprojection_error_pixels: 0.9 }, odm_processing_statistics: { average_gsd: 1.8 } } });
  assert.equal(odm.points, 5000);
  assert.equal(odm.mean_reprojection_error_px, 0.9);
  assert.equal(odm.gsd_cm, 1.8);
  const hostile = reportFigures({ points: -5, dense: [1], mean_reprojection_error_px: 'NaN', gsd_cm: Infinity as unknown as number, stage_timings_s: [3, 4] });
  assert.deepEqual(hostile, { points: null, dense: null, mean_reprojection_error_px: null, gsd_cm: null, stage_seconds: [] });
});
