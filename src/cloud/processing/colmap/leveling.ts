// Georegistration to GPS positions fixes the model's rotation only when the positions span a
// plane or a volume. Photos taken along a line (a street walked with a phone, a single flight
// strip) leave the rotation about that line free: GPS noise decides it, and the model can come out
// rolled by any angle, even upside down (lund: the cameras' "down" pointed up after
// model_aligner). When the cameras are nearly collinear (spread across the line under
// COLLINEAR_RATIO of the spread along it, 80th percentiles), `levelAlongTrack` turns the model about the line,
// through the cameras' centre, to the angle where the cameras' x axes (image right) are most level
// (least squares, searched in 0.25 degree steps) with their y + z axes (image down plus optical
// axis) pointing down on average. Handheld photos (y down, z level), nadir photos (z down) and
// obliques from a gimbal alike have a level x axis. Positions along the line, and so the fit to
// GPS, barely change.
import { conjugateQuaternion, multiplyQuaternions, normalizeQuaternion, quaternionFromAxisAngle, quaternionToMatrix, rotateVector, type Quaternion, type Vec3 } from '../../../shared/geo/rotation.ts';
import { cameraCentre, type ColmapModel } from './colmap-model.ts';

export const COLLINEAR_RATIO = 0.2;

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export interface Leveling {
  /** Spread of the camera centres across their main direction / along it. */
  spreadRatio: number;
  /** Rotation applied about the track, degrees (0: none needed or positions not collinear). */
  rotationDeg: number;
}

/** Levels a model in a right-handed frame whose z is up (in place). */
export function levelAlongTrack(model: ColmapModel, options: { anySpread?: boolean } = {}): Leveling {
  const all = model.images.map((img) => cameraCentre(img));
  if (all.length < 2) return { spreadRatio: 0, rotationDeg: 0 };
  // The 80 % of cameras nearest the median centre: a wrongly registered camera far away must not
  // turn the main direction.
  const mid = [0, 1, 2].map((a) => percentile(all.map((p) => p[a]), 0.5));
  const near = all.map((p) => ({ p, d: Math.hypot(p[0] - mid[0], p[1] - mid[1], p[2] - mid[2]) })).sort((x, y) => x.d - y.d);
  const centres = near.slice(0, Math.max(2, Math.ceil(0.8 * near.length))).map((x) => x.p);
  const c: Vec3 = [0, 1, 2].map((a) => centres.reduce((s, p) => s + p[a], 0) / centres.length) as Vec3;
  const cov = [0, 1, 2].map((i) => [0, 1, 2].map((j) => centres.reduce((s, p) => s + (p[i] - c[i]) * (p[j] - c[j]), 0) / centres.length));
  // Main direction by power iteration.
  let a: Vec3 = [1, 1, 1];
  for (let k = 0; k < 100; k++) {
    const next: Vec3 = [0, 1, 2].map((i) => cov[i][0] * a[0] + cov[i][1] * a[1] + cov[i][2] * a[2]) as Vec3;
    const n = Math.hypot(...next);
    if (!(n > 0)) return { spreadRatio: 0, rotationDeg: 0 };
    a = next.map((v) => v / n) as Vec3;
  }
  // Spreads as 80th percentiles of the distances along and across the main direction, so that a
  // camera or two far off the line (a wrong registration, a GPS jump) do not hide a line.
  const alongDistances: number[] = [];
  const acrossDistances: number[] = [];
  for (const p of centres) {
    const d: Vec3 = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
    const t = d[0] * a[0] + d[1] * a[1] + d[2] * a[2];
    alongDistances.push(Math.abs(t));
    acrossDistances.push(Math.hypot(d[0] - t * a[0], d[1] - t * a[1], d[2] - t * a[2]));
  }
  const along = percentile(alongDistances, 0.8);
  const spreadRatio = along > 0 ? percentile(acrossDistances, 0.8) / along : 0;
  if (spreadRatio >= COLLINEAR_RATIO && !options.anySpread) return { spreadRatio, rotationDeg: 0 };

  // The angle about the track that levels the cameras' x axes (image right) best, among those
  // where their y + z axes point down on average (the level solution and its upside-down twin
  // both have level x axes).
  const axes = model.images.map((img) => {
    const R = quaternionToMatrix(img.qvec); // world -> camera: rows are the camera axes in world
    return { x: R[0] as Vec3, yz: [R[1][0] + R[2][0], R[1][1] + R[2][1], R[1][2] + R[2][2]] as Vec3 };
  });
  let angle = 0;
  let best = Infinity;
  for (let step = 0; step < 1440; step++) {
    const theta = (step / 1440) * 2 * Math.PI;
    const turn = quaternionFromAxisAngle(a, theta);
    let cost = 0;
    let downness = 0;
    for (const { x, yz } of axes) {
      cost += rotateVector(turn, x)[2] ** 2;
      downness += rotateVector(turn, yz)[2];
    }
    if (downness < 0 && cost < best) {
      best = cost;
      angle = theta > Math.PI ? theta - 2 * Math.PI : theta;
    }
  }
  if (best === Infinity) return { spreadRatio, rotationDeg: 0 };
  const Q = quaternionFromAxisAngle(a, angle);

  // Points: X' = Q (X - c) + c.
  const p = model.positions;
  for (let i = 0; i < p.length; i += 3) {
    const r = rotateVector(Q, [p[i] - c[0], p[i + 1] - c[1], p[i + 2] - c[2]]);
    p[i] = r[0] + c[0];
    p[i + 1] = r[1] + c[1];
    p[i + 2] = r[2] + c[2];
  }
  // Poses: R' = R Q^T, t' = t + R c - R' c.
  for (const img of model.images) {
    const R = quaternionToMatrix(img.qvec);
    const q2 = normalizeQuaternion(multiplyQuaternions(img.qvec, conjugateQuaternion(Q)));
    const R2 = quaternionToMatrix(q2);
    const Rc = [0, 1, 2].map((r) => R[r][0] * c[0] + R[r][1] * c[1] + R[r][2] * c[2]);
    const R2c = [0, 1, 2].map((r) => R2[r][0] * c[0] + R2[r][1] * c[1] + R2[r][2] * c[2]);
    img.tvec = [0, 1, 2].map((r) => img.tvec[r] + Rc[r] - R2c[r]) as Vec3;
    img.qvec = q2;
  }
  return { spreadRatio, rotationDeg: (angle * 180) / Math.PI };
}

