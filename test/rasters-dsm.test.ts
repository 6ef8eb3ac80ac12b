// DSM and DTM of a synthetic dense cloud (src/cloud/processing/rasters/dsm.ts, ground-filter.ts):
// a disc of sloping ground with a box building, a hole the fusion left, and stray points floating
// above it. The DSM must give each cell its surface height (the roof on the building, the ground
// elsewhere), fill the hole, ignore the strays and leave the area outside the disc empty; the DTM
// must put the ground under the building while the DSM keeps the roof.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellCentre, cellIndex, type Grid } from '../src/cloud/processing/rasters/grid.ts';
import { demCellSize, groundSampleDistance, surfaceModel } from '../src/cloud/processing/rasters/dsm.ts';
import { groundModel } from '../src/cloud/processing/rasters/ground-filter.ts';

const RADIUS = 40;
const ROOF = 6;
const BUILDING = { minEast: -5, maxEast: 11, minNorth: -4, maxNorth: 8 };
const HOLE = { east: -20, north: 10, radius: 2.5 };
const STRAYS: [number, number][] = [
  [15.3, -12.2],
  [-8.1, -20.4],
  [3.3, 2.1],
];
/** Several stray points within one cell (centre -12.25, 20.25 on the half-metre grid): a lone spike. */
const SPIKE = { east: -12.25, north: 20.25, height: 4 };
const ground = (east: number, north: number) => 0.05 * east - 0.03 * north + 2;
const inBuilding = (e: number, n: number) => e >= BUILDING.minEast && e < BUILDING.maxEast && n >= BUILDING.minNorth && n < BUILDING.maxNorth;

/** Points every `spacing` metres (jittered, heights with 1 cm noise) over the disc, except the hole. */
function scene(spacing: number): { positions: Float64Array; count: number } {
  let seed = 12345;
  const random = () => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out: number[] = [];
  for (let e = -RADIUS; e <= RADIUS; e += spacing) {
    for (let n = -RADIUS; n <= RADIUS; n += spacing) {
      const x = e + (random() - 0.5) * spacing;
      const y = n + (random() - 0.5) * spacing;
      if (x * x + y * y > RADIUS * RADIUS || Math.hypot(x - HOLE.east, y - HOLE.north) < HOLE.radius) continue;
      const z = ground(x, y) + (inBuilding(x, y) ? ROOF : 0) + (random() - 0.5) * 0.02;
      out.push(x, y, z);
    }
  }
  for (const [x, y] of STRAYS) out.push(x, y, ground(x, y) + 30 + (inBuilding(x, y) ? ROOF : 0));
  for (let i = 0; i < 8; i++) out.push(SPIKE.east + (i % 3) * 0.1 - 0.1, SPIKE.north + (i % 2) * 0.1, ground(SPIKE.east, SPIKE.north) + SPIKE.height);
  return { positions: Float64Array.from(out), count: out.length / 3 };
}

const at = (grid: Grid, east: number, north: number) => grid.values[cellIndex(grid, east, north)];

