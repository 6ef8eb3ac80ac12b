// Rules of the console's asset and inspection forms (web/src/lib/asset-rules.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkAsset, defaultProcessingOptions, fromDateTimeLocal, processingParameters, toDateTimeLocal } from '../web/src/lib/asset-rules.ts';

test('asset: name 1..255 characters', () => {
  assert.deepEqual(checkAsset({ name: 'Tower', latitude: '', longitude: '' }), {});
  assert.deepEqual(Object.keys(checkAsset({ name: '   ', latitude: '', longitude: '' })), ['name']);
  assert.deepEqual(checkAsset({ name: 'x'.repeat(255), latitude: '', longitude: '' }), {});
  assert.match(checkAsset({ name: 'x'.repeat(256), latitude: '', longitude: '' }).name[0], /255/);
});

test('asset: coordinates with at most 8 decimals, within range, each optional', () => {
  const ok = (latitude: string, longitude = '') => assert.deepEqual(checkAsset({ name: 'a', latitude, longitude }), {}, `${latitude} ${longitude}`);
  const bad = (field: 'latitude' | 'longitude', value: string) =>
    assert.deepEqual(Object.keys(checkAsset({ name: 'a', latitude: field === 'latitude' ? value : '', longitude: field === 'longitude' ? value : '' })), [field], value);
  ok('55.70584539', '13.1911');
  ok('-90', '180');
  ok(' 12.5 ');
  ok('', '-179.12345678'); // the API accepts one without the other
  bad('latitude', '55.123456789');
  bad('latitude', '90.00000001');
  bad('longitude', '-180.5');
  bad('latitude', '1e3');
  bad('latitude', 'north');
  bad('longitude', '12,5');
});

test('inspection date: datetime-local <-> the API date-time', () => {
  const date = new Date(2026, 10, 24, 9, 5, 59);
  assert.equal(toDateTimeLocal(date), '2026-11-24T09:05');
  assert.equal(fromDateTimeLocal('2026-11-24T09:05'), new Date(2026, 10, 24, 9, 5).toISOString());
  assert.equal(fromDateTimeLocal(''), null);
  assert.equal(fromDateTimeLocal('not a date'), undefined);
});

test('processing parameters: defaults and the clipping radius only when clipping', () => {
  const defaults = defaultProcessingOptions();
  assert.equal(defaults.generate_point_cloud, true);
  assert.equal(Object.values(defaults).filter(Boolean).length, 1);
  assert.equal('clipping_radius' in processingParameters(defaults, '40'), false);
  const clip = { ...defaults, clip_point_cloud: true };
  assert.equal(processingParameters(clip, '40').clipping_radius, 40);
  assert.equal('clipping_radius' in processingParameters(clip, ' '), false);
  assert.equal(processingParameters(clip, 'far').clipping_radius, 'far');
});

test('processing parameters: an option the installation cannot act on is sent as false, whatever the form holds', () => {
  const all = { ...defaultProcessingOptions(), clip_point_cloud: true, generate_mesh: true };
  const sent = processingParameters(all, '40', { generate_point_cloud: 'no engine', clip_point_cloud: 'no point cloud' });
  assert.equal(sent.generate_point_cloud, false);
  assert.equal(sent.clip_point_cloud, false);
  assert.equal('clipping_radius' in sent, false, 'no radius without clipping');
  assert.equal(sent.generate_mesh, true, 'the others as held');
});
