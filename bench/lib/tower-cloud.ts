// Point clouds of a generated tower site (scripts/tower-flight) for the antenna detector's bench and
// test, without rendering: the scene's triangles sampled straight into typed arrays (the clean
// cloud, like reference.las but in the local ENU frame and with each point's material and
// equipment kept), then degraded the way a multi-view-stereo reconstruction degrades a tower:
// - density: a random share of the points kept (MVS clouds are 20-60 % as dense as a 1 cm
//   reference), thinning a little with height (the drone sees the top from farther away);
// - gaussian noise on every coordinate (0.5-3 cm: depth-map noise after fusion);
// - holes: the radomes' front faces are low in texture, so stereo matching loses 30-80 % of them,
//   in smooth blotches rather than point by point; elsewhere random blobs (occlusions, glare);
// - outliers (~1 %): points thrown off a surface by up to ~1.5 m (mismatches near edges);
// - the ground far from the tower: the photos see the surroundings, so the cloud holds them (a
//   coarser ring of ground points out to `farGroundRadiusM`), which the detector must look past.
//
// Everything is seeded (scripts/tower-flight/random.ts), and every parameter is in one object
// (`MVS_DEGRADATION` the default), each range drawn once per cloud.
import { forkRandom, type Random } from '../../scripts/tower-flight/random.ts';
import { equipmentAxes } from '../../scripts/tower-flight/scene-geometry.ts';
import type { MaterialName, MeshPart, SceneLayout } from '../../scripts/tower-flight/scene-types.ts';

export const MATERIALS: readonly MaterialName[] = ['galvanised_steel', 'radome', 'rru_housing', 'dish', 'concrete', 'gravel', 'grass', 'fence', 'cabinet', 'shelter_wall', 'shelter_roof'];
const RADOME = MATERIALS.indexOf('radome');

/** A sampled cloud in the scene's local frame (x east, y north, z up, metres; origin at the tower's base). */
export interface SiteCloud {
  count: number;
  positions: Float64Array;
  /** Index in MATERIALS per point. */
  material: Uint8Array;
  /** Index in layout.equipment of the item a point lies on, or -1 (tower, mounts, ground). */
  equipment: Int16Array;
}

export interface SampleOptions {
  /** Mean spacing on the tower and everything on it (m). */
  towerSpacingM: number;
  /** Mean spacing on the ground within `groundRadiusM` of the tower (m). */
  groundSpacingM: number;
  groundRadiusM: number;
  /** A coarser ring of ground out to this radius (m), at `farGroundSpacingM`. */
  farGroundRadiusM: number;
  farGroundSpacingM: number;
  seed: number;
}

export const DEFAULT_SAMPLING: SampleOptions = { towerSpacingM: 0.01, groundSpacingM: 0.05, groundRadiusM: 30, farGroundRadiusM: 50, farGroundSpacingM: 0.15, seed: 0 };

function triangleArea(p: Float32Array, i: number): number {
  const ux = p[i + 3] - p[i], uy = p[i + 4] - p[i + 1], uz = p[i + 5] - p[i + 2];
  const vx = p[i + 6] - p[i], vy = p[i + 7] - p[i + 1], vz = p[i + 8] - p[i + 2];
  return Math.hypot(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx) / 2;
}

/** Whether a triangle's horizontal bounding box reaches within `radius` of the origin. */
function nearOrigin(p: Float32Array, i: number, radius: number): boolean {
  const minX = Math.min(p[i], p[i + 3], p[i + 6]), maxX = Math.max(p[i], p[i + 3], p[i + 6]);
  const minY = Math.min(p[i + 1], p[i + 4], p[i + 7]), maxY = Math.max(p[i + 1], p[i + 4], p[i + 7]);
  const dx = Math.max(minX, 0, -maxX), dy = Math.max(minY, 0, -maxY);
  return dx * dx + dy * dy <= radius * radius;
}

