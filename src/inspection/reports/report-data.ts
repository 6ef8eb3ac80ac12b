// The content of a report (spec "Generate report": asset, annotations, measurements, inventory and
// user data), honouring every include_* flag. It is written as report.json and drawn as the PDF.
// Names follow the real product's published JSON example where it shows them (Pix4Dinspect's
// "Reports" help page: `reported_by`, `asset`, `inspection` with `image_count`, `width`, `height`,
// `model`, `tower_height`, and `image_annotations` with `total`, `severity_summary` (level_1 to
// level_5, other) and `image_list[].annotations[]` with `id`, `type`, `body`); every field this
// report had before is kept beside them (report_version 2: `asset.type` became the type's name,
// as in the example, its id moved to `asset.type_id`).
import type { Kysely } from 'kysely';
import type { AnnotationRow, CameraRow, Geometry, InspectionRow, InspectionTables, MeasurementRow, ReportOptions } from '../inspection.tables.ts';
import { CAMERA_COLUMNS } from '../inspection.tables.ts';
import { ASSET_TYPES } from '../assets/asset-types.ts';
import { statusDescription } from '../inspections/statuses.ts';
import { mapInventoryItem, type InventoryItemRecord } from '../inventory/inventory.service.ts';
import { quantitiesOf } from '../measurements/quantities.ts';
import type { Extras } from '../extras/extras.service.ts';
import type { Plan2d, SidePlan } from './report-plan.ts';
import { UNKNOWN_LOCALE, type ReportLocale } from './report-locale.ts';

export interface ReportAnnotation {
  id: number;
  number: number;
  type: string;
  name: string | null;
  severity_level: number;
  description: string | null;
  links: { link: string; description: string }[];
  coords_2d: [number, number][];
  coords_3d: unknown;
  is_visible: boolean;
  public: boolean;
  photo: { photo_id: number; filename: string | null };
  created_at: string;
}

/** An annotation in `image_annotations.image_list[].annotations[]`: the example's `body` (its coords_2d as JSON text) beside ours. */
export interface ReportImageAnnotation extends ReportAnnotation {
  body: string;
}

export interface ReportImage {
  photo_id: number;
  filename: string | null;
  width: number | null;
  height: number | null;
  annotations: ReportImageAnnotation[];
}

/** severity_level 1..5 as level_1..level_5; 0 (none) as `other`. */
export interface SeveritySummary {
  level_1: number;
  level_2: number;
  level_3: number;
  level_4: number;
  level_5: number;
  other: number;
}

export interface ReportMeasurement {
  id: string;
  name: string | null;
  geometry_type: Geometry['type'];
  /** Metres: a LineString's length, a Polygon's perimeter. */
  length: number | null;
  /** Square metres, Polygons only. */
  area: number | null;
  /** Metres, Polygons only. */
  perimeter: number | null;
  /** Cubic metres above the polygon's plane, Polygons over a point cloud only (measurements/volume.ts). */
  volume: number | null;
  tags: string[];
  properties: Record<string, unknown>;
  geometry: Geometry;
}

export interface ReportData {
  report_version: 2;
  generated_at: string;
  options: ReportOptions;
  /**
   * The user who asked for the report (the example's fields). preferred_language and country: from
   * the request's Accept-Language, null when it gave none (report-locale.ts).
   */
  reported_by: { id: number; name: string; email?: string; report_units: 'metric' } & ReportLocale;
  inspection: {
    id: number;
    project_id: number | null;
    name: string | null;
    description: string | null;
    status: number;
    status_description: string;
    inspection_date: string | null;
    created_at: string;
    updated_at: string;
    processing_parameters: object;
    images: number;
    /** = images (the example's name). */
    image_count: number;
    /** Pixels and camera model of the photos (the most common ones); null before image analysis. */
    width: number | null;
    height: number | null;
    model: string | null;
    /** Metres from base_plate_location to top_point_location (z); null unless both are set. */
    tower_height: number | null;
    project_uuid: string | null;
  };
  asset: {
    id: number;
    name: string;
    /** The type's name, as in the example ("Self-support"). */
    type: string;
    type_id: number;
    type_description: string;
    family: string;
    latitude: string | null;
    longitude: string | null;
    description: string | null;
    created_at: string;
    updated_at: string;
  };
  /** The inspection's creator. */
  user: { id: number; username: string; email?: string };
  organization: { uuid: string; name: string } | null;
  extras: Extras;
  extra_remarks: string | null;
  /** With include_annotations: the example's summary and the annotations grouped by photo. */
  image_annotations?: { total: number; severity_summary: SeveritySummary; image_list: ReportImage[] };
  annotations?: ReportAnnotation[];
  measurements: ReportMeasurement[];
  inventory_items?: InventoryItemRecord[];
  /** With include_sharetoken: a read-only share token made for this report (auth/share-tokens.ts), and its link. */
  share_token?: string;
  share_link?: string;
  /** With include_2d_plans: the plans drawn (report-plan.ts); empty when nothing has a position. */
  plans_2d?: (Plan2d | SidePlan)[];
}

