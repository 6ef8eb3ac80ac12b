/// <reference lib="dom" />
// Finding things (issue 29 §4) and one severity vocabulary (§2). Unit tests: the annotation list's
// filter, counts per severity, order and address round trip (web/src/lib/annotation-filters.ts);
// the console's and the PDF's severity names are the same list (two copies, one per build). One
// short browser test: the workspace's Annotations tab lists the inspection's annotations (seeded
// through the API, the quick `exif` processing, no reconstruction), counts them per severity,
// filters by severity and type, and a row opens the photo at its annotation; Back returns to the
// same filtered list; the map warns about a far asset and groups overlapping cameras; the
// new-inspection form disables the option the server says it cannot act on. The browser part runs
// once (on PGlite), as the other browser tests.
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import type { Kysely } from 'kysely';
import { countBySeverity, filterAnnotations, filterParams, parseFilter, sortForReview, typesPresent, type ListedAnnotation } from '../web/src/lib/annotation-filters.ts';
import { SEVERITY_NAMES as CONSOLE_NAMES, severityName, severityOption } from '../web/src/lib/severity.ts';
import { SEVERITY_NAMES as REPORT_NAMES } from '../src/inspection/reports/severity-names.ts';
import { parseRoute, routeHref } from '../web/src/app/routes.ts';
import { allowanceAmount, allowanceWords, backendName, engineName, formatDate, formatDateTime, lockoutMessage, PROCESSING_BACKENDS } from '../web/src/lib/plain-words.ts';
import { assetDistanceWarning, centreOf, distanceMetres, formatCoordinate, formatDistance, formatLatLon, formatPosition, groupOverlapping } from '../web/src/lib/map-geometry.ts';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { browserTestSkipReason, launchChromium, openWatchedPage, type WatchedPage, signIn } from './helpers/browser.ts';
import { assertNoServerErrors, processedInspection } from './helpers/inspection-fixtures.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';

const at = (id: number, type: string, severity_level: number, photo_id = 100 + id): ListedAnnotation => ({ id, number: id, type, severity_level, photo_id });
const SAMPLE = [at(1, 'crack', 2), at(2, 'Corrosion', 5), at(3, 'corrosion', 0), at(4, 'Crack ', 5), at(5, 'bird nest', 3)];

test('severity: the console and the PDF report use the same names, 0 is "Not assessed" (not a harmless "None")', () => {
  assert.deepEqual([...CONSOLE_NAMES], [...REPORT_NAMES]);
  assert.equal(CONSOLE_NAMES.length, 6, 'severity_level 0..5 (spec)');
  assert.equal(severityName(0), 'Not assessed');
  assert.equal(severityName(4), 'High');
  assert.equal(severityName(9), 'Level 9', 'an unknown level is never blank');
  assert.equal(severityOption(5), 'Critical (5)');
});

test('annotation filter: by type (case and spaces ignored) and by any of the ticked severities; none ticked keeps all', () => {
  const ids = (filter: Parameters<typeof filterAnnotations>[1]) => filterAnnotations(SAMPLE, filter).map((a) => a.id);
  assert.deepEqual(ids({ type: '', severities: [] }), [1, 2, 3, 4, 5]);
  assert.deepEqual(ids({ type: 'CRACK', severities: [] }), [1, 4]);
  assert.deepEqual(ids({ type: '', severities: [5, 0] }), [2, 3, 4]);
  assert.deepEqual(ids({ type: 'corrosion', severities: [5] }), [2]);
  assert.deepEqual(ids({ type: 'rust', severities: [] }), []);
});

test('annotation counts: every level 0..5 present, counted within the chosen type only, ignoring the severity filter', () => {
  assert.deepEqual([...countBySeverity(SAMPLE)], [[5, 2], [4, 0], [3, 1], [2, 1], [1, 0], [0, 1]], 'most severe first, zeros kept');
  assert.deepEqual([...countBySeverity(SAMPLE, 'crack')], [[5, 1], [4, 0], [3, 0], [2, 1], [1, 0], [0, 0]]);
  assert.deepEqual([...countBySeverity([])].map(([, n]) => n), [0, 0, 0, 0, 0, 0]);
});

