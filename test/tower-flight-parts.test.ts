// The tower-flight generator's parts that need no rendering (issue 36): geodesy, the flight plan,
// the GPS noise, the photo writer (read back by the platform's own analyzeImage), truth.json and
// the reference cloud. The scene layout is built here by hand: a 35 m monopole with two levels.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import proj4 from 'proj4';
import sharp from 'sharp';
import { cameraToEnuQuaternion, conjugateQuaternion, opticalAxisEnu, rotateVector } from '../src/shared/geo/rotation.ts';
import { analyzeImage } from '../src/shared/image-metadata/analyze-image.ts';
import { readLas } from '../src/shared/pointcloud/index.ts';
import { DEFAULT_CAMERA, SMALL_CAMERA, focalPx } from '../scripts/tower-flight/camera-models.ts';
import { planFlight, orbitOverlap, takeOffPoint } from '../scripts/tower-flight/flight-plan.ts';
import { groundHeight } from '../scripts/tower-flight/scene-description.ts';
import { geodeticToLocal, localToGeodetic, utmOf, type GeoPoint } from '../scripts/tower-flight/geodesy.ts';
import { gpsErrors, gpsReadings, relativeAltitudes } from '../scripts/tower-flight/gps-noise.ts';
import { writePhoto } from '../scripts/tower-flight/photo-writer.ts';
import { MATERIAL_COLOURS, referenceCloud } from '../scripts/tower-flight/reference-cloud.ts';
import { buildTruth } from '../scripts/tower-flight/truth.ts';
import type { CameraModel, CameraPose, Equipment, MeshPart, SceneLayout, Vec3 } from '../scripts/tower-flight/scene-types.ts';

const DEG = Math.PI / 180;
const WGS84_A = 6378137;
const WGS84_E2 = (1 / 298.257223563) * (2 - 1 / 298.257223563);
const BASE: GeoPoint = { latitude: 48.1351, longitude: 11.582, altitude: 520 };

function testLayout(seed = 7): SceneLayout {
  const levels = [
    { heightM: 28, mountRadiusM: 1.4, sectors: [{ azimuthDeg: 0 }, { azimuthDeg: 120 }, { azimuthDeg: 240 }] },
    { heightM: 33, mountRadiusM: 1.6, sectors: [{ azimuthDeg: 30 }, { azimuthDeg: 150 }, { azimuthDeg: 270 }] },
  ];
  const equipment: Equipment[] = [];
  const at = (r: number, azimuth: number, z: number): Vec3 => [r * Math.sin(azimuth * DEG), r * Math.cos(azimuth * DEG), z];
  levels.forEach((level, li) =>
    level.sectors.forEach((s, si) => {
      const common = { azimuthDeg: s.azimuthDeg, plumbDeg: 0, level: li, sector: si, colour: [0.8, 0.8, 0.78] as Vec3 };
      equipment.push({ ...common, id: `L${li}-S${si}-rru`, type: 'ancillary_box', centre: at(level.mountRadiusM - 0.3, s.azimuthDeg, level.heightM - 0.5), downtiltDeg: 0, widthM: 0.3, heightM: 0.45, depthM: 0.15 });
      equipment.push({ ...common, id: `L${li}-S${si}-panel`, type: 'panel_antenna', centre: at(level.mountRadiusM, s.azimuthDeg, level.heightM), downtiltDeg: 4, widthM: 0.3, heightM: 2, depthM: 0.15 });
    }),
  );
  equipment.push({ id: 'MW-1', type: 'microwave_antenna', centre: at(0.7, 200, 24), azimuthDeg: 200, downtiltDeg: 0, plumbDeg: 0, widthM: 0.6, heightM: 0.6, depthM: 0.3, level: 0, sector: 0, colour: [0.9, 0.9, 0.9] });
  return {
    seed,
    site: { base: BASE, slopeDeg: 3, slopeAzimuthDeg: 60, sun: { azimuthDeg: 160, elevationDeg: 45 } },
    tower: { type: 'monopole', heightM: 35, baseRadiusM: 0.6, topRadiusM: 0.3, legRadiusM: 0, bayHeightM: 0 },
    levels,
    equipment,
    compound: {
      halfSideM: 8,
      fenceHeightM: 2.2,
      cabinets: [{ centre: [4, -3, 0.9], size: [1, 0.8, 1.8], yawDeg: 0 }],
      shelter: { centre: [-4, 3, 1.4], size: [3, 2.5, 2.8], yawDeg: 10 },
    },
  };
}