/**
 * Points drawn uniformly on the parts' triangles (stochastic rounding of area / spacing² per
 * triangle, as reference-cloud.ts does); ground points only within the two radii, the far ring
 * thinned to its own spacing.
 */
export function sampleSite(layout: SceneLayout, parts: readonly MeshPart[], options: Partial<SampleOptions> = {}): SiteCloud {
  const o = { ...DEFAULT_SAMPLING, ...options };
  const rng = forkRandom(o.seed, 'tower-cloud-sample');
  const equipmentIndex = new Map(layout.equipment.map((e, i) => [e.id, i]));
  const groundKeepFar = (o.groundSpacingM / o.farGroundSpacingM) ** 2;
  // Two passes: the capacity first (at most one point more than area × density per triangle).
  let capacity = 0;
  for (const part of parts) {
    const density = 1 / (part.group === 'tower' ? o.towerSpacingM : o.groundSpacingM) ** 2;
    for (let i = 0; i + 9 <= part.positions.length; i += 9) {
      if (part.group === 'ground' && !nearOrigin(part.positions, i, o.farGroundRadiusM)) continue;
      capacity += Math.floor(triangleArea(part.positions, i) * density) + 1;
    }
  }
  const cloud: SiteCloud = { count: 0, positions: new Float64Array(3 * capacity), material: new Uint8Array(capacity), equipment: new Int16Array(capacity) };
  for (const part of parts) {
    const ground = part.group === 'ground';
    const density = 1 / (ground ? o.groundSpacingM : o.towerSpacingM) ** 2;
    const material = MATERIALS.indexOf(part.material);
    const item = part.equipmentId !== undefined ? (equipmentIndex.get(part.equipmentId) ?? -1) : -1;
    const p = part.positions;
    for (let i = 0; i + 9 <= p.length; i += 9) {
      if (ground && !nearOrigin(p, i, o.farGroundRadiusM)) continue;
      const n = Math.floor(triangleArea(p, i) * density + rng.next());
      for (let k = 0; k < n; k++) {
        let u = rng.next(), v = rng.next();
        if (u + v > 1) {
          u = 1 - u;
          v = 1 - v;
        }
        const x = p[i] + u * (p[i + 3] - p[i]) + v * (p[i + 6] - p[i]);
        const y = p[i + 1] + u * (p[i + 4] - p[i + 1]) + v * (p[i + 7] - p[i + 1]);
        const z = p[i + 2] + u * (p[i + 5] - p[i + 2]) + v * (p[i + 8] - p[i + 2]);
        if (ground) {
          const r2 = x * x + y * y;
          if (r2 > o.farGroundRadiusM ** 2) continue;
          if (r2 > o.groundRadiusM ** 2 && rng.next() > groundKeepFar) continue;
        }
        const c = cloud.count++;
        cloud.positions[3 * c] = x;
        cloud.positions[3 * c + 1] = y;
        cloud.positions[3 * c + 2] = z;
        cloud.material[c] = material;
        cloud.equipment[c] = item;
      }
    }
  }
  return cloud;
}

/** How a reconstruction degrades the cloud; a [min, max] range is drawn once per cloud. */
export interface Degradation {
  /** Share of the points kept. */
  keep: [number, number];
  /** Density at the tower's top relative to its base (1: no falloff). */
  topDensity: [number, number];
  /** Standard deviation of the noise on each coordinate (m). */
  noiseM: [number, number];
  /** Outliers, as a share of the kept points, thrown off by up to `outlierReachM`. */
  outlierShare: number;
  outlierReachM: number;
  /** Share of each radome's front face lost, in blotches of about `frontBlotchM`. */
  radomeFrontLoss: [number, number];
  frontBlotchM: number;
  /** Random holes on the tower and its equipment: how many, their radius, and the share they drop. */
  holes: number;
  holeRadiusM: [number, number];
  holeLoss: number;
}

