// Reports: POST /v1/inspections/{id}/report/ -> 202 {}, report_status processing -> available,
// report_pdf and report_json in outputs, every include_* flag and extra_remarks honoured; the PDF
// checked with poppler (text, embedded photo crops, rendered pages).
//
// Set REPORT_ARTIFACTS_DIR to keep the PDFs and their PNG renderings for a look.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors, processedInspection, waitFor } from './helpers/inspection-fixtures.ts';
import { requireTool } from './helpers/system-tools.ts';
import { localeOfAcceptLanguage } from '../src/inspection/reports/report-locale.ts';

const run = promisify(execFile);

describe('inspection service: reports', () => {
  let system: TestSystem;
  let account: TestAccount;
  let inspectionId: number;
  let workDir: string;
  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    const processed = await processedInspection(account, {}, { name: 'Tower 17 Lausanne', description: 'Lattice tower' });
    inspectionId = processed.inspection.id;
    const [a, b, c] = processed.cameras;
    const annotate = (photo: number, extra: Record<string, unknown>) =>
      account.client.expect(201, 'POST', '/v1/annotations/', { inspection: inspectionId, photo_id: photo, ...extra });
    await annotate(a.photo_id, {
      type: 'Corrosion',
      name: 'Rust on leg A',
      severity_level: 4,
      description: 'Surface rust near the base plate',
      data: { coords_2d: [[0.2, 0.25], [0.45, 0.25], [0.45, 0.55], [0.2, 0.55]], links: [{ link: 'https://tickets.example.org/42', description: 'Ticket 42' }] },
    });
    await annotate(b.photo_id, { type: 'Crack', name: 'Weld crack', severity_level: 5, data: { coords_2d: [[0.6, 0.1], [0.9, 0.1], [0.9, 0.35], [0.6, 0.35]] } });
    await annotate(c.photo_id, { type: 'Vegetation', name: 'Hidden ivy', is_visible: false, data: { coords_2d: [[0, 0.7], [0.3, 0.7], [0.3, 1], [0, 1]] } });
    await account.client.expect(201, 'POST', `/v1/inspections/${inspectionId}/measurements/`, {
      annotations: [
        { properties: { name: 'Base plate' }, tags: ['area'], geometry: { type: 'Polygon', coordinates: [[[0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [0, 0, 0]]] } },
        { properties: { name: 'Leg height' }, tags: [], geometry: { type: 'LineString', coordinates: [[0, 0, 0], [0, 0, 30]] } },
        { properties: { name: 'Antenna spot' }, tags: [], geometry: { type: 'Point', coordinates: [1, 1, 28] } },
        { properties: { name: 'Hidden line', visible: false }, tags: [], geometry: { type: 'LineString', coordinates: [[0, 0, 0], [3, 4, 0]] } },
      ],
    });
    workDir = process.env.REPORT_ARTIFACTS_DIR ?? tempDir('oi-report-');
    fs.mkdirSync(workDir, { recursive: true });
  });
  after(async () => {
    await system?.stop();
    if (!process.env.REPORT_ARTIFACTS_DIR && workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  /** Requests a report, waits until it is available, returns its JSON and the path of its PDF. */
  async function report(body: Record<string, unknown> | undefined, name: string, headers: Record<string, string> = {}) {
    const started = await account.client.request('POST', `/v1/inspections/${inspectionId}/report/`, body, headers);
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.deepEqual(started.body, {});
    const status = (await account.client.getInspection(inspectionId)).report_status;
    assert.ok(status === 'processing' || status === 'available', status);
    const done = await waitFor('report', async () => {
      const i = await account.client.getInspection(inspectionId);
      assert.notEqual(i.report_status, 'error');
      return i.report_status === 'available' ? i : undefined;
    });
    assert.equal(done.report_status, 'available');
    const outputs = await account.client.expect(200, 'GET', `/v1/inspections/${inspectionId}/outputs/`);
    const pdfUrl = outputs.find((o: any) => o.output_type === 'report_pdf')?.url;
    const jsonUrl = outputs.find((o: any) => o.output_type === 'report_json')?.url;
    assert.ok(pdfUrl && jsonUrl, JSON.stringify(outputs));
    const json = (await (await fetch(jsonUrl)).json()) as any;
    const pdf = Buffer.from(await (await fetch(pdfUrl)).arrayBuffer());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    const pdfPath = path.join(workDir, `${name}.pdf`);
    fs.writeFileSync(pdfPath, pdf);
    return { json, pdfPath };
  }

  it('builds the default report: asset, inspection, user with e-mail, every annotation with its photo crop, every measurement, inventory', async (t) => {
    const { json, pdfPath } = await report(undefined, 'default');
    assert.equal(json.report_version, 2);
    assert.equal(json.asset.name, 'Tower 17 Lausanne');
    assert.equal(json.asset.type, 'Self-support', 'the type\'s name, as in the product\'s example');
    assert.equal(json.asset.type_id, 1);
    assert.equal(json.asset.type_description, 'Self-support');
    assert.ok(json.asset.created_at && json.asset.updated_at);
    assert.equal(json.inspection.id, inspectionId);
    assert.equal(json.user.username, account.username);
    assert.equal(json.user.email, `${account.username}@example.test`, 'include_email defaults to true');
    // The product's names (Pix4Dinspect's published report example) beside ours.
    assert.deepEqual(json.reported_by, { id: account.userId, name: account.username, email: `${account.username}@example.test`, report_units: 'metric', country: null, preferred_language: null });
    assert.equal(json.inspection.project_id, (await account.client.getInspection(inspectionId)).project_id);
    assert.equal(json.inspection.image_count, 3);
    assert.equal(json.inspection.images, 3);
    assert.equal(json.inspection.width, 320);
    assert.equal(json.inspection.height, 240);
    assert.equal(json.inspection.tower_height, null, 'no base plate and top point');
    assert.ok(json.inspection.updated_at);
    assert.equal(json.image_annotations.total, 3);
    assert.deepEqual(json.image_annotations.severity_summary, { level_1: 0, level_2: 0, level_3: 0, level_4: 1, level_5: 1, other: 1 });
    assert.equal(json.image_annotations.image_list.length, 3, 'one entry per annotated photo');
    const [first] = json.image_annotations.image_list;
    assert.equal(first.photo_id, json.annotations[0].photo.photo_id);
    assert.equal(first.filename, json.annotations[0].photo.filename);
    assert.deepEqual([first.width, first.height], [320, 240]);
    assert.equal(first.annotations.length, 1);
    const listed = first.annotations[0];
    assert.equal(listed.id, json.annotations[0].id);
    assert.equal(listed.type, 'Corrosion');
    assert.deepEqual(JSON.parse(listed.body), [[0.2, 0.25], [0.45, 0.25], [0.45, 0.55], [0.2, 0.55]], 'body: the rectangle as JSON text, as in the example');
    assert.equal(listed.severity_level, 4);
    assert.equal(listed.name, 'Rust on leg A');
    assert.deepEqual(
      json.annotations.map((a: any) => [a.number, a.type]),
      [
        [1, 'Corrosion'],
        [2, 'Crack'],
        [3, 'Vegetation'],
      ],
      'include_only_visible defaults to false',
    );
    assert.deepEqual(
      json.measurements.map((m: any) => m.name),
      ['Base plate', 'Leg height', 'Antenna spot', 'Hidden line'],
    );
    const plate = json.measurements[0];
    assert.equal(plate.area, 4);
    assert.equal(plate.length, 8);
    assert.equal(json.measurements[1].length, 30);
    assert.deepEqual(json.inventory_items, []);
    assert.match(json.share_token, /^ist_/, 'include_sharetoken defaults to true (inspection-share-tokens.test.ts)');
    assert.ok(json.share_link.endsWith(`/share/${json.share_token}`));
    assert.ok(!('plans_2d' in json), 'include_2d_plans defaults to false');
    assert.equal(json.extra_remarks, null);

    if (!requireTool(t, '/usr/bin/pdftoppm', 'poppler-utils')) return;
    const text = (await run('/usr/bin/pdftotext', ['-layout', pdfPath, '-'])).stdout;
    const flat = text.replace(/\s+/g, ' ');
    for (const expected of ['Inspection report', 'Tower 17 Lausanne', 'Share link (read-only)', 'By severity: Very low 0, Low 0, Medium 0, High 1, Critical 1, Not assessed 1', '#1 Corrosion - Rust on leg A', '#2 Crack - Weld crack', '#3 Vegetation - Hidden ivy', 'Severity: 4 (High)', 'Surface rust near the base plate', 'https://tickets.example.org/42', 'Base plate', 'area 4.00 m2', 'length 30.00 m', 'No inventory items', `${account.username}@example.test`]) {
      assert.ok(flat.includes(expected), `PDF text has "${expected}"`);
    }
    const images = (await run('/usr/bin/pdfimages', ['-list', pdfPath])).stdout.trim().split('\n').slice(2);
    assert.equal(images.length, 3, 'one photo crop per annotation');
    await run('/usr/bin/pdftoppm', ['-png', '-r', '60', pdfPath, path.join(workDir, 'default')]);
    const pages = fs.readdirSync(workDir).filter((f) => f.startsWith('default') && f.endsWith('.png'));
    assert.ok(pages.length >= 1);
    for (const page of pages) assert.ok(fs.statSync(path.join(workDir, page)).size > 1000);
    // REPORT_PAGES_DIR=/some/folder keeps the PDF and its rendered pages for a person to look at.
    if (process.env.REPORT_PAGES_DIR) fs.cpSync(workDir, process.env.REPORT_PAGES_DIR, { recursive: true });
  });

  it('honours every flag: no e-mail, no annotations, no polygons, no lines, no inventory, only visible, no share token, 2D plans, extra remarks', async (t) => {
    const { json, pdfPath } = await report(
      {
        include_email: false,
        include_annotations: false,
        include_polygon_measurements: false,
        include_line_measurements: false,
        include_inventory_items: false,
        include_only_visible: true,
        include_sharetoken: false,
        include_2d_plans: true,
        extra_remarks: 'Climb needed for leg C.',
      },
      'flags',
      { 'accept-language': 'en;q=0.5, fr-CH, fr;q=0.9' },
    );
    // The preferred tag of Accept-Language: its language and its region.
    assert.deepEqual([json.reported_by.preferred_language, json.reported_by.country], ['fr', 'CH']);
    assert.ok(!('email' in json.user));
    assert.ok(!('annotations' in json));
    assert.deepEqual(
      json.measurements.map((m: any) => m.name),
      ['Antenna spot'],
      'points only',
    );
    assert.ok(!('inventory_items' in json));
    assert.ok(!('share_token' in json) && !('share_link' in json));
    assert.ok(!('image_annotations' in json), 'include_annotations: false');
    assert.ok(!('email' in json.reported_by));
    // Only the point measurement is included: a top-down plan on a plain background (no orthomosaic), saying why, and the tower's side views from the south and the west.
    assert.equal(json.plans_2d.length, 3, JSON.stringify(json.plans_2d));
    assert.deepEqual(json.plans_2d.map((p: any) => [p.kind, p.from]), [['top', undefined], ['side', 'south'], ['side', 'west']]);
    assert.deepEqual(json.plans_2d[1].bounds, { min_x: -4, max_x: 6, min_z: 23, max_z: 33 });
    assert.equal(json.plans_2d[0].raster, null);
    assert.match(json.plans_2d[0].no_raster_reason, /no orthomosaic/);
    assert.deepEqual(json.plans_2d[0].items_drawn, { annotations: [], inventory_items: [], measurements: [json.measurements[0].id] });
    assert.equal(json.extra_remarks, 'Climb needed for leg C.');
    assert.equal(json.options.include_only_visible, true);
    if (!requireTool(t, '/usr/bin/pdftotext', 'poppler-utils')) return;
    const text = (await run('/usr/bin/pdftotext', ['-layout', pdfPath, '-'])).stdout;
    assert.ok(text.includes('Climb needed for leg C.'));
    assert.ok(text.includes('2D plans'));
    assert.ok(!text.includes('Annotations'));
    assert.ok(!text.includes('Inventory'));
    assert.ok(!text.includes('@example.test'));
    assert.ok(!text.includes('Base plate'));
    const images = (await run('/usr/bin/pdfimages', ['-list', pdfPath])).stdout.trim().split('\n').slice(2);
    assert.equal(images.length, 0, 'no photo crops without annotations');
  });

  it('include_only_visible leaves hidden annotations and measurements out', async () => {
    const { json } = await report({ include_only_visible: true }, 'visible', { 'accept-language': 'de' });
    assert.deepEqual([json.reported_by.preferred_language, json.reported_by.country], ['de', null], 'a tag without a region: no country');
    assert.deepEqual(
      json.annotations.map((a: any) => a.type),
      ['Corrosion', 'Crack'],
    );
    assert.ok(!json.measurements.some((m: any) => m.name === 'Hidden line'));
  });

  it('refuses a second request while one is being built (409), and invalid bodies (400)', async () => {
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspectionId}/`, { report_status: 'processing' });
    const busy = await account.client.request('POST', `/v1/inspections/${inspectionId}/report/`, {});
    assert.equal(busy.status, 409);
    await account.client.expect(200, 'PATCH', `/v1/inspections/${inspectionId}/`, { report_status: 'available' });
    for (const [body, field] of [
      [{ include_email: 'sometimes' }, 'include_email'],
      [{ include_2d_plans: { yes: true } }, 'include_2d_plans'],
      [{ extra_remarks: 'x'.repeat(10001) }, 'extra_remarks'],
    ] as const) {
      const response = await account.client.request('POST', `/v1/inspections/${inspectionId}/report/`, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.ok(response.body[field], JSON.stringify(response.body));
    }
  });

  it('keeps only the latest report files in storage', async () => {
    const listing = await system.store.listObjects(system.config.storageBucket, { prefix: `inspection-service/inspections/${inspectionId}/report/` });
    // The PDF and the JSON, and their copies for share holders (issue 27) in the same generation's folder.
    const keys = listing.objects.map((o) => o.key);
    assert.equal(keys.length, 4, keys.join(', '));
    assert.equal(new Set(keys.map((key) => key.split('/')[4])).size, 1, keys.join(', '));
    assert.equal(keys.filter((key) => key.includes('/shared/')).length, 2, keys.join(', '));
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});

it("report locale: Accept-Language's preferred tag (highest q, first among equals) gives preferred_language and country; anything else null", () => {
  const cases: [string | undefined, string | null, string | null][] = [
    [undefined, null, null],
    ['*', null, null],
    ['de-CH', 'de', 'CH'],
    ['EN-us', 'en', 'US'],
    ['zh-Hant-TW, en;q=0.9', 'zh', 'TW'],
    ['es-419', 'es', null],
    ['en;q=0.8, it-IT;q=0.9', 'it', 'IT'],
    ['fr;q=0, pt-BR;q=0.1', 'pt', 'BR'],
    ['nl-BE, de-DE', 'nl', 'BE'],
    ['en-GB;q=abc, ja', 'ja', null],
    ['not a tag!, 12', null, null],
  ];
  for (const [header, language, country] of cases) {
    assert.deepEqual(localeOfAcceptLanguage(header), { preferred_language: language, country }, String(header));
  }
});