const layout = testLayout();
const flight = planFlight(layout, DEFAULT_CAMERA, { small: false });
const smallFlight = planFlight(layout, SMALL_CAMERA, { small: true });
const ORBITS = /^(helix|top|under-level-\d+)$/;

/** Meridian arc length between two latitudes (degrees) at a height above WGS 84, by Simpson's rule. */
function meridianArc(lat1: number, lat2: number, height: number): number {
  const m = (phi: number) => (WGS84_A * (1 - WGS84_E2)) / (1 - WGS84_E2 * Math.sin(phi) ** 2) ** 1.5 + height;
  const n = 100;
  const h = ((lat2 - lat1) * DEG) / n;
  let sum = m(lat1 * DEG) + m(lat2 * DEG);
  for (let i = 1; i < n; i++) sum += (i % 2 ? 4 : 2) * m(lat1 * DEG + i * h);
  return (sum * h) / 3;
}

/** Pixel x (from the image centre) of a point seen by a pose, or null behind it. */
function imageX(pose: CameraPose, camera: CameraModel, p: Vec3): number | null {
  const q = cameraToEnuQuaternion({ yaw: pose.yawDeg, pitch: pose.pitchDeg, roll: pose.rollDeg });
  const c = rotateVector(conjugateQuaternion(q), [p[0] - pose.position[0], p[1] - pose.position[1], p[2] - pose.position[2]]);
  return c[2] > 0.1 ? (focalPx(camera) * c[0]) / c[2] : null;
}

function countBy(poses: CameraPose[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const p of poses) counts[p.segment] = (counts[p.segment] ?? 0) + 1;
  return counts;
}

describe('tower-flight geodesy', () => {
  it('round-trips local points through latitude/longitude to well under a millimetre', () => {
    for (const p of [[0, 0, 0], [100, 0, 0], [-250, 180, 60], [37.5, -412.25, 131.7], [0, 0, -20]] as Vec3[]) {
      const back = geodeticToLocal(BASE, localToGeodetic(BASE, p));
      assert.ok(Math.hypot(back[0] - p[0], back[1] - p[1], back[2] - p[2]) < 1e-6, `${p} -> ${back}`);
    }
    const g = { latitude: -33.86, longitude: 151.21, altitude: 40 };
    const far = localToGeodetic(g, geodeticToLocal(g, { latitude: -33.861, longitude: 151.2105, altitude: 75 }));
    assert.ok(Math.abs(far.latitude + 33.861) < 1e-11 && Math.abs(far.longitude - 151.2105) < 1e-11 && Math.abs(far.altitude - 75) < 1e-6);
  });

  it('puts a point 100 m north 100 m up the meridian and 100 m east 100 m along the parallel', () => {
    // Distances along the meridian and the parallel at the base's height (520 m: 8 mm more than on the ellipsoid).
    const north = localToGeodetic(BASE, [0, 100, 0]);
    assert.ok(Math.abs(north.longitude - BASE.longitude) < 1e-12);
    const arc = meridianArc(BASE.latitude, north.latitude, BASE.altitude);
    assert.ok(Math.abs(arc - 100) < 1e-3, `arc ${arc}`);
    // The tangent plane rises above the ellipsoid by d²/2R: 0.8 mm at 100 m.
    assert.ok(north.altitude - BASE.altitude > 0.0005 && north.altitude - BASE.altitude < 0.001);
    const east = localToGeodetic(BASE, [100, 0, 0]);
    const n = WGS84_A / Math.sqrt(1 - WGS84_E2 * Math.sin(BASE.latitude * DEG) ** 2);
    assert.ok(Math.abs((n + BASE.altitude) * Math.cos(BASE.latitude * DEG) * (east.longitude - BASE.longitude) * DEG - 100) < 1e-3);
    const up = localToGeodetic(BASE, [0, 0, 35]);
    assert.ok(Math.abs(up.altitude - 555) < 1e-6 && Math.abs(up.latitude - BASE.latitude) < 1e-12);
  });

  it('gives UTM coordinates in the zone of src/shared/geo/utm.ts', () => {
    const onMeridian = utmOf(45, 9);
    assert.equal(onMeridian.epsg, 32632);
    assert.ok(Math.abs(onMeridian.easting - 500000) < 1e-6);
    const north = localToGeodetic({ latitude: 45, longitude: 9, altitude: 0 }, [0, 100, 0]);
    const moved = utmOf(north.latitude, north.longitude);
    assert.ok(Math.abs(moved.easting - 500000) < 1e-6);
    assert.ok(Math.abs(moved.northing - onMeridian.northing - 99.96) < 0.01); // scale 0.9996 on the central meridian
    assert.equal(utmOf(-33.86, 151.21).epsg, 32756);
    assert.equal(utmOf(60, 5).epsg, 32632); // the Norway exception
  });
});

