// The tower-inspection flight the generator (issue 36) photographs the scene with, as tower
// photogrammetry guides recommend it:
//   helix         a climbing spiral around the tower from ~5 m above the ground to above its top,
//                 gimbal ~10° down at the centre line a little below the camera;
//   top           an orbit above the top looking down at the top antenna level (pitch -52°);
//   nadir         a lawnmower pass straight down (pitch -90) over the fenced compound plus 5 m, from
//                 10 m above the top (the safe altitude over the tower);
//   under-level-N for each antenna level, an orbit below it looking up (+28°) at its antennas;
// flown in that order (under-levels from the highest down), after a take-off in a compound corner.
//
// Overlap. Consecutive photos of an orbit are taken from camera centres a baseline b apart, each
// aimed at the centre line at a distance D. The footprint of a photo on the plane through its aim
// point, perpendicular to the view, is W = 2·D·tan(hfov/2) wide; as in any photogrammetric plan,
// the overlap is 1 - b/W (the share of one footprint the next still sees after moving b). The
// cameras turn with the orbit, so the aim point does not move in the image at all, and a point of
// the tower at a distance ρ from the centre line and d from the camera moves by only b·ρ/(d·D)
// (radians), less than b/D whenever ρ < d: every part of the tower overlaps at least as much as
// this figure. The orbits take the fewest photos per turn with 1 - b/W >= 75 % (`orbitOverlap`);
// 19 photos a turn (19° steps) on a helix of 10.6 m radius. The helix climbs at most 60 % of a
// photo's vertical footprint per turn (40 % overlap between turns). `small` flies about 30 photos
// for the tests' reconstructions: 2 helix turns of 12 (30° steps, ~65 % overlap) over the antenna
// zone only, 3 over the top and 6 under the highest level, no nadir pass (a sparser plan, 8 a turn
// over the whole height, gave SIFT too little overlap: COLMAP placed none of its photos).
//
// Safety: below the tower's top no camera comes within `keepOutRadius` (the tower, the mount rings
// and every piece of equipment, plus 1 m) of the centre line, and none is lower than 4 m above the
// ground (5 m and above the compound's cabinets and fence for the helix). Photo times follow a
// cruise speed of ~2.5 m/s between positions (around the tower, not through it) and a ~2 s hover
// for each photo; the velocity at the shot is the residual drift of the hover (0.1-0.5 m/s,
// towards the next position). Gimbal angles carry a seeded aiming jitter of at most 0.5°.
import { fieldOfView } from './camera-models.ts';
import { forkRandom, type Random } from './random.ts';
import { groundHeight } from './scene-description.ts';
import type { CameraModel, CameraPose, SceneLayout, Vec3 } from './scene-types.ts';

const DEG = Math.PI / 180;
/** Planned with a point to spare, so that the aiming jitter cannot bring an orbit below 75 %. */
const ORBIT_OVERLAP = 0.76;
const HELIX_TURN_OVERLAP = 0.4;
const NADIR_FORWARD_OVERLAP = 0.8;
const NADIR_SIDE_OVERLAP = 0.7;
const KEEP_OUT_MARGIN_M = 1;
const CRUISE_SPEED_MS = 2.5;
const HOVER_S = 2;
/** `small`: 12 photos a helix turn (30° steps, ~65 % overlap): the fewest COLMAP still chains round a tower. */
const SMALL_HELIX_PER_TURN = 12;

/** Horizontal distance from the centre line within which no camera flies below the top: structure, rings, equipment + 1 m. */
export function keepOutRadius(layout: SceneLayout): number {
  let r = Math.max(layout.tower.baseRadiusM, layout.tower.topRadiusM);
  for (const level of layout.levels) r = Math.max(r, level.mountRadiusM);
  for (const e of layout.equipment) r = Math.max(r, Math.hypot(e.centre[0], e.centre[1]) + Math.hypot(e.widthM, e.heightM, e.depthM) / 2);
  return r + KEEP_OUT_MARGIN_M;
}

