// Why an inspection cannot be retried, in words, from the spec's retry conditions
// (inspection-service.md, "Retry conditions"). The API decides (`can_retry` on the record, and
// POST /v1/inspections/retry/ answers 409 otherwise); this only explains a missing Retry button.
// Framework-free: unit tests in test/web-retry-rules.test.ts.
import { isStable } from './statuses.ts';

export const RETRYABLE_STATUSES = [7, 8, 14, 16, 17, 18, 21, 22, 23];
export const RETRY_MAX_AGE_DAYS = 15;
export const RETRY_MAX_COUNT = 2;

export interface RetryFacts {
  status: number;
  created_at: string;
  can_retry: boolean;
  retries: { status: number }[];
}

/** Undefined when a retry is allowed (or nothing needs saying); otherwise the reason, first failed condition first. */
export function retryBlockedReason(inspection: RetryFacts, now = new Date()): string | undefined {
  if (inspection.can_retry) return undefined;
  if (!RETRYABLE_STATUSES.includes(inspection.status)) {
    // Work under way, or an inspection that never got that far: nothing to explain.
    if (!isStable(inspection.status) || [1, 24, 27].includes(inspection.status)) return undefined;
    return 'This error cannot be retried with the same photos: create a new inspection and upload other photos.';
  }
  const ageDays = (now.getTime() - new Date(inspection.created_at).getTime()) / 86_400_000;
  if (ageDays >= RETRY_MAX_AGE_DAYS) return `A retry is possible only within ${RETRY_MAX_AGE_DAYS} days of the inspection's creation.`;
  if (inspection.retries.some((r) => !isStable(r.status))) return 'A retry of this inspection is already in progress.';
  if (inspection.retries.length >= RETRY_MAX_COUNT) return `This inspection has already been retried ${RETRY_MAX_COUNT} times, the most allowed.`;
  return 'A retry is not possible for this inspection.';
}