export const MVS_DEGRADATION: Degradation = {
  keep: [0.2, 0.6],
  topDensity: [0.7, 0.9],
  noiseM: [0.005, 0.03],
  outlierShare: 0.01,
  outlierReachM: 1.5,
  radomeFrontLoss: [0.3, 0.8],
  frontBlotchM: 0.15,
  holes: 40,
  holeRadiusM: [0.15, 0.6],
  holeLoss: 0.85,
};

/** What a degradation drew for one cloud (printed by the bench). */
export interface DrawnDegradation {
  keep: number;
  topDensity: number;
  noiseM: number;
  radomeFrontLoss: number;
}

const draw = (rng: Random, [min, max]: [number, number]) => rng.between(min, max);

/** A smooth random field in [0, 1) over a face's (right, up) coordinates: bilinear value noise on a `cell` grid. */
function valueNoise(seed: number, cell: number): (a: number, b: number) => number {
  const hash = (i: number, j: number) => {
    let h = Math.imul(i, 0x27d4eb2d) ^ Math.imul(j, 0x165667b1) ^ seed;
    h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
  };
  return (a, b) => {
    const fa = a / cell, fb = b / cell;
    const i = Math.floor(fa), j = Math.floor(fb);
    const s = fa - i, t = fb - j;
    const top = hash(i, j) * (1 - s) + hash(i + 1, j) * s;
    const bottom = hash(i, j + 1) * (1 - s) + hash(i + 1, j + 1) * s;
    return top * (1 - t) + bottom * t;
  };
}

/** The cloud as a reconstruction would give it (module comment); the input is not changed. */
export function degradeCloud(cloud: SiteCloud, layout: SceneLayout, d: Degradation = MVS_DEGRADATION, seed = 0): { cloud: SiteCloud; drawn: DrawnDegradation } {
  const rng = forkRandom(seed, 'tower-cloud-degrade');
  const drawn: DrawnDegradation = { keep: draw(rng, d.keep), topDensity: draw(rng, d.topDensity), noiseM: draw(rng, d.noiseM), radomeFrontLoss: draw(rng, d.radomeFrontLoss) };
  const n = cloud.count;
  const p = cloud.positions;
  const drop = new Uint8Array(n);

  // Radome fronts: per panel, the points on its front face ranked by a smooth field; the lowest
  // `radomeFrontLoss` share of them is lost, so the losses come in blotches.
  const fronts = new Map<number, { index: number; field: number }[]>();
  const axes = layout.equipment.map((e) => equipmentAxes(e));
  for (let i = 0; i < n; i++) {
    const item = cloud.equipment[i];
    if (item < 0 || cloud.material[i] !== RADOME) continue;
    const e = layout.equipment[item];
    const { front, right, up } = axes[item];
    const rel = [p[3 * i] - e.centre[0], p[3 * i + 1] - e.centre[1], p[3 * i + 2] - e.centre[2]];
    if (rel[0] * front[0] + rel[1] * front[1] + rel[2] * front[2] < e.depthM / 2 - 0.002) continue;
    const field = valueNoise(seed * 7919 + item, d.frontBlotchM);
    const list = fronts.get(item) ?? [];
    list.push({ index: i, field: field(rel[0] * right[0] + rel[1] * right[1] + rel[2] * right[2], rel[0] * up[0] + rel[1] * up[1] + rel[2] * up[2]) });
    fronts.set(item, list);
  }
  for (const list of fronts.values()) {
    list.sort((a, b) => a.field - b.field);
    const lost = Math.round(list.length * drawn.radomeFrontLoss);
    for (let k = 0; k < lost; k++) drop[list[k].index] = 1;
  }

  // Random holes, centred on random points of the tower group (so on its surfaces).
  const towerPoints: number[] = [];
  for (let i = 0; i < n; i += 97) if (cloud.material[i] !== MATERIALS.indexOf('grass') && cloud.material[i] !== MATERIALS.indexOf('gravel')) towerPoints.push(i);
  const holes: { x: number; y: number; z: number; r2: number }[] = [];
  for (let h = 0; h < d.holes && towerPoints.length; h++) {
    const c = rng.pick(towerPoints);
    holes.push({ x: p[3 * c], y: p[3 * c + 1], z: p[3 * c + 2], r2: draw(rng, d.holeRadiusM) ** 2 });
  }

  const height = layout.tower.heightM;
  const keepIndex: number[] = [];
  for (let i = 0; i < n; i++) {
    if (drop[i]) continue;
    const x = p[3 * i], y = p[3 * i + 1], z = p[3 * i + 2];
    const falloff = 1 - (1 - drawn.topDensity) * Math.min(Math.max(z / height, 0), 1);
    if (rng.next() > drawn.keep * falloff) continue;
    let inHole = false;
    for (const hole of holes) {
      if ((x - hole.x) ** 2 + (y - hole.y) ** 2 + (z - hole.z) ** 2 < hole.r2) {
        inHole = rng.next() < d.holeLoss;
        break;
      }
    }
    if (!inHole) keepIndex.push(i);
  }

  const outliers = Math.round(keepIndex.length * d.outlierShare);
  const total = keepIndex.length + outliers;
  const out: SiteCloud = { count: total, positions: new Float64Array(3 * total), material: new Uint8Array(total), equipment: new Int16Array(total) };
  for (let k = 0; k < total; k++) {
    const outlier = k >= keepIndex.length;
    const i = outlier ? keepIndex[Math.floor(rng.next() * keepIndex.length)] : keepIndex[k];
    let dx = rng.gaussian() * drawn.noiseM, dy = rng.gaussian() * drawn.noiseM, dz = rng.gaussian() * drawn.noiseM;
    if (outlier) {
      // A random direction, a distance up to the reach.
      const reach = rng.between(0.1, d.outlierReachM);
      const gx = rng.gaussian(), gy = rng.gaussian(), gz = rng.gaussian();
      const norm = Math.hypot(gx, gy, gz) || 1;
      dx += (gx / norm) * reach;
      dy += (gy / norm) * reach;
      dz += (gz / norm) * reach;
    }
    out.positions[3 * k] = p[3 * i] + dx;
    out.positions[3 * k + 1] = p[3 * i + 1] + dy;
    out.positions[3 * k + 2] = p[3 * i + 2] + dz;
    out.material[k] = cloud.material[i];
    out.equipment[k] = outlier ? -1 : cloud.equipment[i];
  }
  return { cloud: out, drawn };
}

