// The content of a report (spec "Generate report": asset, annotations, measurements, inventory and
// user data), honouring every include_* flag. It is written as report.json and drawn as the PDF.
import type { Kysely } from 'kysely';
import type { AnnotationRow, CameraRow, Geometry, InspectionRow, InspectionTables, MeasurementRow, ReportOptions } from '../inspection.tables.ts';
import { ASSET_TYPES } from '../assets/asset-types.ts';
import { statusDescription } from '../inspections/statuses.ts';
import { mapInventoryItem, type InventoryItemRecord } from '../inventory/inventory.service.ts';
import { areaOf, lengthOf } from '../measurements/geometry.ts';
import type { Extras } from '../extras/extras.service.ts';

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

export interface ReportMeasurement {
  id: string;
  name: string | null;
  geometry_type: Geometry['type'];
  /** Metres: a LineString's length, a Polygon's perimeter. */
  length: number | null;
  /** Square metres, Polygons only. */
  area: number | null;
  tags: string[];
  properties: Record<string, unknown>;
  geometry: Geometry;
}

export interface ReportData {
  report_version: 1;
  generated_at: string;
  options: ReportOptions;
  inspection: {
    id: number;
    name: string | null;
    description: string | null;
    status: number;
    status_description: string;
    inspection_date: string | null;
    created_at: string;
    processing_parameters: object;
    images: number;
    project_uuid: string | null;
  };
  asset: {
    id: number;
    name: string;
    type: number;
    type_description: string;
    family: string;
    latitude: string | null;
    longitude: string | null;
    description: string | null;
  };
  user: { id: number; username: string; email?: string };
  organization: { uuid: string; name: string } | null;
  extras: Extras;
  extra_remarks: string | null;
  annotations?: ReportAnnotation[];
  measurements: ReportMeasurement[];
  inventory_items?: InventoryItemRecord[];
  /** Sharing is not available yet: always null when asked for. */
  share_token?: null;
  /** 2D plans are not produced yet: always empty when asked for. */
  plans_2d?: unknown[];
}

export interface ReportSources {
  inspection: InspectionRow;
  annotations: AnnotationRow[];
  measurements: MeasurementRow[];
  extras: Extras;
  options: ReportOptions;
}

export async function collectReportData(db: Kysely<InspectionTables>, sources: ReportSources): Promise<{ data: ReportData; cameras: Map<number, CameraRow> }> {
  const { inspection, options } = sources;
  const asset = await db.selectFrom('inspection.assets').selectAll().where('id', '=', inspection.asset_id).executeTakeFirstOrThrow();
  const user = await db.selectFrom('inspection.users').select(['id', 'username', 'email']).where('id', '=', inspection.user_id).executeTakeFirstOrThrow();
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
  const cameraRows = photoIds.length ? await db.selectFrom('inspection.cameras').selectAll().where('id', 'in', photoIds).execute() : [];
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

  const data: ReportData = {
    report_version: 1,
    generated_at: new Date().toISOString(),
    options,
    inspection: {
      id: inspection.id,
      name: inspection.name,
      description: inspection.description,
      status: inspection.status,
      status_description: statusDescription(inspection.status),
      inspection_date: inspection.inspection_date?.toISOString() ?? null,
      created_at: inspection.created_at.toISOString(),
      processing_parameters: inspection.processing_parameters,
      images: Number(images),
      project_uuid: inspection.project_uuid,
    },
    asset: {
      id: asset.id,
      name: asset.name,
      type: asset.type,
      type_description: assetType?.description ?? String(asset.type),
      family: assetType?.family ?? '',
      latitude: asset.latitude === null ? null : Number(asset.latitude).toFixed(8),
      longitude: asset.longitude === null ? null : Number(asset.longitude).toFixed(8),
      description: asset.description,
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
  }
  if (options.include_inventory_items) data.inventory_items = inventory.map(mapInventoryItem);
  if (options.include_sharetoken) data.share_token = null;
  if (options.include_2d_plans) data.plans_2d = [];
  return { data, cameras };
}

/** Polygons and lines follow their flags; points have no flag and are always included. */
function includeMeasurement(m: MeasurementRow, options: ReportOptions): boolean {
  if (options.include_only_visible && m.properties.visible === false) return false;
  if (m.geometry.type === 'Polygon') return options.include_polygon_measurements;
  if (m.geometry.type === 'LineString') return options.include_line_measurements;
  return true;
}

function reportMeasurement(m: MeasurementRow): ReportMeasurement {
  const type = m.geometry.type;
  return {
    id: m.id,
    name: typeof m.properties.name === 'string' ? m.properties.name : null,
    geometry_type: type,
    length: type === 'Point' ? null : round(lengthOf(m.geometry)),
    area: type === 'Polygon' ? round(areaOf(m.geometry)) : null,
    tags: m.tags,
    properties: m.properties,
    geometry: m.geometry,
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