export interface ReportSources {
  inspection: InspectionRow;
  annotations: AnnotationRow[];
  measurements: MeasurementRow[];
  extras: Extras;
  options: ReportOptions;
  /** The user who asked for the report (reported_by); absent: the inspection's creator. */
  reportedBy?: number;
  /** reported_by's preferred_language and country (report-locale.ts); absent: null. */
  locale?: ReportLocale;
  /** The share token made for the report (include_sharetoken). */
  share?: { token: string; url: string };
}

export async function collectReportData(db: Kysely<InspectionTables>, sources: ReportSources): Promise<{ data: ReportData; cameras: Map<number, CameraRow> }> {
  const { inspection, options } = sources;
  const asset = await db.selectFrom('inspection.assets').selectAll().where('id', '=', inspection.asset_id).executeTakeFirstOrThrow();
  const user = await db.selectFrom('inspection.users').select(['id', 'username', 'email']).where('id', '=', inspection.user_id).executeTakeFirstOrThrow();
  const reporter =
    sources.reportedBy === undefined || sources.reportedBy === user.id
      ? user
      : ((await db.selectFrom('inspection.users').select(['id', 'username', 'email']).where('id', '=', sources.reportedBy).executeTakeFirst()) ?? user);
  const camera = await db
    .selectFrom('inspection.cameras')
    .select(['width', 'height', 'model', (eb) => eb.fn.countAll<number>().as('n')])
    .where('inspection_id', '=', inspection.id)
    .groupBy(['width', 'height', 'model'])
    .orderBy('n', 'desc')
    .limit(1)
    .executeTakeFirst();
  const organization =
    inspection.organization_id === null
      ? null
      : ((await db.selectFrom('inspection.organizations').select(['uuid', 'name']).where('id', '=', inspection.organization_id).executeTakeFirst()) ?? null);
  const { count: images } = await db
    .selectFrom('inspection.inspection_images')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('inspection_id', '=', inspection.id)
    .executeTakeFirstOrThrow();
  const photoIds = [...new Set(sources.annotations.map((a) => a.photo_id))];
  const cameraRows = photoIds.length ? await db.selectFrom('inspection.cameras').select(CAMERA_COLUMNS).where('id', 'in', photoIds).execute() : [];
  const cameras = new Map(cameraRows.map((c) => [c.id, c]));
  const assetType = ASSET_TYPES.find((t) => t.id === asset.type);
  const inventory = options.include_inventory_items
    ? await db
        .selectFrom('inspection.inventory_items')
        .selectAll()
        .where('inspection_id', '=', inspection.id)
        .$if(options.include_only_visible, (q) => q.where('visible', '=', true))
        .orderBy('number')
        .execute()
    : [];

  const base = inspection.base_plate_location;
  const top = inspection.top_point_location;
  const data: ReportData = {
    report_version: 2,
    generated_at: new Date().toISOString(),
    options,
    reported_by: { id: reporter.id, name: reporter.username, ...(options.include_email ? { email: reporter.email } : {}), report_units: 'metric', ...(sources.locale ?? UNKNOWN_LOCALE) },
    inspection: {
      id: inspection.id,
      project_id: inspection.project_id,
      name: inspection.name,
      description: inspection.description,
      status: inspection.status,
      status_description: statusDescription(inspection.status),
      inspection_date: inspection.inspection_date?.toISOString() ?? null,
      created_at: inspection.created_at.toISOString(),
      updated_at: inspection.updated_at.toISOString(),
      processing_parameters: inspection.processing_parameters,
      images: Number(images),
      image_count: Number(images),
      width: camera?.width ?? null,
      height: camera?.height ?? null,
      model: camera?.model ?? null,
      tower_height: base && top ? Math.round((top.z - base.z) * 1000) / 1000 : null,
      project_uuid: inspection.project_uuid,
    },
    asset: {
      id: asset.id,
      name: asset.name,
      type: assetType?.description ?? String(asset.type),
      type_id: asset.type,
      type_description: assetType?.description ?? String(asset.type),
      family: assetType?.family ?? '',
      latitude: asset.latitude === null ? null : Number(asset.latitude).toFixed(8),
      longitude: asset.longitude === null ? null : Number(asset.longitude).toFixed(8),
      description: asset.description,
      created_at: asset.created_at.toISOString(),
      updated_at: asset.updated_at.toISOString(),
    },
    user: { id: user.id, username: user.username, ...(options.include_email ? { email: user.email } : {}) },
    organization: organization ? { uuid: organization.uuid, name: organization.name } : null,
    extras: sources.extras,
    extra_remarks: options.extra_remarks,
    measurements: sources.measurements.filter((m) => includeMeasurement(m, options)).map(reportMeasurement),
  };
  if (options.include_annotations) {
    data.annotations = sources.annotations
      .filter((a) => !options.include_only_visible || a.is_visible)
      .map((a) => ({
        id: a.id,
        number: a.number,
        type: a.type,
        name: a.name,
        severity_level: a.severity_level,
        description: a.description,
        links: a.data.links ?? [],
        coords_2d: a.data.coords_2d,
        coords_3d: a.coords_3d,
        is_visible: a.is_visible,
        public: a.public,
        photo: { photo_id: a.photo_id, filename: cameras.get(a.photo_id)?.filename ?? null },
        created_at: a.created_at.toISOString(),
      }));
    data.image_annotations = imageAnnotations(data.annotations, cameras);
  }
  if (options.include_inventory_items) data.inventory_items = inventory.map(mapInventoryItem);
  if (options.include_sharetoken && sources.share) {
    data.share_token = sources.share.token;
    data.share_link = sources.share.url;
  }
  if (options.include_2d_plans) data.plans_2d = [];
  return { data, cameras };
}