test('annotation types: each once whatever its case, counted, most frequent first; the list most severe first, then by number', () => {
  assert.deepEqual(typesPresent(SAMPLE), [{ type: 'Corrosion', count: 2 }, { type: 'crack', count: 2 }, { type: 'bird nest', count: 1 }]);
  assert.deepEqual(sortForReview(SAMPLE).map((a) => a.id), [2, 4, 5, 1, 3]);
});

test('annotation filter in the address: round trip through the route; unreadable severities ignored', () => {
  const filter = { type: 'Crack', severities: [4, 5] };
  const href = routeHref({ name: 'workspace', id: 7, tab: 'annotations', ...filterParams(filter) });
  assert.equal(href, '#/inspections/7?tab=annotations&type=Crack&severity=5%2C4');
  const route = parseRoute(href);
  assert.equal(route.name, 'workspace');
  assert.deepEqual(parseFilter(route as { type?: string; severity?: string }), { type: 'Crack', severities: [5, 4] });
  assert.deepEqual(parseFilter({ severity: '9,x,3,3,-1' }), { type: '', severities: [3] });
  assert.deepEqual(filterParams({ type: '', severities: [] }), { type: undefined, severity: undefined });
  assert.deepEqual(parseRoute('#/inspections/7?tab=annotations'), { name: 'workspace', id: 7, tab: 'annotations', photo: undefined, annotation: undefined });
});

