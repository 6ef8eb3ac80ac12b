// The true orthomosaic (issue 28, step 6) on a synthetic scene whose every colour is known: a flat
// ground painted with a pattern of (east, north), a red-roofed blue-walled box 8 high, and cameras
// 40 above looking down, their photos and depth maps rendered by test/helpers/ray-cast-scene.ts.
// Camera A, west of the box, is the most nadir camera for a strip of ground just east of the box
// but sees the box's roof there instead; only occlusion (its depth map, or the ray march over the
// DSM without one) hands that strip to camera B, east of it. Photos darkened by known gains show
// which camera coloured a cell (the one above it) and that a seam between two exposures is ramped,
// not cut. Then the COG and thumbnail as GDAL reads them, and orthoFeasibility's refusals.
import { after, before, describe, it } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { cellCentre, gridCovering, type Grid } from '../src/cloud/processing/rasters/grid.ts';
import { orthoFeasibility, orthomosaic, type OrthoCamera } from '../src/cloud/processing/rasters/orthomosaic.ts';
import { writeOrthomosaic } from '../src/cloud/processing/rasters/orthomosaic-output.ts';
import { resolveOutputCrs } from '../src/cloud/coordinate-systems/crs.ts';
import { requireTool } from './helpers/system-tools.ts';
import { gimbalCamera, render, sees, surfaceColour, surfaceHeight, type Rgb, type SceneBox, type SceneCamera } from './helpers/ray-cast-scene.ts';

const box: SceneBox = { west: -2, east: 2, south: -2, north: 2, top: 8, roof: [230, 20, 20], wall: [20, 20, 230] };
const boxes = [box];
const size = { width: 400, height: 300, focal: 400 }; // 40 x 30 of ground from 40 up: 0.1 per pixel
const sceneCameras: SceneCamera[] = [
  gimbalCamera('A', [-4, 0, 40], { yaw: 0, pitch: -90 }, size),
  gimbalCamera('B', [12, 0, 40], { yaw: 0, pitch: -90 }, size),
  gimbalCamera('C', [3, -13, 42], { yaw: 10, pitch: -80 }, size),
  gimbalCamera('D', [2, 13, 38], { yaw: 180, pitch: -85, roll: 3 }, size),
];
// Cells of 0.2 over [-22, 40] x [-20, 20]: the east end lies beyond every photo; a square of
// nodata in the north-west.
const nodata = (e: number, n: number) => e > -16 && e < -12 && n > 10 && n < 14;

function sceneDsm(): Grid {
  const dsm = gridCovering(-22, -20, 40, 20, 0.2);
  for (let row = 0; row < dsm.height; row++) {
    for (let col = 0; col < dsm.width; col++) {
      const [e, n] = cellCentre(dsm, col, row);
      dsm.values[row * dsm.width + col] = nodata(e, n) ? NaN : surfaceHeight(boxes, e, n);
    }
  }
  return dsm;
}

let dir: string;
let withDepth: OrthoCamera[];
const dsm = sceneDsm();

/** Writes each camera's rendered photo (scaled by `exposure`, per camera name) and returns the cameras. */
async function photographed(exposure: Record<string, number> = {}): Promise<OrthoCamera[]> {
  const out: OrthoCamera[] = [];
  for (const camera of sceneCameras) {
    const { rgb, depth } = render(boxes, camera);
    const gain = exposure[camera.name] ?? 1;
    const pixels = Buffer.from(rgb.map((v) => Math.min(255, Math.round(v * gain))));
    const imagePath = path.join(dir, `${camera.name}-${gain}.png`);
    await sharp(pixels, { raw: { width: camera.width, height: camera.height, channels: 3 } }).png().toFile(imagePath);
    out.push({ ...camera, imagePath, depthMap: { width: camera.width, height: camera.height, data: depth } });
  }
  return out;
}

const colourAt = (ortho: { data: Uint8Array }, i: number): Rgb => [ortho.data[4 * i], ortho.data[4 * i + 1], ortho.data[4 * i + 2]];
const difference = (a: Rgb, b: Rgb) => Math.max(Math.abs(a[0] - b[0]), Math.abs(a[1] - b[1]), Math.abs(a[2] - b[2]));
const TOLERANCE = 16;

/**
 * Cells of the ground strip east of the box that camera A frames but sees only through the box,
 * as do the points a cell away on every side (not the strip's edge, where the ray grazes the roof),
 * and that B sees.
 */
