// The report's 2D plan (issue 30 §5, include_2d_plans): an inspection processed by the nodeodm
// engine against the fake NodeODM node whose orthophoto is a COG of known colours (quadrants over
// FAKE_RASTER_EXTENT, test/helpers/ortho-fixtures.ts), an annotation with coords_3d and a line
// measurement near the middle of the raster. The report's plans_2d lists a top-down plan of 30 m
// around them with the orthomosaic as background; the PDF has the plan page, and its rendering shows
// the quadrants north-up (red north-west, green north-east, blue south-west, yellow south-east) and
// the magenta annotation marker where the annotation is. Then the annotation moved 1 km away: a
// plain background, and plans_2d says the orthomosaic does not cover the plan.
// Set REPORT_PAGES_DIR to keep the PDF and the rendered plan page for a look.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import sharp from 'sharp';
import { toolMissingReason } from './helpers/system-tools.ts';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { startFakeNodeOdm, FAKE_ORIGIN, FAKE_RASTER_EXTENT, type FakeNodeOdm } from './helpers/fake-nodeodm.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { GDAL_TRANSLATE, quadrantCog } from './helpers/ortho-fixtures.ts';
import { waitFor } from './helpers/inspection-fixtures.ts';

const R = FAKE_RASTER_EXTENT;
const PDFTOPPM = '/usr/bin/pdftoppm';

