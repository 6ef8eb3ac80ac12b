import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cameraToEnuQuaternion,
  multiplyQuaternions,
  normalizeQuaternion,
  quaternionFromAxisAngle,
  quaternionToMatrix,
  rotateVector,
  type Quaternion,
  type Vec3,
} from '../src/shared/geo/rotation.ts';

const EPS = 1e-9;

function assertVec(actual: Vec3, expected: Vec3, eps = EPS): void {
  for (let i = 0; i < 3; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) < eps, `component ${i}: got [${actual.join(', ')}], expected [${expected.join(', ')}]`);
  }
}

const X: Vec3 = [1, 0, 0];
const Y: Vec3 = [0, 1, 0];
const Z: Vec3 = [0, 0, 1];
const UP_IN_IMAGE: Vec3 = [0, -1, 0]; // camera -y: towards the top of the image
const S = Math.SQRT1_2;

describe('rotation primitives', () => {
  it('rotates by axis-angle with the right-hand rule', () => {
    const q = quaternionFromAxisAngle([0, 0, 1], Math.PI / 2);
    assertVec(rotateVector(q, X), [0, 1, 0]);
    assertVec(rotateVector(q, Y), [-1, 0, 0]);
  });

  it('composes a ⊗ b as b first, then a', () => {
    const a = quaternionFromAxisAngle([0, 0, 1], Math.PI / 2);
    const b = quaternionFromAxisAngle([1, 0, 0], Math.PI / 2);
    const v: Vec3 = [0, 1, 0];
    assertVec(rotateVector(multiplyQuaternions(a, b), v), rotateVector(a, rotateVector(b, v)));
  });

  it('matrix columns are the images of the basis vectors', () => {
    const q = normalizeQuaternion([0.3, -0.5, 0.2, 0.7]);
    const m = quaternionToMatrix(q);
    for (const [j, e] of [X, Y, Z].entries()) assertVec([m[0][j], m[1][j], m[2][j]], rotateVector(q, e));
  });

  it('normalizes to unit length with w >= 0', () => {
    const q = normalizeQuaternion([-2, 0, 0, 0]);
    assert.deepEqual(q, [1, -0, -0, -0]);
    assert.throws(() => normalizeQuaternion([0, 0, 0, 0]));
  });
});

describe('cameraToEnuQuaternion (camera x right, y down, z forward → East-North-Up)', () => {
  it('yaw 0, pitch 0: looks north, level, image right = east', () => {
    const q = cameraToEnuQuaternion({ yaw: 0, pitch: 0, roll: 0 });
    assertVec(rotateVector(q, Z), [0, 1, 0]);
    assertVec(rotateVector(q, X), [1, 0, 0]);
    assertVec(rotateVector(q, Y), [0, 0, -1]);
    assert.deepEqual(
      q.map((c) => Math.round(c * 1e12) / 1e12),
      [S, -S, 0, 0].map((c) => Math.round(c * 1e12) / 1e12),
    );
  });

  it('pitch -90: looks straight down, top of the image to the north', () => {
    const q = cameraToEnuQuaternion({ yaw: 0, pitch: -90, roll: 0 });
    assertVec(rotateVector(q, Z), [0, 0, -1]);
    assertVec(rotateVector(q, UP_IN_IMAGE), [0, 1, 0]);
    assertVec(rotateVector(q, X), [1, 0, 0]);
  });

  it('yaw 90: looks east, image right = south', () => {
    const q = cameraToEnuQuaternion({ yaw: 90, pitch: 0, roll: 0 });
    assertVec(rotateVector(q, Z), [1, 0, 0]);
    assertVec(rotateVector(q, X), [0, -1, 0]);
  });

  it('yaw 90, pitch -90: looks down, top of the image to the east', () => {
    const q = cameraToEnuQuaternion({ yaw: 90, pitch: -90, roll: 0 });
    assertVec(rotateVector(q, Z), [0, 0, -1]);
    assertVec(rotateVector(q, UP_IN_IMAGE), [1, 0, 0]);
  });

  it('yaw -90 equals yaw 270: looks west', () => {
    const a = cameraToEnuQuaternion({ yaw: -90, pitch: 0, roll: 0 });
    const b = cameraToEnuQuaternion({ yaw: 270, pitch: 0, roll: 0 });
    assertVec(rotateVector(a, Z), [-1, 0, 0]);
    assertVec(rotateVector(b, Z), [-1, 0, 0]);
  });

  it('oblique view: yaw 45, pitch -30', () => {
    const q = cameraToEnuQuaternion({ yaw: 45, pitch: -30, roll: 0 });
    const c = Math.cos(Math.PI / 6);
    assertVec(rotateVector(q, Z), [S * c, S * c, -0.5]);
  });

  it('positive roll puts the right side of the image down, optical axis unchanged', () => {
    const q = cameraToEnuQuaternion({ yaw: 0, pitch: 0, roll: 30 });
    assertVec(rotateVector(q, Z), [0, 1, 0]);
    assertVec(rotateVector(q, X), [Math.cos(Math.PI / 6), 0, -0.5]);
  });

  it('roll turns about the optical axis after yaw and pitch (intrinsic order)', () => {
    const q = cameraToEnuQuaternion({ yaw: 90, pitch: -90, roll: 90 });
    // Looking down with the image top to the east, image right points south; rolling 90° about the
    // optical axis moves the right side to where the image bottom was: west.
    assertVec(rotateVector(q, Z), [0, 0, -1]);
    assertVec(rotateVector(q, X), [-1, 0, 0]);
  });

  it('always returns a unit quaternion with w >= 0', () => {
    for (const yaw of [-180, -45, 0, 33, 180, 359]) {
      for (const pitch of [-90, -60, 0, 30]) {
        for (const roll of [-20, 0, 15]) {
          const q: Quaternion = cameraToEnuQuaternion({ yaw, pitch, roll });
          assert.ok(Math.abs(Math.hypot(...q) - 1) < EPS);
          assert.ok(q[0] >= 0);
        }
      }
    }
  });
});