/** The highest point of the tower and what hangs on it (local z). */
export function structureTop(layout: SceneLayout): number {
  let top = layout.tower.heightM;
  for (const e of layout.equipment) top = Math.max(top, e.centre[2] + Math.hypot(e.widthM, e.heightM, e.depthM) / 2);
  return top;
}

/** Where the drone takes off (and its barometer reads 0): on the ground, 2 m inside the compound's south-west corner. */
export function takeOffPoint(layout: SceneLayout): Vec3 {
  const c = -Math.max(0, layout.compound.halfSideM - 2);
  return [c, c, groundHeight(layout, c, c)];
}

/**
 * Overlap of two consecutive orbit photos (module comment): 1 - baseline / footprint width, the
 * footprint taken at the nearer photo's distance to the centre line along its optical axis.
 */
export function orbitOverlap(a: CameraPose, b: CameraPose, camera: CameraModel): number {
  const distance = (p: CameraPose) => Math.hypot(p.position[0], p.position[1]) / Math.cos(p.pitchDeg * DEG);
  const baseline = Math.hypot(a.position[0] - b.position[0], a.position[1] - b.position[1], a.position[2] - b.position[2]);
  return 1 - baseline / (2 * Math.min(distance(a), distance(b)) * Math.tan(fieldOfView(camera).horizontalRad / 2));
}

/** A planned shot before timing and jitter: where, which way (degrees) and in which segment. */
interface Shot {
  position: Vec3;
  yawDeg: number;
  pitchDeg: number;
  segment: string;
}

/** The fewest photos per full turn whose consecutive baselines keep `overlap` at aim distance `distance`. */
function photosPerTurn(radius: number, distance: number, risePerTurn: number, hfov: number, overlap: number): number {
  const maxBaseline = (1 - overlap) * 2 * distance * Math.tan(hfov / 2);
  for (let n = 3; n < 1000; n++) {
    if (Math.hypot(2 * radius * Math.sin(Math.PI / n), risePerTurn / n) <= maxBaseline) return n;
  }
  throw new RangeError('orbit too small for its overlap');
}

/** Heading clockwise from north, in DJI's range (-180, 180]. */
function headingDeg(dx: number, dy: number): number {
  const h = Math.atan2(dx, dy) / DEG;
  return h <= -180 ? h + 360 : h;
}

/** Shots on a circle of `radius` around the centre line looking at (0, 0, aimZ(z)); angle in radians. */
function orbitShot(radius: number, angle: number, z: number, aimZ: number, segment: string): Shot {
  const position: Vec3 = [radius * Math.sin(angle), radius * Math.cos(angle), z];
  return { position, yawDeg: headingDeg(-position[0], -position[1]), pitchDeg: Math.atan2(aimZ - z, radius) / DEG, segment };
}

/** The compound's highest object (fence, cabinets, shelter) above the base, for the helix's floor. */
function compoundTop(layout: SceneLayout): number {
  let top = layout.compound.fenceHeightM;
  for (const c of layout.compound.cabinets) top = Math.max(top, c.centre[2] + c.size[2] / 2);
  if (layout.compound.shelter) top = Math.max(top, layout.compound.shelter.centre[2] + layout.compound.shelter.size[2] / 2);
  return top;
}

/**
 * The photos of the flight, in the order they are taken, named DJI_0001.JPG, ... (module comment).
 * Deterministic for a layout (its seed) and camera.
 */
