/// <reference lib="dom" />
// Reviewing detected antennas in the console (issue 36 §3): an inspection of a generated tower site
// processed by the nodeodm engine on the fake NodeODM node (as test/inspection-inventory-detection
// does: the site's sampled surfaces as the dense cloud, the flight's true poses as ODM's cameras)
// with detect_antennas, so the inventory holds detected items. In Chromium:
// - the new-inspection form offers "Detect antennas" (this engine makes a point cloud);
// - the Annotations tab's inventory says how each item was found (the automatic detection);
// - an item opens its best photo with its outline drawn where the API projects it (selected), and
//   listed beside the photo with its geometry;
// - "Show its box in 3D" opens the 3D view with the node's cloud (its PLY copy,
//   nodeodm/point-cloud-ply.ts) and every detected item's box, the selected one drawn in the
//   selection colour and labelled; its label opens the item on its photo again;
// - the report's inventory table says the items were found by the detection, heights above the
//   tower's foot.
// TOWER_PHOTOS_DIR=<a tower-flight --small --seed 3 output>/images uses the rendered photos (for
// screenshots a person looks at; the poses are the same); without it, generated stand-ins.
// WEB_SCREENSHOTS_DIR keeps the screenshots. Runs once (on PGlite), as the other browser tests.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { browserTestSkipReason, countCanvasPixels, launchChromium, openWatchedPage, signIn, type WatchedPage } from './helpers/browser.ts';
import { assertNoServerErrors, waitFor } from './helpers/inspection-fixtures.ts';
import { axeBlocking, axeSummary, axeViolations } from './helpers/axe.ts';
import { requireTool } from './helpers/system-tools.ts';
import { startFakeNodeOdm, type FakeNodeOdm } from './helpers/fake-nodeodm.ts';
import { odmShots, scenePhotos, towerScene, type TowerScene } from './helpers/tower-scene.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';

const SCENE = { tower: { type: 'monopole', height_m: 30 }, antennas: { levels: 2, sectors_per_level: 3, panels_per_sector: 2, dishes: 1 } };
/** The selection colour of the 3D view's boxes (viewer3d/item-boxes.ts). */
const SELECTED_RGB = [0x3a, 0xd1, 0xff] as const;

