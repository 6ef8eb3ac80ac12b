// The report's 2D plans (issue 30 §5, include_2d_plans): a top-down plan around the asset, a square
// in the output coordinate system (x east, y north) holding every annotation (coords_3d), inventory
// item (coords_3d) and measurement (its 3D points) the report includes, at least MIN_SIDE_M across.
// Under them, the orthomosaic (issue 28) cropped to that square: a window of the coarsest overview
// still finer than PLAN_PIXELS across the square, read like a map tile (stored-cog.ts, never the
// whole file), flattened on white and embedded as JPEG. Without an orthomosaic, or one that does not
// cover the square or cannot be read, the plan is drawn on a plain background and its JSON entry
// says why (`no_raster_reason`): a report is never refused for its background.
// When the asset is a tower, two more plans: side views from the south (x east across, z up) and
// from the west (y north across, to the left as seen from there; z up), plain: an antenna on one
// face of the tower hides behind another in one view and stands apart in the other.
// The JSON entries (`plans_2d[]`, docs/inspection-service.md "2D plans") are what the PDF pages
// show (report-plan-page.ts); the raster itself is only in the PDF.
import proj4 from 'proj4';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import type { Reconstruction } from '../pipeline/reconstruction.ts';
import type { ReportData } from './report-data.ts';
import { openStoredCog } from '../ortho/stored-cog.ts';
import { readWindow } from '../ortho/tile-renderer.ts';
import { loadSharp } from '../../shared/images/load-sharp.ts';

/** The plan is at least this wide: one annotation alone shows its surroundings. */
const MIN_SIDE_M = 30;
/** Raster pixels across the plan: ~200 dpi over the 495-point square of an A4 page. */
const PLAN_PIXELS = 1400;
/** Beyond this many pixels a side (no overview coarse enough), no raster is read. */
const MAX_WINDOW_SIDE = 4096;

export interface Plan2d {
  kind: 'top';
  title: string;
  /** The output coordinate system's name; null when the inspection has none recorded (local coordinates). */
  coordinate_system: string | null;
  /** The square drawn, output coordinates (metres). */
  bounds: { min_x: number; min_y: number; max_x: number; max_y: number };
  side_m: number;
  /** Ground size of a pixel of the embedded raster, metres; null without a raster. */
  gsd_m: number | null;
  raster: { source: 'orthomosaic'; level: number; width: number; height: number } | null;
  no_raster_reason: string | null;
  /** What is drawn: annotation numbers, inventory item numbers, measurement ids. */
  items_drawn: { annotations: number[]; inventory_items: number[]; measurements: string[] };
}

/** A plan and its background (JPEG), for the PDF. */
export interface PlanDrawing {
  plan: Plan2d | SidePlan;
  raster: Buffer | null;
}

type XY = [number, number];
/** x, y and z (null: the position has none). */
type XYZ = [number, number, number | null];
/** Asset types drawn from the side too (assets/asset-types.ts): self-support, transmission tower, monopole, guyed tower. */
const TOWER_TYPES = new Set([1, 7, 9, 10]);
/** The side view is at least this tall and wide, metres. */
const MIN_SIDE_VIEW_M = 10;

/** Where a side view looks from: the south (x east across) or the west (y north across). */
export type SideViewFrom = 'south' | 'west';

/** A tower from the south or the west (issue 30 §5): the horizontal axis across, z up; no raster. */
export interface SidePlan {
  kind: 'side';
  from: SideViewFrom;
  title: string;
  coordinate_system: string | null;
  /** The rectangle drawn (output coordinates, metres): x across from the south, y across from the west; z up. */
  bounds: { min_x: number; max_x: number; min_z: number; max_z: number } | { min_y: number; max_y: number; min_z: number; max_z: number };
  /** The base plate's and top point's z, drawn as lines, when set. */
  base_z: number | null;
  top_z: number | null;
  items_drawn: Plan2d['items_drawn'];
}

/** The positions a plan can draw, from the report's own content (so every include_* flag holds). */
export function planPositions(data: ReportData): { annotations: { number: number; at: XYZ }[]; inventory: { number: number; at: XYZ }[]; measurements: { id: string; points: XYZ[] }[] } {
  const annotations = (data.annotations ?? []).flatMap((a) => {
    const c = a.coords_3d as { x?: unknown; y?: unknown; z?: unknown } | null;
    return c && typeof c.x === 'number' && typeof c.y === 'number' ? [{ number: a.number, at: [c.x, c.y, typeof c.z === 'number' ? c.z : null] as XYZ }] : [];
  });
  const inventory = (data.inventory_items ?? []).flatMap((i) =>
    Array.isArray(i.coords_3d) && typeof i.coords_3d[0] === 'number' && typeof i.coords_3d[1] === 'number'
      ? [{ number: i.number, at: [i.coords_3d[0], i.coords_3d[1], typeof i.coords_3d[2] === 'number' ? i.coords_3d[2] : null] as XYZ }]
      : [],
  );
  const measurements = data.measurements.flatMap((m) => {
    const points = pointsOf(m.geometry.coordinates);
    return points.length ? [{ id: m.id, points }] : [];
  });
  return { annotations, inventory, measurements };
}

