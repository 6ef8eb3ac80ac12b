// Cloud-Optimized GeoTIFFs of the colmap engine's rasters (src/cloud/processing/rasters/
// cog-writer.ts, output-raster.ts): GDAL must see the COG layout, overviews, the nodata value, the
// output system's EPSG code and the right corners; the pixels must read back as written; and the
// service's own GeoTIFF reading (geotiff.ts readGeoTiffGeoreference, map-layers.ts describeRaster)
// must place them where they are. A DSM in WGS 84 / UTM 30N + EGM96 (brighton_beach's system), a
// DSM in NZGD2000 / NZTM (EPSG:2193, northing first), an RGBA orthomosaic, thumbnails, an
// arbitrary system, and a cancel.
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { requireTool } from './helpers/system-tools.ts';
import { gridCovering, type Grid } from '../src/cloud/processing/rasters/grid.ts';
import { thumbnail, writeCog } from '../src/cloud/processing/rasters/cog-writer.ts';
import { gridGeoreference, gridToOutput } from '../src/cloud/processing/rasters/output-raster.ts';
import { runGdal } from '../src/cloud/processing/rasters/gdal-tools.ts';
import { resolveOutputCrs, type OutputCoordinateSystem } from '../src/cloud/coordinate-systems/crs.ts';
import { GeoTiffError, readGeoTiffGeoreference, type RangeReader } from '../src/cloud/processing/geotiff.ts';
import { describeRaster } from '../src/cloud/processing/map-layers.ts';
import { LocalDiskObjectStore } from '../src/infra/storage/local-disk-store.ts';

const GDALINFO = '/usr/bin/gdalinfo';
/** EPSG:2193 as `gdalsrsinfo -o wkt2 EPSG:2193` gives it: northing first. */
const NZTM_WKT2 =
  'PROJCRS["NZGD2000 / New Zealand Transverse Mercator 2000", BASEGEOGCRS["NZGD2000", DATUM["New Zealand Geodetic Datum 2000", ELLIPSOID["GRS 1980",6378137,298.257222101, LENGTHUNIT["metre",1]]], PRIMEM["Greenwich",0, ANGLEUNIT["degree",0.0174532925199433]], ID["EPSG",4167]], CONVERSION["New Zealand Transverse Mercator 2000", METHOD["Transverse Mercator", ID["EPSG",9807]], PARAMETER["Latitude of natural origin",0, ANGLEUNIT["degree",0.0174532925199433], ID["EPSG",8801]], PARAMETER["Longitude of natural origin",173, ANGLEUNIT["degree",0.0174532925199433], ID["EPSG",8802]], PARAMETER["Scale factor at natural origin",0.9996, SCALEUNIT["unity",1], ID["EPSG",8805]], PARAMETER["False easting",1600000, LENGTHUNIT["metre",1], ID["EPSG",8806]], PARAMETER["False northing",10000000, LENGTHUNIT["metre",1], ID["EPSG",8807]]], CS[Cartesian,2], AXIS["northing (N)",north, ORDER[1], LENGTHUNIT["metre",1]], AXIS["easting (E)",east, ORDER[2], LENGTHUNIT["metre",1]], USAGE[ SCOPE["Engineering survey, topographic mapping."], AREA["New Zealand - North Island, South Island, Stewart Island - onshore."], BBOX[-47.33,166.37,-34.1,178.63]], ID["EPSG",2193]]';
const BUCKET = 'outputs';

interface GdalInfo {
  size: [number, number];
  metadata: Record<string, Record<string, string>>;
  coordinateSystem?: { wkt: string; dataAxisToSRSAxisMapping: number[] };
  cornerCoordinates: { upperLeft: [number, number]; lowerRight: [number, number] };
  bands: { type: string; block: [number, number]; noDataValue?: number; colorInterpretation: string; overviews?: { size: [number, number] }[] }[];
}

function outputSystem(requested: string | null): OutputCoordinateSystem {
  const result = resolveOutputCrs({ requested, positions: [{ latitude: 50.82, longitude: -0.17 }] });
  assert.ok(result.ok);
  return result.crs;
}

/** A grid of heights (local frame) with its western quarter empty. */
function heightGrid(width: number, height: number, cellSize: number, originEast: number, originNorth: number): Grid {
  const grid = gridCovering(originEast, originNorth - height * cellSize, originEast + width * cellSize, originNorth, cellSize);
  assert.equal(grid.width, width);
  for (let r = 0; r < height; r++) for (let c = 0; c < width; c++) grid.values[r * width + c] = c < width / 4 ? NaN : Math.sin(c / 40) * 3 + r * 0.01 - 2.5;
  return grid;
}