/** The points of a cloud below a height (a reconstruction cut off at the top). */
export function cutAbove(cloud: SiteCloud, maxZ: number): SiteCloud {
  const keep: number[] = [];
  for (let i = 0; i < cloud.count; i++) if (cloud.positions[3 * i + 2] <= maxZ) keep.push(i);
  return subsetCloud(cloud, keep);
}

/** The points of a cloud whose indices are given. */
export function subsetCloud(cloud: SiteCloud, indices: readonly number[]): SiteCloud {
  const out: SiteCloud = { count: indices.length, positions: new Float64Array(3 * indices.length), material: new Uint8Array(indices.length), equipment: new Int16Array(indices.length) };
  indices.forEach((i, k) => {
    out.positions.set(cloud.positions.subarray(3 * i, 3 * i + 3), 3 * k);
    out.material[k] = cloud.material[i];
    out.equipment[k] = cloud.equipment[i];
  });
  return out;
}

/**
 * A cloud with no tower in it, like a reconstruction of a street crossed by a bridge (a
 * detector's false alarm test): sloped ground, two rows of 12-18 m buildings, 9 m lamp posts, a
 * bridge deck on two piers 7 m up, and trees 10-16 m tall; points about `spacingM` apart with
 * gaussian noise. Local frame, metres, centred on the origin.
 */
