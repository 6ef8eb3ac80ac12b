// Rows -> the project details record of the cloud spec.
import type { Static } from 'typebox';
import type { ProjectRow } from '../cloud.tables.ts';
import type { ProjectDetails as ProjectDetailsSchema } from '../cloud.schemas.ts';
import type { BundleState } from '../bundles/inputs-bundle.ts';

export type ProjectDetails = Static<typeof ProjectDetailsSchema>;

interface OutputRow {
  output_type: string;
  availability: string;
  s3_key: string | null;
}

export interface MapContext {
  baseUrl: string;
  region: string;
  bundle: BundleState;
  /** Presigned URL of the project thumbnail, when built. */
  thumbUrl: string | null;
  folderUuid: string | null;
}

export function mapProject(row: ProjectRow, outputs: OutputRow[], context: MapContext): ProjectDetails {
  const detailUrl = `${context.baseUrl}/project/api/v3/projects/${row.id}/`;
  const thumb = outputs.find((o) => o.output_type === 'project_thumb' && o.availability === 'done' && o.s3_key);
  const crs = row.output_crs;
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
    user_display_name: '',
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
    min_zoom: 0,
    max_zoom: 0,
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
      map: { layers: [], bounds: row.map_bounds },
      bundles: { inputs: context.bundle },
      reports: {},
    },
  };
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
