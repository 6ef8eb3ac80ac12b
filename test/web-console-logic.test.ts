// Rules of the web console that need no browser: its addresses (hash routes), paging of the API's
// lists, and how the API's error bodies become messages next to form fields.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRoute, routeHref, type Route } from '../web/src/app/routes.ts';
import { asPage, clampPage, pageCount, pageWindow } from '../web/src/lib/paging.ts';
import { problemFrom } from '../web/src/lib/api-problem.ts';
import { cloudStateWords, formatBytes, formatDuration, outputName, remainingSeconds } from '../web/src/lib/processing-words.ts';

test('routes: every page has an address that reads back to the same page', () => {
  const routes: Route[] = [
    { name: 'signin', next: '#/assets/4' },
    { name: 'assets', search: 'tower 7', page: 3 },
    { name: 'assets', search: '', page: 1 },
    { name: 'asset', id: 12 },
    { name: 'upload', id: 5 },
    { name: 'processing', id: 5 },
    { name: 'workspace', id: 5, tab: 'photos', photo: 17, annotation: 3 },
    { name: 'workspace', id: 5, tab: '3d', photo: undefined, annotation: undefined },
    { name: 'workspace', id: 5, tab: 'photos', photo: 17, annotation: undefined, item: 9 },
    { name: 'allowance' },
  ];
  for (const route of routes) assert.deepEqual(parseRoute(routeHref(route)), route, routeHref(route));
});

test('routes: defaults, trailing slashes, and what is not a page', () => {
  assert.deepEqual(parseRoute(''), { name: 'assets', search: '', page: 1 });
  assert.deepEqual(parseRoute('#/assets/7/'), { name: 'asset', id: 7 });
  assert.equal(parseRoute('#/inspections/5?tab=bogus').name === 'workspace' && (parseRoute('#/inspections/5?tab=bogus') as { tab: string }).tab, 'photos');
  // Ids are canonical positive integers, as the API's paths; anything else is not a page.
  for (const hash of ['#/assets/0', '#/assets/007', '#/assets/-1', '#/assets/1e3', '#/inspections/x/upload', '#/nowhere']) {
    assert.equal(parseRoute(hash).name, 'not-found', hash);
  }
  // A bad page number in the address falls back to page 1.
  assert.deepEqual(parseRoute('#/assets?page=abc'), { name: 'assets', search: '', page: 1 });
  assert.equal((parseRoute('#/inspections/4?photo=0') as { photo?: number }).photo, undefined);
  assert.equal('item' in parseRoute('#/inspections/4?item=x'), false, 'an item that is not an id is left out');
});

test('paging: envelope or plain array, page counts and the pager window', () => {
  assert.deepEqual(asPage([1, 2]), { count: 2, next: null, previous: null, results: [1, 2] });
  const envelope = { count: 41, next: 'n', previous: null, results: [1] };
  assert.equal(asPage(envelope), envelope);
  assert.equal(pageCount(0, 20), 1);
  assert.equal(pageCount(40, 20), 2);
  assert.equal(pageCount(41, 20), 3);
  assert.deepEqual(pageWindow(1, 1), [1]);
  assert.deepEqual(pageWindow(5, 10), [1, null, 4, 5, 6, null, 10]);
  assert.deepEqual(pageWindow(1, 10), [1, 2, null, 10]);
  assert.deepEqual(pageWindow(10, 10), [1, null, 9, 10]);
  assert.deepEqual(pageWindow(3, 5), [1, 2, 3, 4, 5]);
  assert.equal(clampPage('3', 5), 3);
  assert.equal(clampPage('9', 5), 5);
  for (const raw of ['0', '-2', '1.5', 'x', '', null, undefined]) assert.equal(clampPage(raw, 5), 1);
});

