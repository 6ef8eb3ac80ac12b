// The web console end to end, in Debian's Chromium driven by playwright-core, against a real
// server: what an inspector does, click by click. Journey 1 (exif engine): sign in → create an
// asset → create an inspection → drop 6 lund photos → 100 % → process → status 7 → open a photo →
// draw a rectangle → the annotation is in the API with the right coords_2d → report → the PDF
// downloads. Journey 2 (colmap engine, as the `vortex` backend): the 3D view shows the point cloud
// and an annotation's marker. Screenshots of every page go to the folder printed at the start.
// Run once (on PGlite), not per database: the journeys test the console, not the database.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { chromiumMissingReason, launchChromium, openWatchedPage, type WatchedPage } from './helpers/browser.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';

const LUND = path.resolve(import.meta.dirname, '../../shared/datasets/lund/images');
const SCREENSHOTS = process.env.WEB_SCREENSHOTS_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oi-console-screens-'));

function skipReason(): string | undefined {
  if (process.env.DATABASE_URL) return 'the browser journeys run once, on the embedded database (CI runs them in its PGlite pass)';
  const chromium = chromiumMissingReason();
  if (chromium) {
    if (process.env.CI === 'true') throw new Error(`${chromium}; CI must install it`);
    return chromium;
  }
  if (!fs.existsSync(LUND)) return `${LUND} not found`;
  return undefined;
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
    system = await startTestSystem({ engines: ['colmap'], processingBackendEngines: { vortex: 'colmap' } });
    account = await system.newAccount({ projects: 5 });
    browser = await launchChromium();
  });
  // On a failure, the page as it was: the screenshot folder then shows where the journey stopped.
  afterEach(async (t) => {
    if (w && t.passed === false) await w.screenshot('failure').catch(() => undefined);
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
    await page.getByText('Processing spends 1 Projects unit').waitFor();
    await page.getByRole('button', { name: 'Process', exact: true }).click();
    await page.waitForURL(/#\/inspections\/\d+\/processing/);
    await w.screenshot('processing');
    const processStarted = Date.now();
    await page.getByTestId('inspection-status').filter({ hasText: 'Processing completed' }).waitFor({ timeout: 120_000 });
    timings.processing = (Date.now() - processStarted) / 1000;
    await w.screenshot('processing-done');
    assert.equal((await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/`)).status, 7);

    // Open a photo, draw a rectangle, save the annotation
    await page.getByRole('link', { name: 'Open the workspace' }).click();
    await page.getByRole('tab', { name: 'Photos' }).waitFor();
    const image = page.getByTestId('photo-image');
    await image.waitFor();
    await page.waitForFunction(() => (document.querySelector('[data-testid=photo-image]') as HTMLImageElement | null)?.complete === true);
    await w.screenshot('photos');
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
    await page.getByRole('button', { name: 'Generate report' }).click();
    const pdfLink = page.getByRole('button', { name: 'Download the report (PDF)' });
    await pdfLink.waitFor({ timeout: 60_000 });
    await w.screenshot('report-ready');
    const [download] = await Promise.all([page.waitForEvent('download'), pdfLink.click()]);
    const pdfFile = path.join(w.folder, 'report.pdf');
    await download.saveAs(pdfFile);
    assert.equal(fs.readFileSync(pdfFile).subarray(0, 5).toString(), '%PDF-');
    timings.journey1 = (Date.now() - started) / 1000;

    assert.deepEqual(w.problems, [], 'no errors in the browser console');
  });
});
