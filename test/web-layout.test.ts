/// <reference lib="dom" />
// The console on a phone, a tablet and a desktop (issue 29 §1 and §5). One inspection is seeded
// through the API (3 lund photos processed by the exif engine, which takes seconds; a small fixture
// point cloud as its output, so the 3D tab draws without a reconstruction; an annotation and a
// measurement; a share link; a second inspection without photos, whose upload page shows the drop
// zone), then every page is visited at 390x844, 768x1024, 1024x768 and 1280x800: sign-in, assets,
// asset, upload (closed, and open), processing, the workspace's tabs, the allowance, and the share
// link's read-only viewer (photos, outputs) in a context without a session. On each: no sideways
// scrolling (the document no wider than the viewport) and axe-core finds no serious or critical
// violation (the counts per page and size are printed). With SCREENSHOT_DIR set, a screenshot of
// each page at each size goes there. Then, at 390x844 with touch: a rectangle drawn with a finger
// on a photo is saved as an annotation.
// The tours run two at a time (concurrency 2: about 45 s rather than 65 s on two cores); none of
// them depends on what another changes (a second annotation, photos added to the second inspection).
// Run once (test/test-passes.ts; CI's --split runs it in the PostgreSQL pass): layout and accessibility do not depend on
// the database kind.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { browserTestSkipReason, launchChromium } from './helpers/browser.ts';
import { axeBlocking, axeSummary, axeViolations } from './helpers/axe.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { createPointCloud } from '../src/shared/pointcloud/point-cloud.ts';
import { writePly } from '../src/shared/pointcloud/ply.ts';
import { resultTypeOf } from '../src/cloud/processing/result-types.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';

const LUND = path.resolve(import.meta.dirname, '../../shared/datasets/lund/images');
const LUND_PHOTOS = fs.existsSync(LUND) ? fs.readdirSync(LUND).filter((f) => /\.jpe?g$/i.test(f)).sort().map((f) => path.join(LUND, f)) : [];
const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR;
const SIZES = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'tablet', width: 768, height: 1024 },
  { name: 'tablet-landscape', width: 1024, height: 768 },
  { name: 'desktop', width: 1280, height: 800 },
];

function skipReason(): string | undefined {
  return browserTestSkipReason(() => (fs.existsSync(LUND) ? undefined : `${LUND} not found`));
}

/** A 10 m square of 21x21 grey points around the inspection's cameras' area (UTM 33N near Lund). */
function fixtureCloud(): Buffer {
  const n = 21;
  const cloud = createPointCloud(n * n, true);
  const positions = new Float64Array(n * n * 3);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) positions.set([374_000 + i * 0.5, 6_176_000 + j * 0.5, 10 + ((i + j) % 3)], 3 * (i * n + j));
  return writePly({ ...cloud, positions, colors: new Uint8Array(n * n * 3).fill(150) });
}