describe('tower-flight flight plan', () => {
  it('flies every segment, ~150 photos by default and ~30 small (the antenna zone: helix, top, under the highest level)', () => {
    const segments = ['helix', 'top', 'nadir', 'under-level-0', 'under-level-1'];
    assert.deepEqual(Object.keys(countBy(flight)).sort(), segments.sort());
    assert.deepEqual(Object.keys(countBy(smallFlight)).sort(), ['helix', 'top', 'under-level-1']);
    const lowest = Math.min(...layout.levels.map((l) => l.heightM));
    assert.ok(smallFlight.filter((p) => p.segment === 'helix').every((p) => p.position[2] >= lowest - 5 - 1e-9), 'the small helix stays in the antenna zone');
    assert.ok(flight.length >= 130 && flight.length <= 170, `${flight.length} photos: ${JSON.stringify(countBy(flight))}`);
    assert.ok(smallFlight.length >= 25 && smallFlight.length <= 35, `${smallFlight.length} small photos`);
    for (const poses of [flight, smallFlight]) {
      poses.forEach((p, i) => assert.equal(p.file, `DJI_${String(i + 1).padStart(4, '0')}.JPG`));
      for (let i = 1; i < poses.length; i++) assert.ok(poses[i].timeS > poses[i - 1].timeS);
    }
    assert.deepEqual(planFlight(testLayout(), DEFAULT_CAMERA, { small: false }), flight, 'deterministic for a seed');
    assert.notDeepEqual(planFlight(testLayout(8), DEFAULT_CAMERA, { small: false }), flight);
  });

  it('keeps every camera clear of the tower, the antenna rings and the ground', () => {
    const ring = Math.max(...layout.levels.map((l) => l.mountRadiusM)) + 1;
    for (const p of [...flight, ...smallFlight]) {
      const [x, y, z] = p.position;
      if (z < layout.tower.heightM) assert.ok(Math.hypot(x, y) > ring, `${p.file} (${p.segment}) is ${Math.hypot(x, y)} m from the centre line`);
      assert.ok(z - groundHeight(layout, x, y) >= 2, `${p.file} is ${z - groundHeight(layout, x, y)} m above the ground`);
      assert.ok(Math.abs(p.rollDeg) <= 0.5);
      assert.ok(p.pitchDeg >= -90 && p.pitchDeg <= 90);
      if (p.segment === 'helix') assert.ok(p.pitchDeg <= 0 && p.pitchDeg >= -30);
      if (p.segment.startsWith('under-level')) assert.ok(p.pitchDeg >= 20 && p.pitchDeg <= 35);
      if (p.segment === 'top') assert.ok(p.pitchDeg <= -45 && p.pitchDeg >= -60);
      if (p.segment === 'nadir') assert.ok(p.pitchDeg <= -89.5);
    }
  });

  it('overlaps consecutive orbit photos by at least 75 % (plan figure and projected tower points)', () => {
    let pairs = 0;
    for (let i = 1; i < flight.length; i++) {
      const a = flight[i - 1], b = flight[i];
      if (a.segment !== b.segment || !ORBITS.test(a.segment)) continue;
      pairs++;
      assert.ok(orbitOverlap(a, b, DEFAULT_CAMERA) >= 0.75, `${a.file}-${b.file}: ${orbitOverlap(a, b, DEFAULT_CAMERA)}`);
      // Points of the tower near a's aim point (the centre line and the antenna ring around it) move
      // by at most a quarter of the image width from one photo to the next.
      const axis = opticalAxisEnu(cameraToEnuQuaternion({ yaw: a.yawDeg, pitch: a.pitchDeg, roll: a.rollDeg }));
      const t = Math.hypot(a.position[0], a.position[1]) / Math.hypot(axis[0], axis[1]);
      const aimZ = a.position[2] + t * axis[2];
      for (let k = 0; k < 12; k++) {
        const r = k === 0 ? 0 : 1.6;
        const p: Vec3 = [r * Math.sin(k * 30 * DEG), r * Math.cos(k * 30 * DEG), aimZ];
        const xa = imageX(a, DEFAULT_CAMERA, p), xb = imageX(b, DEFAULT_CAMERA, p);
        if (xa === null || xb === null) continue;
        assert.ok(Math.abs(xa - xb) <= 0.25 * DEFAULT_CAMERA.widthPx, `${a.file}-${b.file}: point ${k} moves ${Math.abs(xa - xb)} px`);
      }
    }
    assert.ok(pairs > 100);
  });

  it('points the helix and under-level cameras at the tower', () => {
    for (const p of flight.filter((q) => q.segment === 'helix' || q.segment.startsWith('under-level'))) {
      const axis = opticalAxisEnu(cameraToEnuQuaternion({ yaw: p.yawDeg, pitch: p.pitchDeg, roll: p.rollDeg }));
      const [x, y] = p.position;
      const horizontal = Math.hypot(axis[0], axis[1]);
      const miss = Math.abs(x * axis[1] - y * axis[0]) / horizontal; // distance of the axis from the centre line
      const ahead = -(x * axis[0] + y * axis[1]) / horizontal ** 2; // parameter of the closest approach
      assert.ok(miss < 0.5 && ahead > 0, `${p.file}: axis misses the centre line by ${miss} m`);
      const z = p.position[2] + ahead * axis[2];
      assert.ok(z >= 0 && z <= layout.tower.heightM + 1, `${p.file} looks at height ${z}`);
    }
  });
});