function hiddenFromA(): number[] {
  const [a, b] = sceneCameras;
  const step = dsm.cellSize;
  const cells: number[] = [];
  for (let row = 0; row < dsm.height; row++) {
    for (let col = 0; col < dsm.width; col++) {
      const [e, n] = cellCentre(dsm, col, row);
      if (e < box.east || e > 4 || n < box.south - 1 || n > box.north + 1) continue;
      const around: [number, number, number][] = [[e, n, 0], [e - step, n, 0], [e + step, n, 0], [e, n - step, 0], [e, n + step, 0]];
      if (around.every((point) => surfaceHeight(boxes, point[0], point[1]) === 0 && !sees(boxes, a, point)) && sees(boxes, b, [e, n, 0])) cells.push(row * dsm.width + col);
    }
  }
  return cells;
}

/** Share of the cells whose colour is within TOLERANCE of the scene's colour seen from above. */
function matching(ortho: { data: Uint8Array }, cells: number[]): number {
  let good = 0;
  for (const i of cells) {
    const [e, n] = cellCentre(dsm, i % dsm.width, Math.floor(i / dsm.width));
    if (difference(colourAt(ortho, i), surfaceColour(boxes, e, n)) <= TOLERANCE) good++;
  }
  return good / cells.length;
}

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'orthomosaic-test-'));
  withDepth = await photographed();
});
after(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('orthomosaic of a synthetic scene', () => {
  it('colours the ground and the roof as the scene, transparent where there is no DSM or no photo', async () => {
    const progress: [number, number][] = [];
    const ortho = await orthomosaic(dsm, withDepth, { onProgress: (done, total) => progress.push([done, total]) });
    assert.equal(ortho.width, dsm.width);
    assert.equal(ortho.data.length, 4 * dsm.width * dsm.height);

    const seen: number[] = [];
    let unseenTransparent = 0;
    let unseen = 0;
    for (let row = 0; row < dsm.height; row++) {
      for (let col = 0; col < dsm.width; col++) {
        const i = row * dsm.width + col;
        const [e, n] = cellCentre(dsm, col, row);
        const alpha = ortho.data[4 * i + 3];
        if (nodata(e, n)) {
          assert.equal(alpha, 0, `nodata cell (${e}, ${n}) is transparent`);
          continue;
        }
        const point: [number, number, number] = [e, n, surfaceHeight(boxes, e, n)];
        if (sceneCameras.some((c) => sees(boxes, c, point))) {
          if (alpha === 255) seen.push(i);
        } else {
          unseen++;
          if (alpha === 0) unseenTransparent++;
        }
      }
    }
    const seenTotal = ortho.coverage * (dsm.values.filter((v) => v === v).length);
    assert.ok(seen.length >= 0.99 * seenTotal, `cells seen by a camera are coloured: ${seen.length} of ${seenTotal}`);
    assert.ok(unseen > 1000, `the grid reaches beyond the photos (${unseen} cells)`);
    assert.ok(unseenTransparent >= 0.98 * unseen, `cells no camera sees are transparent: ${unseenTransparent} of ${unseen}`);
    const share = matching(ortho, seen);
    assert.ok(share >= 0.97, `colours match the scene at ${(share * 100).toFixed(1)} % of the coloured cells`);
    const roof = seen.filter((i) => dsm.values[i] === box.top);
    assert.ok(roof.length > 300 && matching(ortho, roof) >= 0.95, 'the roof is red on its own footprint');

    assert.ok(ortho.occlusionTests.depthMap > 0, 'occlusion read from the depth maps');
    assert.deepEqual(new Set(ortho.cellsByCamera.map((c) => c.name)), new Set(['A', 'B', 'C', 'D']));
    assert.deepEqual(progress.at(-1), [2 * dsm.height, 2 * dsm.height]);
  });

  it("the box does not smear onto the ground that the most nadir camera sees only through it (depth maps)", async () => {
    const ortho = await orthomosaic(dsm, withDepth, {});
    const strip = hiddenFromA();
    assert.ok(strip.length > 100, `a strip of ground hidden from A: ${strip.length} cells`);
    const share = matching(ortho, strip);
    assert.ok(share >= 0.95, `the strip has the ground's colours at ${(share * 100).toFixed(1)} % of its cells`);
  });

  it('the same with depth maps at half the photos\' size (the dense stage\'s maxImageSize)', async () => {
    const halved = withDepth.map((c) => {
      const map = c.depthMap!;
      const width = map.width / 2;
      const height = map.height / 2;
      const data = Float32Array.from({ length: width * height }, (_, i) => {
        const [x, y] = [2 * (i % width), 2 * Math.floor(i / width)];
        return map.data[y * map.width + x];
      });
      return { ...c, depthMap: { width, height, data } };
    });
    const ortho = await orthomosaic(dsm, halved, {});
    const share = matching(ortho, hiddenFromA());
    assert.ok(share >= 0.95, `the strip has the ground's colours at ${(share * 100).toFixed(1)} % of its cells`);
    const all = [...ortho.data.keys()].filter((k) => k % 4 === 3 && ortho.data[k] === 255).map((k) => k >> 2);
    assert.ok(matching(ortho, all) >= 0.97);
  });

  it('the same without depth maps: ray marching over the DSM', async () => {
    const cameras = withDepth.map((c) => ({ ...c, depthMap: null }));
    const ortho = await orthomosaic(dsm, cameras, {});
    const strip = hiddenFromA();
    const share = matching(ortho, strip);
    assert.ok(share >= 0.95, `the strip has the ground's colours at ${(share * 100).toFixed(1)} % of its cells`);
    assert.equal(ortho.occlusionTests.depthMap, 0);
    assert.ok(ortho.occlusionTests.rayMarch > 0);
    const all = [...ortho.data.keys()].filter((k) => k % 4 === 3 && ortho.data[k] === 255).map((k) => k >> 2);
    assert.ok(matching(ortho, all) >= 0.97);
  });

  it('blends the seam between two cameras of different exposure over the seam band instead of cutting', async () => {
    const cameras = await photographed({ B: 0.75 });
    // Along north = 6 the seam between A (west) and B (east) crosses east = 4; the ratio of the
    // orthomosaic's brightness to the scene's goes from 1 (A) to 0.75 (B).
    const row = Math.floor((dsm.originNorth - 6) / dsm.cellSize);
    const ratios = (ortho: { data: Uint8Array }) => {
      const out: number[] = [];
      for (let col = 0; col < dsm.width; col++) {
        const [e, n] = cellCentre(dsm, col, row);
        if (e < -2 || e > 10) continue;
        const i = row * dsm.width + col;
        const expected = surfaceColour(boxes, e, n);
        const got = colourAt(ortho, i);
        out.push((got[0] + got[1] + got[2]) / (expected[0] + expected[1] + expected[2]));
      }
      return out;
    };
    const largestStep = (values: number[]) => Math.max(...values.slice(1).map((v, k) => Math.abs(v - values[k])));
    const sharp0 = ratios(await orthomosaic(dsm, cameras, { seamRadius: 0 }));
    const blended = ratios(await orthomosaic(dsm, cameras, { seamRadius: 8 }));
    assert.ok(Math.abs(sharp0[0] - 1) < 0.03 && Math.abs(sharp0.at(-1)! - 0.75) < 0.03, `A's side at 1, B's at 0.75: ${sharp0[0]}, ${sharp0.at(-1)}`);
    assert.ok(largestStep(sharp0) > 0.2, `without blending the seam is a step: ${largestStep(sharp0)}`);
    assert.ok(largestStep(blended) < 0.05, `blended, no step between neighbouring cells above 0.05: ${largestStep(blended)}`);
  });

  it('colours the ground below each camera from that camera (the most nadir one)', async () => {
    // Each photo darkened by its own gain: the orthomosaic's brightness over the scene's names the
    // camera a cell came from.
    const gains: Record<string, number> = { A: 1, B: 0.85, C: 0.7, D: 0.55 };
    const ortho = await orthomosaic(dsm, await photographed(gains), { seamRadius: 0 });
    for (const camera of sceneCameras) {
      const { rotation: r, translation: t } = camera;
      const [e0, n0] = [0, 1].map((i) => -(r[i] * t[0] + r[3 + i] * t[1] + r[6 + i] * t[2]));
      const ratios: number[] = [];
      for (let row = 0; row < dsm.height; row++) {
        for (let col = 0; col < dsm.width; col++) {
          const [e, n] = cellCentre(dsm, col, row);
          if (Math.hypot(e - e0, n - n0) > 1) continue;
          const got = colourAt(ortho, row * dsm.width + col);
          const expected = surfaceColour(boxes, e, n);
          ratios.push((got[0] + got[1] + got[2]) / (expected[0] + expected[1] + expected[2]));
        }
      }
      const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
      assert.ok(ratios.length > 50 && Math.abs(mean - gains[camera.name]) < 0.03, `below ${camera.name}: brightness ${mean.toFixed(3)}, its gain ${gains[camera.name]}`);
    }
  });

  it('names the camera whose photo cannot be read', async () => {
    const cameras = withDepth.map((c) => (c.name === 'B' ? { ...c, imagePath: path.join(dir, 'missing.png') } : c));
    await assert.rejects(orthomosaic(dsm, cameras, {}), /the photo of camera B \(.*missing\.png\) could not be read/);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(orthomosaic(dsm, withDepth, { signal: controller.signal }), { name: 'AbortError' });
  });
});

describe('orthomosaic as ortho_rgb and ortho_thumb', () => {
  it('is written as an RGBA COG (band 4 alpha, 256 tiles, overviews) on its grid of half the DSM\'s cells, and a PNG thumbnail with its transparency', async (t) => {
    if (!requireTool(t, '/usr/bin/gdalinfo', 'gdal-bin')) return;
    const ortho = await orthomosaic(dsm, withDepth, { subdivision: 2 });
    const crs = resolveOutputCrs({ requested: null, positions: [{ latitude: 50.82, longitude: -0.17 }] });
    assert.ok(crs.ok);
    const frame = { offsetOutput: [699000, 5633000, 10] as const, swapped: false };
    const files = { cog: path.join(dir, 'ortho_rgb.tif'), thumbnail: path.join(dir, 'ortho_thumb.png') };
    const written = await writeOrthomosaic(ortho, frame, crs.crs, files);

    const info = JSON.parse(execFileSync('/usr/bin/gdalinfo', ['-json', files.cog], { encoding: 'utf8' }));
    assert.deepEqual(info.size, [2 * dsm.width, 2 * dsm.height]);
    assert.equal(info.metadata?.IMAGE_STRUCTURE?.LAYOUT, 'COG');
    assert.deepEqual(info.bands.map((b: any) => [b.type, b.colorInterpretation]), [['Byte', 'Red'], ['Byte', 'Green'], ['Byte', 'Blue'], ['Byte', 'Alpha']]);
    assert.deepEqual(info.bands[0].block, [256, 256]);
    const halvings: number[][] = [];
    for (let factor = 2; Math.max(2 * dsm.width, 2 * dsm.height) / factor > 128; factor *= 2) halvings.push([Math.ceil((2 * dsm.width) / factor), Math.ceil((2 * dsm.height) / factor)]);
    assert.ok(halvings.length >= 2);
    assert.deepEqual(info.bands[0].overviews?.map((o: any) => o.size), halvings, 'overviews until one tile holds it');
    assert.deepEqual(info.geoTransform, [dsm.originEast + 699000, dsm.cellSize / 2, 0, dsm.originNorth + 5633000, 0, -dsm.cellSize / 2]);

    // A roof cell, a nodata cell and a cell beyond the photos, read back through GDAL.
    const pixel = (e: number, n: number) => execFileSync('/usr/bin/gdallocationinfo', ['-valonly', '-geoloc', files.cog, String(e + 699000), String(n + 5633000)], { encoding: 'utf8' }).trim().split('\n').map(Number);
    const roof = pixel(0.1, 0.1);
    assert.ok(difference(roof.slice(0, 3) as Rgb, box.roof) <= TOLERANCE && roof[3] === 255, `roof ${roof}`);
    assert.equal(pixel(-14, 12)[3], 0, 'nodata cell transparent');
    assert.equal(pixel(39, 0)[3], 0, 'cell beyond the photos transparent');

    const thumb = await sharp(files.thumbnail).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([thumb.info.width, thumb.info.height, thumb.info.channels], [written.thumbnail.width, written.thumbnail.height, 4]);
    assert.ok(Math.max(thumb.info.width, thumb.info.height) <= 512);
    assert.equal(thumb.data[4 * (thumb.info.width - 1) + 3], 0, 'the thumbnail is transparent beyond the photos (north-east corner)');
  });
});

describe('orthoFeasibility', () => {
  it('accepts cameras looking down', () => {
    assert.deepEqual(orthoFeasibility(withDepth, dsm), { ok: true });
  });

  it('refuses street-level photos looking at the horizon, in words', () => {
    const street = [0, 60, 130, 200, 290].map((yaw, k) => ({ ...gimbalCamera(`s${k}`, [k * 3, 0, 1.6], { yaw, pitch: -5 + (k % 2) }, size), imagePath: '', depthMap: null }));
    const answer = orthoFeasibility(street, 0);
    assert.equal(answer.ok, false);
    assert.match((answer as { reason: string }).reason, /^the photos look at the horizon \(median tilt 8[45]° from nadir\): an orthophoto needs photos looking down/);
  });

  it('refuses cameras below the ground', () => {
    const below = withDepth.map((c) => ({ ...c, ...gimbalCamera(c.name, [0, 0, -5], { yaw: 0, pitch: -90 }, size) }));
    const answer = orthoFeasibility(below, dsm);
    assert.equal(answer.ok, false);
    assert.match((answer as { reason: string }).reason, /not above the ground \(median camera 5\.0 below/);
    const lost = withDepth.map((c) => ({ ...c, translation: [NaN, 0, 0] as [number, number, number] }));
    assert.deepEqual(orthoFeasibility(lost, dsm), { ok: false, reason: 'no camera has a finite position' });
  });
});
