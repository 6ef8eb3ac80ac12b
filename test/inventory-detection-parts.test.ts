// The antenna detection's parts that need no database (issue 36 §3): the grid convergence of a UTM
// zone (shared/geo/utm.ts) against proj4; the inventory status moves (inventory-statuses.ts); the
// detected boxes as inventory items (detected-items.ts: front face and its corner order, the best
// photo, names by level, heights); and the worker thread (detection-runner.ts): the detector's
// frame and back, an unreadable cloud and a throwing detector as DetectionFailure in words.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gridConvergenceDeg, utmZoneOfEpsg } from '../src/shared/geo/utm.ts';
import { projectorFrom } from '../src/shared/geo/projection.ts';
import { assertInventoryTransition, InventoryStatus, inventorySettledBy, inventorySources } from '../src/inspection/inventory/inventory-statuses.ts';
import { boresight, detectedItemColumns, frontFace, levelsOf, SQUARE_TOLERANCE_DEG, type DetectionContext } from '../src/inspection/inventory/detected-items.ts';
import { convergenceAt } from '../src/inspection/inventory/antenna-detection.ts';
import { DetectionFailure, runAntennaDetection } from '../src/inspection/inventory/detection-runner.ts';
import type { DetectedItem, Vec3 } from '../src/inspection/inventory/detection/detection-types.ts';
import { cameraFromCalibrated, createPointCloud, writeLas } from '../src/shared/pointcloud/index.ts';
import { add, calibrationLookingAt, faceCorners, rad } from './helpers/synthetic-antenna.ts';

/** The grid bearing of true north by proj4 (a 100 m step north), negated: the convergence from true to grid north. */
function proj4Convergence(latitude: number, longitude: number, zone: number, south = false): number {
  const project = projectorFrom({ proj4: `+proj=utm +zone=${zone}${south ? ' +south' : ''} +datum=WGS84 +units=m +no_defs`, axis_order: ['east', 'north'] })!;
  const a = project(latitude, longitude)!;
  const b = project(latitude + 0.001, longitude)!;
  return -(Math.atan2(b.x - a.x, b.y - a.y) * 180) / Math.PI;
}

describe('grid convergence (shared/geo/utm.ts)', () => {
  it('γ = atan(tan(λ − λ0) sin φ) agrees with proj4 within 0.01° across zones and hemispheres, with the sign of detection-types.ts', () => {
    const cases: [number, number, number, boolean][] = [
      [55.7005, 13.1934, 33, false], // the tower-flight site: west of 15° E, grid north west of true north
      [46.5183, 6.5619, 32, false], // Lausanne: −1.77°
      [46.5183, 11.9, 32, false], // east of 9° E: positive
      [-33.92, 18.42, 34, true], // Cape Town: west of 21° E in the south: positive
      [64.5, 2.2, 31, false], // 0.8° inside a zone's western edge, far north
      [0.5, -75.01, 18, false], // on the central meridian (−75°): 0
    ];
    for (const [lat, lon, zone, south] of cases) {
      const ours = gridConvergenceDeg(lat, lon, zone);
      const theirs = proj4Convergence(lat, lon, zone, south);
      assert.ok(Math.abs(ours - theirs) < 0.01, `${lat}, ${lon} zone ${zone}: ${ours} vs proj4 ${theirs}`);
    }
    assert.ok(Math.abs(gridConvergenceDeg(46.5183, 6.5619, 32) + 1.77) < 0.01);
    assert.ok(gridConvergenceDeg(46.5183, 11.9, 32) > 0);
    assert.ok(gridConvergenceDeg(-33.92, 18.42, 34) > 0);
    assert.throws(() => gridConvergenceDeg(10, 10, 61), RangeError);
  });

  it('utmZoneOfEpsg reads 326zz/327zz only; convergenceAt uses it, else the projection', () => {
    assert.deepEqual(utmZoneOfEpsg(32633), { zone: 33, hemisphere: 'N', epsg: 32633 });
    assert.deepEqual(utmZoneOfEpsg(32734), { zone: 34, hemisphere: 'S', epsg: 32734 });
    for (const other of [4326, 2056, 32600, 32661, null, undefined]) assert.equal(utmZoneOfEpsg(other), null);
    const utm33 = { name: 'WGS 84 / UTM zone 33N', wkt: '', type: 'projected', horizontal_epsg: 32633, axis_order: ['east', 'north'], proj4: '+proj=utm +zone=33 +datum=WGS84 +units=m +no_defs' };
    assert.equal(convergenceAt(utm33, 55.7, 13.19), gridConvergenceDeg(55.7, 13.19, 33));
    // A transverse Mercator on 10° E (not a UTM zone): the projection's own grid.
    const tm = { name: 'TM 10', wkt: '', type: 'projected', axis_order: ['east', 'north'], proj4: '+proj=tmerc +lon_0=10 +k=1 +x_0=500000 +y_0=0 +datum=WGS84 +units=m +no_defs' };
    const expected = (Math.atan(Math.tan(rad(3)) * Math.sin(rad(50))) * 180) / Math.PI;
    assert.ok(Math.abs(convergenceAt(tm, 50, 13) - expected) < 0.01, `${convergenceAt(tm, 50, 13)} vs ${expected}`);
  });
});

