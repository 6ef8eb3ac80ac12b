/// <reference lib="dom" />
// Names users store are shown by the web console as text, never as markup (issue 27, finding 4).
// An asset name, an inspection name, an annotation, a measurement and a photo's file name (its
// uploaded S3 key) carry `<style>` with an `@font-face` beacon, a page-wide `body::before` notice and
// `<img src=… onerror>`. Every page where they appear is visited in Chromium (the map's tooltips
// opened) and must: fetch no beacon, hold no element of the payload, keep its computed styles, show
// each name as written, and raise no Content-Security-Policy violation, under a CSP whose styles
// are 'self' only and whose fonts are 'self' and data:. Screenshots of the assets page and the map
// at phone, tablet and desktop sizes go to the folder printed at the start.
// Run once (on PGlite), as the journeys: this tests the console, not the database.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { browserTestSkipReason, launchChromium, openWatchedPage, type WatchedPage, signIn } from './helpers/browser.ts';
import { assertNoServerErrors, demoImages } from './helpers/inspection-fixtures.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';

const SCREENSHOTS = process.env.WEB_SCREENSHOTS_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oi-injection-screens-'));

// The beacon: fonts from a foreign host (caught by page.route, never on the network) and images
// from the page's own origin (relative `src`), both with "beacon" in their address.
const BEACON_HOST = 'evil.example';
const NOTICE = 'Session expired - call 555';
const ASSET_NAME = `Tower<style>@font-face{font-family:x;src:url(https://${BEACON_HOST}/beacon-asset)}body::before{content:"${NOTICE}";font-family:x}</style><img src=beacon-asset-img onerror=alert(1)>`;
const INSPECTION_NAME = `Flight<style>body::after{content:"${NOTICE}"}</style><img src=beacon-inspection-img onerror=alert(2)>`;
// A file name is the last part of a key: no '/', so the font's address is written with CSS escapes
// and the <style> is left open (it runs to the end of the markup).
const PHOTO_NAME = `Cam<img src=beacon-photo-img onerror=alert(3)><style>@font-face{font-family:y;src:url("https:\\2f\\2f ${BEACON_HOST}\\2f beacon-photo")}body::after{content:"${NOTICE}";font-family:y}.jpg`;
const ANNOTATION_NAME = `Crack<img src=beacon-annotation-img onerror=alert(4)>`;
const ANNOTATION_TEXT = `<style>body::before{content:"${NOTICE}"}</style><b>bold?</b>`;
const MEASUREMENT_NAME = `Height<style>body::before{content:"${NOTICE}"}</style><img src=beacon-measurement-img onerror=alert(5)>`;

const VIEWPORTS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'tablet', width: 820, height: 1180 },
  { name: 'desktop', width: 1440, height: 900 },
];

function skipReason(): string | undefined {
  return browserTestSkipReason();
}

/** What a page did that the payload could have made it do: beacon requests, CSP violations. */
interface Watch {
  beacons: string[];
  violations: string[];
}

async function watchPage(page: Page): Promise<Watch> {
  const watch: Watch = { beacons: [], violations: [] };
  const context = page.context();
  context.on('request', (request) => {
    if (/beacon/i.test(request.url())) watch.beacons.push(`${request.resourceType()} ${request.url()}`);
  });
  // Nothing leaves the machine: the foreign host is answered here (and counted above).
  await context.route(`**://${BEACON_HOST}/**`, (route) => route.fulfill({ status: 204, body: '' }));
  // Every violation of the page's CSP, reported by the page itself from its first script on.
  await context.exposeFunction('reportCspViolation', (text: string) => watch.violations.push(text));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { reportCspViolation(text: string): void }).reportCspViolation(`${event.effectiveDirective} blocked ${event.blockedURI || '(inline)'} in ${event.sourceFile || document.location.href}:${event.lineNumber}`);
    });
  });
  return watch;
}

/** Opens every Leaflet tooltip of the page's map (a mouseover on each marker) and answers their texts. */
async function openTooltips(page: Page): Promise<string[]> {
  const markers = page.locator('.leaflet-interactive');
  await markers.first().waitFor();
  const count = await markers.count();
  for (let i = 0; i < count; i++) await markers.nth(i).dispatchEvent('mouseover');
  await page.locator('.leaflet-tooltip').nth(count - 1).waitFor({ state: 'attached' });
  return page.locator('.leaflet-tooltip').evaluateAll((tips) => tips.map((tip) => tip.textContent ?? ''));
}

