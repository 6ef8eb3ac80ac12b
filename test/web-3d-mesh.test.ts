/// <reference lib="dom" />
// The console's 3D tab with a mesh, in Debian's Chromium driven by playwright-core against a real
// server: an inspection processed by the exif engine (fast, no reconstruction) whose cloud project
// is given a fixture cloud and a fixture web mesh (`point_cloud_ply`, `3d_mesh_web_ply`): a flat
// 20 m square at a known height, the mesh's file relative to an offset its header names, as the
// colmap engine writes it. The tab draws the mesh (its colour on screen, gone when only the cloud
// is shown), and a point measured at the middle of the view snaps to the surface: the saved
// measurement's z is the plane's. Run once (on PGlite), not per database.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Browser } from 'playwright-core';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { browserTestSkipReason, countCanvasPixels, launchChromium, openWatchedPage, signIn } from './helpers/browser.ts';
import { assertNoServerErrors, processedInspection } from './helpers/inspection-fixtures.ts';
import { createPointCloud } from '../src/shared/pointcloud/point-cloud.ts';
import { writePly } from '../src/shared/pointcloud/ply.ts';
import { writePlyMeshFile } from '../src/cloud/processing/mesh/mesh-ply.ts';
import { resultTypeOf } from '../src/cloud/processing/result-types.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';
import fs from 'node:fs';

const OFFSET = [386551, 6174045, 0];
/** The plane's height in the output system (exact in float32). */
const PLANE_Z = 12.5;
const MESH_RGB = [220, 40, 200] as const;

function skipReason(): string | undefined {
  return browserTestSkipReason();
}

/** A 20 m x 20 m grid of points (grey) and the same square as a mesh (magenta), at PLANE_Z. */
async function fixtures(): Promise<{ cloud: Buffer; mesh: Buffer }> {
  const n = 41;
  const cloud = createPointCloud(n * n, true);
  const positions = new Float64Array(n * n * 3);
  const colors = new Uint8Array(n * n * 3).fill(150);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) positions.set([OFFSET[0] - 10 + i * 0.5, OFFSET[1] - 10 + j * 0.5, PLANE_Z], 3 * (i * n + j));
  const meshFile = path.join(tempDir('oi-web-3d-mesh-'), 'mesh.ply');
  // In the file: coordinates minus the offset, as mesh-outputs.ts writes the web copy.
  const corners = new Float64Array([-10, -10, PLANE_Z - OFFSET[2], 10, -10, PLANE_Z - OFFSET[2], 10, 10, PLANE_Z - OFFSET[2], -10, 10, PLANE_Z - OFFSET[2]]);
  await writePlyMeshFile(meshFile, { vertexCount: 4, positions: corners, colors: new Uint8Array([...MESH_RGB, ...MESH_RGB, ...MESH_RGB, ...MESH_RGB]), faceCount: 2, indices: new Uint32Array([0, 1, 2, 0, 2, 3]) }, [`coordinate system: WGS 84 / UTM zone 15N minus offset_3d_xyz ${OFFSET.join(' ')}`]);
  return { cloud: writePly({ ...cloud, positions, colors }), mesh: fs.readFileSync(meshFile) };
}

describe('web console: the 3D tab draws the mesh and measures on it', { skip: skipReason() }, () => {
  let system: TestSystem;
  let account: TestAccount;
  let browser: Browser;

  before(async () => {
    await ensureConsoleBuilt({ quiet: true });
    system = await startTestSystem();
    account = await system.newAccount({ projects: 2 });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    if (system) assertNoServerErrors(system);
    await system?.stop();
  });

  it('shows the mesh (and hides it for the cloud alone); a measured point snaps to the mesh at its height', async () => {
    const { inspection } = await processedInspection(account);
    const project = await (await system.inspection.cloudFor(inspection.id)).getProject(inspection.project_id);
    const files = await fixtures();
    const db = system.database.db as Kysely<any>;
    for (const [outputType, body] of [['point_cloud_ply', files.cloud], ['3d_mesh_web_ply', files.mesh]] as const) {
      const key = `results/${project.uuid}/fixture/${outputType}.ply`;
      await system.store.putObject(project.bucket_name, key, body);
      await db.insertInto('cloud.project_outputs').values({ project_id: inspection.project_id, output_type: outputType, result_type: resultTypeOf(outputType), availability: 'done', s3_key: key, note: null, raster: null }).execute();
    }

    const w = await openWatchedPage(browser, { viewport: { width: 1280, height: 800 } });
    const { page } = w;
    await signIn(page, system.urls.inspection, account, `#/inspections/${inspection.id}?tab=3d`);
    const canvas = page.locator('canvas[data-faces-loaded="2"]');
    await canvas.waitFor({ timeout: 60_000 }).catch(async (err) => {
      console.log(`# the 3D tab did not load: ${await w.screenshot('failure')} ${JSON.stringify(w.problems)}`);
      throw err;
    });
    assert.equal(await canvas.getAttribute('data-points-loaded'), String(41 * 41));
    await page.getByText('2 faces').waitFor();

    // Pixels of the mesh's colour on the canvas, after a frame has been drawn in the mode asked.
    const meshPixels = async (show: 'Mesh' | 'Cloud' | 'Both') => {
      const frames = Number(await canvas.getAttribute('data-frames'));
      await page.getByRole('button', { name: show, exact: true }).click();
      await page.waitForFunction((before) => Number(document.querySelector('canvas.viewer-3d-canvas')?.getAttribute('data-frames')) > before, frames);
      return countCanvasPixels(canvas, MESH_RGB, 40, 'near');
    };
    const withMesh = await meshPixels('Mesh');
    const cloudOnly = await meshPixels('Cloud');
    assert.ok(withMesh > 10_000, `mesh-coloured pixels with the mesh shown: ${withMesh}`);
    assert.equal(cloudOnly, 0, 'no mesh colour with the cloud alone');
    await w.screenshot('3d-mesh');

    // Measure a point in the middle of the view, where the mesh is: it snaps to the plane.
    await page.getByRole('button', { name: 'Mesh', exact: true }).click();
    await page.getByLabel('Measure').selectOption('Point');
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2 + 3, box.y + box.height / 2 + 3);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.locator('canvas[data-snap="mesh"]').waitFor();
    await page.getByText('Snapped to the mesh.').waitFor();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.getByLabel('Name').fill('On the mesh');
    await page.getByRole('button', { name: 'Save measurement' }).click();
    await page.getByText('1 saved').waitFor();
    const measured = (await account.client.expect(200, 'GET', `/v1/inspections/${inspection.id}/measurements/`)).results;
    assert.equal(measured.length, 1);
    const [x, y, z] = measured[0].geometry.coordinates;
    assert.ok(Math.abs(z - PLANE_Z) < 1e-3, `z ${z}, the plane is at ${PLANE_Z}`);
    assert.ok(Math.abs(x - OFFSET[0]) < 10 && Math.abs(y - OFFSET[1]) < 10, `${x}, ${y} inside the square`);
    assert.deepEqual(w.problems, [], 'no errors in the browser console');
  });
});