describe('inventory status moves (inventory-statuses.ts)', () => {
  const S = InventoryStatus;
  it('lists the detection moves and the review moves, and refuses others', () => {
    assertInventoryTransition('any', S.DetectionPending);
    assertInventoryTransition([S.DetectionPending, S.Detecting], S.Detecting);
    for (const to of [S.ReviewPending, S.BorderlineQuality, S.NoTower, S.InsufficientQuality, S.DetectionError]) assertInventoryTransition([S.Detecting], to);
    assertInventoryTransition([S.DetectionPending], S.DetectionError);
    assert.throws(() => assertInventoryTransition([S.ReviewPending], S.Detecting), /not in INVENTORY_TRANSITIONS/);
    assert.throws(() => assertInventoryTransition([S.DetectionPending], S.ReviewPending), /not in INVENTORY_TRANSITIONS/);
    assert.throws(() => assertInventoryTransition([S.NoTower], S.ReviewOngoing), /not in INVENTORY_TRANSITIONS/, '8 blocks the review');
    // The review accepts the detection's 3 and 9 (and 7: items by hand after a failed detection).
    assert.ok(inventorySources(S.ReviewOngoing).includes(S.ReviewPending) && inventorySources(S.ReviewOngoing).includes(S.DetectionError));
    assert.ok(inventorySources(S.ReviewCompleted).includes(S.ReviewPending) && inventorySources(S.ReviewCompleted).includes(S.BorderlineQuality));
    assert.ok(!inventorySources(S.ReviewCompleted).includes(S.Detecting));
    assert.throws(() => inventorySources(S.DetectionError), /No single inventory status move/);
  });

  it('an error status of processing settles a pending detection as 7 in words; other statuses none', () => {
    assert.deepEqual(inventorySettledBy(16)?.inventory, 7);
    assert.match(inventorySettledBy(19)!.inventory_reason, /did not run: processing ended in status 19 \(ERROR - Not enough valid images\)/);
    assert.equal(inventorySettledBy(7), null);
    assert.equal(inventorySettledBy(20), null);
  });
});

