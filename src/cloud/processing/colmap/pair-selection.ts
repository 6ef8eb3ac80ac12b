// Which image pairs the colmap engine matches when the images carry GPS positions: only the pairs
// that can overlap, instead of all n(n-1)/2 (exhaustive matching is most of COLMAP's time past a
// few dozen images, and grows with the square of their number). Pure: no COLMAP, no files.
//
// A pair (i, j) of images with positions is kept when
// - both have a ground footprint (a gimbal orientation pointing down, DJI XMP GimbalYaw/Pitch/Roll,
//   and a height above the ground, DJI RelativeAltitude): their footprints on the ground overlap
//   by at least `minFootprintOverlap` of the smaller one. The footprint is the image's four corner
//   rays cut by the ground plane (the median over the images of GPS altitude minus height);
// - otherwise (phones, oblique views): j is among i's `nearest` nearest images (or i among j's),
//   or they are within `radiusFactor` times the typical spacing (the median horizontal distance from an
//   image to its nearest neighbour at a distinct position, at least MIN_SPACING_METRES: phone GPS
//   repeats a fix, lund's last three photos share one); and when both have a viewing direction,
//   the directions are at most `maxViewAngleDeg` apart (SIFT does not match across wider changes
//   of viewpoint).
// Then every image gets at least `minPartners` pairs (its most overlapping, else nearest, images),
// and the pair graph is made connected (the shortest pair between two parts, again and again),
// so that one mapper model can hold every image. An image without a position is paired with every
// image. Below MIN_IMAGES_WITH_POSITION_RATIO of the images with a position: no selection (null),
// the engine matches by size as before (colmap-commands.ts chooseMatcher).
//
// The fallback when the mapper leaves images out (`fallbackPairs`): every pair of a missing image
// with any other image that was not matched yet.
import { rotateVector, type Quaternion, type Vec3 } from '../../../shared/geo/rotation.ts';
import { median } from '../../../shared/median.ts';

export interface PairImage {
  /** Camera centre in a local east/north/up frame (metres, `localPositions`); null: no GPS position. */
  position: Vec3 | null;
  /** Camera -> east/north/up rotation (x right, y down, z forward; from the gimbal angles), or null. */
  orientation: Quaternion | null;
  /** Height above the ground in metres (DJI RelativeAltitude, above the take-off point), or null. */
  heightAboveGround: number | null;
  /** Image size in pixels and focal length in pixels (null: unknown, no footprint). */
  width: number;
  height: number;
  focalPx: number | null;
}

export interface PairSelectionOptions {
  /** Each image is paired with this many nearest images (GPS criterion). */
  nearest: number;
  /** ... and with every image within this many typical spacings. */
  radiusFactor: number;
  /** Least overlap of two ground footprints, as a share of the smaller one. */
  minFootprintOverlap: number;
  /** Widest angle between two viewing directions (degrees) for a pair without footprints. */
  maxViewAngleDeg: number;
  /** Least pairs per image. */
  minPartners: number;
}

export const PAIR_SELECTION_DEFAULTS: PairSelectionOptions = {
  nearest: 8,
  radiusFactor: 3,
  minFootprintOverlap: 0.3,
  maxViewAngleDeg: 90,
  minPartners: 4,
};

/** Below this share of images with a GPS position, pairs are not selected (null). */
export const MIN_IMAGES_WITH_POSITION_RATIO = 0.5;
/** The typical spacing is at least this (metres): below it GPS noise decides, not the capture. */
export const MIN_SPACING_METRES = 1;
/** A footprint corner ray must meet the ground within this many heights above it (else: oblique, no footprint). */
const MAX_FOOTPRINT_DEPTH = 5;

export type Pair = [number, number];

export interface PairSelection {
  /** Index pairs, i < j, sorted. */
  pairs: Pair[];
  /** n(n-1)/2. */
  exhaustivePairs: number;
  /** Typical spacing (metres) and the radius used. */
  spacing: number;
  radius: number;
  /** Images with a ground footprint / with a viewing direction / without a position. */
  withFootprint: number;
  withDirection: number;
  withoutPosition: number;
  /** Pairs added for minPartners / to connect the graph. */
  addedForPartners: number;
  addedToConnect: number;
}

/** Local east/north/up metres around the positions' centre (equirectangular; a missing altitude: the median). */
export function localPositions(positions: ({ latitude: number; longitude: number; altitude: number | null } | null)[]): (Vec3 | null)[] {
  const known = positions.filter((p): p is NonNullable<typeof p> => p !== null);
  if (!known.length) return positions.map(() => null);
  const lat0 = known.reduce((s, p) => s + p.latitude, 0) / known.length;
  const lon0 = known.reduce((s, p) => s + p.longitude, 0) / known.length;
  const altitudes = known.map((p) => p.altitude).filter((a): a is number => a !== null);
  const alt0 = altitudes.length ? median(altitudes) : 0;
  const R = 6_371_000;
  const k = Math.PI / 180;
  return positions.map((p) => (p ? [(p.longitude - lon0) * k * R * Math.cos(lat0 * k), (p.latitude - lat0) * k * R, (p.altitude ?? alt0) - alt0] : null));
}