test('API errors: DRF field errors land on their fields, nested ones with dotted names', () => {
  const problem = problemFrom(400, { name: ['Ensure this field has no more than 255 characters.'], data: { coords_2d: ['Each point is a pair of numbers between 0 and 1.'], links: [{ link: ['Enter a valid URL.'] }] }, non_field_errors: ['Bad combination.'] });
  assert.equal(problem.status, 400);
  assert.deepEqual(problem.forField('name'), ['Ensure this field has no more than 255 characters.']);
  assert.deepEqual(problem.forField('data.coords_2d'), ['Each point is a pair of numbers between 0 and 1.']);
  assert.deepEqual(problem.forField('data'), ['Each point is a pair of numbers between 0 and 1.', 'Enter a valid URL.']);
  assert.deepEqual(problem.fieldErrors['data.links.0.link'], ['Enter a valid URL.']);
  assert.equal(problem.message, 'Bad combination.');
  assert.deepEqual(problem.forField('description'), []);

  const conflict = problemFrom(409, { detail: 'The asset has inspections in progress.', code: 'conflict' });
  assert.equal(conflict.message, 'The asset has inspections in progress.');
  assert.equal(conflict.code, 'conflict');
  assert.deepEqual(conflict.fieldErrors, {});

  assert.equal(problemFrom(0, null).code, 'network');
  assert.equal(problemFrom(502, '<html>Bad gateway</html>').message, '<html>Bad gateway</html>');
  assert.equal(problemFrom(500, null).message, 'The request failed (500).');
  assert.equal(problemFrom(400, { type: ['This field is required.'] }).message, 'type: This field is required.');
});

test('processing steps: done, current and failed steps from the status', async () => {
  const { processingSteps, isStable } = await import('../web/src/lib/statuses.ts');
  const states = (status: number, video = false) => processingSteps(status, video).map((s) => `${s.status}:${s.state}`).join(' ');
  assert.equal(states(1), '2:todo 20:todo 3:todo 4:todo 5:todo 7:todo');
  assert.equal(states(20), '2:done 20:current 3:todo 4:todo 5:todo 7:todo');
  assert.equal(states(4), '2:done 20:done 3:done 4:current 5:todo 7:todo');
  assert.equal(states(16), '2:done 20:done 3:done 4:failed 5:todo 7:todo');
  assert.equal(states(19), '2:done 20:done 3:failed 4:todo 5:todo 7:todo');
  assert.equal(states(7), '2:done 20:done 3:done 4:done 5:done 7:done');
  assert.equal(states(12, true), '2:done 20:done 12:current 3:todo 4:todo 5:todo 7:todo');
  assert.equal(states(14, true), '2:done 20:done 12:failed 3:todo 4:todo 5:todo 7:todo');
  const noClip = (status: number) => processingSteps(status, false, false).map((s) => `${s.status}:${s.state}`).join(' ');
  assert.equal(noClip(7), '2:done 20:done 3:done 4:done 7:done');
  assert.equal(noClip(17), '2:done 20:done 3:done 4:done 5:failed 7:todo');
  for (const s of [1, 7, 13, 16, 19, 24, 27]) assert.equal(isStable(s), true, String(s));
  for (const s of [2, 3, 4, 5, 12, 20, 25]) assert.equal(isStable(s), false, String(s));
});

test('processing in words: cloud states, output names, durations, sizes and the time left', () => {
  assert.equal(cloudStateWords('UPLOADING'), 'Receiving the photos');
  assert.equal(cloudStateWords('SOMETHING_NEW'), 'something_new', 'an unknown state is shown, not hidden');
  assert.equal(outputName('calibrated_camera_parameters_json'), 'Calibrated cameras (JSON)');
  assert.equal(outputName('x_new_type'), 'x_new_type');
  assert.equal(formatDuration(45.4), '45 s');
  assert.equal(formatDuration(200), '3 min 20 s');
  assert.equal(formatDuration(180), '3 min');
  assert.equal(formatDuration(3900), '1 h 5 min');
  assert.equal(formatBytes(950), '950 B');
  assert.equal(formatBytes(3_400_000), '3.4 MB');
  assert.equal(formatBytes(12_345), '12 kB');
  assert.equal(remainingSeconds(120, 40), 180, '40 % in 2 min: 3 min left at the same pace');
  assert.equal(remainingSeconds(120, 3), null, 'too early to say');
  assert.equal(remainingSeconds(120, 100), null);
  assert.equal(remainingSeconds(120, null), null);
});