describe('detected boxes as inventory items (detected-items.ts)', () => {
  const [E, N, Z] = [500_000, 4_500_000, 100];
  const convergence = -1.5;
  /** A box with the true azimuth `azimuth`, its eight corners in the grid (output system), shuffled. */
  function box(options: { azimuth: number; downtilt?: number; plumb?: number; centre: Vec3; width?: number; tall?: number; depth?: number; type?: DetectedItem['type']; heightAboveBase?: number }): DetectedItem & { face: Vec3[] } {
    const grid = options.azimuth - convergence;
    const truth = { azimuth: grid, downtilt: options.downtilt ?? 4, plumb: options.plumb ?? 1, centre: options.centre, width: options.width ?? 0.4, tall: options.tall ?? 1.8 };
    const depth = options.depth ?? 0.2;
    const n = boresight(grid, truth.downtilt);
    const front = faceCorners(truth).map((c) => add(c, n, depth / 2));
    const back = faceCorners(truth).map((c) => add(c, n, -depth / 2));
    const corners = [back[2], front[1], back[0], front[3], front[0], back[3], front[2], back[1]];
    return {
      type: options.type ?? 'panel_antenna',
      centre: options.centre,
      azimuthDeg: options.azimuth,
      downtiltDeg: truth.downtilt,
      plumbDeg: -truth.plumb,
      widthM: truth.width,
      heightM: truth.tall,
      depthM: depth,
      heightAboveBaseM: options.heightAboveBase ?? options.centre[2] - Z,
      corners,
      confidence: 0.8,
      pointCount: 1234,
      face: front,
    };
  }
  const tower = { base: [E, N, Z] as Vec3, top: [E, N, Z + 32] as Vec3, heightM: 32, verticalityDeg: 0.1, type: 'monopole' as const };
  const context = (photos: DetectionContext['photos'], basePlate: DetectionContext['basePlate'] = null): DetectionContext => ({ photos, tower, basePlate, gridConvergenceDeg: convergence, unitFactor: 1 });
  /** A calibrated photo from `distance` m at `offDeg` from the item's boresight (grid), `rise` m above it. */
  const photoOf = (item: DetectedItem, photoId: number, offDeg: number, distance: number, rise = 2, target = item.centre) => {
    const bearing = rad(item.azimuthDeg - convergence + offDeg);
    const position = add(item.centre, [Math.sin(bearing) * distance, Math.cos(bearing) * distance, rise]);
    return { photoId, camera: cameraFromCalibrated(calibrationLookingAt(position, target))! };
  };

  it('finds the front face and orders it top-left, top-right, bottom-right, bottom-left as seen from the front', () => {
    for (const azimuth of [0, 75, 121.5, 200, 300]) {
      const item = box({ azimuth, centre: [E + 1, N - 1, Z + 30] });
      const face = frontFace(item.centre, item.corners, boresight(azimuth - convergence, item.downtiltDeg));
      assert.deepEqual(face, item.face, `azimuth ${azimuth}`);
    }
  });

  it('takes the squarest photo (the closest within 10°) that holds all eight corners; projects the front face into it', () => {
    const item = box({ azimuth: 120, centre: [E + 1.2, N - 0.8, Z + 30] });
    const photos = [
      photoOf(item, 1, 0, 14), // head-on, 14 m
      photoOf(item, 2, SQUARE_TOLERANCE_DEG - 4, 10), // nearly as square, closer: the one
      photoOf(item, 3, 45, 6), // closest, but oblique
      photoOf(item, 4, 180, 8), // behind: sees the back
      photoOf(item, 5, 0, 9, 2, add(item.centre, [0, 0, 8])), // square and close, but looking above it: corners out of frame
    ];
    const [columns] = detectedItemColumns([item], context(photos));
    assert.equal(columns.photo_id, 2);
    const computation = JSON.parse(columns.computation);
    assert.equal(computation.photos, 3, 'three photos see the whole box from the front');
    const projection = JSON.parse(columns.photo_projection);
    assert.deepEqual(Object.keys(projection), ['2']);
    const [tl, tr, br, bl] = projection['2'];
    assert.ok(tl[0] < tr[0] && bl[0] < br[0] && tl[1] < bl[1] && tr[1] < br[1], `as the photo shows it: ${JSON.stringify(projection['2'])}`);
    assert.deepEqual(JSON.parse(columns.point_of_view), photos[1].camera.position.map((v) => Math.round(v * 1000) / 1000));
    // Nothing sees it whole: no photo.
    const [none] = detectedItemColumns([item], context([photos[3], photos[4]]));
    assert.deepEqual([none.photo_id, none.photo_projection, none.point_of_view], [null, '{}', '[]']);
  });

  it('names items by type, level (L1 the highest) and azimuth; a dish between levels by its height; height above the base plate when set, else the tower\'s base', () => {
    const items = [
      box({ azimuth: 250, centre: [E - 1, N - 1, Z + 24], heightAboveBase: 24 }),
      box({ azimuth: 10, centre: [E, N + 1, Z + 29.9], heightAboveBase: 29.9 }),
      box({ azimuth: 130, centre: [E + 1, N, Z + 30.1], heightAboveBase: 30.1 }),
      box({ azimuth: 130.4, centre: [E + 1.3, N - 0.3, Z + 29.4], type: 'ancillary_box', heightAboveBase: 29.4, tall: 0.5, width: 0.3 }),
      box({ azimuth: 359.996, centre: [E, N + 1.1, Z + 18.44], type: 'microwave_antenna', heightAboveBase: 18.44, tall: 0.6, width: 0.6, downtilt: 0, plumb: 0 }),
    ];
    assert.deepEqual(levelsOf(items), [30, 24]);
    const columns = detectedItemColumns(items, context([]));
    assert.deepEqual(
      columns.map((c) => c.name),
      ['Panel antenna 1 (L1, 10°)', 'Panel antenna 2 (L1, 130°)', 'Panel antenna 3 (L2, 250°)', 'Ancillary box 1 (L1, 130°)', 'Microwave antenna 1 (18.4 m, 0°)'],
    );
    const panel = columns[1];
    assert.deepEqual([panel.model_type, panel.source, panel.azimuth, panel.downtilt, panel.plumb, panel.width, panel.depth, panel.height], ['panel_antenna', 'automatic_detection', 130, 4, 1, 0.4, 0.2, 30.1]);
    assert.equal(columns[4].azimuth, 0, '359.996° rounds to 0, not 360');
    const computation = JSON.parse(panel.computation);
    assert.deepEqual([computation.method, computation.height_reference, computation.height_reference_z, computation.vertical_size_m, computation.north_convergence_deg], ['detection', 'detected_tower_base', Z, 1.8, 1.5]);
    assert.equal(computation.box_corners_3d.length, 8);
    assert.deepEqual(JSON.parse(panel.offset_xyz), {});
    const [withPlate] = detectedItemColumns([items[2]], context([], { x: E - 0.5, y: N, z: Z + 0.4 }));
    assert.equal(withPlate.height, 29.7);
    assert.deepEqual(JSON.parse(withPlate.offset_xyz), { x: 1.5, y: 0, z: 29.7 });
    assert.equal(JSON.parse(withPlate.computation).height_reference, 'base_plate_location');
  });
});

