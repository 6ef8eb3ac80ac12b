// From segments to items (issue 36 §3): per segment the outermost item is fitted (box-fit.ts), its
// points taken out, and what is left (an RRU behind a panel, a mount pipe's piece) is split into
// its connected parts and fitted in turn. Pieces of one panel that a hole in the cloud cut apart
// (coplanar, side by side within a few centimetres, one above the other) are joined and refitted.
// Each fit is then named by its shape and size, with the ranges real equipment has:
// - panel antenna: a long flat box, 0.6-3 m tall (RRUs and TMAs, up to ~0.7 m, stand behind one),
//   at least 1.8 times as tall as wide, 0.12-0.8 m wide, at most 0.3 m deep, its long axis within
//   35° of the vertical, its faces covering most of its outline; not behind another item, nor a
//   second fit of one already found (what a fit leaves over of a panel: a strip of its face);
// - microwave dish: a disc (its outline round, no points in the corners of its square);
// - ancillary box (RRU, TMA): a compact box, 0.12-0.9 m wide and tall, at most 0.9 m deep (and a
//   panel-like box standing behind another item);
// anything else (frames, pipe pieces, clutter) is not reported.
import type { DetectedItemType, Vec3 } from './detection-types.ts';
import { DEG, add, dot, normalise } from './geometry.ts';
import { fitBox, type FittedShape } from './box-fit.ts';
import { fitDisc } from './disc-fit.ts';
import type { Scales, Segment } from './equipment-segments.ts';
import type { LocalCloud } from './local-cloud.ts';
import { VoxelHash } from './spatial-index.ts';
import { axisAt, type TowerModel } from './tower-axis.ts';

export interface FittedItem extends FittedShape {
  type: DetectedItemType;
  /** Indices into the local cloud of the item's points. */
  points: Uint32Array;
  confidence: number;
}

/** Panels are at least this tall (m) (and a panel's piece a hole left); RRUs and TMAs, as tall, stand behind the panels. */
const MIN_PANEL_HEIGHT = 0.6;
/** Pieces of one item further apart than this (m) are not joined (two levels' panels are 0.9 m+ apart). */
const MAX_GAP = 0.7;
/** Share of a box's outline its faces must cover. */
const MIN_FILL = 0.5;
/** Items per segment at most: a sector's panels and RRUs when its frame joins them into one segment. */
const MAX_PER_SEGMENT = 12;

function outwardOf(cloud: LocalCloud, points: ArrayLike<number>, tower: TowerModel): Vec3 {
  let sx = 0, sy = 0, sz = 0;
  for (let k = 0; k < points.length; k++) {
    sx += cloud.x[points[k]];
    sy += cloud.y[points[k]];
    sz += cloud.z[points[k]];
  }
  const n = points.length;
  const [ax, ay] = axisAt(tower, sz / n);
  return normalise([sx / n - ax, sy / n - ay, 0]);
}

/** The share of the face points outside the ellipse inscribed in the face: ~0.3 for a box, ~0 for a disc. */
function cornerShare(cloud: LocalCloud, points: ArrayLike<number>, shape: FittedShape): number {
  let corners = 0;
  for (let k = 0; k < points.length; k++) {
    const p = points[k];
    const d: Vec3 = [cloud.x[p] - shape.centre[0], cloud.y[p] - shape.centre[1], cloud.z[p] - shape.centre[2]];
    const r = (2 * dot(d, shape.right)) / shape.width, u = (2 * dot(d, shape.up)) / shape.height;
    if (r * r + u * u > 1.15) corners++;
  }
  return corners / Math.max(1, points.length);
}

function classify(shape: FittedShape, behindAnother: boolean): DetectedItemType | null {
  const { width: w, height: h, depth: d } = shape;
  // A box shows two faces (front and back) filling its outline: one face, or an outline of pipes
  // (a frame's H), is not equipment.
  if (shape.backPoints < 10 || shape.fill < MIN_FILL || d < 0.04) return null;
  const tiltOk = Math.abs(shape.up[2]) >= Math.cos(35 * DEG);
  // A panel radiates forwards: nothing hangs in front of it, so one behind another is not a panel.
  if (!behindAnother && tiltOk && h >= MIN_PANEL_HEIGHT && h <= 3 && h >= 1.8 * w && w >= 0.12 && w <= 0.8 && d <= 0.3 && shape.fill >= 0.6) return 'panel_antenna';
  if (Math.max(w, h, d) <= 0.9 && Math.min(w, h) >= 0.12) return 'ancillary_box';
  return null;
}