describe('web console layout at phone, tablet and desktop sizes; accessibility; touch', { skip: skipReason(), concurrency: 2 }, () => {
  let system: TestSystem;
  let account: TestAccount;
  let browser: Browser;
  let assetId: number;
  let inspectionId: number;
  let photoId: number;
  let emptyInspectionId: number;
  let sharePath: string;
  const problems: string[] = [];
  const counts: string[] = [];

  before(async () => {
    await ensureConsoleBuilt({ quiet: true });
    system = await startTestSystem();
    account = await system.newAccount({ projects: 2 });
    browser = await launchChromium();
    const client = account.client;
    const asset = await client.createAsset({ name: 'Lund building', type: 1, latitude: '55.70584539', longitude: '13.19110000' } as never);
    const inspection = await client.createInspection({ asset: asset.id, name: 'Facade survey' });
    const keys = await client.upload(await client.storageCredentials(inspection.id), LUND_PHOTOS.slice(0, 3).map((file) => ({ name: path.basename(file), body: fs.readFileSync(file) })));
    await client.register(inspection.id, keys);
    await client.process(inspection.id);
    const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 90_000 });
    assert.equal(done.status, 7);
    const project = await (await system.inspection.cloudFor(done.id)).getProject(done.project_id);
    const key = `results/${project.uuid}/fixture/point_cloud_ply.ply`;
    await system.store.putObject(project.bucket_name, key, fixtureCloud());
    await (system.database.db as Kysely<any>).insertInto('cloud.project_outputs').values({ project_id: done.project_id, output_type: 'point_cloud_ply', result_type: resultTypeOf('point_cloud_ply'), availability: 'done', s3_key: key, note: null, raster: null }).execute();
    photoId = (await client.cameras(inspection.id))[0].photo_id;
    await client.expect(201, 'POST', '/v1/annotations/', { type: 'crack', inspection: inspection.id, photo_id: photoId, severity_level: 3, data: { coords_2d: [[0.3, 0.3], [0.5, 0.3], [0.5, 0.5], [0.3, 0.5]] } });
    await client.expect(201, 'POST', `/v1/inspections/${inspection.id}/measurements/`, { annotations: [{ geometry: { type: 'Point', coordinates: [374_005, 6_176_005, 11] }, properties: { name: 'Corner of the roof' } }] });
    sharePath = new URL((await client.expect(201, 'POST', `/v1/inspections/${inspection.id}/share_tokens/`, { label: 'layout' })).url).pathname;
    emptyInspectionId = (await client.createInspection({ asset: asset.id, name: 'Second flight' })).id;
    assetId = asset.id;
    inspectionId = inspection.id;
    if (SCREENSHOT_DIR) fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  });
  afterEach(() => {
    if (problems.length) console.log(`# browser problems: ${JSON.stringify(problems)}`);
  });
  after(async () => {
    console.log(`# axe-core violations per page and size:\n${counts.sort().map((line) => `#   ${line}`).join('\n')}`);
    await browser?.close();
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  async function newPage(size: (typeof SIZES)[number], touch = false): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, hasTouch: touch, isMobile: touch });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (error) => problems.push(`${size.name}: page error: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${size.name}: answer ${response.status()}: ${response.url()}`);
    });
    return page;
  }

  async function signIn(page: Page, next: string, beforeSigningIn?: () => Promise<void>) {
    await page.goto(`${system.urls.inspection}/#/signin?next=${encodeURIComponent(next)}`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await beforeSigningIn?.();
    await page.getByLabel('Username').fill(account.username);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  /**
   * The page as it is: no wider than the viewport, no serious or critical axe violation; a
   * screenshot. What breaks is added to `failures` (the tour goes on, so one run shows every page).
   */
  async function check(page: Page, size: (typeof SIZES)[number], name: string, failures: string[]) {
    // Layout settles (fonts, lazy chunks) before measuring.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const width = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
    if (SCREENSHOT_DIR) await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${size.name}-${name}.png`), fullPage: true });
    const report = await axeViolations(page);
    counts.push(`${size.name} ${name}: ${axeSummary(report)}`);
    if (width.scroll > width.inner) failures.push(`${name}: the page is ${width.scroll} px wide`);
    const jumps = await headingJumps(page);
    if (jumps.length) failures.push(`${name}: headings jump: ${jumps.join(', ')}`);
    for (const v of axeBlocking(report)) failures.push(`${name}: axe ${v.impact} ${v.id} (${v.help}) at ${v.where.join(' | ')}`);
  }

  for (const size of SIZES) {
    it(`every page at ${size.width}x${size.height}: no sideways scrolling, no serious or critical axe violation`, async () => {
      const page = await newPage(size);
      const failures: string[] = [];
      const base = system.urls.inspection;
      await signIn(page, '#/assets', async () => check(page, size, 'sign-in', failures));
      await page.getByRole('heading', { name: 'Assets', level: 1 }).waitFor();
      await page.locator('.leaflet-interactive').first().waitFor();
      await check(page, size, 'assets', failures);
      failures.push(...(await unnamedFocusableInMap(page)).map((what) => `assets: focusable without a name: ${what}`));

      await page.getByRole('link', { name: 'Lund building' }).click();
      await page.getByRole('heading', { name: 'Lund building', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Facade survey' }).waitFor();
      assert.match(page.url(), new RegExp(`#/assets/${assetId}$`));
      await check(page, size, 'asset', failures);

      await page.goto(`${base}/#/inspections/${inspectionId}/upload`);
      await page.getByRole('heading', { name: 'Upload photos', level: 1 }).waitFor();
      await check(page, size, 'upload', failures);
      await page.goto(`${base}/#/inspections/${emptyInspectionId}/upload`);
      await page.getByLabel('Choose photos').waitFor();
      await check(page, size, 'upload-open', failures);
      if (size.name === 'phone') {
        // Once, on the phone: two photos sent, the list of files and the Process section shown.
        await page.getByLabel('Choose photos').setInputFiles(LUND_PHOTOS.slice(3, 5));
        await page.getByTestId('registered-count').filter({ hasText: '2 registered' }).waitFor({ timeout: 60_000 });
        await check(page, size, 'upload-sent', failures);
      }

      await page.goto(`${base}/#/inspections/${inspectionId}/processing`);
      await page.getByTestId('processing-summary').getByText('Photos placed').waitFor();
      await check(page, size, 'processing', failures);

      await page.getByRole('link', { name: 'Open the workspace' }).click();
      await page.getByRole('tab', { name: 'Photos', selected: true }).waitFor();
      await page.waitForFunction(() => (document.querySelector('[data-testid=photo-image]') as HTMLImageElement | null)?.complete === true);
      await page.getByRole('button', { name: /#1 crack/ }).waitFor();
      // The photo is shown, not collapsed: at least half the viewport wide
      const frame = (await page.getByTestId('photo-frame').boundingBox())!;
      assert.ok(frame.width >= size.width / 2 && frame.height >= 200, `photo frame ${frame.width}x${frame.height} at ${size.width}x${size.height}`);
      await check(page, size, 'workspace-photos', failures);

      await page.getByRole('tab', { name: 'Map' }).click();
      await page.locator('.leaflet-interactive').first().waitFor();
      await check(page, size, 'workspace-map', failures);
      failures.push(...(await unnamedFocusableInMap(page)).map((what) => `workspace-map: focusable without a name: ${what}`));

      await page.getByRole('tab', { name: '3D' }).click();
      await page.locator('canvas[data-points-loaded="441"]').waitFor({ timeout: 30_000 });
      await check(page, size, 'workspace-3d', failures);

      await page.getByRole('tab', { name: 'Measurements' }).click();
      await page.getByText('Corner of the roof').first().waitFor();
      await check(page, size, 'workspace-measurements', failures);

      await page.getByRole('tab', { name: 'Outputs & report' }).click();
      await page.getByRole('heading', { name: 'Report' }).waitFor();
      await check(page, size, 'workspace-outputs', failures);

      // Tabs added since this test was written (e.g. an inspection-wide annotation list): each once
      // it has finished loading.
      const known = ['Photos', 'Map', '3D', 'Measurements', 'Outputs & report'];
      for (const name of (await page.getByRole('tab').allInnerTexts()).map((t) => t.trim()).filter((t) => !known.includes(t))) {
        await page.getByRole('tab', { name, exact: true }).click();
        await page.getByRole('tab', { name, exact: true, selected: true }).waitFor();
        await page.waitForFunction(() => !document.querySelector('#workspace-panel .spinner'));
        await check(page, size, `workspace-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`, failures);
      }

      await page.getByRole('link', { name: 'Allowance' }).click();
      await page.getByRole('heading', { name: 'Allowance', level: 1 }).waitFor();
      await page.getByRole('cell', { name: 'spent' }).first().waitFor();
      await check(page, size, 'allowance', failures);
      await page.context().close();

      // The share link's viewer, in a context with no session (as its recipient opens it).
      const shared = await newPage(size);
      await shared.goto(`${base}${sharePath}`);
      await shared.getByRole('heading', { name: 'Facade survey', level: 1 }).waitFor();
      await shared.waitForFunction(() => (document.querySelector('[data-testid=photo-image]') as HTMLImageElement | null)?.complete === true);
      await check(shared, size, 'share-photos', failures);
      await shared.getByRole('tab', { name: 'Outputs & report' }).click();
      await shared.getByRole('heading', { name: 'Report' }).waitFor();
      await check(shared, size, 'share-outputs', failures);
      await shared.context().close();
      assert.deepEqual(failures, [], `at ${size.width}x${size.height}`);
    });
  }

  it('at 390x844 with touch: two fingers pinch the photo larger; a rectangle drawn with one finger is saved as an annotation', async () => {
    const size = SIZES[0];
    const page = await newPage(size, true);
    await signIn(page, `#/inspections/${inspectionId}?photo=${photoId}`);
    const image = page.getByTestId('photo-image');
    await page.waitForFunction(() => (document.querySelector('[data-testid=photo-image]') as HTMLImageElement | null)?.complete === true);
    await page.getByText('Pinch to zoom · drag to pan').waitFor();
    // Pinch: two fingers 60 px apart move to 180 px apart about the same middle: the photo is 3x larger.
    const zoomLevel = async () => Number((await page.getByLabel('Zoom level').innerText()).replace(/[^0-9]/g, ''));
    const fitted = await zoomLevel();
    const frame = (await page.getByTestId('photo-frame').boundingBox())!;
    const [cx, cy] = [frame.x + frame.width / 2, frame.y + frame.height / 2];
    await touches(page, [
      [{ x: cx - 30, y: cy }, { x: cx + 30, y: cy }],
      [{ x: cx - 60, y: cy }, { x: cx + 60, y: cy }],
      [{ x: cx - 90, y: cy }, { x: cx + 90, y: cy }],
    ]);
    // (The pointer moves render on the next frame: wait for the figure to change.)
    await page.getByLabel('Zoom level').filter({ hasNotText: `${fitted} %` }).waitFor();
    const pinched = await zoomLevel();
    assert.ok(Math.abs(pinched - 3 * fitted) <= 2, `zoom ${fitted} % pinched to ${pinched} %`);
    await page.getByRole('button', { name: 'Fit the photo' }).tap();
    // Fitted again: the figure before the pinch, within the pinch check's 2 %. One CI run waited
    // here in vain for "34 %"; the message says whether the tap was lost (the pinched figure
    // stays) or the fit came out a little different.
    await page
      .waitForFunction((f) => Math.abs(Number((document.querySelector('[aria-label="Zoom level"]')?.textContent ?? '').replace(/[^0-9]/g, '')) - f) <= 2, fitted, { timeout: 15_000 })
      .catch(async (err: Error) => {
        throw new Error(`Fit the photo did not bring the zoom back to ${fitted} % (pinched: ${pinched} %); it shows ${await zoomLevel()} %: ${err.message}`);
      });

    await page.getByRole('button', { name: 'Draw annotation' }).tap();
    const box = (await image.boundingBox())!;
    const at = (fx: number, fy: number) => ({ x: box.x + box.width * fx, y: box.y + box.height * fy });
    await touches(page, [[at(0.55, 0.6)], [at(0.65, 0.7)], [at(0.75, 0.8)]]);
    await page.getByLabel('Type').fill('corrosion');
    assert.deepEqual(await headingJumps(page), [], "the annotation form's heading follows the page's");
    await page.getByRole('button', { name: 'Save annotation' }).click();
    await page.getByRole('button', { name: /#2 corrosion/ }).waitFor().catch(async (err) => {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR ?? '/tmp', 'phone-touch-failure.png'), fullPage: true });
      throw err;
    });
    if (SCREENSHOT_DIR) await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'phone-touch-annotation.png'), fullPage: true });
    const saved = (await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/annotations/`)).find((a: { type: string }) => a.type === 'corrosion');
    assert.ok(saved, 'the annotation drawn by touch is saved');
    assert.equal(saved.photo_id, photoId);
    const pixel = 2 / Math.min(box.width, box.height);
    const expected = [[0.55, 0.6], [0.75, 0.6], [0.75, 0.8], [0.55, 0.8]];
    saved.data.coords_2d.forEach((point: number[], i: number) => {
      assert.ok(Math.abs(point[0] - expected[i][0]) <= pixel && Math.abs(point[1] - expected[i][1]) <= pixel, `coords_2d ${JSON.stringify(saved.data.coords_2d)} vs ${JSON.stringify(expected)}`);
    });
    assert.deepEqual(problems, [], 'no errors in the browser');
    await page.context().close();
  });
});

/** Headings that come more than one level below the previous one ("h1 → h3 New annotation"). */
async function headingJumps(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const jumps: string[] = [];
    let previous = 0;
    for (const heading of Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6'))) {
      const level = Number(heading.tagName[1]);
      if (level > previous + 1) jumps.push(`h${previous} → h${level} ${heading.textContent?.trim()}`);
      previous = level;
    }
    return jumps;
  });
}

/** The map's elements that Tab reaches but that have no name (issue 29 §5: markers were such). */
async function unnamedFocusableInMap(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement | SVGElement>('.leaflet-container *'))
      .filter((element) => element.tabIndex >= 0 && !element.getAttribute('aria-label') && !element.textContent?.trim() && !element.getAttribute('title'))
      .map((element) => `<${element.tagName.toLowerCase()} class="${element.getAttribute('class') ?? ''}">`),
  );
}

/**
 * Fingers put down at the first step's points, moved through the next steps, lifted: real touch
 * events (the browser's own, through the DevTools protocol), one finger per point of a step.
 */
async function touches(page: Page, steps: { x: number; y: number }[][]) {
  const cdp = await page.context().newCDPSession(page);
  const send = (type: 'touchStart' | 'touchMove' | 'touchEnd', points: { x: number; y: number }[]) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map((p, id) => ({ x: p.x, y: p.y, id })) });
  await send('touchStart', steps[0]);
  for (const step of steps.slice(1)) await send('touchMove', step);
  await send('touchEnd', []);
  await cdp.detach();
}