describe('the detection worker (detection-runner.ts)', () => {
  const echo = new URL('./helpers/echo-detector.ts', import.meta.url);
  /** A small LAS in UTM-like coordinates with colours. */
  function las(points: Vec3[]): Buffer {
    const cloud = createPointCloud(points.length, true);
    points.forEach((p, i) => {
      cloud.positions.set(p, 3 * i);
      cloud.colors!.set([200, 100, 50], 3 * i);
    });
    return writeLas(cloud, { pointFormat: 2, horizontalEpsg: 32633 });
  }

  it('hands the detector metres from an origin near the asset, and maps its answer back to the output system', async () => {
    const points: Vec3[] = Array.from({ length: 50 }, (_, i) => [386_450 + (i % 7), 6_174_200 + (i % 5), 41.8 + i * 0.5]);
    const asset: [number, number] = [386_455.4321, 6_174_203.9876];
    const run = await runAntennaDetection({ cloud: las(points), assetXY: asset, unitFactor: 1, gridConvergenceDeg: -1.49 }, { detectorModule: echo });
    assert.equal(run.points, 50);
    assert.equal(run.outcome.kind, 'detected');
    if (run.outcome.kind !== 'detected') return;
    const [item] = run.outcome.items;
    // The echo detector puts its item at the asset, at the lowest point: back in the output system.
    assert.ok(Math.abs(item.centre[0] - asset[0]) < 1e-3 && Math.abs(item.centre[1] - asset[1]) < 1e-3 && Math.abs(item.centre[2] - 41.8) < 1e-3, JSON.stringify(item.centre));
    assert.ok(item.corners.every((c) => Math.abs(c[0] - asset[0]) <= 0.5 + 1e-3));
    // It was given: coordinates relative to the asset rounded to metres, colours, the convergence.
    assert.match(run.outcome.quality.reasons[0], /^50 points, asset at 0\.432 -0\.012, lowest 0\.800, convergence -1\.49, colours yes$/);
  });

  it('an unreadable cloud and a throwing detector reject with DetectionFailure in words', async () => {
    await assert.rejects(runAntennaDetection({ cloud: Buffer.from('not a point cloud at all'), assetXY: [0, 0], unitFactor: 1, gridConvergenceDeg: 0 }, { detectorModule: echo }), (err: unknown) => err instanceof DetectionFailure && /^the point cloud cannot be read/.test(err.message));
    const throwing = new URL('./helpers/throwing-detector.ts', import.meta.url);
    await assert.rejects(
      runAntennaDetection({ cloud: las([[0, 0, 0]]), assetXY: [0, 0], unitFactor: 1, gridConvergenceDeg: 0 }, { detectorModule: throwing }),
      (err: unknown) => err instanceof DetectionFailure && err.message === 'the detector failed: the fit did not converge (test detector)',
    );
    await assert.rejects(
      runAntennaDetection({ cloud: las([[0, 0, 0]]), assetXY: [0, 0], unitFactor: 1, gridConvergenceDeg: 0 }, { detectorModule: echo, timeoutMs: 1 }),
      (err: unknown) => err instanceof DetectionFailure && /did not finish within 0 s/.test(err.message),
    );
  });
});
