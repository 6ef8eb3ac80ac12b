// Rows -> the inspection record of the spec.
import type { InspectionRow } from '../inspection.tables.ts';
import { RETRYABLE_STATUSES, STABLE_STATUSES } from './statuses.ts';

export const RETRY_MAX_AGE_DAYS = 15;
export const RETRY_MAX_COUNT = 2;

export interface RetryInfo {
  id: number;
  status: number;
  created_at: Date;
}

/** Retry conditions 2-5 of the spec (condition 1, ownership, is checked by access control). */
export function canRetry(row: InspectionRow, retries: RetryInfo[], now = new Date()): boolean {
  const ageMs = now.getTime() - row.created_at.getTime();
  return (
    ageMs < RETRY_MAX_AGE_DAYS * 24 * 3600 * 1000 &&
    RETRYABLE_STATUSES.has(row.status) &&
    !retries.some((r) => !STABLE_STATUSES.has(r.status)) &&
    retries.length < RETRY_MAX_COUNT
  );
}

export function mapInspection(row: InspectionRow, retries: RetryInfo[]) {
  return {
    id: row.id,
    project_id: row.project_id,
    project_uuid: row.project_uuid,
    app_source: row.app_source,
    can_retry: canRetry(row, retries),
    retry_of: row.retry_of,
    retries: retries.map((r) => ({ id: r.id, status: r.status, created_at: r.created_at.toISOString() })),
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