export function streetCloud(seed: number, spacingM = 0.05, noiseM = 0.01): SiteCloud {
  const rng = forkRandom(seed, 'street-cloud');
  const xs: number[] = [], ys: number[] = [], zs: number[] = [];
  const density = 1 / spacingM ** 2;
  const ground = (x: number, y: number) => 0.03 * x + 0.01 * y;
  const emit = (x: number, y: number, z: number) => {
    xs.push(x + rng.gaussian() * noiseM);
    ys.push(y + rng.gaussian() * noiseM);
    zs.push(z + rng.gaussian() * noiseM);
  };
  const count = (area: number) => Math.floor(area * density + rng.next());
  // Ground: 80 x 80 m.
  for (let k = count(80 * 80); k > 0; k--) {
    const x = rng.between(-40, 40), y = rng.between(-40, 40);
    emit(x, y, ground(x, y));
  }
  // A box's four walls and roof (the ground hides the floor).
  const building = (cx: number, cy: number, sx: number, sy: number, h: number) => {
    const z0 = ground(cx, cy);
    for (let k = count(2 * (sx + sy) * h); k > 0; k--) {
      const t = rng.next() * 2 * (sx + sy), z = z0 + rng.next() * h;
      if (t < sx) emit(cx - sx / 2 + t, cy - sy / 2, z);
      else if (t < 2 * sx) emit(cx - sx / 2 + t - sx, cy + sy / 2, z);
      else if (t < 2 * sx + sy) emit(cx - sx / 2, cy - sy / 2 + t - 2 * sx, z);
      else emit(cx + sx / 2, cy - sy / 2 + t - 2 * sx - sy, z);
    }
    for (let k = count(sx * sy); k > 0; k--) emit(cx + rng.between(-sx / 2, sx / 2), cy + rng.between(-sy / 2, sy / 2), z0 + h);
  };
  const cylinder = (cx: number, cy: number, r: number, z0: number, z1: number) => {
    for (let k = count(2 * Math.PI * r * (z1 - z0)); k > 0; k--) {
      const a = rng.next() * 2 * Math.PI;
      emit(cx + r * Math.sin(a), cy + r * Math.cos(a), rng.between(z0, z1));
    }
  };
  for (let b = 0; b < 5; b++) {
    building(-28 + b * 13, 14, 11, 9, rng.between(12, 18));
    building(-28 + b * 13, -14, 11, 9, rng.between(12, 18));
  }
  for (let l = 0; l < 6; l++) {
    const x = -30 + l * 12, y = 7.5 * (l % 2 ? 1 : -1);
    cylinder(x, y, 0.08, ground(x, y), ground(x, y) + 9);
    building(x + 0.7 * (l % 2 ? -1 : 1), y, 1.4, 0.3, 0.15);
  }
  // The bridge: a deck 40 x 8 m, 1 m thick, 7 m up, on two piers, across the street.
  for (const px of [-12, 12]) building(px, 0, 2, 6, 7);
  building(0, 0, 40, 8, 8);
  // Trees: a trunk and a crown of points scattered inside an ellipsoid (leaves).
  for (let t = 0; t < 4; t++) {
    const x = -20 + t * 13, y = rng.between(-3, 3), z0 = ground(x, y), height = rng.between(10, 16);
    cylinder(x, y, 0.2, z0, z0 + height * 0.5);
    for (let k = count(4 * Math.PI * 9); k > 0; k--) {
      const u = rng.gaussian(), v = rng.gaussian(), w = rng.gaussian(), norm = Math.hypot(u, v, w) || 1, s = Math.cbrt(rng.next());
      emit(x + (3 * s * u) / norm, y + (3 * s * v) / norm, z0 + height * 0.7 + ((height * 0.3) * s * w) / norm);
    }
  }
  const n = xs.length;
  const cloud: SiteCloud = { count: n, positions: new Float64Array(3 * n), material: new Uint8Array(n), equipment: new Int16Array(n).fill(-1) };
  for (let i = 0; i < n; i++) cloud.positions.set([xs[i], ys[i], zs[i]], 3 * i);
  return cloud;
}

/** The layout without its equipment and mounts: a bare tower in its compound. */
export function bareLayout(layout: SceneLayout): SceneLayout {
  return { ...layout, levels: [], equipment: [] };
}