function fileReader(file: string): RangeReader {
  return async (start, end) => {
    const handle = await fs.promises.open(file, 'r');
    try {
      const buffer = Buffer.alloc(end - start + 1);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  };
}

/** Every pixel of band-sequential `bands` of the file, as GDAL reads them (through ENVI raw). */
async function readPixels(file: string, type: 'Float32' | 'Byte', dir: string): Promise<Float32Array | Uint8Array> {
  const raw = path.join(dir, `read-${path.basename(file)}.raw`);
  await runGdal('gdal_translate', ['-q', '-of', 'ENVI', '-co', 'INTERLEAVE=BSQ', '-ot', type, file, raw]);
  const bytes = fs.readFileSync(raw);
  return type === 'Float32' ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4) : new Uint8Array(bytes);
}

async function gdalInfo(file: string): Promise<GdalInfo> {
  return JSON.parse(await runGdal('gdalinfo', ['-json', file])) as GdalInfo;
}

describe('writeCog', () => {
  let dir: string;
  let store: LocalDiskObjectStore;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rasters-cog-'));
    store = new LocalDiskObjectStore({ rootDir: path.join(dir, 'store'), buckets: [BUCKET] });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const describeFile = async (file: string) => {
    const key = `rasters/${path.basename(file)}`;
    await store.putObject(BUCKET, key, fs.readFileSync(file));
    return describeRaster(store, BUCKET, key);
  };
  const gdal = (t: TestContext) => requireTool(t, GDALINFO, 'gdal-bin');

  it('writes a DSM in WGS 84 / UTM 30N + EGM96 as a COG that GDAL and the service read where it is', async (t) => {
    if (!gdal(t)) return;
    const crs = outputSystem(null);
    assert.equal(crs.horizontal_epsg, 32630);
    const frame = { offsetOutput: [699000, 5634000, 50] as [number, number, number], swapped: false };
    const grid = heightGrid(1100, 700, 0.1, -31.5, 42.25);
    const file = path.join(dir, 'dsm.tif');
    const { raster, georef } = gridToOutput(grid, frame, crs);
    await writeCog(file, raster, georef, { blockSize: 256 });
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f !== 'store'), ['dsm.tif'], 'no working files left');

    const info = await gdalInfo(file);
    assert.deepEqual(info.size, [1100, 700]);
    assert.equal(info.metadata.IMAGE_STRUCTURE.LAYOUT, 'COG');
    assert.equal(info.metadata.IMAGE_STRUCTURE.COMPRESSION, 'DEFLATE');
    assert.equal(info.metadata.IMAGE_STRUCTURE.PREDICTOR, '3');
    const band = info.bands[0];
    assert.equal(band.type, 'Float32');
    assert.deepEqual(band.block, [256, 256]);
    assert.equal(band.noDataValue, -9999);
    assert.deepEqual(band.overviews?.map((o) => o.size), [[550, 350], [275, 175], [137, 87]].slice(0, band.overviews?.length));
    assert.ok((band.overviews?.length ?? 0) >= 2, 'overviews down to one tile');
    assert.match(info.coordinateSystem!.wkt, /ID\["EPSG",32630\]/);
    assert.match(info.coordinateSystem!.wkt, /ID\["EPSG",5773\]/, 'the vertical system is kept');
    const [x0, y0] = [699000 - 31.5, 5634000 + 42.25];
    assertNear(info.cornerCoordinates.upperLeft, [x0, y0]);
    assertNear(info.cornerCoordinates.lowerRight, [x0 + 110, y0 - 70]);

    const pixels = await readPixels(file, 'Float32', dir);
    for (let i = 0; i < grid.values.length; i++) {
      const expected = Number.isNaN(grid.values[i]) ? -9999 : Math.fround(grid.values[i] + 50);
      if (pixels[i] !== expected) assert.fail(`pixel ${i}: ${pixels[i]} instead of ${expected}`);
    }

    const georeference = await readGeoTiffGeoreference(fileReader(file));
    assert.equal(georeference.epsg, 32630);
    assertNear(georeference.toModel(0, 0), [x0, y0]);
    assertNear(georeference.toModel(1100, 700), [x0 + 110, y0 - 70]);
    const described = await describeFile(file);
    assert.ok(described);
    assert.equal(described.epsg, 32630);
    assert.ok(Math.abs(described.resolution_m - 0.1) < 0.001, `resolution ${described.resolution_m}`);
    // 699000 E 5634000 N in zone 30N: about 50.8233 N, 0.1745 W (Brighton)
    assert.ok(described.bounds.sw[0] > 50.82 && described.bounds.ne[0] < 50.83, JSON.stringify(described.bounds));
    assert.ok(described.bounds.sw[1] > -0.18 && described.bounds.ne[1] < -0.17, JSON.stringify(described.bounds));
  });

  it('by default tiles by 256 and has overviews whenever the raster is larger than a tile (brighton\'s DSM of ~500 cells had none at 512)', async (t) => {
    if (!gdal(t)) return;
    const crs = outputSystem(null);
    const frame = { offsetOutput: [699000, 5634000, 50] as [number, number, number], swapped: false };
    const sizes: Record<string, number[][]> = {};
    for (const [name, width, height] of [['larger', 500, 300], ['one-tile', 250, 200]] as const) {
      const file = path.join(dir, `${name}.tif`);
      const { raster, georef } = gridToOutput(heightGrid(width, height, 0.25, 0, 0), frame, crs);
      await writeCog(file, raster, georef);
      const band = (await gdalInfo(file)).bands[0];
      assert.deepEqual(band.block, [256, 256]);
      sizes[name] = (band.overviews ?? []).map((o) => o.size);
    }
    assert.deepEqual(sizes.larger, [[250, 150]], 'halved until one tile holds it');
    assert.deepEqual(sizes['one-tile'], [], 'a raster within one tile needs none');
  });

  it('keeps easting as x for a northing-first system (EPSG:2193), the offset swapped back', async (t) => {
    if (!gdal(t)) return;
    const crs = outputSystem(NZTM_WKT2);
    assert.deepEqual(crs.axis_order, ['north', 'east']);
    // the local frame's offset in the system's own order: northing, easting, height
    const frame = { offsetOutput: [5428000, 1748000, 10] as [number, number, number], swapped: true };
    const grid = heightGrid(300, 200, 0.5, 12.5, -3.5);
    const file = path.join(dir, 'dsm-nztm.tif');
    const { raster, georef } = gridToOutput(grid, frame, crs);
    await writeCog(file, raster, georef, { blockSize: 128 });
    const info = await gdalInfo(file);
    assert.match(info.coordinateSystem!.wkt, /ID\["EPSG",2193\]/);
    assert.deepEqual(info.coordinateSystem!.dataAxisToSRSAxisMapping.slice(0, 2), [2, 1], 'GDAL maps the GeoTIFF x to the second (east) axis');
    assertNear(info.cornerCoordinates.upperLeft, [1748000 + 12.5, 5428000 - 3.5]);
    assertNear(info.cornerCoordinates.lowerRight, [1748000 + 12.5 + 150, 5428000 - 3.5 - 100]);
    const described = await describeFile(file);
    assert.ok(described);
    assert.equal(described.epsg, 2193);
    // 1748000 E 5428000 N in NZTM: Wellington, about 41.3 S, 174.8 E
    assert.ok(described.bounds.sw[0] > -41.4 && described.bounds.ne[0] < -41.2, JSON.stringify(described.bounds));
    assert.ok(described.bounds.sw[1] > 174.7 && described.bounds.ne[1] < 174.9, JSON.stringify(described.bounds));
  });

  it('writes an RGBA orthomosaic with band 4 as alpha, and thumbnails of it and of a DSM', async (t) => {
    if (!gdal(t)) return;
    const crs = outputSystem(null);
    const frame = { offsetOutput: [699000, 5634000, 50] as [number, number, number], swapped: false };
    const grid = gridCovering(0, 0, 60, 40, 0.1);
    const [width, height] = [grid.width, grid.height];
    const data = new Uint8Array(width * height * 4);
    for (let r = 0; r < height; r++) {
      for (let c = 0; c < width; c++) {
        const i = (r * width + c) * 4;
        const inside = (c - 300) ** 2 + (r - 200) ** 2 < 190 ** 2;
        data.set(inside ? [c & 255, r & 255, (c + r) & 255, 255] : [0, 0, 0, 0], i);
      }
    }
    const file = path.join(dir, 'ortho.tif');
    await writeCog(file, { width, height, bands: 4, data }, gridGeoreference(grid, frame, crs), { blockSize: 256 });
    const info = await gdalInfo(file);
    assert.equal(info.metadata.IMAGE_STRUCTURE.LAYOUT, 'COG');
    assert.deepEqual(info.bands.map((b) => b.colorInterpretation), ['Red', 'Green', 'Blue', 'Alpha']);
    assert.ok(info.bands.every((b) => b.type === 'Byte' && b.noDataValue === undefined && (b.overviews?.length ?? 0) >= 1));
    assertNear(info.cornerCoordinates.upperLeft, [699000, 5634040]);
    const pixels = await readPixels(file, 'Byte', dir); // band sequential
    for (let b = 0; b < 4; b++) {
      for (let p = 0; p < width * height; p++) {
        if (pixels[b * width * height + p] !== data[p * 4 + b]) assert.fail(`band ${b + 1} pixel ${p}: ${pixels[b * width * height + p]} instead of ${data[p * 4 + b]}`);
      }
    }
    const described = await describeFile(file);
    assert.equal(described?.epsg, 32630);

    const png = path.join(dir, 'ortho_thumb.png');
    assert.deepEqual(await thumbnail(file, png), { width: 512, height: 341 });
    const meta = await sharp(png).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height, meta.channels], ['png', 512, 341, 4]);
    const corner = await sharp(png).extract({ left: 0, top: 0, width: 1, height: 1 }).raw().toBuffer();
    assert.equal(corner[3], 0, 'transparent outside');
    const jpeg = path.join(dir, 'ortho_thumb.jpg');
    await thumbnail(file, jpeg, { format: 'jpeg', maxSize: 256 });
    const jpegMeta = await sharp(jpeg).metadata();
    assert.deepEqual([jpegMeta.format, jpegMeta.width, jpegMeta.height, jpegMeta.channels], ['jpeg', 256, 171, 3]);

    const dsmThumb = path.join(dir, 'dsm_thumb.png');
    assert.deepEqual(await thumbnail(path.join(dir, 'dsm.tif'), dsmThumb, { maxSize: 200 }), { width: 200, height: 127 });
    const stats = await sharp(dsmThumb).stats();
    assert.ok(stats.channels[0].max - stats.channels[0].min > 100, 'heights stretched over the grey scale');
  });

  it('writes a raster of an arbitrary system without GeoKeys, which map layers leave out', async (t) => {
    if (!gdal(t)) return;
    const crs = resolveOutputCrs({ requested: null, positions: [] });
    assert.ok(crs.ok);
    const grid = heightGrid(100, 80, 1, -50, 40);
    const file = path.join(dir, 'dsm-local.tif');
    const { raster, georef } = gridToOutput(grid, { offsetOutput: [0, 0, 0], swapped: false }, crs.crs);
    await writeCog(file, raster, georef);
    const info = await gdalInfo(file);
    assert.equal(info.metadata.IMAGE_STRUCTURE.LAYOUT, 'COG');
    assertNear(info.cornerCoordinates.upperLeft, [-50, 40]);
    // GDAL writes a LOCAL_CS as a pixel-to-model transform without GeoKeys: the service's reader
    // rejects it as not georeferenced, which project-processing.ts turns into "not a map layer".
    await assert.rejects(readGeoTiffGeoreference(fileReader(file)), GeoTiffError);
    await assert.rejects(describeFile(file), GeoTiffError);
  });

  it('stops gdal_translate when the signal aborts, leaving no file behind', async (t) => {
    if (!gdal(t)) return;
    const crs = outputSystem(null);
    const grid = heightGrid(3000, 3000, 0.05, 0, 0);
    const { raster, georef } = gridToOutput(grid, { offsetOutput: [699000, 5634000, 50], swapped: false }, crs);
    const file = path.join(dir, 'cancelled.tif');
    const controller = new AbortController();
    // abort once gdal_translate has begun writing its output in the working folder
    const watcher = setInterval(() => {
      const work = fs.readdirSync(dir).find((f) => f.startsWith('.cog-'));
      if (work && fs.existsSync(path.join(dir, work, 'cog.tif'))) controller.abort(new Error('cancelled'));
    }, 5);
    try {
      await assert.rejects(writeCog(file, raster, georef, { signal: controller.signal }), /cancelled/);
    } finally {
      clearInterval(watcher);
    }
    assert.ok(controller.signal.aborted, 'aborted while gdal_translate ran');
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith('cancelled') || f.startsWith('.cog-')), []);
  });

  it('kills a GDAL tool that would never end when the signal aborts', { timeout: 20_000 }, async (t) => {
    if (!gdal(t)) return;
    // gdalinfo opening a FIFO no one writes to waits forever: only the kill ends it
    const fifo = path.join(dir, 'never.fifo');
    execFileSync('/usr/bin/mkfifo', [fifo]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('time limit')), 300);
    const run = runGdal('gdalinfo', [fifo], { signal: controller.signal });
    const outcome = await Promise.race([run.then(() => 'ended', (err: Error) => err.message), new Promise((resolve) => setTimeout(resolve, 5000, 'still running'))]);
    if (outcome === 'still running') {
      // not killed: release it (a writer that closes at once gives it an empty file) so the run ends
      fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
      await run.catch(() => undefined);
    }
    assert.equal(outcome, 'time limit');
  });
});

function assertNear(actual: readonly number[], expected: readonly number[], tolerance = 1e-6): void {
  assert.equal(actual.length, expected.length);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) <= tolerance, `${JSON.stringify(actual)} instead of ${JSON.stringify(expected)}`));
}