export function selectPairs(images: PairImage[], options: PairSelectionOptions = PAIR_SELECTION_DEFAULTS): PairSelection | null {
  const n = images.length;
  const located = images.map((im, i) => i).filter((i) => images[i].position !== null);
  if (n < 2 || located.length < MIN_IMAGES_WITH_POSITION_RATIO * n || located.length < 2) return null;
  const pos = images.map((im) => im.position);
  // Horizontal distance: GPS heights are the noisiest coordinate (lund's phone: 8 m along a level
  // street); drone heights enter through the footprints.
  const dist = (i: number, j: number) => Math.hypot(pos[i]![0] - pos[j]![0], pos[i]![1] - pos[j]![1]);

  // Typical spacing: median nearest distinct neighbour.
  const nearestDistinct = located.map((i) => Math.min(...located.filter((j) => j !== i).map((j) => dist(i, j)).filter((d) => d > 0.01), Infinity)).filter(Number.isFinite);
  const spacing = Math.max(MIN_SPACING_METRES, nearestDistinct.length ? median(nearestDistinct) : MIN_SPACING_METRES);
  const radius = options.radiusFactor * spacing;

  const directions = images.map((im) => (im.orientation ? rotateVector(im.orientation, [0, 0, 1]) : null));
  const footprints = groundFootprints(images);
  const keep = new Set<number>();
  const key = (i: number, j: number) => (i < j ? i * n + j : j * n + i);

  // k nearest of each located image (distances computed once per row).
  const nearestOf = new Map<number, Set<number>>();
  for (const i of located) {
    const others = located.filter((j) => j !== i).map((j) => ({ j, d: dist(i, j) }));
    others.sort((a, b) => a.d - b.d || a.j - b.j);
    nearestOf.set(i, new Set(others.slice(0, options.nearest).map((o) => o.j)));
  }
  // Footprints further apart than their bounding circles cannot overlap: not clipped.
  const circles = footprints.map((f) => {
    if (!f) return null;
    const c = [f.reduce((s, p) => s + p[0], 0) / f.length, f.reduce((s, p) => s + p[1], 0) / f.length];
    return { x: c[0], y: c[1], r: Math.max(...f.map((p) => Math.hypot(p[0] - c[0], p[1] - c[1]))), area: polygonArea(f) };
  });
  const maxCos = Math.cos((options.maxViewAngleDeg * Math.PI) / 180);
  const overlapOf = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (!pos[i] || !pos[j]) {
        keep.add(key(i, j)); // no position: paired with everything
        continue;
      }
      const fi = footprints[i];
      const fj = footprints[j];
      if (fi && fj) {
        const ci = circles[i]!;
        const cj = circles[j]!;
        const apart = Math.hypot(ci.x - cj.x, ci.y - cj.y) >= ci.r + cj.r;
        const overlap = apart ? 0 : polygonArea(clipConvex(fi, fj)) / Math.min(ci.area, cj.area);
        overlapOf.set(key(i, j), overlap);
        if (overlap >= options.minFootprintOverlap) keep.add(key(i, j));
        continue;
      }
      const near = nearestOf.get(i)!.has(j) || nearestOf.get(j)!.has(i) || dist(i, j) <= radius;
      const di = directions[i];
      const dj = directions[j];
      const facing = !di || !dj || di[0] * dj[0] + di[1] * dj[1] + di[2] * dj[2] >= maxCos;
      if (near && facing) keep.add(key(i, j));
    }
  }

  // At least minPartners pairs per image: the most overlapping footprints, else the nearest.
  let addedForPartners = 0;
  const partners = new Array<number>(n).fill(0);
  for (const k of keep) {
    partners[Math.floor(k / n)]++;
    partners[k % n]++;
  }
  for (const i of located) {
    if (partners[i] >= options.minPartners) continue;
    // Overlapping footprints first (most overlap first), then the nearest.
    const rank = (j: number) => ((overlapOf.get(key(i, j)) ?? 0) > 0 ? -overlapOf.get(key(i, j))! : dist(i, j));
    const candidates = located.filter((j) => j !== i && !keep.has(key(i, j))).sort((a, b) => rank(a) - rank(b) || a - b);
    for (const j of candidates.slice(0, options.minPartners - partners[i])) {
      keep.add(key(i, j));
      partners[i]++;
      partners[j]++;
      addedForPartners++;
    }
  }

  // Connected: join the parts by their shortest pair, until one is left (Boruvka-like).
  let addedToConnect = 0;
  for (;;) {
    const part = components(n, keep);
    const parts = new Set(part);
    if (parts.size <= 1) break;
    const best = new Map<number, { d: number; k: number }>();
    for (const i of located) {
      for (const j of located) {
        if (j <= i || part[i] === part[j]) continue;
        const d = dist(i, j);
        for (const p of [part[i], part[j]]) {
          const b = best.get(p);
          if (!b || d < b.d) best.set(p, { d, k: key(i, j) });
        }
      }
    }
    if (!best.size) break;
    for (const { k } of best.values()) {
      if (!keep.has(k)) {
        keep.add(k);
        addedToConnect++;
      }
    }
  }

  const pairs = [...keep].sort((a, b) => a - b).map((k): Pair => [Math.floor(k / n), k % n]);
  return {
    pairs,
    exhaustivePairs: (n * (n - 1)) / 2,
    spacing,
    radius,
    withFootprint: footprints.filter(Boolean).length,
    withDirection: directions.filter(Boolean).length,
    withoutPosition: n - located.length,
    addedForPartners,
    addedToConnect,
  };
}