/** Fits the items of one segment, outermost first. */
function fitSegment(cloud: LocalCloud, segment: ArrayLike<number>, tower: TowerModel, scales: Scales, split: number): FittedItem[] {
  const items: FittedItem[] = [];
  let queue: Uint32Array[] = [Uint32Array.from(segment)];
  while (queue.length && items.length < MAX_PER_SEGMENT) {
    const part = queue.shift()!;
    if (part.length < 30) continue;
    const outward = outwardOf(cloud, part, tower);
    const box = fitBox(cloud, part, outward, scales.noise, scales.spacing);
    if (!box) continue;
    // Behind an item fitted before in this segment: in its outline, its front behind that one's middle.
    let type = classify(box, items.some((i) => behind(box, i)));
    let shape: FittedShape = box;
    // A round outline of about equal width and height: try a dish.
    if (type !== 'panel_antenna' && Math.abs(box.width - box.height) < 0.3 * Math.max(box.width, box.height) && box.width >= 0.2) {
      const disc = fitDisc(cloud, part, outward, scales.noise);
      if (disc && disc.fill >= 0.7 && cornerShare(cloud, part, box) < 0.12) {
        shape = disc;
        type = 'microwave_antenna';
      }
    }
    const memberSet = new Set(shape.members);
    const mine = new Uint32Array(shape.members.length);
    shape.members.forEach((k, i) => (mine[i] = part[k]));
    if (type && mine.length >= 30) items.push({ ...shape, type, points: mine, confidence: 0 });
    else if (!type) continue;
    // The rest: its connected parts, fitted in turn.
    const rest: number[] = [];
    for (let k = 0; k < part.length; k++) if (!memberSet.has(k)) rest.push(part[k]);
    queue = [...queue, ...components(cloud, Uint32Array.from(rest), split)];
  }
  return items;
}

/** Connected parts of points on voxels of `size` (26-neighbours), largest first, of 30 points or more. */
export function components(cloud: LocalCloud, points: Uint32Array, size: number): Uint32Array[] {
  if (points.length < 30) return [];
  const hash = new VoxelHash(cloud, points, size);
  const label = new Int32Array(hash.voxelCount).fill(-1);
  const out: Uint32Array[] = [];
  for (let v = 0; v < hash.voxelCount; v++) {
    if (label[v] >= 0) continue;
    const stack = [v];
    label[v] = out.length;
    const members: number[] = [];
    while (stack.length) {
      const a = stack.pop()!;
      for (let s = hash.start[a]; s < hash.start[a + 1]; s++) members.push(hash.order[s]);
      hash.forEachNeighbour(a, 1, (b) => {
        if (label[b] < 0) {
          label[b] = label[v];
          stack.push(b);
        }
      });
    }
    out.push(Uint32Array.from(members));
  }
  return out.filter((c) => c.length >= 30).sort((a, b) => b.length - a.length);
}

/**
 * Whether two fits may be pieces of one item a hole cut apart: facing alike (a short piece's tilt
 * is uncertain, so loosely), their front planes together, side by side along the horizontal
 * across the face, one above the other with a gap under MAX_GAP. The union is refitted and kept
 * only if it makes an item.
 */
function samePiece(first: FittedItem, second: FittedItem, noise: number): boolean {
  if (first.type === 'microwave_antenna' || second.type === 'microwave_antenna') return false;
  // The taller piece's frame is the surer; a short piece may face anywhere within 60° of it.
  const [a, b] = first.height >= second.height ? [first, second] : [second, first];
  const short = b.height < MIN_PANEL_HEIGHT;
  if (dot(a.front, b.front) < Math.cos((short ? 60 : 20) * DEG)) return false;
  const delta = add(b.centre, a.centre, -1);
  const frontA = dot(a.centre, a.front) + a.depth / 2, frontB = dot(b.centre, a.front) + b.depth / 2;
  if (Math.abs(frontA - frontB) > Math.max(4 * noise, 0.06)) return false;
  const across = normalise([a.front[1], -a.front[0], 0]);
  if (Math.abs(dot(delta, across)) > Math.max(0.12, 0.3 * Math.min(a.width, b.width))) return false;
  const gap = Math.abs(delta[2]) - (a.height + b.height) / 2;
  return gap < MAX_GAP && Math.abs(a.width - b.width) < Math.max(0.1, 4 * noise);
}

