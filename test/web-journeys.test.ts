/// <reference lib="dom" />
// The web console end to end, in Debian's Chromium driven by playwright-core, against a real
// server: what an inspector does, click by click. Journey 1 (exif engine): sign in → create an
// asset → create an inspection → drop 6 lund photos → 100 % → process → status 7 → open a photo →
// draw a rectangle → the annotation is in the API with the right coords_2d → report → the PDF
// downloads. Journey 2 (colmap engine, as the `vortex` backend, sparse model only: the dense stages
// run once, in engine-colmap-lund and engine-colmap-dense): the 3D view shows the point cloud and
// an annotation's marker. Journey 1 also runs at 390x844 and 768x1024 with touch (3 photos, a
// rectangle drawn with a finger, the 3D tab's words, the share link signed out; no page scrolls
// sideways). Screenshots of every page go to the folder printed at the start. Past 350 lines: the
// journeys read as one story each.
// Run once (on PGlite), not per database: the journeys test the console, not the database.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { browserTestSkipReason, countCanvasPixels, launchChromium, openWatchedPage, type WatchedPage, signIn } from './helpers/browser.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';
import { cameraFromCalibrated, insideImage, projectPoint, readLas } from '../src/shared/pointcloud/index.ts';

const LUND = path.resolve(import.meta.dirname, '../../shared/datasets/lund/images');
const SCREENSHOTS = process.env.WEB_SCREENSHOTS_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oi-console-screens-'));

function skipReason(): string | undefined {
  return browserTestSkipReason(() => (fs.existsSync(LUND) ? undefined : `${LUND} not found`));
}