/** Opens the tooltip of the map's marker labelled `label` alone, as a user's pointer would. */
async function showTooltip(page: Page, label: string): Promise<void> {
  const markers = page.locator('.leaflet-interactive');
  for (let i = 0; i < (await markers.count()); i++) {
    await markers.nth(i).dispatchEvent('mouseover');
    if ((await page.locator('.leaflet-tooltip').textContent()) === label) return;
    await markers.nth(i).dispatchEvent('mouseout');
    // Leaflet fades a closed tooltip out and removes it 200 ms later: wait, so one tooltip is open.
    await page.locator('.leaflet-tooltip').waitFor({ state: 'detached' });
  }
  assert.fail(`no marker labelled ${label}`);
}

/** The page as the payload would change it: its elements and its page-wide notices. */
async function payloadEffects(page: Page): Promise<{ styles: number; images: string[]; before: string; after: string }> {
  return page.evaluate(() => ({
    styles: document.querySelectorAll('style').length,
    images: Array.from(document.querySelectorAll('img')).filter((img) => img.hasAttribute('onerror') || /beacon/.test(img.src)).map((img) => img.outerHTML),
    before: getComputedStyle(document.body, '::before').content,
    after: getComputedStyle(document.body, '::after').content,
  }));
}

async function assertUntouched(page: Page, watch: Watch, where: string): Promise<void> {
  // Give a fetched font or image time to be asked for: they are requested as soon as styles apply.
  await page.waitForTimeout(300);
  assert.deepEqual(await payloadEffects(page), { styles: 0, images: [], before: 'none', after: 'none' }, `${where}: no element of the payload, page styles unchanged`);
  assert.deepEqual(watch.beacons, [], `${where}: no beacon requested`);
  assert.deepEqual(watch.violations, [], `${where}: no Content-Security-Policy violation`);
}

