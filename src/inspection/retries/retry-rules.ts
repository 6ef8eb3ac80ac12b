// The retry conditions of the spec ("Retry conditions (all must hold)"), in one place so that
// `can_retry` on every inspection record and the retry call itself always agree. Condition 1
// (the inspection belongs to the user or one of the user's organizations) is access control:
// a request never sees anybody else's inspection (404).
//
// Retries form flat bundles: a retry's `retry_of` is always the main inspection of the bundle,
// even when the retry is asked of another retry, so "its retries" (conditions 4 and 5) are the
// retries of the bundle. The inspection must also have been processed once (its allowance is
// what a retry recycles): an inspection that never started processing is processed, not retried.
import { RETRYABLE_STATUSES, STABLE_STATUSES } from '../inspections/statuses.ts';

export const RETRY_MAX_AGE_DAYS = 15;
export const RETRY_MAX_COUNT = 2;

export interface RetryInfo {
  id: number;
  status: number;
  created_at: Date;
}

export interface RetryCandidate {
  status: number;
  created_at: Date;
  processing_started_at: Date | null;
}

type Refusal = 'age' | 'status' | 'never_processed' | 'retry_in_progress' | 'too_many';

/** Which condition refuses a retry now, or null when none does. */
function refusalOf(inspection: RetryCandidate, bundleRetries: RetryInfo[], now: number): Refusal | null {
  if (now - inspection.created_at.getTime() >= RETRY_MAX_AGE_DAYS * 24 * 3600 * 1000) return 'age';
  if (!RETRYABLE_STATUSES.has(inspection.status)) return 'status';
  if (inspection.processing_started_at === null) return 'never_processed';
  if (bundleRetries.some((r) => !STABLE_STATUSES.has(r.status))) return 'retry_in_progress';
  if (bundleRetries.length >= RETRY_MAX_COUNT) return 'too_many';
  return null;
}

/** Why the inspection cannot be retried now, or null when it can. */
export function retryRefusal(inspection: RetryCandidate, bundleRetries: RetryInfo[], now = new Date()): string | null {
  switch (refusalOf(inspection, bundleRetries, now.getTime())) {
    case 'age':
      return `Only inspections created less than ${RETRY_MAX_AGE_DAYS} days ago can be retried.`;
    case 'status':
      return `An inspection in status ${inspection.status} cannot be retried; retryable statuses: ${[...RETRYABLE_STATUSES].join(', ')}.`;
    case 'never_processed':
      return 'This inspection was never processed: start its processing instead of retrying it.';
    case 'retry_in_progress':
      return 'A retry of this inspection is in progress.';
    case 'too_many':
      return `This inspection already has ${bundleRetries.length} retries; at most ${RETRY_MAX_COUNT} are allowed.`;
    case null:
      return null;
  }
}

/** Whether the inspection can be retried now (`can_retry` of every record): retryRefusal without its message. */
export function canRetry(inspection: RetryCandidate, bundleRetries: RetryInfo[], now = Date.now()): boolean {
  return refusalOf(inspection, bundleRetries, now) === null;
}