describe('web console journeys', { skip: skipReason() }, () => {
  let system: TestSystem;
  let account: TestAccount;
  let browser: Browser;
  let w: WatchedPage;
  const timings: Record<string, number> = {};

  before(async () => {
    console.log(`# console screenshots: ${SCREENSHOTS}`);
    await ensureConsoleBuilt({ quiet: true });
    // The `vortex` backend runs COLMAP; `mapper` the default exif engine (fast, no point cloud).
    system = await startTestSystem({ engines: ['colmap'], processingBackendEngines: { vortex: 'colmap' }, colmapDense: false });
    account = await system.newAccount({ projects: 5 });
    browser = await launchChromium();
  });
  // On a failure, the page as it was: the screenshot folder then shows where the journey stopped.
  afterEach(async (t) => {
    if (w && (t as { passed?: boolean }).passed === false) await w.screenshot('failure').catch(() => undefined);
    if (w?.problems.length) console.log(`# browser console: ${JSON.stringify(w.problems)}`);
  });
  after(async () => {
    console.log(`# journey timings (s): ${JSON.stringify(timings)}`);
    await browser?.close();
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  it('journey 1: sign in, asset, inspection, upload 6 photos, process, annotate a photo, report PDF', async () => {
    const started = Date.now();
    w = await openWatchedPage(browser, { folder: path.join(SCREENSHOTS, 'journey-1') });
    const { page } = w;
    const base = system.urls.inspection;

    // Sign in
    await page.goto(`${base}/`);
    await page.getByLabel('Username').fill(account.username);
    await w.screenshot('sign-in');
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Assets' }).waitFor();
    await w.screenshot('assets-empty');
    timings.signIn = (Date.now() - started) / 1000;

    // Create an asset (at lund's photos, so the map has something to show)
    await page.getByRole('button', { name: 'New asset' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Lund building');
    await page.getByLabel('Latitude').fill('55.70584539');
    await page.getByLabel('Longitude').fill('13.1911');
    await w.screenshot('asset-form');
    await page.getByRole('button', { name: 'Create asset' }).click();
    await page.getByRole('heading', { name: 'Lund building' }).waitFor();
    const assetId = Number(/#\/assets\/(\d+)/.exec(page.url())![1]);
    assert.equal((await account.client.expect(200, 'GET', `/v1/assets/${assetId}/`)).name, 'Lund building');

    // Create an inspection
    await page.getByRole('button', { name: 'New inspection' }).click();
    await page.getByLabel('Inspection name').fill('Facade survey');
    await w.screenshot('inspection-form');
    await page.getByRole('button', { name: 'Create inspection' }).click();
    await page.getByRole('heading', { name: 'Upload photos' }).waitFor();
    const inspectionId = Number(/#\/inspections\/(\d+)\/upload/.exec(page.url())![1]);
    const created = await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/`);
    assert.equal(created.asset, assetId);
    assert.equal(created.name, 'Facade survey');
    assert.equal(created.processing_parameters.generate_point_cloud, true);

    // Drop 6 lund photos: the progress reaches 100 %, the 6 keys are registered
    const photos = fs.readdirSync(LUND).filter((f) => /\.jpe?g$/i.test(f)).sort().slice(0, 6).map((f) => path.join(LUND, f));
    assert.equal(photos.length, 6);
    const uploadStarted = Date.now();
    await page.getByLabel('Choose photos').setInputFiles(photos);
    await page.getByTestId('upload-percent').filter({ hasText: '100 %' }).waitFor({ timeout: 60_000 });
    await page.getByTestId('registered-count').filter({ hasText: '6 registered' }).waitFor({ timeout: 60_000 });
    timings.upload = (Date.now() - uploadStarted) / 1000;
    await w.screenshot('upload-done');
    assert.equal((await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/`)).status, 2);

    // Process: what it spends is shown first; then the processing page follows it to 7
    await page.getByText('Processing uses 1 processing run of your allowance').waitFor();
    await page.getByRole('button', { name: 'Process', exact: true }).click();
    await page.waitForURL(/#\/inspections\/\d+\/processing/);
    await w.screenshot('processing');
    const processStarted = Date.now();
    await page.getByTestId('inspection-status').filter({ hasText: 'Processing completed' }).waitFor({ timeout: 120_000 });
    timings.processing = (Date.now() - processStarted) / 1000;
    // When done, the page says what came out in words: photos placed, the outputs made with their sizes
    const summary = page.getByTestId('processing-summary');
    await summary.getByText('Photos placed').waitFor({ timeout: 30_000 });
    await page.getByTestId('outputs-made').getByText(/Calibrated cameras \(JSON\) · \d/).waitFor();
    await page.getByTestId('cloud-state').getByText('photo positions only (no 3D reconstruction)', { exact: false }).waitFor();
    assert.doesNotMatch(await page.getByTestId('inspection-status').innerText(), /\(7\)/, 'the status in words, without its code');
    await w.screenshot('processing-done');
    assert.equal((await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/`)).status, 7);

    // Open a photo, draw a rectangle, save the annotation
    await page.getByRole('link', { name: 'Open the workspace' }).click();
    await page.getByRole('tab', { name: 'Photos' }).waitFor();
    const image = page.getByTestId('photo-image');
    await image.waitFor();
    await page.waitForFunction(() => (document.querySelector('[data-testid=photo-image]') as HTMLImageElement | null)?.complete === true);
    await w.screenshot('photos');
    // Each page names itself; the tabs follow the tabs pattern: ArrowRight on the focused tab selects
    // the next tab (and does not move to the next photo), ArrowLeft comes back
    assert.equal(await page.title(), 'Photos · Facade survey · Open Inspection');
    const photoBefore = await image.getAttribute('src');
    await page.getByRole('tab', { name: 'Photos' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.getByRole('tab', { name: 'Annotations', selected: true }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'tab-annotations', 'focus follows the selected tab');
    await page.keyboard.press('ArrowLeft');
    await page.getByRole('tab', { name: 'Photos', selected: true }).waitFor();
    await image.waitFor();
    assert.equal(await image.getAttribute('src'), photoBefore, 'arrow keys on the tabs do not change the photo');
    await page.waitForFunction(() => (document.querySelector('[data-testid=photo-image]') as HTMLImageElement | null)?.complete === true);
    await page.getByRole('button', { name: 'Draw annotation' }).click();
    const box = (await image.boundingBox())!;
    const from = { x: 0.2, y: 0.3 };
    const to = { x: 0.6, y: 0.7 };
    await page.mouse.move(box.x + box.width * from.x, box.y + box.height * from.y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.5, { steps: 5 });
    await page.mouse.move(box.x + box.width * to.x, box.y + box.height * to.y, { steps: 5 });
    await page.mouse.up();
    await page.getByLabel('Type').fill('crack');
    await page.getByLabel('Severity').selectOption('3');
    await page.getByLabel('Description').fill('Crack above the window');
    await w.screenshot('annotation-form');
    await page.getByRole('button', { name: 'Save annotation' }).click();
    await page.getByRole('button', { name: /#1 crack/ }).waitFor();
    await w.screenshot('annotation-saved');
    const annotations = await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/annotations/`);
    assert.equal(annotations.length, 1);
    const [annotation] = annotations;
    assert.equal(annotation.type, 'crack');
    assert.equal(annotation.severity_level, 3);
    const cameras = await account.client.cameras(inspectionId);
    assert.equal(annotation.photo_id, cameras[0].photo_id, 'the first photo is the one shown');
    // The rectangle drawn, in photo fractions, within a pixel of the photo shown (the large preview).
    const pixel = 1 / Math.min(box.width, box.height);
    const expected = [[from.x, from.y], [to.x, from.y], [to.x, to.y], [from.x, to.y]];
    annotation.data.coords_2d.forEach((point: number[], i: number) => {
      assert.ok(Math.abs(point[0] - expected[i][0]) <= 2 * pixel && Math.abs(point[1] - expected[i][1]) <= 2 * pixel, `coords_2d ${JSON.stringify(annotation.data.coords_2d)} vs ${JSON.stringify(expected)}`);
    });

    // The report: generate, follow report_status, download the PDF
    await page.getByRole('tab', { name: 'Outputs & report' }).click();
    // Each download with its size (from the processing summary) beside its name.
    await page.locator('.output-list li').filter({ hasText: /^Calibrated cameras \(JSON\) · [\d.]+ kB/ }).waitFor();
    await page.getByRole('button', { name: 'Generate report' }).click();
    const pdfLink = page.getByRole('button', { name: 'Download the report (PDF)' });
    await pdfLink.waitFor({ timeout: 60_000 });
    await w.screenshot('report-ready');
    const [download] = await Promise.all([page.waitForEvent('download'), pdfLink.click()]);
    const pdfFile = path.join(w.folder, 'report.pdf');
    await download.saveAs(pdfFile);
    assert.equal(fs.readFileSync(pdfFile).subarray(0, 5).toString(), '%PDF-');
    timings.journey1 = (Date.now() - started) / 1000;

    // The other pages, for the screenshots (and their console errors): assets with the map, the
    // asset with its inspection, allowance (the spend shows), and the wide layout.
    await page.getByRole('link', { name: 'Assets', exact: true }).first().click();
    await page.getByRole('region', { name: 'Assets of this page on a map' }).waitFor();
    await page.locator('.leaflet-interactive').first().waitFor();
    await w.screenshot('assets-list-map');
    await page.getByRole('link', { name: 'Lund building' }).click();
    await page.getByRole('link', { name: 'Facade survey' }).waitFor();
    await w.screenshot('asset-page');
    await page.getByRole('link', { name: 'Allowance' }).click();
    await page.getByRole('cell', { name: 'spent' }).first().waitFor();
    await w.screenshot('allowance');
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.goto(`${base}/#/inspections/${inspectionId}?tab=photos&photo=${annotation.photo_id}&annotation=${annotation.id}`);
    await page.locator(`rect[data-annotation-id="${annotation.id}"].selected`).waitFor();
    await w.screenshot('photos-1920');

    assert.deepEqual(w.problems, [], 'no errors in the browser console');
  });

  // Journey 1 again on a phone and a tablet (issue 29's closing note), with touch: fewer photos (3),
  // the rectangle drawn with one finger, the 3D tab's words, the report, and its share link opened
  // signed out in a fresh context. No page may scroll sideways.
  for (const size of [{ name: 'phone', width: 390, height: 844 }, { name: 'tablet', width: 768, height: 1024 }] as const) {
    it(`journey 1 at ${size.width}x${size.height} (${size.name}, touch): sign in, upload 3 photos, process, annotate by touch, 3D, report, share link signed out`, async () => {
      const started = Date.now();
      await touchJourney(size);
      timings[`journey1${size.name}`] = (Date.now() - started) / 1000;
    });
  }

  async function touchJourney(size: { name: string; width: number; height: number }): Promise<void> {
    w = await openWatchedPage(browser, { folder: path.join(SCREENSHOTS, `journey-1-${size.name}`), viewport: size, touch: true });
    const { page } = w;
    const base = system.urls.inspection;
    const fits = async (where: string) => {
      const width = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      assert.ok(width.scroll <= width.inner, `${where} at ${size.width}x${size.height}: ${width.scroll} px wide in ${width.inner} px`);
      await w.screenshot(where);
    };

    await page.goto(`${base}/`);
    await page.getByLabel('Username').fill(account.username);
    await page.getByLabel('Password').fill(account.password);
    await fits('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).tap();
    await page.getByRole('heading', { name: 'Assets' }).waitFor();
    await fits('assets');

    await page.getByRole('button', { name: 'New asset' }).tap();
    await page.getByLabel('Name', { exact: true }).fill(`Lund ${size.name}`);
    await page.getByLabel('Latitude').fill('55.70584539');
    await page.getByLabel('Longitude').fill('13.1911');
    await fits('asset-form');
    await page.getByRole('button', { name: 'Create asset' }).tap();
    await page.getByRole('heading', { name: `Lund ${size.name}` }).waitFor();
    await fits('asset');

    await page.getByRole('button', { name: 'New inspection' }).tap();
    await page.getByLabel('Inspection name').fill(`Survey on a ${size.name}`);
    await fits('inspection-form');
    await page.getByRole('button', { name: 'Create inspection' }).tap();
    await page.getByRole('heading', { name: 'Upload photos' }).waitFor();
    const inspectionId = Number(/#\/inspections\/(\d+)\/upload/.exec(page.url())![1]);

    const photos = fs.readdirSync(LUND).filter((f) => /\.jpe?g$/i.test(f)).sort().slice(0, 3).map((f) => path.join(LUND, f));
    await page.getByLabel('Choose photos').setInputFiles(photos);
    await page.getByTestId('registered-count').filter({ hasText: '3 registered' }).waitFor({ timeout: 60_000 });
    await fits('upload-done');

    await page.getByRole('button', { name: 'Process', exact: true }).tap();
    await page.waitForURL(/#\/inspections\/\d+\/processing/);
    await page.getByTestId('inspection-status').filter({ hasText: 'Processing completed' }).waitFor({ timeout: 120_000 });
    await page.getByTestId('processing-summary').getByText('Photos placed').waitFor({ timeout: 30_000 });
    await fits('processing-done');

    // Annotate by touch: "Draw annotation", then one finger drags from one corner to the other.
    await page.getByRole('link', { name: 'Open the workspace' }).tap();
    const image = page.getByTestId('photo-image');
    await image.waitFor();
    await page.waitForFunction(() => (document.querySelector('[data-testid=photo-image]') as HTMLImageElement | null)?.complete === true);
    await fits('photos');
    await page.getByRole('button', { name: 'Draw annotation' }).tap();
    const box = (await image.boundingBox())!;
    const at = (fx: number, fy: number) => ({ x: box.x + box.width * fx, y: box.y + box.height * fy });
    await fingerDrag(page, [at(0.2, 0.3), at(0.4, 0.5), at(0.6, 0.7)]);
    await page.getByLabel('Type').fill('crack');
    await page.getByLabel('Severity').selectOption('3');
    await fits('annotation-form');
    // (Clicked, not tapped: the Type box's suggestion list can stay open over the button at the tablet size.)
    await page.getByRole('button', { name: 'Save annotation' }).click();
    await page.getByRole('button', { name: /#1 crack/ }).waitFor();
    await fits('annotation-saved');
    const [annotation] = await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/annotations/`);
    const pixel = 2 / Math.min(box.width, box.height);
    const expected = [[0.2, 0.3], [0.6, 0.3], [0.6, 0.7], [0.2, 0.7]];
    annotation.data.coords_2d.forEach((point: number[], i: number) => {
      assert.ok(Math.abs(point[0] - expected[i][0]) <= pixel && Math.abs(point[1] - expected[i][1]) <= pixel, `coords_2d ${JSON.stringify(annotation.data.coords_2d)} vs ${JSON.stringify(expected)}`);
    });

    // (After the finger's drag, a tap on a tab was sometimes lost: clicked from here on.)
    // 3D: the exif engine makes no point cloud; the tab says so in words.
    await page.getByRole('tab', { name: '3D' }).click();
    await page.getByText('No point cloud for this inspection.').waitFor();
    await fits('3d');

    // The report, then a share link made in the Sharing panel.
    await page.getByRole('tab', { name: 'Outputs & report' }).click();
    await page.getByRole('button', { name: 'Generate report' }).click();
    await page.getByRole('button', { name: 'Download the report (PDF)' }).waitFor({ timeout: 60_000 });
    await fits('report-ready');
    const panel = page.getByRole('region', { name: 'Sharing' });
    await panel.getByLabel('Label').fill(`from the ${size.name}`);
    await panel.getByRole('button', { name: 'Make a link' }).click();
    const shown = panel.getByLabel(/New link .*shown this once/);
    await shown.waitFor();
    const link = await shown.inputValue();
    await fits('sharing');
    assert.deepEqual(w.problems, [], 'no errors in the browser console');

    // Signed out, in a fresh context at the same size: the shared inspection's photo with the annotation.
    const holder = await openWatchedPage(browser, { folder: path.join(SCREENSHOTS, `journey-1-${size.name}-share`), viewport: size, touch: true });
    try {
      await holder.page.goto(link);
      await holder.page.getByRole('heading', { name: `Survey on a ${size.name}`, level: 1 }).waitFor();
      await holder.page.getByTestId('photo-image').waitFor();
      await holder.page.locator(`rect[data-annotation-id="${annotation.id}"]`).waitFor();
      // Read-only: nothing to draw with, and the photo's hint does not point at a missing button.
      await holder.page.getByText('Pinch to zoom · drag to pan').waitFor();
      assert.equal(await holder.page.getByText('Draw annotation').count(), 0, 'no "Draw annotation" in the share viewer');
      const width = await holder.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      assert.ok(width.scroll <= width.inner, `share viewer at ${size.width}x${size.height}: ${width.scroll} px wide in ${width.inner} px`);
      await holder.screenshot('share-viewer');
      assert.equal(await holder.page.evaluate(() => sessionStorage.length), 0, 'no session');
      assert.deepEqual(holder.problems, [], 'no errors in the share viewer');
    } finally {
      await holder.page.context().close();
      await page.context().close();
    }
  }

  it('journey 2 (colmap): the 3D view draws the point cloud and an annotation marker that opens its photo; a point measured on the cloud', async (t) => {
    if (process.env.CI !== 'true' && !fs.existsSync('/usr/bin/colmap')) return t.skip('/usr/bin/colmap is not installed (Debian package colmap)');
    if (process.env.CI === 'true') assert.ok(fs.existsSync('/usr/bin/colmap'), 'CI must install colmap');
    const started = Date.now();
    // Processing through the API (journey 1 drove the upload UI): 12 lund photos with COLMAP (with 8,
    // its incremental mapper sometimes finds no initial pair).
    const client = account.client;
    const asset = await client.createAsset({ name: 'Lund street', type: 2, latitude: '55.69822000', longitude: '13.19520000' } as never);
    const inspection = await client.createInspection({ asset: asset.id, name: 'Street in 3D', processing_backend: 'vortex', processing_parameters: { generate_point_cloud: true } });
    const files = fs.readdirSync(LUND).filter((f) => /\.jpe?g$/i.test(f)).sort().slice(0, 12);
    const keys = await client.upload(await client.storageCredentials(inspection.id), files.map((name) => ({ name, body: fs.readFileSync(path.join(LUND, name)) })));
    await client.register(inspection.id, keys);
    await client.process(inspection.id);
    const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 20 * 60_000 });
    if (done.status !== 7) {
      console.log(`# journey 2 processing: ${JSON.stringify(await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/processing/`))}`);
      console.log(`# journey 2 processing log (mapping):\n${await failedRunLog(system, done.id, done.project_id)}`);
    }
    assert.equal(done.status, 7);
    timings.colmapProcessing = (Date.now() - started) / 1000;
    const cameras = await client.cameras(inspection.id);
    // The annotation around a reconstructed point of the third photo (the sparse cloud holds a few
    // thousand points: a rectangle drawn anywhere could see none), the one nearest its middle.
    const target = await pointNearPhotoMiddle(client, inspection.id, cameras[2].filename);
    const annotation = await client.expect(201, 'POST', '/v1/annotations/?coords_3d=true', {
      type: 'spalling',
      inspection: inspection.id,
      photo_id: cameras[2].photo_id,
      data: { coords_2d: [[target.x - 0.01, target.y - 0.01], [target.x + 0.01, target.y - 0.01], [target.x + 0.01, target.y + 0.01], [target.x - 0.01, target.y + 0.01]] },
    });
    assert.ok(annotation.coords_3d, 'the annotation has a 3D position');

    w = await openWatchedPage(browser, { folder: path.join(SCREENSHOTS, 'journey-2') });
    const { page } = w;
    const viewStarted = Date.now();
    await signIn(page, system.urls.inspection, account, `#/inspections/${inspection.id}?tab=3d`);
    const canvas = page.getByLabel('Point cloud in 3D');
    await page.locator('canvas[data-points-loaded]:not([data-points-loaded="0"])').waitFor({ timeout: 60_000 });
    const marker = page.getByRole('button', { name: /Annotation #1 spalling/ });
    await marker.waitFor();
    await page.waitForTimeout(500);
    timings.open3d = (Date.now() - viewStarted) / 1000;
    await w.screenshot('3d-view');
    assert.ok(Number(await canvas.getAttribute('data-points-loaded')) > 100, 'points loaded');
    // The canvas shows points: a share of its pixels differ from the background colour.
    const drawn = await countCanvasPixels(canvas, [0x1b, 0x24, 0x30], 30, 'different');
    assert.ok(drawn > 200, `pixels that differ from the background: ${drawn}`);

    // Measure: a point picked on the cloud where the annotation's marker stands (a cloud point).
    const anchor = await marker.evaluate((element) => ({ left: parseFloat((element as HTMLElement).style.left), top: parseFloat((element as HTMLElement).style.top) }));
    const box = (await canvas.boundingBox())!;
    await page.getByLabel('Measure').selectOption('Point');
    await page.mouse.click(box.x + anchor.left, box.y + anchor.top);
    await page.getByLabel('Name').fill('Spalling position');
    await page.getByRole('button', { name: 'Save measurement' }).click();
    await page.getByText('1 saved').waitFor();
    const measured = (await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/measurements/`)).results;
    assert.equal(measured.length, 1);
    assert.equal(measured[0].geometry.type, 'Point');
    // The pick is the first surface under the cursor as the 3D view sees it; the annotation's point
    // was found from its photo's viewpoint, and on a real (run-to-run different) reconstruction a
    // nearer surface of the view can stand in front of it: CI once picked one 3.4 m away. So here
    // the measured point is only held near the marker (a wrong offset or axis lands hundreds of
    // metres off); that a pick lands exactly on the surface under the cursor is checked on a
    // synthetic scene in web-3d-mesh.test.ts. 15 m: a facade point in front of the marker along a
    // street can stand well beyond the 3.4 m seen once, and the mistakes this catches land hundreds
    // of metres off. The distance is printed, to see how far picks land.
    const [mx, my, mz] = measured[0].geometry.coordinates;
    const offset = Math.hypot(mx - annotation.coords_3d.x, my - annotation.coords_3d.y, mz - annotation.coords_3d.z);
    console.log(`# journey 2: the point measured at the marker stands ${offset.toFixed(2)} m from the annotation's 3D position`);
    assert.ok(offset < 15, `picked ${measured[0].geometry.coordinates} near ${JSON.stringify(annotation.coords_3d)}`);
    await page.getByRole('tab', { name: 'Measurements' }).click();
    await page.getByRole('cell', { name: 'Spalling position', exact: true }).waitFor();
    await w.screenshot('measurements');

    // Back in 3D, the marker opens its photo at the annotation.
    await page.getByRole('tab', { name: '3D' }).click();
    await marker.click();
    await page.waitForURL(new RegExp(`photo=${annotation.photo_id}&annotation=${annotation.id}`));
    await page.getByTestId('photo-image').waitFor();
    await page.locator(`rect[data-annotation-id="${annotation.id}"].selected`).waitFor();
    await w.screenshot('photo-at-annotation');
    timings.journey2 = (Date.now() - started) / 1000;
    assert.deepEqual(w.problems, [], 'no errors in the browser console');
  });
});

/** One finger put down at the first point, moved through the others, lifted: the browser's own touch events. */
async function fingerDrag(page: Page, points: { x: number; y: number }[]): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  const send = (type: 'touchStart' | 'touchMove' | 'touchEnd', at?: { x: number; y: number }) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: at ? [{ x: at.x, y: at.y, id: 0 }] : [] });
  await send('touchStart', points[0]);
  for (const point of points.slice(1)) await send('touchMove', point);
  await send('touchEnd');
  await cdp.detach();
}

/**
 * The photo fraction (x, y) where the reconstructed point nearest the photo's middle projects: of
 * the points 1-60 m in front, the one whose projection is nearest (0.5, 0.5), among those that no
 * nearer point hides (none within 15 px of it in the photo is more than 0.5 m in front of it).
 */
async function pointNearPhotoMiddle(client: TestAccount['client'], inspectionId: number, filename: string): Promise<{ x: number; y: number }> {
  const outputs = new Map<string, string>((await client.expect(200, 'GET', `/v1/inspections/${inspectionId}/outputs/`)).map((o: { output_type: string; url: string }) => [o.output_type, o.url]));
  const calibrated = (await (await fetch(outputs.get('calibrated_camera_parameters_json')!)).json()) as { cameras: ({ key: string } & Parameters<typeof cameraFromCalibrated>[0])[] };
  const las = readLas(Buffer.from(await (await fetch(outputs.get('point_cloud')!)).arrayBuffer()));
  const entry = calibrated.cameras.find((c) => path.posix.basename(c.key) === filename);
  const camera = entry && cameraFromCalibrated(entry);
  assert.ok(camera, `${filename} is calibrated`);
  const seen: { u: number; v: number; depth: number }[] = [];
  for (let i = 0; i < las.count; i++) {
    const p = projectPoint(camera, [las.positions[3 * i], las.positions[3 * i + 1], las.positions[3 * i + 2]]);
    if (p.depth > 1 && p.depth < 60 && insideImage(camera, p.u, p.v)) seen.push(p);
  }
  const unhidden = seen.filter((p) => !seen.some((q) => q.depth < p.depth - 0.5 && Math.hypot(q.u - p.u, q.v - p.v) < 15));
  const middle = (p: { u: number; v: number }) => Math.hypot(p.u / camera.width - 0.5, p.v / camera.height - 0.5);
  const best = unhidden.sort((a, b) => middle(a) - middle(b))[0];
  assert.ok(best, `a reconstructed point in ${filename}`);
  return { x: best.u / camera.width, y: best.v / camera.height };
}

/** The COLMAP log a failed run leaves in the store (colmap-engine.ts keeps it), its mapping lines only. */
async function failedRunLog(system: TestSystem, inspectionId: number, projectId: number): Promise<string> {
  const project = await (await system.inspection.cloudFor(inspectionId)).getProject(projectId);
  const bucket = project.bucket_name;
  const listed = await system.store.listObjects(bucket, { prefix: `results/${project.uuid}/` });
  const key = listed.objects.map((o) => o.key).find((k) => k.endsWith('processing_log.txt'));
  if (!key) return '(no processing log)';
  const chunks: Buffer[] = [];
  for await (const chunk of (await system.store.getObject(bucket, key)).body) chunks.push(chunk as Buffer);
  const lines = Buffer.concat(chunks).toString('utf8').split('\n');
  return lines.filter((l) => /mapper|models:|initial|Registering|camera groups|image\(s\)|failed|pair/i.test(l)).slice(-80).join('\n');
}