/** Every [x, y, z] in nested coordinate arrays (Point, LineString, Polygon). */
function pointsOf(coordinates: unknown): XYZ[] {
  if (!Array.isArray(coordinates)) return [];
  if (typeof coordinates[0] === 'number' && typeof coordinates[1] === 'number') return [[coordinates[0], coordinates[1], typeof coordinates[2] === 'number' ? coordinates[2] : null]];
  return coordinates.flatMap(pointsOf);
}

/** The report's plans: one top-down plan, or none when nothing has a position and there is no orthomosaic to centre on. */
export async function buildPlans(
  data: ReportData,
  reconstruction: Reconstruction | null,
  basePlate: { x: number; y: number; z: number } | null,
  topPoint: { x: number; y: number; z: number } | null,
  store: ObjectStore,
): Promise<PlanDrawing[]> {
  const positions = planPositions(data);
  const all: XY[] = [...positions.annotations.map((a) => a.at), ...positions.inventory.map((i) => i.at), ...positions.measurements.flatMap((m) => m.points)].map(([x, y]) => [x, y]);
  if (basePlate) all.push([basePlate.x, basePlate.y]);
  const layer = reconstruction?.rasters?.orthomosaic ?? null;
  if (all.length === 0) return [];
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const [cx, cy] = [(Math.min(...xs) + Math.max(...xs)) / 2, (Math.min(...ys) + Math.max(...ys)) / 2];
  // A fifth of margin around the extents, rounded up to whole metres.
  const side = Math.ceil(Math.max(MIN_SIDE_M, (Math.max(...xs) - Math.min(...xs)) * 1.2, (Math.max(...ys) - Math.min(...ys)) * 1.2));
  const bounds = { min_x: cx - side / 2, min_y: cy - side / 2, max_x: cx + side / 2, max_y: cy + side / 2 };
  const plan: Plan2d = {
    kind: 'top',
    title: 'Top-down plan',
    coordinate_system: reconstruction?.coordinate_system?.name ?? null,
    bounds,
    side_m: side,
    gsd_m: null,
    raster: null,
    no_raster_reason: null,
    items_drawn: { annotations: positions.annotations.map((a) => a.number), inventory_items: positions.inventory.map((i) => i.number), measurements: positions.measurements.map((m) => m.id) },
  };
  let raster: Buffer | null = null;
  if (!layer) {
    plan.no_raster_reason = reconstruction?.rasters?.orthomosaic_missing_reason
      ? `no orthomosaic: ${reconstruction.rasters.orthomosaic_missing_reason}`
      : 'no orthomosaic: the inspection was not processed with one (processing_parameters.generate_ortho)';
  } else {
    try {
      const read = await orthoWindow(store, layer, bounds, reconstruction?.coordinate_system?.proj4 ?? null);
      if ('reason' in read) plan.no_raster_reason = read.reason;
      else {
        raster = read.jpeg;
        plan.raster = { source: 'orthomosaic', level: read.level, width: read.width, height: read.height };
        plan.gsd_m = Math.round((side / read.width) * 10000) / 10000;
      }
    } catch (err) {
      plan.no_raster_reason = `the orthomosaic cannot be read: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  const sides = TOWER_TYPES.has(data.asset.type_id) ? (['south', 'west'] as const).map((from) => sideView(plan, positions, basePlate, topPoint, from)) : [];
  return [{ plan, raster }, ...sides.flatMap((side) => (side ? [{ plan: side, raster: null }] : []))];
}

/** The coordinate a side view draws across: x from the south, y from the west. */
export function acrossOf(from: SideViewFrom, p: readonly [number, number, ...unknown[]]): number {
  return from === 'south' ? p[0] : p[1];
}

/** The tower from the south or the west: every position with a z (and the base plate and top point), across and z up; null when none has a z. */
function sideView(
  top: Plan2d,
  positions: ReturnType<typeof planPositions>,
  basePlate: { x: number; y: number; z: number } | null,
  topPoint: { x: number; y: number; z: number } | null,
  from: SideViewFrom,
): SidePlan | null {
  const points = [...positions.annotations.map((a) => a.at), ...positions.inventory.map((i) => i.at), ...positions.measurements.flatMap((m) => m.points)].filter((p) => p[2] !== null);
  if (points.length === 0) return null;
  const az: XY[] = points.map((p) => [acrossOf(from, p), p[2]!]);
  for (const p of [basePlate, topPoint]) if (p) az.push([acrossOf(from, [p.x, p.y]), p.z]);
  const as = az.map((p) => p[0]);
  const zs = az.map((p) => p[1]);
  const width = Math.ceil(Math.max(MIN_SIDE_VIEW_M, (Math.max(...as) - Math.min(...as)) * 1.2));
  const height = Math.ceil(Math.max(MIN_SIDE_VIEW_M, (Math.max(...zs) - Math.min(...zs)) * 1.2));
  const [ca, cz] = [(Math.min(...as) + Math.max(...as)) / 2, (Math.min(...zs) + Math.max(...zs)) / 2];
  const has = (p: XYZ) => p[2] !== null;
  const [minA, maxA] = [ca - width / 2, ca + width / 2];
  return {
    kind: 'side',
    from,
    title: `Side view from the ${from}`,
    coordinate_system: top.coordinate_system,
    bounds: from === 'south' ? { min_x: minA, max_x: maxA, min_z: cz - height / 2, max_z: cz + height / 2 } : { min_y: minA, max_y: maxA, min_z: cz - height / 2, max_z: cz + height / 2 },
    base_z: basePlate?.z ?? null,
    top_z: topPoint?.z ?? null,
    items_drawn: {
      annotations: positions.annotations.filter((a) => has(a.at)).map((a) => a.number),
      inventory_items: positions.inventory.filter((i) => has(i.at)).map((i) => i.number),
      measurements: positions.measurements.filter((m) => m.points.some(has)).map((m) => m.id),
    },
  };
}

/** The square of the orthomosaic, as a north-up JPEG on white; or why not. */
async function orthoWindow(
  store: ObjectStore,
  layer: NonNullable<NonNullable<Reconstruction['rasters']>['orthomosaic']>,
  bounds: Plan2d['bounds'],
  outputProj4: string | null,
): Promise<{ jpeg: Buffer; level: number; width: number; height: number } | { reason: string }> {
  const cog = await openStoredCog(store, layer.bucket, layer.key);
  // The positions are in the output system; the raster may be in another (the same in practice): its corners moved there.
  const converter = outputProj4 && outputProj4 !== cog.proj4 ? proj4(outputProj4, cog.proj4 ?? 'EPSG:4326') : null;
  const toRaster = (p: XY): XY => (converter ? (converter.forward([...p]) as XY) : p);
  const corners = [toRaster([bounds.min_x, bounds.max_y]), toRaster([bounds.max_x, bounds.min_y])].map(([x, y]) => cog.toPixel(x, y));
  const [fx0, fy0] = corners[0];
  const [fx1, fy1] = corners[1];
  // The coarsest level still at least PLAN_PIXELS across the square.
  let index = 0;
  for (let i = cog.levels.length - 1; i >= 0; i--) {
    if ((fx1 - fx0) / cog.levels[i].scaleX >= PLAN_PIXELS || i === 0) {
      index = i;
      break;
    }
  }
  const level = cog.levels[index];
  const [lx0, ly0, lx1, ly1] = [fx0 / level.scaleX, fy0 / level.scaleY, fx1 / level.scaleX, fy1 / level.scaleY].map(Math.round);
  const [width, height] = [lx1 - lx0, ly1 - ly0];
  if (width > MAX_WINDOW_SIDE || height > MAX_WINDOW_SIDE) return { reason: `the orthomosaic has no overview coarse enough for the plan (${width} x ${height} pixels)` };
  if (width < 2 || height < 2) return { reason: 'the plan is smaller than a pixel of the orthomosaic' };
  const window: [number, number, number, number] = [Math.max(0, lx0), Math.max(0, ly0), Math.min(level.width, lx1), Math.min(level.height, ly1)];
  if (window[2] <= window[0] || window[3] <= window[1]) return { reason: 'the orthomosaic does not cover the plan' };
  const pixels = await readWindow(level, window);
  const [ww, wh] = [window[2] - window[0], window[3] - window[1]];
  const channels = pixels.length / (ww * wh);
  const sharp = await loadSharp();
  const part = await sharp(Buffer.from(pixels.buffer, pixels.byteOffset, pixels.length), { raw: { width: ww, height: wh, channels: channels as 3 | 4 } })
    .png()
    .toBuffer();
  // The window where the square is, on white (the part of the square outside the raster, and its transparent pixels).
  const jpeg = await sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
    .composite([{ input: part, left: window[0] - lx0, top: window[1] - ly0 }])
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: 85 })
    .toBuffer();
  return { jpeg, level: index, width, height };
}