/**
 * After leveling, the fit to the GPS positions again, keeping the model level: scale, a turn about
 * the vertical and a translation (4 degrees of freedom, least squares; positions further than
 * `maxError` from the first fit are left out of the second). Applied in place; returns the scale
 * and the turn (degrees).
 */
export function refitLevel(model: ColmapModel, references: Map<string, Vec3>, maxError: number): { scale: number; turnDeg: number; used: number } | null {
  const pairs = model.images.filter((img) => references.has(img.name)).map((img) => ({ c: cameraCentre(img), r: references.get(img.name)! }));
  if (pairs.length < 2) return null;
  const fit = (list: typeof pairs) => {
    const cm: Vec3 = [0, 1, 2].map((a) => list.reduce((s, p) => s + p.c[a], 0) / list.length) as Vec3;
    const rm: Vec3 = [0, 1, 2].map((a) => list.reduce((s, p) => s + p.r[a], 0) / list.length) as Vec3;
    let sin = 0;
    let cos = 0;
    for (const { c, r } of list) {
      const [ax, ay] = [c[0] - cm[0], c[1] - cm[1]];
      const [bx, by] = [r[0] - rm[0], r[1] - rm[1]];
      sin += ax * by - ay * bx;
      cos += ax * bx + ay * by;
    }
    const theta = Math.atan2(sin, cos);
    const Q = quaternionFromAxisAngle([0, 0, 1], theta);
    let num = 0;
    let den = 0;
    for (const { c, r } of list) {
      const a = rotateVector(Q, [c[0] - cm[0], c[1] - cm[1], c[2] - cm[2]]);
      num += a[0] * (r[0] - rm[0]) + a[1] * (r[1] - rm[1]) + a[2] * (r[2] - rm[2]);
      den += a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
    }
    const s = den > 0 ? num / den : 1;
    const qc = rotateVector(Q, cm);
    const t: Vec3 = [rm[0] - s * qc[0], rm[1] - s * qc[1], rm[2] - s * qc[2]];
    const residual = (p: (typeof pairs)[number]) => {
      const x = rotateVector(Q, p.c);
      return Math.hypot(s * x[0] + t[0] - p.r[0], s * x[1] + t[1] - p.r[1], s * x[2] + t[2] - p.r[2]);
    };
    return { theta, Q, s, t, residual };
  };
  let result = fit(pairs);
  const inliers = pairs.filter((p) => result.residual(p) <= maxError);
  if (inliers.length >= 3 && inliers.length < pairs.length) result = fit(inliers);
  const { Q, s, t } = result;
  if (!(s > 0) || !Number.isFinite(s)) return null;

  // Points: X' = s Q X + t.
  const p = model.positions;
  for (let i = 0; i < p.length; i += 3) {
    const r = rotateVector(Q, [p[i], p[i + 1], p[i + 2]]);
    p[i] = s * r[0] + t[0];
    p[i + 1] = s * r[1] + t[1];
    p[i + 2] = s * r[2] + t[2];
  }
  // Poses: R' = R Q^T, t' = s t_cam - R' t.
  for (const img of model.images) {
    const q2 = normalizeQuaternion(multiplyQuaternions(img.qvec, conjugateQuaternion(Q)));
    const R2 = quaternionToMatrix(q2);
    img.tvec = [0, 1, 2].map((r) => s * img.tvec[r] - (R2[r][0] * t[0] + R2[r][1] * t[1] + R2[r][2] * t[2])) as Vec3;
    img.qvec = q2;
  }
  return { scale: s, turnDeg: (result.theta * 180) / Math.PI, used: inliers.length >= 3 ? inliers.length : pairs.length };
}