describe('inspection report: 2D plan over the orthomosaic', { skip: toolMissingReason(GDAL_TRANSLATE, 'gdal-bin') ?? toolMissingReason(PDFTOPPM, 'poppler-utils') }, () => {
  let node: FakeNodeOdm;
  let system: TestSystem;
  let account: TestAccount;
  let inspection: any;
  let annotationId: number;
  let lineId: string;
  const work = tempDir('oi-plan-');
  // In the yellow quadrant (south-east), 5 m from the raster's middle: the plan (centred on the
  // annotation and the line, 30 m) shows the four quadrants, its middle line the raster's east-west border.
  const spot = { x: R.west + R.width / 2 + 5, y: R.north - R.height / 2 - 5, z: 12 };

  before(async () => {
    node = await startFakeNodeOdm({ pollsToFinish: 2, orthophoto: await quadrantCog(work) });
    system = await startTestSystem({ engine: 'exif', engines: ['nodeodm'], nodeodmUrl: node.url, nodeodmPollSeconds: 0, processingBackendEngines: { vortex: 'nodeodm' } });
    account = await system.newAccount({ projects: 2 });
    const images = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => ({
        name: `img${i}.jpg`,
        body: await generateGeotaggedJpeg({ latitude: FAKE_ORIGIN.latitude + i * 0.0001, longitude: FAKE_ORIGIN.longitude + i * 0.0001, altitude: FAKE_ORIGIN.altitude, seed: i + 1, width: 160, height: 120 }),
      })),
    );
    const client = account.client;
    const asset = await client.createAsset({ name: 'Mast', type: 1, latitude: FAKE_ORIGIN.latitude.toFixed(8), longitude: FAKE_ORIGIN.longitude.toFixed(8) });
    const created = await client.createInspection({ asset: asset.id, processing_parameters: { generate_point_cloud: true, generate_ortho: true }, processing_backend: 'vortex' });
    await client.register(created.id, await client.upload(await client.storageCredentials(created.id), images));
    await client.process(created.id);
    inspection = await client.waitUntilSettled(created.id, { timeoutMs: 120_000 });
    assert.equal(inspection.status, 7, JSON.stringify(inspection));
  });
  after(async () => {
    const errors = system ? [...system.inspection.serverErrors] : [];
    await system?.stop();
    await node?.close();
    if (process.env.REPORT_PAGES_DIR) fs.cpSync(work, process.env.REPORT_PAGES_DIR, { recursive: true });
    fs.rmSync(work, { recursive: true, force: true });
    assert.deepEqual(errors, [], 'no request answered 5xx');
  });

  /** Builds a report with the plan; its JSON and PDF. */
  async function report() {
    const client = account.client;
    const started = await client.request('POST', `/v1/inspections/${inspection.id}/report/`, { include_2d_plans: true, include_sharetoken: false });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    await waitFor('report', async () => {
      const i = await client.getInspection(inspection.id);
      assert.notEqual(i.report_status, 'error', i.report_error);
      return i.report_status === 'available' ? i : undefined;
    });
    const outputs = await client.expect(200, 'GET', `/v1/inspections/${inspection.id}/outputs/`);
    const json = (await (await fetch(outputs.find((o: any) => o.output_type === 'report_json').url)).json()) as any;
    const pdf = Buffer.from(await (await fetch(outputs.find((o: any) => o.output_type === 'report_pdf').url)).arrayBuffer());
    return { json, pdf };
  }

  it('plans_2d lists a top-down plan of 30 m around the annotation and the measurement, over the orthomosaic; the PDF page shows the quadrants north-up and the marker where the annotation is', async () => {
    const client = account.client;
    const photo = (await client.cameras(inspection.id))[0].photo_id;
    const annotation = await client.expect(201, 'POST', '/v1/annotations/', {
      inspection: inspection.id,
      photo_id: photo,
      type: 'Corrosion',
      name: 'Rust on the cabinet',
      severity_level: 3,
      coords_3d: spot,
      data: { coords_2d: [[0.2, 0.2], [0.4, 0.2], [0.4, 0.4], [0.2, 0.4]] },
    });
    annotationId = annotation.id;
    await client.expect(201, 'POST', `/v1/inspections/${inspection.id}/measurements/`, {
      annotations: [{ properties: { name: 'Fence' }, tags: [], geometry: { type: 'LineString', coordinates: [[spot.x - 10, spot.y, 10], [spot.x + 10, spot.y + 10, 10]] } }],
    });
    const { json, pdf } = await report();
    assert.equal(json.plans_2d.length, 3, JSON.stringify(json.plans_2d));
    const [plan, sideView, westView] = json.plans_2d;
    assert.equal(plan.kind, 'top');
    assert.equal(plan.no_raster_reason, null);
    assert.equal(plan.side_m, 30, 'the extents (20 m x 10 m) with margin are under the 30 m minimum');
    // Centred on the extents of the annotation and the line: x from spot.x - 10 to + 10, y from spot.y to + 10.
    assert.deepEqual(plan.bounds, { min_x: spot.x - 15, min_y: spot.y + 5 - 15, max_x: spot.x + 15, max_y: spot.y + 5 + 15 });
    assert.deepEqual(plan.items_drawn.annotations, [annotation.number]);
    assert.equal(plan.items_drawn.measurements.length, 1);
    lineId = plan.items_drawn.measurements[0];
    // The asset is a tower (self-support): a side view from the south too, x across and z up, at least 10 m each way (here 20 m of line and a fifth across).
    assert.deepEqual([sideView.kind, sideView.from, sideView.title], ['side', 'south', 'Side view from the south']);
    assert.deepEqual(sideView.bounds, { min_x: spot.x - 12, max_x: spot.x + 12, min_z: 11 - 5, max_z: 11 + 5 });
    assert.deepEqual(sideView.items_drawn, plan.items_drawn);
    // And from the west, y across: the line's 10 m and a fifth (12 m) around its middle, the same heights.
    assert.deepEqual([westView.kind, westView.from, westView.title], ['side', 'west', 'Side view from the west']);
    assert.deepEqual(westView.bounds, { min_y: spot.y + 5 - 6, max_y: spot.y + 5 + 6, min_z: 11 - 5, max_z: 11 + 5 });
    assert.deepEqual(westView.items_drawn, plan.items_drawn);
    assert.deepEqual(plan.items_drawn.inventory_items, []);
    assert.equal(plan.raster.source, 'orthomosaic');
    // 30 m of 0.25 m pixels: 120 pixels of the full resolution (no overview has 1400 across).
    assert.equal(plan.raster.level, 0);
    assert.deepEqual([plan.raster.width, plan.raster.height], [120, 120]);
    assert.equal(plan.gsd_m, 0.25);

    const pdfPath = path.join(work, 'plan.pdf');
    fs.writeFileSync(pdfPath, pdf);
    const text = execFileSync('/usr/bin/pdftotext', ['-layout', pdfPath, '-']).toString();
    assert.match(text, /Top-down plan around the asset/);
    assert.match(text, /Magenta discs: annotations \(1\)/);
    assert.match(text, /Side view from the south/);
    assert.match(text, /Side view from the west/);
    // The plan, then the side views from the south and the west (the last pages), rendered at 60 dpi: the square is where the pixels are saturated colours (the page's text is not).
    const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('/usr/bin/pdfinfo', [pdfPath]).toString())![1]);
    execFileSync(PDFTOPPM, ['-png', '-r', '60', '-f', String(pages - 2), '-l', String(pages - 2), pdfPath, path.join(work, 'plan')]);
    execFileSync(PDFTOPPM, ['-png', '-r', '60', '-f', String(pages - 1), '-l', String(pages - 1), pdfPath, path.join(work, 'side')]);
    execFileSync(PDFTOPPM, ['-png', '-r', '60', '-f', String(pages), '-l', String(pages), pdfPath, path.join(work, 'west')]);
    const pngPath = fs.readdirSync(work).find((f) => /^plan-\d+\.png$/.test(f))!;
    const { data, info } = await sharp(path.join(work, pngPath)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const pixel = (u: number, v: number) => [...data.subarray((v * info.width + u) * 3, (v * info.width + u) * 3 + 3)];
    let [u0, v0, u1, v1] = [info.width, info.height, -1, -1];
    for (let v = 0; v < info.height; v++)
      for (let u = 0; u < info.width; u++) {
        const c = pixel(u, v);
        if (Math.max(...c) - Math.min(...c) > 150) [u0, v0, u1, v1] = [Math.min(u0, u), Math.min(v0, v), Math.max(u1, u), Math.max(v1, v)];
      }
    const side = u1 - u0;
    assert.ok(side > 350 && Math.abs(v1 - v0 - side) <= 3, `a square of the page's width: ${u0},${v0} to ${u1},${v1}`);
    /** The rendered colour at plan coordinates (x, y metres). */
    const at = (x: number, y: number) => pixel(Math.round(u0 + ((x - plan.bounds.min_x) / 30) * side), Math.round(v0 + ((plan.bounds.max_y - y) / 30) * side));
    const near = (c: number[], expected: number[]) => c.every((v, k) => Math.abs(v - expected[k]) < 60);
    const [midX, midY] = [R.west + R.width / 2, R.north - R.height / 2];
    assert.ok(near(at(midX - 5, midY + 5), [255, 0, 0]), `red north-west of the raster's middle: ${at(midX - 5, midY + 5)}`);
    assert.ok(near(at(midX + 12, midY + 12), [0, 255, 0]), `green north-east: ${at(midX + 12, midY + 12)}`);
    assert.ok(near(at(midX - 5, midY - 3), [0, 0, 255]), `blue south-west: ${at(midX - 5, midY - 3)}`);
    assert.ok(near(at(midX + 12, midY - 8), [255, 255, 0]), `yellow south-east: ${at(midX + 12, midY - 8)}`);
    assert.ok(near(at(spot.x, spot.y), [255, 0, 255]), `magenta at the annotation: ${at(spot.x, spot.y)}`);
    assert.ok(!near(at(spot.x + 2, spot.y + 2), [255, 0, 255]), 'the marker is a small disc, not a smear');
    // The side views: the annotation (z 12) drawn above the line (z 10), 2 m of the frame's 10 m.
    /** Mean row and column of the marker (magenta) and of the line (green) on a rendered side view. */
    const markerAndLine = async (prefix: string) => {
      const png = await sharp(path.join(work, fs.readdirSync(work).find((f) => new RegExp(`^${prefix}-\\d+\\.png$`).test(f))!)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const mean = (test: (c: number[]) => boolean) => {
        let [n, rows, columns] = [0, 0, 0];
        for (let v = 0; v < png.info.height; v++)
          for (let u = 0; u < png.info.width; u++)
            if (test([...png.data.subarray((v * png.info.width + u) * 3, (v * png.info.width + u) * 3 + 3)])) [n, rows, columns] = [n + 1, rows + v, columns + u];
        assert.ok(n > 0, `${prefix}: the marker and the line are drawn`);
        return { row: rows / n, column: columns / n };
      };
      return { marker: mean((c) => c[0] > 200 && c[1] < 80 && c[2] > 200), line: mean((c) => c[0] < 80 && c[1] > 150 && c[2] < 150) };
    };
    const south = await markerAndLine('side');
    assert.ok(south.line.row - south.marker.row > 20 && south.line.row - south.marker.row < 40, `2 m above the line at 60 dpi: ${JSON.stringify(south)}`);
    assert.ok(Math.abs(south.marker.column - south.line.column) < 8, `from the south the annotation stands over the line's middle (x): ${JSON.stringify(south)}`);
    // From the west, north is on the left: the annotation, at the line's southern end (y), is drawn at its right end.
    const west = await markerAndLine('west');
    // 12 m across fill the page's width at about twice the south view's scale: 2 m are ~68 px here.
    assert.ok(west.line.row - west.marker.row > 55 && west.line.row - west.marker.row < 80, `2 m above the line: ${JSON.stringify(west)}`);
    assert.ok(west.marker.column - west.line.column > 40, `from the west the annotation is right of the line's middle: ${JSON.stringify(west)}`);
  });

  it('where the orthomosaic does not cover the plan, the plan is drawn on a plain background and plans_2d says why', async () => {
    const client = account.client;
    await client.expect(204, 'DELETE', `/v1/inspections/${inspection.id}/measurements/${lineId}/`);
    const far = { x: R.east + 1000, y: R.north + 1000, z: 12 };
    await client.expect(200, 'PATCH', `/v1/annotations/${annotationId}/`, { coords_3d: far });
    const { json, pdf } = await report();
    const [plan] = json.plans_2d;
    assert.deepEqual(plan.bounds, { min_x: far.x - 15, min_y: far.y - 15, max_x: far.x + 15, max_y: far.y + 15 });
    assert.equal(plan.raster, null);
    assert.equal(plan.gsd_m, null);
    assert.equal(plan.no_raster_reason, 'the orthomosaic does not cover the plan');
    const pdfPath = path.join(work, 'far.pdf');
    fs.writeFileSync(pdfPath, pdf);
    assert.match(execFileSync('/usr/bin/pdftotext', [pdfPath, '-']).toString(), /Plain background: the orthomosaic does not cover the plan\./);
  });
});
