/// <reference lib="dom" />
// The console's map tab over the orthomosaic, in Debian's Chromium driven by playwright-core
// against a real server: an inspection processed by the nodeodm engine against the fake NodeODM
// node whose orthophoto is a COG of known colours (helpers/ortho-fixtures.ts). The tab shows tile
// images fetched from the inspection's tiles URL in Leaflet's tile pane, under the camera and asset
// markers, the ortho's colours are on screen, the line says what the map shows; an inspection
// without an orthomosaic says why. Screenshots at 390x844, 820x1180 and 1440x900 go to the folder
// printed at the start. Run once (on PGlite), not per database.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { Browser } from 'playwright-core';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { browserTestSkipReason, launchChromium, openWatchedPage, signIn } from './helpers/browser.ts';
import { startFakeNodeOdm, FAKE_ORIGIN, type FakeNodeOdm } from './helpers/fake-nodeodm.ts';
import { GDAL_TRANSLATE, quadrantCog } from './helpers/ortho-fixtures.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';

const SCREENSHOTS = process.env.WEB_SCREENSHOTS_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oi-ortho-map-screens-'));
const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 820, height: 1180 },
  { width: 1440, height: 900 },
];

function skipReason(): string | undefined {
  return browserTestSkipReason(() => (fs.existsSync(GDAL_TRANSLATE) ? undefined : `${GDAL_TRANSLATE} is not installed (Debian package gdal-bin)`));
}

/** Pixels of a screenshot close to an exact colour of the orthophoto. */
async function countColour(file: string, [r, g, b]: number[]): Promise<number> {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let count = 0;
  for (let i = 0; i < info.width * info.height * 3; i += 3) if (Math.abs(data[i] - r) < 12 && Math.abs(data[i + 1] - g) < 12 && Math.abs(data[i + 2] - b) < 12) count++;
  return count;
}