/**
 * Mean up component of the cameras' image-down plus optical axes: negative when the photos are
 * upright (handheld: y down) or look down (drones: z down), positive when the model is upside down.
 */
export function cameraUpness(model: ColmapModel): number {
  if (!model.images.length) return 0;
  let sum = 0;
  for (const img of model.images) {
    const R = quaternionToMatrix(img.qvec); // rows: the camera axes in the model frame
    sum += R[1][2] + R[2][2];
  }
  return sum / model.images.length;
}

/** Distance between each camera centre and its reference position, by image name (cameras with one). */
export function referenceResiduals(model: ColmapModel, references: Map<string, Vec3>): Map<string, number> {
  const distances = new Map<string, number>();
  for (const img of model.images) {
    const r = references.get(img.name);
    if (!r) continue;
    const c = cameraCentre(img);
    distances.set(img.name, Math.hypot(c[0] - r[0], c[1] - r[1], c[2] - r[2]));
  }
  return distances;
}

/** Median distance between the camera centres and their reference positions. */
export function medianReferenceResidual(model: ColmapModel, references: Map<string, Vec3>): number {
  const distances = [...referenceResiduals(model, references).values()];
  return distances.length ? percentile(distances, 0.5) : Infinity;
}

/**
 * Root mean square of the up components of the cameras' x axes (image right): 0 when every photo's
 * horizon is level, sin(roll) for a model rolled as a whole.
 */
export function cameraTilt(model: ColmapModel): number {
  if (!model.images.length) return 0;
  let sum = 0;
  for (const img of model.images) sum += quaternionToMatrix(img.qvec)[0][2] ** 2;
  return Math.sqrt(sum / model.images.length);
}

/**
 * Cameras registered in an orientation the rest of the photos contradict, in a levelled model:
 * - the image-right axis steeper than 45 degrees (turned on their side). Handheld photos and a
 *   drone's (nadir or oblique, from a gimbal) keep their horizon near level (lund: the photos after
 *   a street corner, weakly tied to the rest, came out turned about 90 degrees in some runs).
 *   Portrait photos stored sideways (EXIF orientation) count too; they only cost another mapper
 *   attempt;
 * - the world's up, seen from the camera, more than MISORIENTED_UP_DEG away from where the photo
 *   says it is: its gimbal orientation (`expectedUp`, camera -> east/north/up) when it has one,
 *   else where the other such cameras see it (the component-wise median). A camera looking
 *   straight down among photos taken level keeps a level image-right axis, so the first rule
 *   misses it (lund, one local run in four: the eight photos after the corner registered looking
 *   down). A set that mixes level and nadir photos without gimbal angles can name a few cameras
 *   wrongly; that too only costs another mapper attempt, kept only when it has fewer.
 */