describe('web console: stored names are text', { skip: skipReason() }, () => {
  let system: TestSystem;
  let account: TestAccount;
  let browser: Browser;
  let w: WatchedPage | undefined;
  let inspectionId: number;
  let photoId: number;
  let annotationId: number;

  before(async () => {
    console.log(`# screenshots: ${SCREENSHOTS}`);
    await ensureConsoleBuilt({ quiet: true });
    system = await startTestSystem();
    account = await system.newAccount();
    const client = account.client;
    // The hostile names stored through the API, as any client could.
    const asset = await client.createAsset({ name: ASSET_NAME, type: 1, latitude: '46.51830000', longitude: '6.56190000' } as never);
    const inspection = await client.createInspection({ asset: asset.id, name: INSPECTION_NAME });
    inspectionId = inspection.id;
    const [first, ...others] = await demoImages();
    const keys = await client.upload(await client.storageCredentials(inspection.id), [{ name: PHOTO_NAME, body: first.body }, ...others]);
    await client.register(inspection.id, keys);
    await client.process(inspection.id);
    assert.equal((await client.waitUntilSettled(inspection.id, { timeoutMs: 90_000 })).status, 7);
    const cameras = await client.cameras(inspection.id);
    const camera = cameras.find((c) => c.filename === PHOTO_NAME);
    assert.ok(camera, `the photo keeps its name as its camera file name: ${JSON.stringify(cameras.map((c) => c.filename))}`);
    photoId = camera.photo_id;
    const annotation = await client.expect(201, 'POST', '/v1/annotations/', {
      type: 'Corrosion',
      name: ANNOTATION_NAME,
      description: ANNOTATION_TEXT,
      inspection: inspection.id,
      photo_id: photoId,
      data: { coords_2d: [[0.2, 0.2], [0.6, 0.2], [0.6, 0.6], [0.2, 0.6]] },
    });
    annotationId = annotation.id;
    await client.expect(201, 'POST', `/v1/inspections/${inspection.id}/measurements/`, {
      annotations: [{ properties: { name: MEASUREMENT_NAME }, tags: [], geometry: { type: 'Point', coordinates: [1, 2, 3] } }],
    });
    browser = await launchChromium();
  });
  afterEach(async (t) => {
    if (w && (t as { passed?: boolean }).passed === false) await w.screenshot('failure').catch(() => undefined);
    if (w?.problems.length) console.log(`# browser console: ${JSON.stringify(w.problems)}`);
  });
  after(async () => {
    await browser?.close();
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  it('serves the console under a CSP with no inline styles and fonts from itself only', async () => {
    const csp = (await fetch(`${system.urls.inspection}/`)).headers.get('content-security-policy') ?? '';
    const directive = (name: string) => new RegExp(`(?:^|;)\\s*${name} ([^;]*)`).exec(csp)?.[1].trim();
    assert.equal(directive('style-src'), "'self'", csp);
    assert.equal(directive('font-src'), "'self' data:", csp);
    assert.equal(directive('script-src'), "'self'", csp);
  });

  it('shows every stored name as text on the assets page, the asset, the map, photos, 3D, measurements, outputs', async () => {
    w = await openWatchedPage(browser, { folder: path.join(SCREENSHOTS, 'pages') });
    const { page } = w;
    const watch = await watchPage(page);
    const base = system.urls.inspection;

    // Assets: the list and the map's tooltip.
    await signIn(page, base, account, '#/assets');
    await page.getByRole('link', { name: ASSET_NAME, exact: true }).waitFor();
    await page.getByRole('region', { name: 'Assets of this page on a map' }).waitFor();
    assert.deepEqual(await openTooltips(page), [ASSET_NAME], 'the tooltip shows the name as written');
    await w.screenshot('assets');
    await assertUntouched(page, watch, 'assets page');

    // The asset's own page: its name and its inspection's.
    await page.getByRole('link', { name: ASSET_NAME, exact: true }).click();
    await page.getByRole('heading', { name: ASSET_NAME, exact: true }).waitFor();
    await page.getByRole('link', { name: INSPECTION_NAME, exact: true }).waitFor();
    await assertUntouched(page, watch, 'asset page');

    // The workspace's map: every camera's file name and the asset, in tooltips.
    await page.goto(`${base}/#/inspections/${inspectionId}?tab=map`);
    await page.getByRole('heading', { name: INSPECTION_NAME, exact: true }).waitFor();
    await page.getByRole('region', { name: 'Cameras and asset on a map' }).waitFor();
    const cameras = await account.client.cameras(inspectionId);
    const expected = [...cameras.map((c) => c.filename as string), `Asset: ${ASSET_NAME}`].sort();
    assert.deepEqual((await openTooltips(page)).sort(), expected);
    await w.screenshot('map');
    await assertUntouched(page, watch, 'map tab');

    // Photos: the file name in the filmstrip and over the photo, the annotation's name and text.
    await page.goto(`${base}/#/inspections/${inspectionId}?tab=photos&photo=${photoId}&annotation=${annotationId}`);
    await page.getByTestId('photo-image').waitFor();
    await page.getByText(PHOTO_NAME, { exact: true }).first().waitFor();
    await page.getByText(ANNOTATION_NAME, { exact: true }).waitFor();
    await page.getByText(ANNOTATION_TEXT, { exact: true }).waitFor();
    await w.screenshot('photos');
    await assertUntouched(page, watch, 'photos tab');

    // 3D (no point cloud with the exif engine: the tab says so), measurements, outputs, processing.
    await page.getByRole('tab', { name: '3D' }).click();
    await page.getByText('No point cloud for this inspection').waitFor();
    await assertUntouched(page, watch, '3D tab');
    await page.getByRole('tab', { name: 'Measurements' }).click();
    await page.getByRole('cell', { name: MEASUREMENT_NAME, exact: true }).waitFor();
    await assertUntouched(page, watch, 'measurements tab');
    await page.getByRole('tab', { name: 'Outputs & report' }).click();
    await page.getByRole('heading', { name: 'Report' }).waitFor();
    await assertUntouched(page, watch, 'outputs tab');
    await page.goto(`${base}/#/inspections/${inspectionId}/processing`);
    await page.getByTestId('inspection-status').waitFor();
    await assertUntouched(page, watch, 'processing page');
    await page.goto(`${base}/#/allowance`);
    await page.getByRole('heading', { name: 'Allowance' }).waitFor();
    await assertUntouched(page, watch, 'allowance page');

    // The API documentation is served under the same policy and must still work.
    await page.goto(`${base}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
    await assertUntouched(page, watch, 'API docs');
    assert.deepEqual(w.problems, [], 'no errors in the browser console');
  });

  for (const viewport of VIEWPORTS) {
    it(`looks right with the hostile names at ${viewport.name} size (${viewport.width}×${viewport.height})`, async () => {
      w = await openWatchedPage(browser, { viewport, folder: path.join(SCREENSHOTS, viewport.name) });
      const { page } = w;
      const watch = await watchPage(page);
      await signIn(page, system.urls.inspection, account, '#/assets');
      await page.getByRole('region', { name: 'Assets of this page on a map' }).waitFor();
      await openTooltips(page);
      await w.screenshot('assets');
      await page.getByRole('region', { name: 'Assets of this page on a map' }).scrollIntoViewIfNeeded();
      await w.screenshot('assets-map');
      await assertUntouched(page, watch, `assets page, ${viewport.name}`);
      await page.goto(`${system.urls.inspection}/#/inspections/${inspectionId}?tab=map`);
      const map = page.getByRole('region', { name: 'Cameras and asset on a map' });
      await map.waitFor();
      await openTooltips(page);
      await assertUntouched(page, watch, `map tab, ${viewport.name}`);
      await page.reload();
      await map.waitFor();
      await page.locator('.leaflet-interactive').first().waitFor();
      await map.scrollIntoViewIfNeeded();
      await showTooltip(page, PHOTO_NAME);
      await w.screenshot('map');
      await assertUntouched(page, watch, `map tab, ${viewport.name}`);
      assert.deepEqual(w.problems, [], 'no errors in the browser console');
    });
  }
});
