/// <reference lib="dom" />
// A share link in the browser (issue 29 §3): signed in, make a link in the inspection's Sharing
// panel; open it in a fresh browser context (no session): the shared inspection's photo with its
// annotation, and no control that changes anything nor any sign-in prompt; revoke it in the panel;
// the link now shows the "no longer valid" page. A malformed link shows that page too, without a
// call. The inspection is seeded through the API (the quick `exif` processing, no reconstruction).
// Run once (on PGlite), as the journeys: this tests the console, not the database.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { browserTestSkipReason, launchChromium, openWatchedPage, type WatchedPage, signIn } from './helpers/browser.ts';
import { assertNoServerErrors, processedInspection } from './helpers/inspection-fixtures.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';

const SCREENSHOTS = process.env.WEB_SCREENSHOTS_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oi-share-screens-'));

const PHONE = { width: 390, height: 844 };

function scrollWidth(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth);
}

function skipReason(): string | undefined {
  return browserTestSkipReason();
}

describe('web console: share links', { skip: skipReason() }, () => {
  let system: TestSystem;
  let account: TestAccount;
  let browser: Browser;
  let inspectionId: number;
  let annotationId: number;
  const pages: WatchedPage[] = [];

  before(async () => {
    console.log(`# screenshots: ${SCREENSHOTS}`);
    await ensureConsoleBuilt({ quiet: true });
    system = await startTestSystem();
    account = await system.newAccount();
    const processed = await processedInspection(account, { name: 'Tower 12 survey', inspection_date: '2026-05-04T10:00:00Z' }, { name: 'Tower 12' });
    inspectionId = processed.inspection.id;
    const annotation = await account.client.expect(201, 'POST', '/v1/annotations/', {
      type: 'Corrosion',
      severity_level: 3,
      name: 'Flange rust',
      inspection: inspectionId,
      photo_id: processed.cameras[0].photo_id,
      data: { coords_2d: [[0.2, 0.2], [0.6, 0.2], [0.6, 0.6], [0.2, 0.6]] },
    });
    annotationId = annotation.id;
    await account.client.expect(201, 'POST', `/v1/inspections/${inspectionId}/measurements/`, {
      annotations: [{ properties: { name: 'Mast height' }, tags: [], geometry: { type: 'LineString', coordinates: [[0, 0, 0], [0, 0, 12]] } }],
    });
    browser = await launchChromium();
  });
  afterEach(async (t) => {
    if ((t as { passed?: boolean }).passed === false) for (const w of pages) await w.screenshot('failure').catch(() => undefined);
    for (const w of pages) if (w.problems.length) console.log(`# browser console: ${JSON.stringify(w.problems)}`);
  });
  after(async () => {
    await browser?.close();
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  it('makes a link in the Sharing panel; signed out, the link shows the inspection read-only; revoked, it is no longer valid', async () => {
    const base = system.urls.inspection;
    // Signed in: the outputs tab's Sharing panel.
    const owner = await openWatchedPage(browser, { folder: path.join(SCREENSHOTS, 'owner') });
    pages.push(owner);
    await signIn(owner.page, base, account, `#/inspections/${inspectionId}?tab=outputs`);
    const panel = owner.page.getByRole('region', { name: 'Sharing' });
    await panel.getByText('No links yet.').waitFor();
    await panel.getByLabel('Label').fill('for the client');
    await panel.getByLabel('Valid for').selectOption({ label: '7 days' });
    await panel.getByRole('button', { name: 'Make a link' }).click();
    const shown = panel.getByLabel(/New link \(for the client\), shown this once/);
    await shown.waitFor();
    const link = await shown.inputValue();
    assert.match(link, new RegExp(`^${base.replace(/[.]/g, '\\.')}/share/ist_[0-9a-f]{16}\\.[A-Za-z0-9_-]{43}$`), 'the link opens the viewer');
    const row = panel.getByRole('row').filter({ hasText: 'for the client' });
    await row.getByText('Active').waitFor();
    assert.match(await row.textContent() ?? '', new RegExp(`You \\(${account.username}\\)`), 'the creator is named');
    await panel.getByRole('table', { name: 'Share links' }).scrollIntoViewIfNeeded();
    await owner.screenshot('sharing-panel');
    // On a phone the panel fits the width (its table scrolls inside it).
    await owner.page.setViewportSize(PHONE);
    assert.ok((await scrollWidth(owner.page)) <= PHONE.width, 'the Sharing panel does not widen a phone page');
    await owner.screenshot('sharing-panel-phone');

    // A fresh context: no session, nothing stored. The viewer opens the inspection at its photo.
    const holder = await openWatchedPage(browser, { folder: path.join(SCREENSHOTS, 'holder') });
    pages.push(holder);
    const { page } = holder;
    await page.goto(link);
    await page.getByRole('heading', { name: 'Tower 12 survey', level: 1 }).waitFor();
    await page.getByText(/Shared with you, read-only/).waitFor();
    await page.getByTestId('photo-image').waitFor();
    await page.locator(`rect[data-annotation-id="${annotationId}"]`).waitFor();
    await page.getByRole('button', { name: '#1 Corrosion' }).click();
    await page.getByText('Flange rust').waitFor();
    await holder.screenshot('viewer-photo');
    // Nothing that changes anything, nothing that asks to sign in; the address keeps the token.
    for (const name of ['Draw annotation', 'Edit', 'Delete']) assert.equal(await page.getByRole('button', { name }).count(), 0, `no "${name}" button`);
    assert.equal(await page.getByText(/sign in/i).count(), 0, 'no sign-in prompt');
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'no session');
    assert.equal(new URL(page.url()).pathname, new URL(link).pathname);
    // The other tabs open without a call a share token may not make (the map asks no asset).
    await page.getByRole('tab', { name: 'Map' }).click();
    await page.getByRole('region', { name: 'Cameras and asset on a map' }).waitFor();
    await page.getByRole('tab', { name: '3D' }).click();
    await page.getByText('No point cloud for this inspection.').waitFor();
    assert.equal(await page.getByLabel('Measure').count(), 0, 'no measuring');
    await page.getByRole('tab', { name: 'Measurements' }).click();
    await page.getByRole('cell', { name: 'Mast height' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Delete Mast height' }).count(), 0, 'no deleting');
    // Outputs: downloads only, no report form, no inputs ZIP, no Sharing panel.
    await page.getByRole('tab', { name: 'Outputs & report' }).click();
    await page.getByRole('heading', { name: 'Report' }).waitFor();
    for (const name of ['Generate report', 'Prepare the photos ZIP', 'Make a link']) assert.equal(await page.getByRole('button', { name }).count(), 0, `no "${name}" button`);
    assert.equal(await page.getByRole('region', { name: 'Sharing' }).count(), 0);
    await holder.screenshot('viewer-outputs');
    assert.deepEqual(holder.problems, [], 'the viewer made no failed call (no asset, no write)');
    await page.getByRole('tab', { name: 'Photos' }).click();
    await page.getByTestId('photo-image').waitFor();
    await page.setViewportSize(PHONE);
    assert.ok((await scrollWidth(page)) <= PHONE.width, 'the viewer does not widen a phone page');
    await holder.screenshot('viewer-phone');

    // Revoked in the panel (confirmed): the link is no longer valid, on reload or at its next call.
    owner.page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Revoke for the client' }).click();
    await row.getByText(/^Revoked /).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'This link is no longer valid' }).waitFor();
    await page.getByText('It has expired or was revoked by the person who shared it.').waitFor();
    await holder.screenshot('viewer-revoked');

    // A malformed link: the same page, without asking the API.
    const malformed = await openWatchedPage(browser, { folder: path.join(SCREENSHOTS, 'malformed') });
    pages.push(malformed);
    await malformed.page.goto(`${base}/share/not-a-token`);
    await malformed.page.getByRole('heading', { name: 'This link is no longer valid' }).waitFor();
    await malformed.page.getByText(/not a complete share link/).waitFor();
    assert.deepEqual(malformed.problems, []);
  });
});
