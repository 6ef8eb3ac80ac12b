// The web console end to end, in Debian's Chromium driven by playwright-core, against a real
// server: what an inspector does, click by click. Journey 1 (exif engine): sign in → create an
// asset → create an inspection → drop 6 lund photos → 100 % → process → status 7 → open a photo →
// draw a rectangle → the annotation is in the API with the right coords_2d → report → the PDF
// downloads. Journey 2 (colmap engine, as the `vortex` backend): the 3D view shows the point cloud
// and an annotation's marker. Screenshots of every page go to the folder printed at the start.
// Run once (on PGlite), not per database: the journeys test the console, not the database.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { chromiumMissingReason, launchChromium, openWatchedPage, type WatchedPage } from './helpers/browser.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';

const LUND = path.resolve(import.meta.dirname, '../../shared/datasets/lund');
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

    assert.deepEqual(w.problems, [], 'no errors in the browser console');
  });
});
