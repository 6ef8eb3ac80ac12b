// The orthomosaic's web-map tiles (src/inspection/ortho/), through HTTP on an ephemeral port: an
// inspection processed by the nodeodm engine against the fake NodeODM node, whose orthophoto is a
// real RGBA Cloud-Optimized GeoTIFF made here by gdal_translate (quadrants of known colours over
// FAKE_RASTER_EXTENT in UTM 15N, a transparent corner), so that every pixel of a served tile can be
// checked against the colour of the raster at its position (tile pixel -> WGS 84 -> UTM).
// Then what must not work: no orthomosaic (200 `available: false` with the cloud's reason, its tiles 404), a bad z/x/y (400), another
// organization (404), no credentials (401); a share-token holder reads the tiles; a truncated TIFF
// and a TIFF claiming 10^9 x 10^9 pixels answer 422, never 500.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import proj4 from 'proj4';
import sharp from 'sharp';
import { sql } from 'kysely';
import { toolMissingReason } from './helpers/system-tools.ts';
import { startTestSystem, tempDir, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { startFakeNodeOdm, FAKE_ORIGIN, FAKE_RASTER_EXTENT, type FakeNodeOdm } from './helpers/fake-nodeodm.ts';
import { generateGeotaggedJpeg } from '../scripts/generate-demo-images.ts';
import { mercatorLonLat, mercatorPixel, renderTile } from '../src/inspection/ortho/tile-renderer.ts';
import { openStoredCog } from '../src/inspection/ortho/stored-cog.ts';
import { GDAL_TRANSLATE, ORTHO_HEIGHT, ORTHO_HOLE, ORTHO_WIDTH, RED, orthoColourAt, quadrantCog } from './helpers/ortho-fixtures.ts';

const R = FAKE_RASTER_EXTENT;
const WIDTH = ORTHO_WIDTH;
const HEIGHT = ORTHO_HEIGHT;
const HOLE = ORTHO_HOLE;
const colourAt = orthoColourAt;

const toUtm = proj4('EPSG:4326', R.proj4);

/**
 * Compares a tile with the raster, pixel by pixel: returns the pixels that differ, leaving out those
 * within `margin` metres of an edge of a colour (quadrant borders, the raster's edges, the hole),
 * where one raster pixel more or less is a matter of rounding.
 */
function differences(png: { data: Buffer; width: number }, z: number, x: number, y: number): string[] {
  const wrong: string[] = [];
  const [, lat] = mercatorLonLat(z, (x + 0.5) * 256, (y + 0.5) * 256);
  const tilePixel = (156543.03392804097 / 2 ** z) * Math.cos((lat * Math.PI) / 180);
  const margin = Math.max(2 * tilePixel, 4 * R.orthoPixel);
  const edgesX = [R.west, R.west + R.width / 2, R.east - HOLE * R.orthoPixel, R.east];
  const edgesY = [R.north, R.north - R.height / 2, R.south + HOLE * R.orthoPixel, R.south];
  for (let v = 0; v < 256; v++) {
    for (let u = 0; u < 256; u++) {
      const [lon, lat2] = mercatorLonLat(z, x * 256 + u + 0.5, y * 256 + v + 0.5);
      const [e, n] = toUtm.forward([lon, lat2]);
      if (edgesX.some((edge) => Math.abs(e - edge) < margin) || edgesY.some((edge) => Math.abs(n - edge) < margin)) continue;
      const expected = colourAt(Math.floor((e - R.west) / R.orthoPixel), Math.floor((R.north - n) / R.orthoPixel));
      const at = (v * png.width + u) * 4;
      const got = [...png.data.subarray(at, at + 4)];
      const same = expected[3] === 0 ? got[3] === 0 : got.every((c, k) => Math.abs(c - expected[k]) <= 2);
      if (!same) wrong.push(`(${u},${v}) ${got.join(',')} instead of ${expected.join(',')}`);
    }
  }
  return wrong;
}

/** The XYZ tile holding a UTM point at zoom z. */
function tileAt(z: number, e: number, n: number): [number, number] {
  const [lon, lat] = toUtm.inverse([e, n]);
  const [px, py] = mercatorPixel(z, lat, lon);
  return [Math.floor(px / 256), Math.floor(py / 256)];
}

describe('inspection: orthomosaic tiles (nodeodm engine, fake node with a COG of known colours)', { skip: toolMissingReason(GDAL_TRANSLATE, 'gdal-bin') }, () => {
  let node: FakeNodeOdm;
  let system: TestSystem;
  let account: TestAccount;
  let other: TestAccount;
  let withOrtho: any;
  let withoutOrtho: any;
  let images: { name: string; body: Buffer }[];
  const work = tempDir('oi-ortho-');

  before(async () => {
    node = await startFakeNodeOdm({ pollsToFinish: 2, orthophoto: await quadrantCog(work) });
    system = await startTestSystem({ engine: 'exif', engines: ['nodeodm'], nodeodmUrl: node.url, nodeodmPollSeconds: 0, processingBackendEngines: { vortex: 'nodeodm' } });
    account = await system.newAccount({ projects: 5 });
    other = await system.newAccount({ projects: 1 });
    images = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => ({
        name: `img${i}.jpg`,
        body: await generateGeotaggedJpeg({ latitude: FAKE_ORIGIN.latitude + i * 0.0001, longitude: FAKE_ORIGIN.longitude + i * 0.0001, altitude: FAKE_ORIGIN.altitude, seed: i + 1, width: 160, height: 120 }),
      })),
    );
    withOrtho = await processed({ generate_point_cloud: true, generate_ortho: true });
    withoutOrtho = await processed({ generate_point_cloud: true, generate_ortho: false });
  });
  after(async () => {
    const errors = system ? [...system.inspection.serverErrors] : [];
    await system?.stop();
    await node?.close();
    fs.rmSync(work, { recursive: true, force: true });
    assert.deepEqual(errors, [], 'no request answered 5xx');
  });

  async function processed(processingParameters: Record<string, unknown>) {
    const client = account.client;
    const asset = await client.createAsset({ name: 'Mast', type: 1, latitude: FAKE_ORIGIN.latitude.toFixed(8), longitude: FAKE_ORIGIN.longitude.toFixed(8) });
    const inspection = await client.createInspection({ asset: asset.id, processing_parameters: processingParameters, processing_backend: 'vortex' });
    await client.register(inspection.id, await client.upload(await client.storageCredentials(inspection.id), images));
    await client.process(inspection.id);
    const done = await client.waitUntilSettled(inspection.id, { timeoutMs: 120_000 });
    assert.equal(done.status, 7, JSON.stringify(done));
    return done;
  }

  /** GET a tile with the account's credentials (or the given headers instead). */
  async function tile(id: number, z: number | string, x: number | string, y: number | string, headers?: Record<string, string>, query = '') {
    const client = account.client;
    const response = await fetch(`${system.urls.inspection}/v1/inspections/${id}/ortho/tiles/${z}/${x}/${y}.png${query}`, {
      headers: headers ?? { 'x-api-key': client.options.apiKey, authorization: `Bearer ${client.token}`, ...(client.options.organizationUuid ? { 'vendor-organization-uuid': client.options.organizationUuid } : {}) },
    });
    const body = Buffer.from(await response.arrayBuffer());
    return { status: response.status, headers: response.headers, body, json: () => JSON.parse(body.toString('utf8')) };
  }

  async function pixels(png: Buffer) {
    const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height, info.channels], [256, 256, 4]);
    return { data, width: info.width };
  }

  it('GET ortho/: the extent in WGS 84, the zooms, the photos and the tile URL template', async () => {
    const info = await account.client.expect(200, 'GET', `/v1/inspections/${withOrtho.id}/ortho/`);
    assert.equal(info.available, true);
    const [swLon, swLat] = toUtm.inverse([R.west, R.south]);
    const [neLon, neLat] = toUtm.inverse([R.east, R.north]);
    // The UTM rectangle's corners; its WGS 84 extent is a little larger (the grid is not north-up in WGS 84).
    assert.ok(info.bounds.sw[0] <= swLat + 1e-9 && info.bounds.sw[1] <= swLon + 1e-9 && info.bounds.ne[0] >= neLat - 1e-9 && info.bounds.ne[1] >= neLon - 1e-9, JSON.stringify(info.bounds));
    assert.ok(info.bounds.ne[0] - info.bounds.sw[0] < 0.002, 'about 200 m north-south');
    // 0.25 m pixels reach zoom 18 (0.41 m), not 19; 200 m fit in one tile at 17.
    assert.deepEqual([info.min_zoom, info.max_zoom], [17, 18]);
    assert.ok(Math.abs(info.resolution_m - R.orthoPixel) < 0.005, `ground resolution ${info.resolution_m} m (measured on the ellipsoid by the cloud)`);
    assert.deepEqual([info.width, info.height], [WIDTH, HEIGHT]);
    assert.equal(info.photos, 4);
    assert.equal(info.tile_url, `/v1/inspections/${withOrtho.id}/ortho/tiles/{z}/{x}/{y}.png`);
  });

  it('a tile at the raster\'s north-west quadrant is red where the raster is red, its neighbours green and blue, outside transparent (max zoom, full resolution)', async () => {
    const z = 18;
    const [x, y] = tileAt(z, R.west + R.width / 4, R.north - R.height / 4);
    const answer = await tile(withOrtho.id, z, x, y);
    assert.equal(answer.status, 200, answer.body.toString());
    assert.equal(answer.headers.get('content-type'), 'image/png');
    const png = await pixels(answer.body);
    assert.deepEqual(differences(png, z, x, y).slice(0, 5), []);
    const count = (colour: number[]) => Array.from({ length: 256 * 256 }, (_, i) => i).filter((i) => colour.every((c, k) => png.data[i * 4 + k] === c)).length;
    assert.ok(count(RED) > 20_000, `mostly red: ${count(RED)} red pixels`);
  });

  it('every tile over the raster matches it, at the zooms of the full resolution, of the overviews and beyond max_zoom; the corner hole and the outside are transparent', async () => {
    for (const z of [14, 16, 17, 18, 20]) {
      const corners = [tileAt(z, R.west, R.north), tileAt(z, R.east, R.south)];
      let checked = 0;
      for (let x = corners[0][0]; x <= corners[1][0]; x++) {
        for (let y = corners[0][1]; y <= corners[1][1]; y++) {
          if (z === 20 && (x + y) % 5 !== 0) continue; // 13 x 16 tiles at 20: a sample
          const answer = await tile(withOrtho.id, z, x, y);
          assert.equal(answer.status, 200, `${z}/${x}/${y}: ${answer.body.toString()}`);
          assert.deepEqual(differences(await pixels(answer.body), z, x, y).slice(0, 5), [], `${z}/${x}/${y}`);
          checked++;
        }
      }
      assert.ok(checked > 0, `zoom ${z}`);
    }
  });

  it('the image read is the overview matching the zoom: the full resolution at max_zoom, the coarsest overview from far out, a window of a few blocks', async () => {
    const row = await system.inspection.db.selectFrom('inspection.inspections').select('reconstruction').where('id', '=', withOrtho.id).executeTakeFirstOrThrow();
    const layer = (row.reconstruction as any).rasters.orthomosaic;
    const cog = await openStoredCog(system.store, layer.bucket, layer.key);
    // 640 x 800 in 256-pixel blocks: overviews 320 x 400 and 160 x 200 (GDAL's COG driver stops below a block).
    assert.deepEqual(cog.levels.map((l) => [l.width, l.height]), [[640, 800], [320, 400], [160, 200]]);
    const levelAt = async (z: number) => {
      const [x, y] = tileAt(z, R.west + R.width / 4, R.north - R.height / 4);
      const rendered = (await renderTile(cog, layer.bounds, z, x, y))!;
      const [x0, y0, x1, y1] = rendered.window;
      return { level: rendered.level, pixels: (x1 - x0) * (y1 - y0) };
    };
    // Tile pixels at this latitude: z18 0.41 m, z17 0.82 m, z16 1.6 m, z14 6.5 m; the raster's 0.25, 0.5 and 1 m.
    assert.deepEqual((await levelAt(20)).level, 0);
    assert.deepEqual((await levelAt(18)).level, 0);
    assert.deepEqual((await levelAt(17)).level, 1);
    assert.deepEqual((await levelAt(16)).level, 2);
    const far = await levelAt(12);
    assert.equal(far.level, 2);
    assert.ok(far.pixels <= 160 * 200, `at zoom 12 at most the smallest overview is read: ${far.pixels} pixels`);
    const near = await levelAt(18);
    assert.ok(near.pixels <= 2 * 256 * 256 * 2, `at zoom 18 a window of about a tile: ${near.pixels} pixels`);
  });

  it('a tile away from the raster is a transparent PNG; the ETag and cache headers hold per file; If-None-Match answers 304', async () => {
    const [x, y] = tileAt(18, R.west - 500, R.north + 500);
    const away = await tile(withOrtho.id, 18, x, y);
    assert.equal(away.status, 200);
    const png = await pixels(away.body);
    assert.ok(png.data.every((_, i) => i % 4 !== 3 || png.data[i] === 0), 'fully transparent');

    const [nx, ny] = tileAt(18, R.west + 10, R.north - 10);
    const first = await tile(withOrtho.id, 18, nx, ny);
    const again = await tile(withOrtho.id, 18, nx, ny);
    assert.equal(first.headers.get('etag'), again.headers.get('etag'));
    assert.match(first.headers.get('cache-control') ?? '', /private.*immutable/);
    assert.notEqual(first.headers.get('etag'), away.headers.get('etag'), 'one ETag per tile');
    const client = account.client;
    const revalidated = await tile(withOrtho.id, 18, nx, ny, { 'x-api-key': client.options.apiKey, authorization: `Bearer ${client.token}`, 'if-none-match': first.headers.get('etag')!, ...(client.options.organizationUuid ? { 'vendor-organization-uuid': client.options.organizationUuid } : {}) });
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.body.length, 0);
  });

  it('no orthomosaic: 200 `available: false` with the cloud\'s reason when it gave one (no failed load for the console), its tiles 404 in the CONTRACT\'s format', async () => {
    const missing = await account.client.request('GET', `/v1/inspections/${withoutOrtho.id}/ortho/`);
    assert.equal(missing.status, 200);
    assert.equal(missing.body.available, false);
    assert.deepEqual(Object.keys(missing.body).sort(), ['available', 'detail', 'reason']);
    assert.ok(typeof missing.body.reason === 'string' && missing.body.reason.length > 0, JSON.stringify(missing.body));
    assert.ok(missing.body.detail.includes(missing.body.reason), missing.body.detail);
    const noTile = await tile(withoutOrtho.id, 18, 1000, 1000);
    assert.equal(noTile.status, 404);
    assert.equal(noTile.json().code, 'not_found');
    const asset = await account.client.createAsset({ name: 'New mast', type: 1 });
    const unprocessed = await account.client.createInspection({ asset: asset.id });
    const before = await account.client.request('GET', `/v1/inspections/${unprocessed.id}/ortho/`);
    assert.equal(before.status, 200);
    assert.deepEqual([before.body.available, before.body.reason], [false, null]);
    assert.match(before.body.detail, /not been processed/);
  });

  it('a z, x or y outside its range is a 400 naming the field', async () => {
    const cases: [number | string, number | string, number | string, string][] = [
      [25, 0, 0, 'z'],
      [-1, 0, 0, 'z'],
      ['a', 0, 0, 'z'],
      [3, 8, 0, 'x'],
      [3, 0, 8, 'y'],
      [18, 'x', 0, 'x'],
      [18, 0, -5, 'y'],
      [0.5, 0, 0, 'z'],
    ];
    for (const [z, x, y, field] of cases) {
      const answer = await tile(withOrtho.id, z, x, y);
      assert.equal(answer.status, 400, `${z}/${x}/${y}: ${answer.body.toString()}`);
      assert.ok(Array.isArray(answer.json()[field]), `${z}/${x}/${y} names ${field}: ${answer.body.toString()}`);
    }
  });

  it('another organization\'s inspection is not found (404), no credentials are a 401; a share-token holder reads the record and the tiles', async () => {
    const [x, y] = tileAt(18, R.west + 10, R.north - 10);
    const foreign = await other.client.request('GET', `/v1/inspections/${withOrtho.id}/ortho/`);
    assert.equal(foreign.status, 404);
    const foreignTile = await tile(withOrtho.id, 18, x, y, { 'x-api-key': other.client.options.apiKey, authorization: `Bearer ${other.client.token}`, ...(other.organizationUuid ? { 'vendor-organization-uuid': other.organizationUuid } : {}) });
    assert.equal(foreignTile.status, 404);
    assert.equal(foreignTile.json().code, 'not_found');
    const anonymous = await tile(withOrtho.id, 18, x, y, {});
    assert.equal(anonymous.status, 401);

    const share = await account.client.expect(201, 'POST', `/v1/inspections/${withOrtho.id}/share_tokens/`, { label: 'map' });
    const byHeader = await tile(withOrtho.id, 18, x, y, { 'x-share-token': share.token });
    assert.equal(byHeader.status, 200, byHeader.body.toString());
    const byQuery = await tile(withOrtho.id, 18, x, y, {}, `?share_token=${encodeURIComponent(share.token)}`);
    assert.equal(byQuery.status, 200);
    assert.ok(byQuery.body.equals(byHeader.body));
    const record = await fetch(`${system.urls.inspection}/v1/inspections/${withOrtho.id}/ortho/`, { headers: { 'x-share-token': share.token } });
    assert.equal(record.status, 200);
    // The token opens its own inspection only.
    const elsewhere = await tile(withoutOrtho.id, 18, x, y, { 'x-share-token': share.token });
    assert.ok([403, 404].includes(elsewhere.status), String(elsewhere.status));
  });

  it('a truncated TIFF, a TIFF claiming 10^9 x 10^9 pixels and a file that is no TIFF answer 422 with the reason, never 500, and quickly', async () => {
    const row = await system.inspection.db.selectFrom('inspection.inspections').select('reconstruction').where('id', '=', withOrtho.id).executeTakeFirstOrThrow();
    const good = (row.reconstruction as any).rasters.orthomosaic;
    const cog = fs.readFileSync(path.join(work, 'quadrants.tif'));
    // [label, file, the status of a tile at zoom 18, at zoom 12]. A COG stores its overviews before the
    // full resolution: cut at a third, its overviews are whole and a low zoom is still drawn.
    const hostile: [string, Buffer, number, number][] = [
      ['truncated', cog.subarray(0, Math.floor(cog.length / 3)), 422, 200],
      ['huge', hugeTiff(false), 422, 422],
      ['huge tiled', hugeTiff(true), 422, 422],
      ['not a tiff', Buffer.from('%PDF-1.4 certainly not an image'), 422, 422],
      ['truncated header', cog.subarray(0, 100), 422, 422],
    ];
    const [x, y] = tileAt(18, R.west + 10, R.north - 10);
    const [lowX, lowY] = tileAt(12, R.west + 10, R.north - 10);
    // An inspection of the account whose reconstruction record names another file as its orthomosaic.
    const naming = async (key: string, etag: string) => {
      const asset = await account.client.createAsset({ name: 'Hostile', type: 1 });
      const inspection = await account.client.createInspection({ asset: asset.id });
      const reconstruction = { ...(row.reconstruction as any), rasters: { ...(row.reconstruction as any).rasters, orthomosaic: { ...good, key, etag } } };
      await sql`update inspection.inspections set reconstruction = ${JSON.stringify(reconstruction)}::jsonb where id = ${inspection.id}`.execute(system.inspection.db);
      return inspection;
    };
    for (const [label, bytes, ...expected] of hostile) {
      const key = `test-hostile/${crypto.randomUUID()}/${label.replace(/ /g, '-')}.tif`;
      const stored = await system.store.putObject(good.bucket, key, bytes);
      const inspection = await naming(key, stored.etag);
      for (const [i, [z, tx, ty]] of [[18, x, y], [12, lowX, lowY]].entries()) {
        const started = performance.now();
        const answer = await tile(inspection.id, z, tx, ty);
        const ms = performance.now() - started;
        assert.equal(answer.status, expected[i], `${label} at ${z}: ${answer.status} ${answer.status === 200 ? 'PNG' : answer.body.toString()}`);
        if (answer.status === 200) continue;
        const body = answer.json();
        assert.match(body.code, /^raster_(unreadable|unsupported|too_large)$/);
        assert.ok(body.detail.length > 40, body.detail);
        console.log(`# ${label} at zoom ${z}: 422 ${body.code} in ${ms.toFixed(0)} ms: ${body.detail}`);
      }
    }
    // A file gone from storage: 409, not 500.
    const gone = await naming(`test-hostile/${crypto.randomUUID()}/gone.tif`, '"gone"');
    const answer = await tile(gone.id, 18, x, y);
    assert.equal(answer.status, 409, answer.body.toString());
  });
});