describe('tower-flight GPS noise', () => {
  it('drifts with the stated spread and is deterministic per seed', () => {
    const sums = [0, 0, 0];
    let baro = 0;
    let n = 0;
    let lagProduct = 0, lagSquares = 0;
    const takeOff = takeOffPoint(layout);
    for (let seed = 1; seed <= 60; seed++) {
      const errors = gpsErrors(flight, seed);
      const rel = relativeAltitudes(flight, seed, takeOff);
      errors.forEach((e, i) => {
        for (let a = 0; a < 3; a++) sums[a] += e[a] ** 2;
        baro += (rel[i] - (flight[i].position[2] - takeOff[2])) ** 2;
        if (i > 0) {
          lagProduct += e[0] * errors[i - 1][0];
          lagSquares += errors[i - 1][0] ** 2;
        }
        n++;
      });
    }
    const rms = sums.map((s) => Math.sqrt(s / n));
    assert.ok(Math.abs(rms[0] - 1.5) < 0.3 && Math.abs(rms[1] - 1.5) < 0.3, `horizontal ${rms}`);
    assert.ok(Math.abs(rms[2] - 3) < 0.6, `vertical ${rms}`);
    assert.ok(Math.abs(Math.sqrt(baro / n) - 0.3) < 0.06, `barometer ${Math.sqrt(baro / n)}`);
    assert.ok(lagProduct / lagSquares > 0.9, 'consecutive errors are correlated (a drift, not white noise)');

    const readings = gpsReadings(flight, 3, BASE);
    assert.deepEqual(gpsReadings(flight, 3, BASE), readings);
    assert.notDeepEqual(gpsReadings(flight, 4, BASE), readings);
    const errors = gpsErrors(flight, 3);
    readings.forEach((g, i) => {
      const local = geodeticToLocal(BASE, g);
      for (let a = 0; a < 3; a++) assert.ok(Math.abs(local[a] - flight[i].position[a] - errors[i][a]) < 1e-6);
    });
  });
});

