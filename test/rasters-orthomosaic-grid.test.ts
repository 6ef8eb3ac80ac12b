// The orthomosaic's own grid (orthomosaic-grid.ts): finer than the DSM, at about the photos' GSD.
// A synthetic scene of painted stripes (boxes 2 cm high, 30 cm wide, their edges off the DSM's
// cell edges) photographed from 40 up at 5 cm per pixel, over a DSM of 20 cm cells: on the DSM's
// cells a stripe's edge is smeared over a 20 cm cell, on the finer grid it is where the scene has
// it. The figure is the share of 5 cm samples of the scene whose colour the orthomosaic has at
// that point; it fails if the grid falls back to the DSM's cells. Then the bounds on the
// subdivision and the bilinear heights.
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { cellCentre, gridCovering, type Grid } from '../src/cloud/processing/rasters/grid.ts';
import { orthomosaic, orthoResolution, type Orthomosaic, type OrthoCamera } from '../src/cloud/processing/rasters/orthomosaic.ts';
import { bilinearHeight, subdividedSurface } from '../src/cloud/processing/rasters/orthomosaic-grid.ts';
import { gimbalCamera, render, surfaceColour, surfaceHeight, type SceneBox, type SceneCamera } from './helpers/ray-cast-scene.ts';

const stripes: SceneBox[] = Array.from({ length: 19 }, (_, i) => ({ west: -6 + 0.07 + 0.63 * i, east: -6 + 0.37 + 0.63 * i, south: -4, north: 4, top: 0.02, roof: [245, 245, 245], wall: [245, 245, 245] }));
const size = { width: 800, height: 600, focal: 800 }; // 40 x 30 of ground from 40 up: 0.05 per pixel
const sceneCameras: SceneCamera[] = [gimbalCamera('A', [-3, 0, 40], { yaw: 0, pitch: -90 }, size), gimbalCamera('B', [3, 0, 40], { yaw: 0, pitch: -90 }, size)];

const dsm: Grid = gridCovering(-10, -8, 10, 8, 0.2);
for (let row = 0; row < dsm.height; row++) {
  for (let col = 0; col < dsm.width; col++) {
    const [e, n] = cellCentre(dsm, col, row);
    dsm.values[row * dsm.width + col] = surfaceHeight(stripes, e, n);
  }
}

let dir: string;
let cameras: OrthoCamera[];
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ortho-grid-test-'));
  cameras = [];
  for (const camera of sceneCameras) {
    const { rgb, depth } = render(stripes, camera);
    const imagePath = path.join(dir, `${camera.name}.png`);
    await sharp(Buffer.from(rgb), { raw: { width: camera.width, height: camera.height, channels: 3 } }).png().toFile(imagePath);
    cameras.push({ ...camera, imagePath, depthMap: { width: camera.width, height: camera.height, data: depth } });
  }
});
after(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** Share of the 5 cm samples over the stripes whose colour the orthomosaic has within 24 per channel. */
function sharpness(ortho: Orthomosaic): number {
  const { grid } = ortho;
  let good = 0;
  let total = 0;
  for (let n = -3 + 0.0125; n < 3; n += 0.05) {
    for (let e = -6 + 0.0125; e < 6; e += 0.05) {
      const col = Math.floor((e - grid.originEast) / grid.cellSize);
      const row = Math.floor((grid.originNorth - n) / grid.cellSize);
      const o = 4 * (row * grid.width + col);
      const expected = surfaceColour(stripes, e, n);
      total++;
      if (ortho.data[o + 3] === 255 && [0, 1, 2].every((c) => Math.abs(ortho.data[o + c] - expected[c]) <= 24)) good++;
    }
  }
  return good / total;
}

describe('orthomosaic grid at the photos\' GSD', () => {
  it('cuts each DSM cell by the DSM cell over the GSD, and the stripes come out sharper than on the DSM\'s cells', async () => {
    const resolution = orthoResolution(dsm, cameras);
    assert.ok(Math.abs(resolution.gsd! - 0.05) < 0.001, `GSD ${resolution.gsd}`);
    assert.equal(resolution.subdivision, 4);

    const fine = await orthomosaic(dsm, cameras, { subdivision: resolution.subdivision });
    assert.deepEqual([fine.width, fine.height, fine.grid.cellSize], [4 * dsm.width, 4 * dsm.height, 0.05]);
    assert.deepEqual([fine.grid.originEast, fine.grid.originNorth], [dsm.originEast, dsm.originNorth], 'same extent as the DSM');
    const coarse = await orthomosaic(dsm, cameras, {});
    assert.equal(coarse.width, dsm.width);

    const [fineShare, coarseShare] = [sharpness(fine), sharpness(coarse)];
    console.log(`samples with the scene's colour: ${(100 * fineShare).toFixed(1)} % at 5 cm cells, ${(100 * coarseShare).toFixed(1)} % on the DSM's 20 cm cells`);
    assert.ok(fineShare >= 0.9, `at the GSD ${(100 * fineShare).toFixed(1)} % of the samples have the scene's colour`);
    assert.ok(fineShare - coarseShare >= 0.1, `sharper than on the DSM's cells: ${(100 * fineShare).toFixed(1)} % against ${(100 * coarseShare).toFixed(1)} %`);
  });

  it('bounds the subdivision by 8 and by the cell count, never below the DSM\'s cells', () => {
    const high = cameras.map((c) => ({ ...c, fx: 8000, fy: 8000 })); // a GSD of 5 mm: 40 cells per DSM cell
    assert.equal(orthoResolution(dsm, high).subdivision, 8);
    const cells = dsm.width * dsm.height;
    assert.equal(orthoResolution(dsm, cameras, { maxCells: 9 * cells }).subdivision, 3);
    assert.equal(orthoResolution(dsm, cameras, { maxCells: cells / 2 }).subdivision, 1);
    const low = cameras.map((c) => ({ ...c, fx: 20, fy: 20 })); // coarser than the DSM
    assert.equal(orthoResolution(dsm, low).subdivision, 1);
  });

  it('reads heights bilinearly between DSM cell centres, renormalised over nodata, none where the DSM cell has none', () => {
    const grid: Grid = { width: 3, height: 2, originEast: 0, originNorth: 2, cellSize: 1, values: Float32Array.from([0, 4, NaN, 8, 12, 6]) };
    assert.equal(bilinearHeight(grid, 0.5, 0), 2);
    assert.equal(bilinearHeight(grid, 0.5, 0.5), 6);
    assert.equal(bilinearHeight(grid, 1.25, 0), 4, 'the NaN neighbour left out');
    assert.ok(Number.isNaN(bilinearHeight(grid, 2.2, 0)), 'inside the nodata cell');
    const fine = subdividedSurface(grid, 2);
    assert.deepEqual([fine.width, fine.height, fine.cellSize, fine.originEast, fine.originNorth], [6, 4, 0.5, 0, 2]);
    assert.deepEqual([...fine.values.slice(4, 6)].map(Number.isNaN), [true, true]);
    assert.equal(fine.values[0], 0, 'a corner cell clamps to its DSM cell');
  });
});