/**
 * A classic TIFF of one IFD claiming 10^9 x 10^9 RGB pixels georeferenced over FAKE_RASTER_EXTENT
 * (EPSG:32615), as a node could send: in one strip of 12 bytes, or in 256-pixel tiles of which one
 * is there (no overview: from far away the tile would need the whole raster).
 */
function hugeTiff(tiled: boolean): Buffer {
  const size = 1_000_000_000;
  const entries: [number, number, number[]][] = [
    [256, 4, [size]],
    [257, 4, [size]],
    [258, 3, [8, 8, 8]],
    [259, 3, [1]],
    [262, 3, [2]],
    [tiled ? 324 : 273, 4, [0]], // the pixels' offset, patched below
    [277, 3, [3]],
    ...(tiled
      ? ([[322, 3, [256]], [323, 3, [256]], [325, 4, [256 * 256 * 3]]] as [number, number, number[]][])
      : ([[278, 4, [size]], [279, 4, [12]]] as [number, number, number[]][])),
    [284, 3, [1]],
    [33550, 12, [R.width / size, R.height / size, 0]],
    [33922, 12, [0, 0, 0, R.west, R.north, 0]],
    [34735, 3, [1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, R.epsg]],
  ];
  const width = (type: number) => (type === 3 ? 2 : type === 4 ? 4 : 8);
  const ifdSize = 2 + entries.length * 12 + 4;
  const table = Buffer.alloc(ifdSize);
  const extra: Buffer[] = [];
  let extraAt = 8 + ifdSize;
  table.writeUInt16LE(entries.length, 0);
  entries.forEach(([tag, type, values], i) => {
    const at = 2 + i * 12;
    table.writeUInt16LE(tag, at);
    table.writeUInt16LE(type, at + 2);
    table.writeUInt32LE(values.length, at + 4);
    const bytes = Buffer.alloc(values.length * width(type));
    values.forEach((v, k) => (type === 3 ? bytes.writeUInt16LE(v, k * 2) : type === 4 ? bytes.writeUInt32LE(v, k * 4) : bytes.writeDoubleLE(v, k * 8)));
    if (bytes.length <= 4) bytes.copy(table, at + 8);
    else {
      table.writeUInt32LE(extraAt, at + 8);
      extra.push(bytes);
      extraAt += bytes.length;
    }
  });
  table.writeUInt32LE(extraAt, 2 + 5 * 12 + 8); // the pixels after everything else
  return Buffer.concat([Buffer.from([0x49, 0x49, 42, 0, 8, 0, 0, 0]), table, ...extra, Buffer.alloc(tiled ? 256 * 256 * 3 : 12, 200)]);
}