describe('tower-flight photo writer', () => {
  it('writes EXIF and DJI XMP that the platform reads back', async () => {
    const rendered = await sharp({ create: { width: SMALL_CAMERA.widthPx, height: SMALL_CAMERA.heightPx, channels: 3, background: { r: 120, g: 140, b: 160 } } }).jpeg().toBuffer();
    const pose = { ...flight[5], yawDeg: -123.456, pitchDeg: -12.344, rollDeg: 0.21 };
    const gps = { latitude: -33.123456789, longitude: 151.98765432, altitude: 552.123 };
    const takenAt = new Date('2024-05-06T10:11:12.345Z');
    const jpeg = await writePhoto(rendered, { pose, camera: SMALL_CAMERA, gps, relativeAltitude: 30.104, takenAt, seed: 3 });
    const result = await analyzeImage(async (start, end) => jpeg.subarray(start, end), jpeg.length);
    assert.ok(result.ok, result.ok ? '' : result.reason);
    const m = result.metadata;
    assert.equal(m.format, 'jpeg');
    assert.deepEqual([m.width, m.height, m.make, m.model], [1600, 1200, 'DJI', 'M30T']);
    assert.ok(Math.abs(m.latitude! - gps.latitude) < 1e-7 && Math.abs(m.longitude! - gps.longitude) < 1e-7);
    assert.ok(Math.abs(m.altitude! - gps.altitude) < 1e-3);
    assert.equal(m.focalLengthMm, SMALL_CAMERA.focalLengthMm);
    assert.equal(m.focalLength35mm, 24);
    assert.equal(m.relativeAltitude, 30.1);
    assert.deepEqual(m.gimbal, { yaw: -123.46, pitch: -12.34, roll: 0.21 });
    assert.ok(m.flight && Math.abs(m.flight.yaw - pose.yawDeg) <= 3.01 && Math.abs(m.flight.pitch) <= 1.5);
    assert.equal(m.capturedAt?.toISOString(), takenAt.toISOString());
    assert.equal(m.exifOrientation, 1);

    await assert.rejects(writePhoto(rendered, { pose, camera: DEFAULT_CAMERA, gps, relativeAltitude: 1, takenAt }), RangeError);
    await assert.rejects(writePhoto(rendered, { pose, camera: SMALL_CAMERA, gps: { ...gps, altitude: -5 }, relativeAltitude: 1, takenAt }), RangeError);
  });
});