describe('web console: the map tab over the orthomosaic', { skip: skipReason() }, () => {
  let node: FakeNodeOdm;
  let system: TestSystem;
  let account: TestAccount;
  let browser: Browser;
  let withOrtho: any;
  let withoutOrtho: any;
  const work = tempDir('oi-ortho-map-');

  before(async () => {
    console.log(`# map screenshots: ${SCREENSHOTS}`);
    await ensureConsoleBuilt({ quiet: true });
    node = await startFakeNodeOdm({ pollsToFinish: 2, orthophoto: await quadrantCog(work) });
    system = await startTestSystem({ engine: 'exif', engines: ['nodeodm'], nodeodmUrl: node.url, nodeodmPollSeconds: 0, processingBackendEngines: { vortex: 'nodeodm' } });
    account = await system.newAccount({ projects: 2 });
    const images = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => ({
        name: `img${i}.jpg`,
        body: await generateGeotaggedJpeg({ latitude: FAKE_ORIGIN.latitude + i * 0.0001, longitude: FAKE_ORIGIN.longitude + i * 0.0001, altitude: FAKE_ORIGIN.altitude, seed: i + 1, width: 160, height: 120 }),
      })),
    );
    const processed = async (parameters: Record<string, unknown>) => {
      const client = account.client;
      const asset = await client.createAsset({ name: 'Mast', type: 1, latitude: (FAKE_ORIGIN.latitude + 0.0003).toFixed(8), longitude: (FAKE_ORIGIN.longitude + 0.0002).toFixed(8) });
      const inspection = await client.createInspection({ asset: asset.id, processing_parameters: parameters, processing_backend: 'vortex' });
      await client.register(inspection.id, await client.upload(await client.storageCredentials(inspection.id), images));
      await client.process(inspection.id);
      const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 120_000 });
      assert.equal(done.status, 7, JSON.stringify(done));
      return done;
    };
    withOrtho = await processed({ generate_point_cloud: true, generate_ortho: true });
    withoutOrtho = await processed({ generate_point_cloud: true });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    const errors = system ? [...system.inspection.serverErrors] : [];
    await system?.stop();
    await node?.close();
    fs.rmSync(work, { recursive: true, force: true });
    assert.deepEqual(errors, [], 'no request answered 5xx');
  });

  async function signedIn(viewport: { width: number; height: number }, inspectionId: number) {
    const w = await openWatchedPage(browser, { viewport, folder: SCREENSHOTS });
    await signIn(w.page, system.urls.inspection, account, `#/inspections/${inspectionId}?tab=map`);
    return w;
  }

  for (const viewport of VIEWPORTS) {
    it(`${viewport.width}x${viewport.height}: tiles from the inspection's tiles URL under the markers, the orthophoto's colours on screen, the line says what it shows`, async () => {
      const w = await signedIn(viewport, withOrtho.id);
      const { page } = w;
      await page.getByRole('region', { name: 'Cameras and asset on a map' }).waitFor();
      await page.getByText(/^Orthomosaic from 4 photos, 25\.\d cm\/px, under the cameras and the asset\.$/).waitFor();
      // Tiles loaded (blob: images made from the tiles URL) in the tile pane.
      await page.waitForFunction(() => document.querySelectorAll('.leaflet-tile-pane img.leaflet-tile-loaded[data-tile]').length >= 2, undefined, { timeout: 30_000 });
      const tiles = await page.$$eval('.leaflet-tile-pane img[data-tile]', (imgs) => imgs.map((img) => ({ url: (img as HTMLImageElement).dataset.tile!, src: (img as HTMLImageElement).src, loaded: img.classList.contains('leaflet-tile-loaded') })));
      assert.ok(tiles.length >= 2, JSON.stringify(tiles));
      for (const t of tiles) assert.match(t.url, new RegExp(`^/v1/inspections/${withOrtho.id}/ortho/tiles/\\d+/\\d+/\\d+\\.png$`), t.url);
      assert.ok(tiles.filter((t) => t.loaded).every((t) => t.src.startsWith('blob:')), 'shown from the fetched PNGs');
      // Under the markers: the tile pane is below the overlay pane that holds the camera and asset circles.
      // (No named function inside: the test's loader would wrap it in a helper the page does not have.)
      const panes = await page.evaluate(() => ({
        tiles: Number(getComputedStyle(document.querySelector('.leaflet-tile-pane')!).zIndex),
        overlay: Number(getComputedStyle(document.querySelector('.leaflet-overlay-pane')!).zIndex),
        markers: document.querySelectorAll('.leaflet-overlay-pane path.leaflet-interactive').length,
      }));
      assert.ok(panes.tiles < panes.overlay, JSON.stringify(panes));
      assert.equal(panes.markers, 5, '4 cameras and the asset');
      await page.waitForTimeout(500); // the last tiles' fade-in
      const shot = await w.screenshot(`ortho-map-${viewport.width}x${viewport.height}`);
      // The quadrants' pure colours are on screen (the markers are other blues and reds).
      const [red, green, blue, yellow] = await Promise.all([[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]].map((c) => countColour(shot, c)));
      console.log(`# ${shot}: red ${red}, green ${green}, blue ${blue}, yellow ${yellow} pixels`);
      for (const [name, count] of Object.entries({ red, green, blue, yellow })) assert.ok(count > 500, `${name}: ${count} pixels`);
      assert.deepEqual(w.problems, []);
      await page.context().close();
    });
  }

  it('an inspection without an orthomosaic: the markers on the plain background and the cloud\'s reason', async () => {
    const w = await signedIn({ width: 1440, height: 900 }, withoutOrtho.id);
    const { page } = w;
    await page.getByRole('region', { name: 'Cameras and asset on a map' }).waitFor();
    const line = page.getByText(/^No orthomosaic: /);
    await line.waitFor();
    const text = await line.textContent();
    assert.match(text ?? '', /^No orthomosaic: Not requested/, text ?? '');
    assert.equal(await page.locator('.leaflet-tile-pane img').count(), 0);
    await w.screenshot('no-ortho-1440x900');
    // The record answers 200 `available: false`: no failed load, nothing in the browser's console.
    assert.deepEqual(w.problems, []);
    await page.context().close();
  });
});