/**
 * The report as share holders read it (issue 27): no share token or link (a holder must not keep a
 * way in that outlives the token they were given) and no e-mail address (no personal data beyond
 * the names the report prints). Everything else is the report as built.
 */
export function shareHolderView(data: ReportData): ReportData {
  const { share_token: _token, share_link: _link, ...rest } = data;
  const { email: _reporterEmail, ...reportedBy } = data.reported_by;
  const { email: _userEmail, ...user } = data.user;
  return { ...rest, reported_by: reportedBy, user };
}

/** The example's `image_annotations`: totals by severity, and the annotations grouped by photo (photos in order of their first annotation). */
function imageAnnotations(annotations: ReportAnnotation[], cameras: Map<number, CameraRow>): NonNullable<ReportData['image_annotations']> {
  const severity_summary: SeveritySummary = { level_1: 0, level_2: 0, level_3: 0, level_4: 0, level_5: 0, other: 0 };
  const images = new Map<number, ReportImage>();
  for (const a of annotations) {
    const level = `level_${a.severity_level}`;
    if (level in severity_summary) severity_summary[level as keyof SeveritySummary]++;
    else severity_summary.other++;
    let image = images.get(a.photo.photo_id);
    if (!image) {
      const camera = cameras.get(a.photo.photo_id);
      image = { photo_id: a.photo.photo_id, filename: a.photo.filename, width: camera?.width ?? null, height: camera?.height ?? null, annotations: [] };
      images.set(a.photo.photo_id, image);
    }
    image.annotations.push({ ...a, body: JSON.stringify(a.coords_2d) });
  }
  return { total: annotations.length, severity_summary, image_list: [...images.values()] };
}

/** Polygons and lines follow their flags; points have no flag and are always included. */
function includeMeasurement(m: MeasurementRow, options: ReportOptions): boolean {
  if (options.include_only_visible && m.properties.visible === false) return false;
  if (m.geometry.type === 'Polygon') return options.include_polygon_measurements;
  if (m.geometry.type === 'LineString') return options.include_line_measurements;
  return true;
}

/** The numbers the measurement carries (`extension.computed`, measurements/quantities.ts), under the report's names. */
function reportMeasurement(m: MeasurementRow): ReportMeasurement {
  const quantities = quantitiesOf(m);
  return {
    id: m.id,
    name: typeof m.properties.name === 'string' ? m.properties.name : null,
    geometry_type: m.geometry.type,
    length: quantities.length_m ?? quantities.perimeter_m,
    area: quantities.area_m2,
    perimeter: quantities.perimeter_m,
    volume: quantities.volume_m3,
    tags: m.tags,
    properties: m.properties,
    geometry: m.geometry,
  };
}