describe('tower-flight truth', () => {
  it('has the required fields, in WGS 84 and EGM96', () => {
    const truth = JSON.parse(JSON.stringify(buildTruth(layout, flight, DEFAULT_CAMERA)));
    assert.deepEqual(truth.tower.base, [BASE.latitude, BASE.longitude, BASE.altitude]);
    assert.equal(truth.tower.height_m, 35);
    assert.equal(truth.tower.type, 'monopole');
    assert.equal(truth.antennas.length, layout.equipment.length);
    for (const a of truth.antennas) {
      assert.ok(['panel_antenna', 'microwave_antenna', 'ancillary_box'].includes(a.type));
      assert.equal(a.center.length, 3);
      for (const key of ['azimuth_deg', 'downtilt_deg', 'plumb_deg', 'width_m', 'height_m', 'depth_m']) assert.equal(typeof a[key], 'number', key);
      const e = layout.equipment.find((q) => q.id === a.id)!;
      const local = geodeticToLocal(BASE, { latitude: a.center[0], longitude: a.center[1], altitude: a.center[2] });
      assert.ok(Math.hypot(local[0] - e.centre[0], local[1] - e.centre[1], local[2] - e.centre[2]) < 1e-3);
    }
    assert.deepEqual(truth.antennas.slice(0, 2).map((a: { id: string }) => a.id), ['L0-S0-panel', 'L0-S0-rru']);
    assert.equal(truth.cameras.length, flight.length);
    truth.cameras.forEach((c: { file: string; position: number[]; quaternion_wxyz: number[] }, i: number) => {
      assert.equal(c.file, flight[i].file);
      const local = geodeticToLocal(BASE, { latitude: c.position[0], longitude: c.position[1], altitude: c.position[2] });
      assert.ok(Math.hypot(local[0] - flight[i].position[0], local[1] - flight[i].position[1], local[2] - flight[i].position[2]) < 1e-3);
      assert.equal(c.quaternion_wxyz.length, 4);
    });
    assert.equal(truth.camera.width_px, DEFAULT_CAMERA.widthPx);
  });
});

describe('tower-flight reference cloud', () => {
  it('samples points on the triangles, in UTM with EGM96 heights', () => {
    // A unit square standing 2 m east of the tower (tower group) and a ground triangle cut at 2 m.
    const square = new Float32Array([2, 0, 0, 2, 1, 0, 2, 1, 1, 2, 0, 0, 2, 1, 1, 2, 0, 1]);
    const triangle = new Float32Array([0, 0, 0, 3, 0, 0, 0, 3, 0]);
    const parts: MeshPart[] = [
      { material: 'grass', positions: triangle, group: 'ground' },
      { material: 'radome', positions: square, group: 'tower' },
    ];
    const las = readLas(referenceCloud(parts, BASE, { groundRadiusM: 2, seed: 5 }));
    const zone = utmOf(BASE.latitude, BASE.longitude);
    assert.equal(las.header.horizontalEpsg, zone.epsg);
    assert.equal(las.header.verticalEpsg, 5773);
    assert.match(las.header.wkt ?? '', /EGM96/);
    const toWgs = proj4(`+proj=utm +zone=${zone.zone} +datum=WGS84 +units=m +no_defs`, 'EPSG:4326');
    let onSquare = 0, onGround = 0;
    for (let i = 0; i < las.count; i++) {
      const [lon, lat] = toWgs.forward([las.positions[3 * i], las.positions[3 * i + 1]]);
      const [x, y, z] = geodeticToLocal(BASE, { latitude: lat, longitude: lon, altitude: las.positions[3 * i + 2] });
      const colour = Array.from(las.colors!.subarray(3 * i, 3 * i + 3));
      if (las.classification[i] === 1) {
        onSquare++;
        assert.ok(Math.abs(x - 2) < 2e-3 && y > -2e-3 && y < 1.002 && z > -2e-3 && z < 1.002, `${x} ${y} ${z}`);
        assert.deepEqual(colour, MATERIAL_COLOURS.radome);
      } else {
        onGround++;
        assert.equal(las.classification[i], 2);
        assert.ok(Math.abs(z) < 2e-3 && x > -2e-3 && y > -2e-3 && x + y < 3.002 && Math.hypot(x, y) < 2.002, `${x} ${y} ${z}`);
        assert.deepEqual(colour, MATERIAL_COLOURS.grass);
      }
    }
    // 1 cm spacing on 1 m², 5 cm on the quarter disc of 2 m (π m²), within a few standard deviations.
    assert.ok(Math.abs(onSquare - 10000) < 300, `${onSquare} points on the square`);
    assert.ok(Math.abs(onGround - Math.PI / 0.0025) < 150, `${onGround} points on the ground`);
  });
});