export function planFlight(layout: SceneLayout, camera: CameraModel, options: { small: boolean }): CameraPose[] {
  const rng = forkRandom(layout.seed, 'flight');
  const { horizontalRad: hfov, verticalRad: vfov } = fieldOfView(camera);
  const keepOut = keepOutRadius(layout);
  const top = structureTop(layout);
  const slope = Math.tan(layout.site.slopeDeg * DEG);
  const clockwise = rng.chance(0.5) ? 1 : -1;
  const shots: Shot[] = [];

  // Helix: radius so that the antenna ring fills ~35 % of the frame's width, at least 6 m outside
  // the keep-out radius and 0.3 x the tower's height, within 10-25 m.
  const ringWidth = 2 * (keepOut - KEEP_OUT_MARGIN_M);
  const radius = Math.min(25, Math.max(10, ringWidth / 0.35 / (2 * Math.tan(hfov / 2)), keepOut + 6, 0.3 * layout.tower.heightM));
  const lowestLevel = Math.min(...layout.levels.map((l) => l.heightM), top);
  // `small` keeps the helix to the antenna zone: the equipment is what its runs are for.
  const zStart = Math.max(Math.max(5, compoundTop(layout) + 2) + slope * radius, options.small ? lowestLevel - 5 : 0);
  const zEnd = Math.max(top + 2, zStart + 1);
  const maxRisePerTurn = (1 - HELIX_TURN_OVERLAP) * 2 * radius * Math.tan(vfov / 2);
  const turns = options.small ? 2 : Math.max(2, Math.ceil((zEnd - zStart) / maxRisePerTurn));
  const perTurn = options.small ? SMALL_HELIX_PER_TURN : photosPerTurn(radius, radius, (zEnd - zStart) / turns, hfov, ORBIT_OVERLAP);
  const helixCount = turns * perTurn;
  const start = rng.between(0, 2 * Math.PI);
  for (let k = 0; k < helixCount; k++) {
    const z = zStart + ((zEnd - zStart) * k) / (helixCount - 1);
    const aimZ = Math.min(layout.tower.heightM, Math.max(1, z - radius * Math.tan(10 * DEG)));
    shots.push(orbitShot(radius, start + (clockwise * 2 * Math.PI * k) / perTurn, z, aimZ, 'helix'));
  }

  // Top: aimed at the highest antenna level from 52° above, at least 5 m over everything.
  const topPitch = 52 * DEG;
  const aimTop = layout.levels.length ? Math.max(...layout.levels.map((l) => l.heightM)) : layout.tower.heightM;
  const topHeight = Math.max(Math.max(8, keepOut + 2) * Math.tan(topPitch), top + 5 - aimTop);
  const topRadius = topHeight / Math.tan(topPitch);
  const topCount = options.small ? 3 : photosPerTurn(topRadius, Math.hypot(topRadius, topHeight), 0, hfov, ORBIT_OVERLAP);
  const topStart = rng.between(0, 2 * Math.PI);
  for (let k = 0; k < topCount; k++) {
    shots.push(orbitShot(topRadius, topStart + (clockwise * 2 * Math.PI * k) / topCount, aimTop + topHeight, aimTop, 'top'));
  }

  // Nadir: lawnmower lines west-east over the compound plus 5 m, from 10 m above the top; the
  // footprint taken at the lowest height above the (sloping) ground.
  const half = layout.compound.halfSideM + 5;
  const nadirZ = top + 10;
  const aboveGround = nadirZ - slope * half * Math.SQRT2;
  const lines = options.small ? 0 : Math.max(2, Math.ceil((2 * half) / ((1 - NADIR_SIDE_OVERLAP) * 2 * aboveGround * Math.tan(hfov / 2))) + 1);
  const perLine = options.small ? 2 : Math.max(2, Math.ceil((2 * half) / ((1 - NADIR_FORWARD_OVERLAP) * 2 * aboveGround * Math.tan(vfov / 2))) + 1);
  for (let line = 0; line < lines; line++) {
    const y = -half + (2 * half * line) / (lines - 1);
    const eastward = line % 2 === 0;
    for (let k = 0; k < perLine; k++) {
      const x = (eastward ? -half : half) + ((eastward ? 2 : -2) * half * k) / (perLine - 1);
      shots.push({ position: [x, y, nadirZ], yawDeg: eastward ? 90 : -90, pitchDeg: -90, segment: 'nadir' });
    }
  }

  // Under each level, from the highest: 3 m outside the keep-out radius, looking up 28° at the
  // level's height on the centre line (less steeply if that would bring the camera below 4 m).
  const levelOrder = layout.levels.map((level, index) => ({ level, index })).sort((a, b) => b.level.heightM - a.level.heightM);
  for (const { level, index } of options.small ? levelOrder.slice(0, 1) : levelOrder) {
    const r = keepOut + 3;
    const floor = 4 + slope * r;
    const z = Math.max(level.heightM - r * Math.tan(28 * DEG), floor);
    const count = options.small ? 6 : photosPerTurn(r, Math.hypot(r, level.heightM - z), 0, hfov, ORBIT_OVERLAP);
    const begin = rng.between(0, 2 * Math.PI);
    for (let k = 0; k < count; k++) {
      shots.push(orbitShot(r, begin + (clockwise * 2 * Math.PI * k) / count, z, level.heightM, `under-level-${index}`));
    }
  }

  return timeAndJitter(shots, takeOffPoint(layout), keepOut, top, rng);
}