/** The share of `item`'s outline (seen along `other`'s front) that `other`'s outline covers. */
function overlapShare(item: FittedShape, other: FittedShape): number {
  const delta = add(item.centre, other.centre, -1);
  const along = (axis: Vec3, a: number, b: number) => Math.max(0, Math.min(dot(delta, axis) + a / 2, b / 2) - Math.max(dot(delta, axis) - a / 2, -b / 2));
  return (along(other.right, item.width, other.width) * along(other.up, item.height, other.height)) / Math.max(item.width * item.height, 1e-6);
}

/**
 * Whether `item` stands behind `other`: within its outline seen from the front, its front behind
 * that one's middle (`strict`: behind its back, so that a piece of the other's own faces is not).
 */
function behind(item: FittedShape, other: FittedShape, strict = false): boolean {
  const delta = add(item.centre, other.centre, -1);
  const overlaps = Math.abs(dot(delta, other.right)) < (other.width + item.width) / 2 && Math.abs(dot(delta, other.up)) < (other.height + item.height) / 2;
  return overlaps && dot(delta, other.front) + item.depth / 2 < (strict ? -other.depth / 2 : 0);
}

/** All items of the segments, pieces of one panel joined, with a confidence each. */
export function fitItems(cloud: LocalCloud, segments: Segment[], tower: TowerModel, scales: Scales): FittedItem[] {
  const split = Math.max(0.04, 2.5 * scales.noise, 1.5 * scales.spacing);
  let items = segments.flatMap((s) => fitSegment(cloud, s.points, tower, scales, split));
  // Join pieces, refitting the union, until nothing joins.
  for (let changed = true; changed; ) {
    changed = false;
    search: for (let i = 0; i < items.length; i++) {
      for (let j = i + 1; j < items.length; j++) {
        if (!samePiece(items[i], items[j], scales.noise)) continue;
        const union = new Uint32Array(items[i].points.length + items[j].points.length);
        union.set(items[i].points);
        union.set(items[j].points, items[i].points.length);
        const box = fitBox(cloud, union, outwardOf(cloud, union, tower), scales.noise, scales.spacing);
        const type = box && classify(box, false);
        // The union must be the larger piece grown: facing as it did, and taller.
        const larger = items[i].facePoints >= items[j].facePoints ? items[i] : items[j];
        if (!box || !type || dot(box.front, larger.front) < Math.cos(10 * DEG) || box.height < Math.max(items[i].height, items[j].height)) continue;
        items = items.filter((_, k) => k !== i && k !== j);
        items.push({ ...box, type, points: Uint32Array.from(box.members, (k) => union[k]), confidence: 0 });
        changed = true;
        break search;
      }
    }
  }
  // A panel radiates forwards: one that stands behind another item facing the same way is an RRU
  // or a TMA. And a panel overlapping a better-covered one (most of its outline on the other's)
  // is what a fit left over of it: dropped.
  const facesAlike = (a: FittedShape, b: FittedShape) => dot(a.front, b.front) > Math.cos(30 * DEG);
  for (const item of items) if (item.type === 'panel_antenna' && items.some((o) => o !== item && o.type !== 'microwave_antenna' && facesAlike(item, o) && behind(item, o, true))) item.type = 'ancillary_box';
  items = items.filter((item) => item.type !== 'panel_antenna' || !items.some((o) => o !== item && o.type === 'panel_antenna' && o.facePoints > item.facePoints && facesAlike(item, o) && overlapShare(item, o) > 0.5));
  for (const item of items) {
    // Confidence: how much of the face's outline holds points, and how many of the points its
    // faces should hold at this spacing (two faces of width x height) it has.
    const expected = (2 * item.width * item.height) / scales.spacing ** 2;
    item.confidence = Math.min(1, item.fill) * Math.min(1, item.facePoints / Math.max(1, 0.3 * expected));
  }
  return items;
}