describe('surfaceModel (DSM)', () => {
  const cloud = scene(0.2);
  const dsm = surfaceModel(cloud, 0.5, { bounds: { minEast: -RADIUS, minNorth: -RADIUS, maxEast: RADIUS, maxNorth: RADIUS } });

  it('gives each cell inside the cloud its surface height: roof on the building, ground elsewhere', () => {
    let checked = 0;
    for (let r = 0; r < dsm.height; r++) {
      for (let c = 0; c < dsm.width; c++) {
        const [e, n] = cellCentre(dsm, c, r);
        // cells wholly on the ground or wholly on the roof, inside the disc, away from the hole
        const margin = 0.6;
        const edge = [BUILDING.minEast, BUILDING.maxEast].some((x) => Math.abs(e - x) < margin) || [BUILDING.minNorth, BUILDING.maxNorth].some((y) => Math.abs(n - y) < margin);
        if (Math.hypot(e, n) > RADIUS - 1 || Math.hypot(e - HOLE.east, n - HOLE.north) < HOLE.radius + 1 || edge) continue;
        const expected = ground(e, n) + (inBuilding(e, n) ? ROOF : 0);
        // the cell's points span the slope across its half metre: 0.05 * 0.25 m either side
        assert.ok(Math.abs(dsm.values[r * dsm.width + c] - expected) < 0.05, `cell (${c}, ${r}) at ${e}, ${n}: ${dsm.values[r * dsm.width + c]} instead of ${expected}`);
        checked++;
      }
    }
    assert.ok(checked > 15000, `${checked} cells checked`);
  });

  it('fills the hole the fusion left with the ground around it', () => {
    const filled = at(dsm, HOLE.east, HOLE.north);
    assert.ok(Number.isFinite(filled), 'the hole is filled');
    assert.ok(Math.abs(filled - ground(HOLE.east, HOLE.north)) < 0.1, `hole centre ${filled} instead of ${ground(HOLE.east, HOLE.north)}`);
  });

  it('ignores stray points floating above the surface', () => {
    for (const [x, y] of STRAYS) {
      const expected = ground(x, y) + (inBuilding(x, y) ? ROOF : 0);
      assert.ok(Math.abs(at(dsm, x, y) - expected) < 0.1, `stray at ${x}, ${y}: ${at(dsm, x, y)} instead of ${expected}`);
    }
  });

  it('removes a lone spike: a cell of stray points above all its neighbours', () => {
    const value = at(dsm, SPIKE.east, SPIKE.north);
    assert.ok(Math.abs(value - ground(SPIKE.east, SPIKE.north)) < 0.05, `spike cell ${value} instead of ${ground(SPIKE.east, SPIKE.north)}`);
  });

  it('leaves the area outside the cloud without data', () => {
    for (const [e, n] of [
      [-RADIUS + 1, -RADIUS + 1],
      [RADIUS - 1, RADIUS - 1],
      [RADIUS - 3, -RADIUS + 3],
    ]) {
      assert.ok(Number.isNaN(at(dsm, e, n)), `corner ${e}, ${n} has ${at(dsm, e, n)}`);
    }
    // every empty cell lies wholly outside the disc, and the outline moves out by less than a cell
    let beyond = 0;
    for (let r = 0; r < dsm.height; r++) {
      for (let c = 0; c < dsm.width; c++) {
        const [e, n] = cellCentre(dsm, c, r);
        const half = dsm.cellSize / 2;
        const nearest = Math.hypot(Math.max(Math.abs(e) - half, 0), Math.max(Math.abs(n) - half, 0));
        if (nearest > RADIUS) beyond++;
        else assert.ok(!Number.isNaN(dsm.values[r * dsm.width + c]), `cell ${c}, ${r} in the disc is empty`);
      }
    }
    const outside = dsm.values.filter((v) => Number.isNaN(v)).length;
    const perimeter = (2 * Math.PI * RADIUS) / dsm.cellSize;
    assert.ok(outside <= beyond && outside > beyond - perimeter, `${outside} empty cells, ${beyond} wholly outside the disc`);
  });

  it('takes the median of the three highest points of a cell, or of those it has', () => {
    const cells = [
      [1, 2, 5, 30, 3, 4], // 30 a stray: the median of 30, 5, 4
      [1, 5, 3], // the median of the three
      [2, 6], // their mean
      [7], // the point
    ];
    const positions = cells.flatMap((heights, c) => heights.flatMap((z, i) => [c + 0.1 + i * 0.1, 0.5, z]));
    const grid = surfaceModel({ positions: Float64Array.from(positions), count: positions.length / 3 }, 1, { bounds: { minEast: 0, minNorth: 0, maxEast: 4, maxNorth: 1 }, fill: false, spikeHeight: 100 });
    assert.deepEqual([...grid.values], [5, 3, 4, 7]);
  });
});