/**
 * Flight times, residual velocities and aiming jitter. Travel between shots is a straight line,
 * unless it would pass within the keep-out radius below the top: then it goes out, round at the
 * larger radius and up or down (a length that bounds any safe path's).
 */
function timeAndJitter(shots: Shot[], takeOff: Vec3, keepOut: number, top: number, rng: Random): CameraPose[] {
  let t = 0;
  let from = takeOff;
  return shots.map((shot, i) => {
    t += travelLength(from, shot.position, keepOut, top) / (CRUISE_SPEED_MS + rng.between(-0.3, 0.3)) + HOVER_S + rng.between(-0.4, 0.4);
    from = shot.position;
    const next = shots[i + 1]?.position ?? takeOff;
    const d: Vec3 = [next[0] - shot.position[0], next[1] - shot.position[1], next[2] - shot.position[2]];
    const drift = rng.between(0.1, 0.5) / (Math.hypot(...d) || 1);
    const yaw = (shot.yawDeg + rng.between(-0.5, 0.5)) * DEG;
    const pitch = shot.segment === 'nadir' ? -90 + rng.between(0, 0.3) : shot.pitchDeg + rng.between(-0.5, 0.5);
    return {
      file: `DJI_${String(i + 1).padStart(4, '0')}.JPG`,
      position: shot.position,
      yawDeg: headingDeg(Math.sin(yaw), Math.cos(yaw)),
      pitchDeg: shot.segment === 'helix' ? Math.min(0, pitch) : pitch,
      rollDeg: rng.between(-0.3, 0.3),
      timeS: Math.round(t * 1000) / 1000,
      velocity: [d[0] * drift, d[1] * drift, d[2] * drift],
      segment: shot.segment,
    };
  });
}

function travelLength(a: Vec3, b: Vec3, keepOut: number, top: number): number {
  const straight = Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
  if (Math.min(a[2], b[2]) > top + 1) return straight;
  // Closest approach of the horizontal segment to the centre line.
  const dx = b[0] - a[0], dy = b[1] - a[1];
  const len2 = dx * dx + dy * dy;
  const s = len2 > 0 ? Math.min(1, Math.max(0, -(a[0] * dx + a[1] * dy) / len2)) : 0;
  if (Math.hypot(a[0] + s * dx, a[1] + s * dy) >= keepOut) return straight;
  const ra = Math.hypot(a[0], a[1]), rb = Math.hypot(b[0], b[1]);
  let dPhi = Math.abs(Math.atan2(a[0], a[1]) - Math.atan2(b[0], b[1]));
  if (dPhi > Math.PI) dPhi = 2 * Math.PI - dPhi;
  return Math.abs(ra - rb) + Math.max(ra, rb, keepOut) * dPhi + Math.abs(b[2] - a[2]) + 2 * Math.max(0, keepOut - Math.min(ra, rb));
}