test('map: distances (haversine), the asset warned about beyond 500 m from the cameras\' centre, in words', () => {
  // 0.01 degree of latitude is 1.112 km anywhere; of longitude at 46.5 degrees north, 0.765 km (cos 46.5 = 0.688).
  assert.equal(Math.round(distanceMetres({ lat: 46.5, lon: 6.5 }, { lat: 46.51, lon: 6.5 })), 1112);
  assert.equal(Math.round(distanceMetres({ lat: 46.5, lon: 6.5 }, { lat: 46.5, lon: 6.51 })), 765);
  assert.deepEqual(centreOf([{ lat: 46, lon: 6 }, { lat: 47, lon: 7 }]), { lat: 46.5, lon: 6.5 });
  assert.equal(centreOf([]), undefined);
  assert.deepEqual([12.4, 999.4, 1000, 1234, 9960, 12_600].map(formatDistance), ['12 m', '999 m', '1 km', '1.2 km', '10 km', '13 km']);
  const cameras = [{ lat: 46.5, lon: 6.5 }, { lat: 46.5002, lon: 6.5002 }];
  assert.equal(assetDistanceWarning(cameras, { lat: 46.5031, lon: 6.5001 }), undefined, '334 m: near enough');
  assert.match(assetDistanceWarning(cameras, { lat: 46.5109, lon: 6.5001 }) ?? '', /^The asset is 1\.2 km from the centre of the photos' cameras/);
  assert.equal(assetDistanceWarning([], { lat: 0, lon: 0 }), undefined, 'no cameras: nothing to compare');
  assert.equal(assetDistanceWarning(cameras, undefined), undefined);
});

test('map: coordinates without trailing zeros; overlapping markers grouped (greedy, order kept)', () => {
  assert.deepEqual([46.5183, 6.5, -0.0000004, 46.51830049].map(formatCoordinate), ['46.5183', '6.5', '0', '46.5183']);
  assert.equal(formatLatLon('46.51830000', '6.56190000'), '46.5183, 6.5619', 'the API\'s 8-decimal strings');
  assert.equal(formatPosition(12.5, -3, 40.254), '12.5, -3, 40.25 m');
  assert.equal(formatPosition(-0.001, 0.1, 2), '0, 0.1, 2 m', 'no "-0"');
  const groups = groupOverlapping([{ id: 1, x: 0, y: 0 }, { id: 2, x: 5, y: 5 }, { id: 3, x: 100, y: 0 }, { id: 4, x: 10, y: -3 }, { id: 5, x: 108, y: 4 }], 14);
  assert.deepEqual(groups.map((g) => g.map((p) => p.id)), [[1, 2, 4], [3, 5]]);
  assert.deepEqual(groupOverlapping([{ id: 1, x: 0, y: 0 }, { id: 2, x: 14, y: 0 }], 14).length, 2, 'exactly the radius apart: separate');
});

test('plain words: allowance types and processing engines named with an explanation; no API code shown', () => {
  assert.equal(allowanceWords('projects', 'Projects').name, 'Processing runs');
  assert.match(allowanceWords('projects').explanation, /each time an inspection’s photos are processed/);
  assert.equal(allowanceWords('tower_inventory', 'Tower inventory').name, 'Equipment inventories');
  assert.equal(allowanceWords('drone_hours', 'Drone hours').name, 'Drone hours', 'an unknown type keeps the API\'s name');
  assert.deepEqual([1, 2].map((n) => allowanceAmount('projects', n)), ['1 processing run', '2 processing runs']);
  assert.deepEqual(PROCESSING_BACKENDS.map((b) => [b.value, b.name]), [['mapper', 'Standard'], ['vortex', 'Alternative']], 'the spec\'s two values');
  for (const b of PROCESSING_BACKENDS) assert.ok(b.explanation.length > 20 && !/mapper|vortex/.test(b.explanation));
  assert.equal(backendName('mapper'), 'Standard');
  assert.deepEqual(['exif', 'colmap', 'nodeodm', 'other'].map(engineName), ['photo positions only (no 3D reconstruction)', 'COLMAP on this server', 'OpenDroneMap (NodeODM)', 'other']);
});

test('dates in the reader\'s locale (Intl), not ISO strings; nothing or garbage reads as a dash', () => {
  const iso = '2026-05-04T10:00:00Z';
  assert.equal(formatDateTime(iso), new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)));
  assert.equal(formatDate(iso), new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' }).format(new Date(iso)));
  assert.doesNotMatch(formatDateTime(iso), /2026-05-04|T10/);
  assert.match(formatDateTime(iso, new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' })), /^4 May 2026$/);
  assert.deepEqual([null, undefined, '', 'not a date'].map((v) => formatDateTime(v)), ['—', '—', '—', '—']);
});

test('sign-in lock-out: the end time (rounded up to the minute) and that the right password is refused too', () => {
  const gb = new Intl.DateTimeFormat('en-GB', { timeStyle: 'short', timeZone: 'UTC' });
  const now = new Date('2026-11-28T13:40:10Z');
  const words = lockoutMessage('Too many login attempts; try again in 900 seconds.', now, gb) ?? '';
  assert.match(words, /Until 13:56, every attempt is refused, even with the right password/);
  assert.match(lockoutMessage('try again in 1 second', new Date('2026-11-28T13:40:00Z'), gb) ?? '', /Until 13:41/);
  assert.equal(lockoutMessage('Invalid credentials', now, gb), undefined);
});

function skipReason(): string | undefined {
  return browserTestSkipReason();
}

describe('web console: the annotation list', { skip: skipReason() }, () => {
  const screens = process.env.WEB_SCREENSHOTS_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oi-annotation-list-'));
  let system: TestSystem;
  let account: TestAccount;
  let browser: Browser;
  let watched: WatchedPage | undefined;
  let inspectionId: number;
  let assetId: number;
  let cameraCentre: { lat: number; lon: number };
  let cameraCount: number;
  const annotations: { id: number; photo_id: number }[] = [];

  before(async () => {
    await ensureConsoleBuilt({ quiet: true });
    system = await startTestSystem();
    account = await system.newAccount();
    const processed = await processedInspection(account, { name: 'Tower 3 survey' }, { name: 'Tower 3' });
    inspectionId = processed.inspection.id;
    assetId = processed.asset.id;
    const located = processed.cameras.filter((c: { location?: { latitude: unknown } }) => c.location?.latitude != null);
    cameraCount = located.length;
    cameraCentre = {
      lat: located.reduce((sum: number, c: { location: { latitude: unknown } }) => sum + Number(c.location.latitude), 0) / located.length,
      lon: located.reduce((sum: number, c: { location: { longitude: unknown } }) => sum + Number(c.location.longitude), 0) / located.length,
    };
    const square = (x: number) => [[x, 0.2], [x + 0.2, 0.2], [x + 0.2, 0.4], [x, 0.4]];
    // Four annotations over two photos: two critical (one crack, one corrosion), a medium crack, one left at the default.
    const seeds = [
      { type: 'Crack', severity_level: 5, photo: 0, name: 'Weld crack' },
      { type: 'Corrosion', severity_level: 5, photo: 1, name: 'Flange rust' },
      { type: 'Crack', severity_level: 3, photo: 1, name: 'Hairline' },
      { type: 'Corrosion', photo: 0, name: 'Bolt' },
    ];
    for (const [i, seed] of seeds.entries()) {
      const { photo, ...fields } = seed;
      const photo_id = processed.cameras[photo].photo_id;
      const made = await account.client.expect(201, 'POST', '/v1/annotations/', { ...fields, inspection: inspectionId, photo_id, data: { coords_2d: square(0.1 + i * 0.15) } });
      annotations.push({ id: made.id, photo_id });
    }
    // An inventory as detection would leave it (no detector ships, so straight into its table).
    const item = (number: number, name: string, model_type: string, photo_id: number | null) => ({
      inspection_id: inspectionId, number, name, model_type, photo_id, urls: '{}', point_of_view: '[]', coords_2d: '{}', photo_projection: '{}', coords_3d: '[]', offset_xyz: '{}', custom_fields: '[]',
    });
    await (system.database.db as Kysely<any>)
      .insertInto('inspection.inventory_items')
      .values([item(1, 'Sector A', 'panel_antenna', processed.cameras[1].photo_id), item(2, 'Sector B', 'panel_antenna', processed.cameras[0].photo_id), item(3, '', 'mount', null)])
      .execute();
    browser = await launchChromium();
  });
  after(async () => {
    if (watched?.problems.length) console.log(`# browser console: ${JSON.stringify(watched.problems)}`);
    await browser?.close();
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  it('counts per severity, filters by severity and type, and a row opens the photo at its annotation', async () => {
    watched = await openWatchedPage(browser, { folder: screens });
    const { page } = watched;
    await signIn(page, system.urls.inspection, account, `#/inspections/${inspectionId}?tab=annotations`);
    await page.getByRole('tab', { name: 'Annotations', selected: true }).waitFor();
    await page.getByText('4 annotations, most severe first.').waitFor();
    const count = (level: number) => page.locator(`.severity-count[data-severity="${level}"]`).textContent();
    assert.deepEqual(await Promise.all([5, 4, 3, 2, 1, 0].map(count)), ['2', '0', '1', '0', '0', '1']);
    const rows = page.getByRole('table').getByRole('link');
    assert.deepEqual(await rows.allTextContents(), ['#1 Crack', '#2 Corrosion', '#3 Crack', '#4 Corrosion'], 'critical first, then by number');
    assert.equal(await page.getByRole('table').getByText('Not assessed').count(), 1, 'the default severity reads "Not assessed"');
    await watched.screenshot('annotation-list');

    // click, not check(): the box follows the address, which changes on the next hashchange event.
    await page.getByRole('checkbox', { name: /Critical/ }).click();
    await page.getByText('2 of 4 annotations match, most severe first.').waitFor();
    assert.equal(await page.getByRole('checkbox', { name: /Critical/ }).isChecked(), true);
    await page.getByLabel('Type').selectOption({ label: 'Corrosion (2)' });
    await page.getByText('1 of 4 annotations match, most severe first.').waitFor();
    assert.deepEqual(await Promise.all([5, 3, 0].map(count)), ['1', '0', '1'], 'the counts follow the type, not the ticked severities');
    assert.match(page.url(), /tab=annotations&type=Corrosion&severity=5$/, 'the filter is in the address');

    await rows.getByText('#2 Corrosion').click();
    await page.getByRole('tab', { name: 'Photos', selected: true }).waitFor();
    await page.getByText('Flange rust').waitFor();
    const url = new URL(page.url().replace('#/', '/'));
    assert.equal(url.searchParams.get('photo'), String(annotations[1].photo_id), 'the annotation\'s photo');
    assert.equal(url.searchParams.get('annotation'), String(annotations[1].id));
    await page.locator(`rect[data-annotation-id="${annotations[1].id}"].selected`).waitFor();
    await watched.screenshot('annotation-opened');

    await page.goBack();
    await page.getByText('1 of 4 annotations match, most severe first.').waitFor();
    assert.deepEqual(watched.problems, []);
  });

  it('the inventory under the list: its items by kind, each opening the photo it was seen in', async () => {
    assert.ok(watched, 'the first test signed in');
    const { page } = watched;
    await page.goto(`${system.urls.inspection}/#/inspections/${inspectionId}?tab=annotations`);
    const inventory = page.getByRole('region', { name: 'Equipment found on the asset (3)' });
    await inventory.waitFor();
    await inventory.getByText('#3 Mount (no photo)').waitFor();
    await inventory.getByLabel('Kind').selectOption({ label: 'Panel antenna (2)' });
    assert.deepEqual(await inventory.getByRole('link').allTextContents(), ['#1 Sector A', '#2 Sector B']);
    await inventory.getByRole('link', { name: '#1 Sector A' }).click();
    await page.getByRole('tab', { name: 'Photos', selected: true }).waitFor();
    assert.equal(new URL(page.url().replace('#/', '/')).searchParams.get('photo'), String(annotations[1].photo_id), 'the photo the item was seen in');
    assert.deepEqual(watched.problems, []);
  });

  it('the map warns in words when the asset stands 1.2 km from the cameras, and groups the cameras that overlap into a named marker', async () => {
    // 0.0108 degree of latitude north of the cameras' centre: 1.2 km.
    await account.client.expect(200, 'PATCH', `/v1/assets/${assetId}/`, { latitude: (cameraCentre.lat + 0.0108).toFixed(8), longitude: cameraCentre.lon.toFixed(8) });
    assert.ok(watched, 'the first test signed in');
    const { page } = watched;
    await page.goto(`${system.urls.inspection}/#/inspections/${inspectionId}?tab=map`);
    const warning = page.getByTestId('asset-far');
    await warning.waitFor();
    assert.match((await warning.textContent()) ?? '', /^The asset is 1\.2 km from the centre of the photos' cameras/);
    // Fitted to the asset and the cameras, the cameras (metres apart) overlap: one marker with their count.
    const group = page.getByRole('button', { name: `${cameraCount} cameras here: zoom in` });
    await group.waitFor();
    assert.equal((await group.textContent())?.trim(), String(cameraCount));
    await watched.screenshot('map-asset-far');
    await group.focus();
    await page.keyboard.press('Enter');
    await group.waitFor({ state: 'detached' });
    await watched.screenshot('map-zoomed-in');
    assert.deepEqual(watched.problems, []);
  });

  it('the new-inspection form names the engines in words and disables the options this installation cannot act on, saying why; a disabled option is sent as false', async () => {
    const settings = (await (await fetch(`${system.urls.inspection}/v1/console/settings/`)).json()) as { unavailable_options: Record<string, string> };
    // The exif engine (the tests' default) reconstructs nothing: no point cloud, mesh, DSM, orthophoto, nor clipping, nor antennas found in the cloud.
    assert.deepEqual(
      Object.keys(settings.unavailable_options).sort(),
      ['clip_point_cloud', 'detect_antennas', 'generate_dsm', 'generate_mesh', 'generate_ortho', 'generate_point_cloud', 'roof_segmentation'],
      'the server says which options it would ignore',
    );
    assert.ok(watched, 'the first test signed in');
    const { page } = watched;
    await page.goto(`${system.urls.inspection}/#/assets/${assetId}`);
    await page.getByRole('button', { name: 'New inspection' }).click();
    const engine = page.getByLabel('Processing engine');
    assert.deepEqual(await engine.locator('option').allTextContents(), ['Standard', 'Alternative']);
    await page.getByText('The installation’s usual photogrammetry engine.').waitFor();
    const roof = page.getByRole('checkbox', { name: 'Roof segmentation' });
    assert.equal(await roof.isDisabled(), true);
    assert.equal(await roof.isChecked(), false);
    assert.match((await roof.getAttribute('aria-describedby')) ?? '', /roof_segmentation/);
    await page.getByText(/no roof segmentation model is installed/).waitFor();
    const mesh = page.getByRole('checkbox', { name: 'Generate mesh' });
    assert.equal(await mesh.isDisabled(), true);
    assert.equal(await page.locator(`#${await mesh.getAttribute('aria-describedby')}`).textContent(), settings.unavailable_options.generate_mesh);
    assert.match(settings.unavailable_options.generate_mesh, /exif engine does not reconstruct/);
    const pointCloud = page.getByRole('checkbox', { name: 'Generate point cloud' });
    assert.equal(await pointCloud.isDisabled(), true);
    assert.equal(await pointCloud.isChecked(), false, 'on by default, shown off when it cannot be made');
    assert.equal(await page.getByRole('checkbox', { name: 'Detect rust' }).isDisabled(), false, 'the others stay available');
    assert.equal(await page.getByRole('checkbox', { name: /Detect antennas/ }).isDisabled(), true, 'antennas are found in the point cloud');
    await watched.screenshot('new-inspection-form');

    await page.getByLabel('Inspection name').fill('Disabled outputs');
    await page.getByRole('button', { name: 'Create inspection' }).click();
    await page.waitForURL(/#\/inspections\/\d+\/upload/);
    const created = ((await account.client.expect(200, 'GET', '/v1/inspections/')) as { name: string; processing_parameters: Record<string, unknown> }[]).find((i) => i.name === 'Disabled outputs');
    assert.ok(created, 'the form created the inspection');
    assert.equal(created.processing_parameters.generate_point_cloud, false, 'the default-on option it could not make is sent as false');
  });

  it('a share link opens the list read-only: the same rows, no inventory call, nothing failed', async () => {
    const share = await account.client.expect(201, 'POST', `/v1/inspections/${inspectionId}/share_tokens/`, { label: 'list' });
    const holder = await openWatchedPage(browser, { folder: path.join(screens, 'share') });
    try {
      await holder.page.goto(`${share.url}#/inspections/${inspectionId}?tab=annotations`);
      await holder.page.getByRole('tab', { name: 'Annotations', selected: true }).waitFor();
      await holder.page.getByText('4 annotations, most severe first.').waitFor();
      assert.equal(await holder.page.getByText(/draw one around a defect/).count(), 0);
      await holder.page.getByRole('table').getByRole('link', { name: '#3 Crack' }).click();
      await holder.page.getByText('Hairline').waitFor();
      assert.deepEqual(holder.problems, [], 'no call a share token may not make (the inventory)');
    } finally {
      await holder.page.context().close();
    }
  });
});
