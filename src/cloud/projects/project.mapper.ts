// Rows -> the project details record of the cloud spec.
import type { Static } from 'typebox';
import type { ProjectRow } from '../cloud.tables.ts';
import type { ProjectDetails as ProjectDetailsSchema } from '../cloud.schemas.ts';

export type ProjectDetails = Static<typeof ProjectDetailsSchema>;

interface OutputRow {
  output_type: string;
  availability: string;
  s3_key: string | null;
}

export function mapProject(row: ProjectRow, outputs: OutputRow[], context: { baseUrl: string; region: string }): ProjectDetails {
  const detailUrl = `${context.baseUrl}/project/api/v3/projects/${row.id}/`;
  const thumb = outputs.find((o) => o.output_type === 'project_thumb');
  const inputZip = outputs.find((o) => o.output_type === 'input_zip');
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    display_name: row.name,
    project_group_id: row.project_group_id,
    is_demo: false,
    is_geolocalized: false,
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
    project_thumb: thumb?.s3_key ? `${detailUrl}thumb/` : '',
    detail_url: detailUrl,
    project_type: 'pro',
    image_count: row.image_count,
    last_datetime_processing_started: row.processing_started_at?.toISOString() ?? null,
    last_datetime_processing_ended: row.processing_ended_at?.toISOString() ?? null,
    bucket_name: row.bucket_name,
    s3_bucket_region: context.region,
    s3_base_path: row.s3_base_path,
    coordinate_system: row.coordinate_system ?? '',
    min_zoom: 0,
    max_zoom: 0,
    proj_pipeline: '',
    tags: row.tags,
    outputs: {
      mesh: { texture_res: null },
      images: {
        project_thumb: thumb?.s3_key
          ? { status: 'processed', name: 'project_thumb', s3_key: thumb.s3_key, s3_bucket: row.bucket_name }
          : { status: 'not available', name: 'project_thumb', s3_key: null, s3_bucket: null },
        reflectance: [],
      },
      map: { layers: [], bounds: null },
      bundles: {
        inputs: {
          status: inputZip?.availability ?? 'requestable',
          request_url: `${detailUrl}inputs/zip/`,
        },
      },
      reports: {},
    },
  };
}

function displayStatus(row: ProjectRow): string {
  switch (row.public_status) {
    case 'NEW':
      return 'Created';
    case 'UPLOADING':
      return `${row.image_count} input(s) registered`;
    case 'WAITING':
      return 'Waiting for processing';
    case 'PROCESSING':
      return `${row.detailed_status || 'Processing'} (${row.progress}%)`;
    case 'DONE':
      return 'Processing completed';
    case 'ERROR':
      return `Processing failed: ${row.error_reason}`;
    default:
      return row.detailed_status;
  }
}