export function misorientedCameras(model: ColmapModel, expectedUp: (name: string) => Quaternion | null = () => null): string[] {
  const seen = model.images.map((img) => {
    const R = quaternionToMatrix(img.qvec); // rows: the camera axes in the model frame
    const gimbal = expectedUp(img.name);
    return { name: img.name, up: [R[0][2], R[1][2], R[2][2]] as Vec3, expected: gimbal ? rotateVector(conjugateQuaternion(gimbal), [0, 0, 1]) : null };
  });
  const free = seen.filter((c) => !c.expected);
  const typical = free.length ? unit([0, 1, 2].map((a) => percentile(free.map((c) => c.up[a]), 0.5)) as Vec3) : null;
  const limit = Math.cos((MISORIENTED_UP_DEG * Math.PI) / 180);
  return seen
    .filter((c) => {
      if (Math.abs(c.up[0]) > Math.SQRT1_2) return true; // up[0]: the image-right axis's up component
      const expected = c.expected ?? typical;
      return expected !== null && c.up[0] * expected[0] + c.up[1] * expected[1] + c.up[2] * expected[2] < limit;
    })
    .map((c) => c.name);
}

/** How far (degrees) a camera's view of the up direction may stray from the expected one (misorientedCameras). */
export const MISORIENTED_UP_DEG = 60;

function unit(v: Vec3): Vec3 | null {
  const n = Math.hypot(v[0], v[1], v[2]);
  return n > 0 ? [v[0] / n, v[1] / n, v[2] / n] : null;
}

/** A model whose cameras' x axes are tilted more than this (sin 10°) on average is levelled too. */
export const TILT_LIMIT = Math.sin((10 * Math.PI) / 180);

export interface LevelingOutcome extends Leveling {
  /** Why the model was turned: its cameras lie along a line, it was upside down, or rolled. */
  reason: 'collinear' | 'upside-down' | 'tilted' | null;
  refit: ReturnType<typeof refitLevel>;
}

function cloneModel(model: ColmapModel): ColmapModel {
  return {
    ...model,
    images: model.images.map((img) => ({ ...img, qvec: [...img.qvec] as Quaternion, tvec: [...img.tvec] as Vec3 })),
    positions: Float64Array.from(model.positions),
  };
}

/**
 * Levels a model georeferenced in a z-up frame (in place), then refits it to the reference
 * positions:
 * - cameras nearly collinear: turned about their track (levelAlongTrack) and refitted;
 * - otherwise, when the model is upside down (cameraUpness > 0) or rolled (the cameras' x axes
 *   tilted over TILT_LIMIT on average: one CI run of lund came out rolled by ~25°, upright enough
 *   to pass the upside-down test), the same on a copy, kept when it
 *   fits the reference positions about as well (median residual at most twice the original's, or
 *   within maxError): the GPS fit can leave the roll about the cameras' main direction to noise
 *   even when they are not on a line (phone GPS heights are off by metres; one lund run in six
 *   came out upside down with a camera spread above COLLINEAR_RATIO). An orientation the
 *   positions do tell apart (a mirrored area) fits them far worse and is refused.
 */
export function levelModel(model: ColmapModel, references: Map<string, Vec3>, maxError: number): LevelingOutcome {
  const collinear = levelAlongTrack(model);
  if (collinear.rotationDeg) return { ...collinear, reason: 'collinear', refit: refitLevel(model, references, maxError) };
  const unchanged: LevelingOutcome = { ...collinear, reason: null, refit: null };
  const upsideDown = cameraUpness(model) > 0;
  if (!upsideDown && cameraTilt(model) <= TILT_LIMIT) return unchanged;
  const candidate = cloneModel(model);
  const turned = levelAlongTrack(candidate, { anySpread: true });
  if (!turned.rotationDeg) return unchanged;
  const refit = refitLevel(candidate, references, maxError);
  const before = medianReferenceResidual(model, references);
  const after = medianReferenceResidual(candidate, references);
  if (!refit || !(after <= Math.max(2 * before, maxError))) return unchanged;
  model.images = candidate.images;
  model.positions = candidate.positions;
  return { ...turned, reason: upsideDown ? 'upside-down' : 'tilted', refit };
}