/** Every pair of a `missing` image with any other image, except those in `matched` (i < j, sorted). */
export function fallbackPairs(n: number, missing: Iterable<number>, matched: Iterable<Pair>): Pair[] {
  const done = new Set<number>();
  for (const [i, j] of matched) done.add(i < j ? i * n + j : j * n + i);
  const out = new Set<number>();
  for (const m of missing) {
    for (let o = 0; o < n; o++) {
      if (o === m) continue;
      const k = m < o ? m * n + o : o * n + m;
      if (!done.has(k)) out.add(k);
    }
  }
  return [...out].sort((a, b) => a - b).map((k): Pair => [Math.floor(k / n), k % n]);
}

/** COLMAP's pair list (`matches_importer --match_type pairs`): one "name1 name2" line per pair. */
export function pairListText(names: string[], pairs: Pair[]): string {
  return pairs.map(([i, j]) => `${names[i]} ${names[j]}\n`).join('');
}

type Point2 = [number, number];

/**
 * Ground footprints (convex quadrilaterals, east/north) of the images looking down from a known
 * height; null for the others (no orientation, height, focal length, or a corner ray that misses
 * the ground within MAX_FOOTPRINT_DEPTH heights: an oblique view).
 */
export function groundFootprints(images: PairImage[]): (Point2[] | null)[] {
  const grounds = images.filter((im) => im.position && im.heightAboveGround !== null && im.heightAboveGround > 0).map((im) => im.position![2] - im.heightAboveGround!);
  if (!grounds.length) return images.map(() => null);
  const ground = median(grounds);
  return images.map((im) => {
    if (!im.position || !im.orientation || !im.focalPx || im.heightAboveGround === null) return null;
    const h = im.position[2] - ground;
    if (!(h > 0)) return null;
    const corners: Point2[] = [];
    for (const [u, v] of [[0, 0], [im.width, 0], [im.width, im.height], [0, im.height]]) {
      const ray = rotateVector(im.orientation, [(u - im.width / 2) / im.focalPx, (v - im.height / 2) / im.focalPx, 1]);
      if (ray[2] >= 0) return null;
      const t = -h / ray[2];
      if (t * Math.hypot(...ray) > MAX_FOOTPRINT_DEPTH * h) return null;
      corners.push([im.position[0] + t * ray[0], im.position[1] + t * ray[1]]);
    }
    return polygonArea(corners) < 0 ? corners.reverse() : corners;
  });
}

/** Signed area (counter-clockwise positive). */
export function polygonArea(polygon: Point2[]): number {
  let a = 0;
  for (let i = 0; i < polygon.length; i++) {
    const [x1, y1] = polygon[i];
    const [x2, y2] = polygon[(i + 1) % polygon.length];
    a += x1 * y2 - x2 * y1;
  }
  return a / 2;
}

/** `subject` clipped by the convex counter-clockwise polygon `clip` (Sutherland-Hodgman). */
export function clipConvex(subject: Point2[], clip: Point2[]): Point2[] {
  let out = subject;
  for (let e = 0; e < clip.length && out.length; e++) {
    const a = clip[e];
    const b = clip[(e + 1) % clip.length];
    const inside = (p: Point2) => (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= 0;
    const cut = (p: Point2, q: Point2): Point2 => {
      const d1 = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
      const d2 = (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0]);
      const t = d1 / (d1 - d2);
      return [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])];
    };
    const input = out;
    out = [];
    for (let i = 0; i < input.length; i++) {
      const p = input[i];
      const q = input[(i + 1) % input.length];
      if (inside(q)) {
        if (!inside(p)) out.push(cut(p, q));
        out.push(q);
      } else if (inside(p)) out.push(cut(p, q));
    }
  }
  return out;
}

function components(n: number, keep: Set<number>): number[] {
  const parent = Array.from({ length: n }, (_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  for (const k of keep) parent[find(Math.floor(k / n))] = find(k % n);
  return parent.map((_, i) => find(i));
}
