// reference.las of a generated tower flight (issue 36): the scene's true surfaces as a dense point
// cloud, to score a reconstruction's cloud against (cloud-to-cloud distances, antenna extents).
//
// Points are drawn uniformly on the triangles of the scene's mesh parts (seeded; each triangle gets
// area / spacing² points on average, with stochastic rounding, so the density is one point per
// spacing² everywhere): 1 cm on the tower and what hangs on it, 5 cm on the ground, the ground cut
// to a disc around the tower (default 30 m radius; a triangle larger than the disc is first clipped
// to the disc's square, so that a large terrain costs nothing). A 35 m tower and its compound come
// to 2-4 million points (~30 bytes each while built, 26 in the file).
//
// The file: LAS 1.2 point format 2 (src/shared/pointcloud writeLas), x/y in the base's UTM zone (all
// points in that zone), z EGM96 heights (the head comment of geodesy.ts), the GeoKeys of the UTM
// EPSG and EGM96 height (5773) and the compound WKT of src/shared/geo/utm-wkt.ts; RGB from the
// material (or the part's tint: the radome colours); classification 2 (ground) for the ground
// group and 1 (unclassified) for the tower group, ground points after the tower's.
import { utmWithEgm96Wkt } from '../../src/shared/geo/utm-wkt.ts';
import { utmZone } from '../../src/shared/geo/utm.ts';
import { createPointCloud, writeLas } from '../../src/shared/pointcloud/index.ts';
import { localToGeodeticConverter, utmProjector, type GeoPoint } from './geodesy.ts';
import { forkRandom } from './random.ts';
import type { MaterialName, MeshPart, Vec3 } from './scene-types.ts';

export interface ReferenceCloudOptions {
  /** Mean spacing of the tower group's points, metres (default 0.01). */
  towerSpacingM?: number;
  /** Mean spacing of the ground group's points, metres (default 0.05). */
  groundSpacingM?: number;
  /** Ground points farther than this (horizontally) from the tower's centre line are left out (default 30). */
  groundRadiusM?: number;
  /** Seed of the sampling (default 0). */
  seed?: number;
  /** The LAS header's creation date (default 2025-01-01, so that a seed gives the same bytes). */
  creationDate?: Date;
}

/** Refused beyond this many points (about 1 GB while built): a spacing too fine for the scene. */
const MAX_POINTS = 30_000_000;

/** sRGB 0-255 colour of each material in the cloud. */
export const MATERIAL_COLOURS: Record<MaterialName, Vec3> = {
  galvanised_steel: [168, 172, 175],
  radome: [228, 228, 224],
  rru_housing: [140, 145, 150],
  dish: [236, 236, 232],
  concrete: [176, 172, 165],
  gravel: [128, 122, 112],
  grass: [88, 121, 60],
  fence: [150, 155, 150],
  cabinet: [202, 202, 196],
  shelter_wall: [192, 182, 160],
  shelter_roof: [108, 108, 114],
};

/** A linear-RGB 0..1 tint as sRGB 0-255. */
function srgb(linear: number): number {
  const c = Math.min(1, Math.max(0, linear));
  return Math.round(255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055));
}

/** The polygon (x, y, z triples) of a triangle clipped in x and y to the square |x|, |y| <= r. */
function clipToSquare(tri: number[], r: number): number[] {
  let poly = tri;
  for (const [axis, sign] of [[0, 1], [0, -1], [1, 1], [1, -1]] as const) {
    const out: number[] = [];
    const n = poly.length / 3;
    for (let i = 0; i < n; i++) {
      const a = poly.slice(3 * i, 3 * i + 3);
      const b = poly.slice(3 * ((i + 1) % n), 3 * ((i + 1) % n) + 3);
      const da = r - sign * a[axis];
      const db = r - sign * b[axis];
      if (da >= 0) out.push(...a);
      if ((da >= 0) !== (db >= 0)) {
        const t = da / (da - db);
        out.push(a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2]));
      }
    }
    poly = out;
    if (poly.length < 9) return [];
  }
  return poly;
}