describe('groundModel (DTM)', () => {
  const dsm = surfaceModel(scene(0.2), 0.5, { bounds: { minEast: -RADIUS, minNorth: -RADIUS, maxEast: RADIUS, maxNorth: RADIUS } });
  const { dtm, ground: groundCells } = groundModel(dsm);

  it('puts the ground under the building while the DSM keeps the roof', () => {
    for (const [e, n] of [
      [3, 2],
      [-4, -3],
      [10, 7],
      [0, 5],
    ]) {
      const i = cellIndex(dtm, e, n);
      assert.equal(groundCells[i], 0, `${e}, ${n} is not ground`);
      assert.ok(Math.abs(dtm.values[i] - ground(e, n)) < 0.15, `DTM at ${e}, ${n}: ${dtm.values[i]} instead of ${ground(e, n)}`);
      assert.ok(Math.abs(dsm.values[i] - ground(e, n) - ROOF) < 0.05, `DSM roof at ${e}, ${n}: ${dsm.values[i]}`);
    }
  });

  it('keeps the sloping ground as ground and the outside empty', () => {
    let wrong = 0;
    let checked = 0;
    for (let r = 0; r < dtm.height; r++) {
      for (let c = 0; c < dtm.width; c++) {
        const [e, n] = cellCentre(dtm, c, r);
        if (Math.hypot(e, n) > RADIUS - 1 || (e > BUILDING.minEast - 1 && e < BUILDING.maxEast + 1 && n > BUILDING.minNorth - 1 && n < BUILDING.maxNorth + 1)) continue;
        checked++;
        if (Math.abs(dtm.values[r * dtm.width + c] - ground(e, n)) > 0.05) wrong++;
      }
    }
    assert.ok(wrong < checked * 0.001, `${wrong} of ${checked} ground cells off`);
    assert.equal(dtm.values.filter((v) => Number.isNaN(v)).length, dsm.values.filter((v) => Number.isNaN(v)).length);
  });
});

describe('groundModel on a car with sloping flanks', () => {
  // flat ground at 1 m; a car 2 x 4.4 m, 1.5 m high, whose flanks step down through 0.3 m within
  // 0.3 m of its body: lower than any threshold of the filter, they are its rim, not ground
  const body = { minEast: 10, maxEast: 12, minNorth: 10, maxNorth: 14.4 };
  const height = (e: number, n: number) => {
    const outside = Math.max(body.minEast - e, e - body.maxEast, body.minNorth - n, n - body.maxNorth);
    return 1 + (outside <= 0 ? 1.5 : outside <= 0.3 ? 0.3 : 0);
  };
  const positions: number[] = [];
  for (let e = 0.025; e < 22; e += 0.05) for (let n = 0.025; n < 24; n += 0.05) positions.push(e, n, height(e, n));
  const dsm = surfaceModel({ positions: Float64Array.from(positions), count: positions.length / 3 }, 0.05, { bounds: { minEast: 0, minNorth: 0, maxEast: 22, maxNorth: 24 } });
  const { dtm } = groundModel(dsm);

  it('takes the rim away with the car', () => {
    for (const [e, n] of [
      [9.85, 12],
      [12.15, 12],
      [11, 9.85],
      [11, 14.55],
      [11, 12],
    ]) {
      assert.ok(Math.abs(at(dsm, e, n) - height(e, n)) < 1e-3, `DSM at ${e}, ${n}: ${at(dsm, e, n)}`);
      assert.ok(Math.abs(at(dtm, e, n) - 1) < 0.05, `DTM at ${e}, ${n}: ${at(dtm, e, n)} instead of the ground's 1`);
    }
  });
});

describe('cell size', () => {
  it('is the median camera height above the ground over the focal length, times the GSD multiple, within the cell budget', () => {
    const cameras = [
      { centre: [0, 0, 60] as const, focalPx: 3000 },
      { centre: [10, 0, 62] as const, focalPx: 3000 },
      { centre: [20, 0, 400] as const, focalPx: 3000 },
    ];
    const gsd = groundSampleDistance(cameras, 2)!;
    assert.ok(Math.abs(gsd - 0.02) < 1e-12, `gsd ${gsd}`);
    assert.equal(groundSampleDistance([{ centre: [0, 0, 1], focalPx: 3000 }], 2), null);
    assert.ok(Math.abs(demCellSize(gsd, 100, 100) - 0.05) < 1e-12, 'the 5 cm floor');
    assert.ok(Math.abs(demCellSize(0.04, 100, 100) - 0.08) < 1e-12, 'two GSDs');
    assert.ok(Math.abs(demCellSize(0.2, 100, 100, { unitFactor: 0.3048 }) - 0.4) < 1e-12, 'in feet: two GSDs (feet)');
    assert.ok(Math.abs(demCellSize(0.001, 100, 100, { unitFactor: 0.3048 }) - 0.05 / 0.3048) < 1e-12, 'the 5 cm floor in feet');
    const capped = demCellSize(0.01, 10000, 8000, { maxCells: 1_000_000 });
    assert.ok(Math.ceil(10000 / capped) * Math.ceil(8000 / capped) <= 1_000_000 && capped < 9.1, `capped ${capped}`);
  });
});
