// Rows -> the project details record of the cloud spec. The `outputs` block comes from the output
// rows: the thumbnail, the map layers (rasters described at the end of processing,
// processing/map-layers.ts) with their extent and zooms, and the quality reports.
import type { Static } from 'typebox';
import type { MapBounds, ProjectRow } from '../cloud.tables.ts';
import type { MapLayer, ProjectDetails as ProjectDetailsSchema, ReportEntry } from '../cloud.schemas.ts';
import type { BundleState } from '../bundles/inputs-bundle.ts';
import { unionBounds, type RasterInfo } from '../processing/map-layers.ts';

export type ProjectDetails = Static<typeof ProjectDetailsSchema>;

interface OutputRow {
  id: number;
  output_type: string;
  result_type: string;
  availability: string;
  s3_key: string | null;
  raster: RasterInfo | null;
}

export interface MapContext {
  baseUrl: string;
  region: string;
  bundle: BundleState;
  /** Presigned URL of the project thumbnail, when built. */
  thumbUrl: string | null;
  folderUuid: string | null;
  /** Name of the API client that created the project ('' once that client is deleted). */
  clientName: string;
}

export function mapProject(row: ProjectRow, outputs: OutputRow[], context: MapContext): ProjectDetails {
  const detailUrl = `${context.baseUrl}/project/api/v3/projects/${row.id}/`;
  const thumb = outputs.find((o) => o.output_type === 'project_thumb' && o.availability === 'done' && o.s3_key);
  const crs = row.output_crs;
  const done = outputs.filter((o): o is OutputRow & { s3_key: string } => o.availability === 'done' && o.s3_key !== null);
  const layers = mapLayers(done, row.bucket_name);
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    display_name: row.name,
    project_group_id: row.project_group_id,
    folder_uuid: context.folderUuid,
    is_demo: false,
    is_geolocalized: row.is_geolocalized,
    never_delete: false,
    under_trial: false,
    create_date: row.created_at.toISOString(),
    acquisition_date: (row.acquisition_date ?? row.created_at).toISOString(),
    public_status: row.public_status as string,
    display_detailed_status: displayStatus(row),
    progress: row.progress,
    error_reason: row.error_reason,
    error_code: row.error_code,
    user_display_name: context.clientName,
    project_thumb: context.thumbUrl ?? '',
    detail_url: detailUrl,
    project_type: 'pro',
    image_count: row.image_count,
    last_datetime_processing_started: row.processing_started_at?.toISOString() ?? null,
    last_datetime_processing_ended: row.processing_ended_at?.toISOString() ?? null,
    bucket_name: row.bucket_name,
    s3_bucket_region: context.region,
    s3_base_path: row.s3_base_path,
    // The system in use once processing resolved it, else the one requested at creation.
    coordinate_system: crs?.wkt ?? row.coordinate_system ?? '',
    output_coordinate_system: crs
      ? {
          name: crs.name,
          source: crs.source,
          type: crs.type,
          horizontal_epsg: crs.horizontal_epsg,
          vertical_epsg: crs.vertical_epsg,
          vertical_name: crs.vertical_name,
          unit: crs.unit,
          axis_order: crs.axis_order,
          geoid_model: crs.geoid_model,
          geoid_height: crs.geoid_height,
        }
      : null,
    geoid_model: row.geoid_model,
    geoid_height: row.geoid_height,
    min_zoom: layers.length ? Math.min(...layers.map((l) => l.min_zoom)) : 0,
    max_zoom: layers.length ? Math.max(...layers.map((l) => l.max_zoom)) : 0,
    proj_pipeline: crs?.proj4 ?? '',
    tags: row.tags,
    pipeline: row.pipeline,
    engine: row.engine,
    outputs: {
      mesh: { texture_res: null },
      images: {
        project_thumb: thumb
          ? { status: 'processed', name: 'project_thumb', s3_key: thumb.s3_key, s3_bucket: row.bucket_name }
          : { status: 'not available', name: 'project_thumb', s3_key: null, s3_bucket: null },
        reflectance: [],
      },
      // The layers' extent once processing made any; before (and without), the images' extent.
      map: { layers, bounds: unionBounds(layers.map((l) => l.bounds as MapBounds)) ?? row.map_bounds },
      bundles: { inputs: context.bundle },
      reports: reports(done, row.bucket_name),
    },
  };
}

function mapLayers(done: (OutputRow & { s3_key: string })[], bucket: string): Static<typeof MapLayer>[] {
  return done
    .filter((o) => o.raster !== null)
    .map((o) => {
      const r = o.raster!;
      return {
        name: o.output_type,
        layer_type: o.result_type,
        output_id: o.id,
        s3_key: o.s3_key,
        s3_bucket: bucket,
        bounds: r.bounds,
        min_zoom: r.min_zoom,
        max_zoom: r.max_zoom,
        resolution_m: r.resolution_m,
        width: r.width,
        height: r.height,
        epsg: r.epsg,
      };
    });
}

function reports(done: (OutputRow & { s3_key: string })[], bucket: string): Record<string, Static<typeof ReportEntry>> {
  const entries = done
    .filter((o) => o.result_type === 'quality_report')
    .map((o) => [o.output_type, { status: 'processed', name: o.output_type, format: o.s3_key.toLowerCase().endsWith('.pdf') ? 'pdf' : 'json', output_id: o.id, s3_key: o.s3_key, s3_bucket: bucket }] as const);
  return Object.fromEntries(entries);
}

function displayStatus(row: ProjectRow): string {
  switch (row.public_status) {
    case 'NEW':
      return 'Created: upload and register images';
    case 'UPLOADING':
      return `${row.image_count} input(s) registered`;
    case 'WAITING':
      return 'Waiting for processing (0%)';
    case 'PROCESSING':
      return `${row.detailed_status || 'Processing'} (${row.progress}%)`;
    case 'DONE':
      return 'Processing completed (100%)';
    case 'ERROR':
      return `Processing failed (error ${row.error_code ?? 10001}): ${row.error_reason}`;
    default:
      return row.detailed_status;
  }
}