/** The triangles to sample of one part: all of a tower part's, a ground part's clipped to the disc's square. */
function* trianglesOf(part: MeshPart, groundRadius: number): Generator<number[]> {
  const p = part.positions;
  for (let i = 0; i + 9 <= p.length; i += 9) {
    const tri = [p[i], p[i + 1], p[i + 2], p[i + 3], p[i + 4], p[i + 5], p[i + 6], p[i + 7], p[i + 8]];
    if (part.group === 'tower') {
      yield tri;
      continue;
    }
    const poly = clipToSquare(tri, groundRadius);
    for (let k = 1; k + 1 < poly.length / 3; k++) yield [...poly.slice(0, 3), ...poly.slice(3 * k, 3 * k + 6)];
  }
}

function area(t: number[]): number {
  const ux = t[3] - t[0], uy = t[4] - t[1], uz = t[5] - t[2];
  const vx = t[6] - t[0], vy = t[7] - t[1], vz = t[8] - t[2];
  return Math.hypot(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx) / 2;
}

/** The reference cloud as LAS bytes (module comment). Local ENU parts around `base`; prints nothing. */
export function referenceCloud(parts: readonly MeshPart[], base: GeoPoint, options: ReferenceCloudOptions = {}): Buffer {
  const spacing = { tower: options.towerSpacingM ?? 0.01, ground: options.groundSpacingM ?? 0.05 };
  const groundRadius = options.groundRadiusM ?? 30;
  if (!(spacing.tower > 0) || !(spacing.ground > 0) || !(groundRadius > 0)) throw new RangeError('spacings and the ground radius must be positive');
  const ordered = [...parts.filter((p) => p.group === 'tower'), ...parts.filter((p) => p.group === 'ground')];

  // Capacity: stochastic rounding gives at most one point more than area / spacing² per triangle.
  let capacity = 0;
  for (const part of ordered) {
    const density = 1 / spacing[part.group] ** 2;
    for (const tri of trianglesOf(part, groundRadius)) capacity += Math.floor(area(tri) * density) + 1;
  }
  if (capacity > MAX_POINTS) throw new RangeError(`the reference cloud would hold up to ${capacity} points; use larger spacings`);

  const zone = utmZone(base.latitude, base.longitude);
  const toGeo = localToGeodeticConverter(base);
  const project = utmProjector(zone);
  const rng = forkRandom(options.seed ?? 0, 'reference-cloud');
  const cloud = createPointCloud(capacity, true);
  const positions = cloud.positions;
  const colours = cloud.colors as Uint8Array;
  let count = 0;
  let towerCount = 0;
  const point: Vec3 = [0, 0, 0];
  for (const part of ordered) {
    const density = 1 / spacing[part.group] ** 2;
    const colour: Vec3 = part.tint ? [srgb(part.tint[0]), srgb(part.tint[1]), srgb(part.tint[2])] : MATERIAL_COLOURS[part.material];
    for (const t of trianglesOf(part, groundRadius)) {
      const n = Math.floor(area(t) * density + rng.next());
      for (let k = 0; k < n; k++) {
        let u = rng.next();
        let v = rng.next();
        if (u + v > 1) {
          u = 1 - u;
          v = 1 - v;
        }
        for (let a = 0; a < 3; a++) point[a] = t[a] + u * (t[3 + a] - t[a]) + v * (t[6 + a] - t[a]);
        if (part.group === 'ground' && Math.hypot(point[0], point[1]) > groundRadius) continue;
        const g = toGeo(point);
        const [easting, northing] = project(g.latitude, g.longitude);
        positions[3 * count] = easting;
        positions[3 * count + 1] = northing;
        positions[3 * count + 2] = g.altitude;
        colours.set(colour, 3 * count);
        count++;
      }
    }
    if (part.group === 'tower') towerCount = count;
  }
  cloud.count = count;

  const las = writeLas(cloud, {
    pointFormat: 2,
    horizontalEpsg: zone.epsg,
    verticalEpsg: 5773,
    wkt: utmWithEgm96Wkt(zone.epsg),
    generatingSoftware: 'open-inspection tower-flight',
    creationDate: options.creationDate ?? new Date(Date.UTC(2025, 0, 1)),
  });
  // Ground points: classification 2 (byte 15 of each point record).
  const pointOffset = las.readUInt32LE(96);
  const recordLength = las.readUInt16LE(105);
  for (let i = towerCount; i < count; i++) las[pointOffset + i * recordLength + 15] = 2;
  return las;
}