describe('web console: reviewing detected antennas', { skip: browserTestSkipReason() }, () => {
  const screens = process.env.WEB_SCREENSHOTS_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oi-detected-'));
  let scene: TowerScene;
  let node: FakeNodeOdm;
  let system: TestSystem;
  let account: TestAccount;
  let browser: Browser;
  let watched: WatchedPage | undefined;
  let inspection: any;
  let items: any[];

  before(async () => {
    await ensureConsoleBuilt({ quiet: true });
    scene = towerScene({ seed: 3, scene: SCENE });
    const rendered = process.env.TOWER_PHOTOS_DIR;
    const photos = rendered ? scene.truth.cameras.map((c) => ({ name: c.file, body: fs.readFileSync(path.join(rendered, c.file)) })) : await scenePhotos(scene);
    node = await startFakeNodeOdm({ pollsToFinish: 1, results: (task) => ({ pointCloud: scene.cloud, shots: odmShots(scene, task.images), cameras: scene.odmCameras }) });
    system = await startTestSystem({ engine: 'nodeodm', nodeodmUrl: node.url, nodeodmPollSeconds: 0 });
    account = await system.newAccount({ projects: 5, towerInventory: 5 });
    const [latitude, longitude] = scene.truth.tower.base;
    const asset = await account.client.createAsset({ name: 'Monopole 30 m', type: 1, latitude: latitude.toFixed(8), longitude: longitude.toFixed(8) });
    const created = await account.client.createInspection({ asset: asset.id, name: 'Tower flight', processing_parameters: { detect_antennas: true } });
    await account.client.register(created.id, await account.client.upload(await account.client.storageCredentials(created.id), photos));
    await account.client.process(created.id);
    assert.equal((await account.client.waitUntilSettled(created.id, { timeoutMs: 120_000 })).status, 7);
    inspection = await waitFor('the detection', async () => {
      const now = await account.client.getInspection(created.id);
      return [1, 2].includes(now.additional_statuses.inventory) ? null : now;
    }, 180_000);
    assert.equal(inspection.additional_statuses.inventory, 3, inspection.additional_statuses.inventory_reason);
    items = await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/inventory/`);
    browser = await launchChromium();
  });
  after(async () => {
    if (watched?.problems.length) console.log(`# browser console: ${JSON.stringify(watched.problems)}`);
    await browser?.close();
    if (system) assertNoServerErrors(system);
    await system?.stop();
    await node?.close();
    console.log(`# screenshots: ${screens}`);
  });

  it('the inventory says how each item was found; an item opens its best photo with its outline where the API projects it', async () => {
    watched = await openWatchedPage(browser, { folder: screens });
    const { page } = watched;
    await signIn(page, system.urls.inspection, account, `#/inspections/${inspection.id}?tab=annotations`);
    await page.getByRole('heading', { name: `Equipment found on the asset (${items.length})` }).waitFor();
    assert.ok((await page.getByText(/How computed: Found by the automatic antenna detection in the point cloud/).count()) === items.length, 'every item says it was detected');
    await watched.screenshot('detected-inventory-list');

    const item = items.find((i) => i.photo_id !== null && i.model_type === 'panel_antenna');
    assert.ok(item, 'a panel antenna with a best photo');
    await page.getByRole('link', { name: new RegExp(`^#${item.number} `) }).click();
    await page.waitForURL(new RegExp(`item=${item.id}`));
    await page.getByTestId('photo-image').waitFor();
    const outline = page.locator(`polygon.item-outline.selected[data-item-id="${item.id}"]`);
    await outline.waitFor({ state: 'attached' });
    const drawn = ((await outline.getAttribute('points')) ?? '').split(' ').map((p) => p.split(',').map(Number));
    assert.deepEqual(drawn, item.photo_projection[String(item.photo_id)], 'the outline is the API\'s projection');
    const outlinedHere = items.filter((i) => i.photo_projection[String(item.photo_id)]);
    assert.equal(await page.locator('polygon.item-outline').count(), outlinedHere.length, 'every item projected on this photo is outlined');
    const panel = page.getByRole('region', { name: /Equipment on this photo/ });
    assert.equal(await panel.getByRole('button', { name: new RegExp(`^#${item.number} `) }).getAttribute('aria-pressed'), 'true');
    await panel.getByText(/^Azimuth \d+\.\d°/).waitFor();
    await watched.screenshot('detected-item-on-photo');
    const axe = await axeViolations(page);
    console.log(`# axe, a detected item on its photo: ${axeSummary(axe)}`);
    assert.deepEqual(axeBlocking(axe), []);

    // Its box in 3D, selected and looked at; the other items' boxes too.
    await panel.getByRole('link', { name: 'Show its box in 3D' }).click();
    const canvas = page.getByLabel('Point cloud in 3D');
    await canvas.waitFor();
    await page.waitForFunction(() => Number(document.querySelector('canvas.viewer-3d-canvas')?.getAttribute('data-points-loaded')) > 0, undefined, { timeout: 60_000 });
    assert.equal(Number(await canvas.getAttribute('data-item-boxes')), items.filter((i) => i.computation?.box_corners_3d?.length === 8).length);
    const marker = page.locator(`button.item-marker.selected[data-item-id="${item.id}"]`);
    await marker.waitFor();
    await page.waitForTimeout(500); // the view's damping settles
    assert.ok((await countCanvasPixels(canvas, SELECTED_RGB, 30, 'near')) > 20, 'the selected box is drawn in the selection colour');
    await watched.screenshot('detected-item-in-3d');
    await marker.click();
    await page.waitForURL(new RegExp(`tab=photos.*item=${item.id}|item=${item.id}.*`));
    await page.locator(`polygon.item-outline.selected[data-item-id="${item.id}"]`).waitFor({ state: 'attached' });
    assert.deepEqual(watched.problems, []);
  });

  it('the new-inspection form offers antenna detection with this engine', async () => {
    const { page } = watched!;
    await page.goto(`${system.urls.inspection}/#/assets/${inspection.asset}`);
    await page.getByRole('button', { name: 'New inspection' }).click();
    const option = page.getByRole('checkbox', { name: /Detect antennas on the tower/ });
    assert.equal(await option.isDisabled(), false);
    assert.deepEqual(watched!.problems, []);
  });

  it('the report lists the detected items, detected in the point cloud, heights above the tower\'s foot', async (t) => {
    if (!requireTool(t, '/usr/bin/pdftotext', 'poppler-utils')) return;
    await account.client.expect(202, 'POST', `/v1/inspections/${inspection.id}/report/`, {});
    await waitFor('report', async () => {
      const now = await account.client.getInspection(inspection.id);
      assert.notEqual(now.report_status, 'error');
      return now.report_status === 'available';
    });
    const outputs = await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/outputs/`);
    const pdfPath = path.join(screens, 'detected-report.pdf');
    fs.writeFileSync(pdfPath, Buffer.from(await (await fetch(outputs.find((o: { output_type: string }) => o.output_type === 'report_pdf').url)).arrayBuffer()));
    const text = (await promisify(execFile)('/usr/bin/pdftotext', ['-layout', pdfPath, '-'])).stdout.replace(/\s+/g, ' ');
    for (const expected of [`Inventory (${items.length})`, 'detected in the point cloud', 'the foot of the tower found in the point cloud', 'Plan view (from above)']) {
      assert.ok(text.includes(expected), `PDF text has "${expected}"`);
    }
  });
});
