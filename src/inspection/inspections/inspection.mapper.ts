// Rows -> the inspection record of the spec.
import type { InspectionRow } from '../inspection.tables.ts';
import { canRetry, type RetryInfo } from '../retries/retry-rules.ts';

export type { RetryInfo };

export interface RetryContext {
  /** Retries of this inspection (empty for a retry: bundles are flat). */
  retries: RetryInfo[];
  /** Retries of the bundle this inspection belongs to (those of its main inspection). */
  bundleRetries: RetryInfo[];
}

/** The columns a record is made of (inspection-read.ts selects exactly these). */
export const RECORD_COLUMNS = [
  'id',
  'project_id',
  'project_uuid',
  'app_source',
  'retry_of',
  'asset_id',
  'user_id',
  'status',
  'additional_statuses',
  'pcs_task_uuid',
  'inspection_date',
  'description',
  'name',
  'base_plate_location',
  'top_point_location',
  'base_plate_size',
  'ground_reference_altitude',
  'processing_parameters',
  'processing_backend',
  'report_status',
  'created_at',
  'updated_at',
  'processing_started_at', // for can_retry
  'has_retries', // whether the bundle's retries need reading (inspection-records.ts)
] as const satisfies readonly (keyof InspectionRow)[];

export type RecordRow = Pick<InspectionRow, (typeof RECORD_COLUMNS)[number]>;

export function mapInspection(row: RecordRow, context: RetryContext) {
  return {
    id: row.id,
    project_id: row.project_id,
    project_uuid: row.project_uuid,
    app_source: row.app_source,
    can_retry: canRetry(row, context.bundleRetries),
    retry_of: row.retry_of,
    retries: context.retries.map((r) => ({ id: r.id, status: r.status, created_at: r.created_at.toISOString() })),
    asset: row.asset_id,
    user: row.user_id,
    status: row.status,
    additional_statuses: row.additional_statuses,
    pcs_task_uuid: row.pcs_task_uuid,
    inspection_date: row.inspection_date?.toISOString() ?? null,
    description: row.description,
    name: row.name,
    is_main: row.retry_of === null,
    base_plate_location: row.base_plate_location,
    top_point_location: row.top_point_location,
    base_plate_size: row.base_plate_size === null ? null : Number(row.base_plate_size),
    ground_reference_altitude: Number(row.ground_reference_altitude).toFixed(3),
    processing_parameters: row.processing_parameters,
    processing_backend: row.processing_backend,
    report_status: row.report_status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export type InspectionRecord = ReturnType<typeof mapInspection>;
