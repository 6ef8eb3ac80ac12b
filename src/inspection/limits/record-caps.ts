// How many measurements and annotations one inspection may hold (INSPECTION_MAX_MEASUREMENTS,
// INSPECTION_MAX_ANNOTATIONS). Every record is bounded by the request limits, but their number was
// not: 100,000 measurements made one unpaged list 46 MB and four such lists took the process past
// 2 GB. With a cap the plain (unpaged) lists, which the spec answers whole, stay bounded.
// A creation that would go beyond is a 400 naming the field, as every other limit of the API, and
// stores nothing (the check runs under the inspection's row lock, in the inserting transaction, so
// concurrent creations cannot pass it together).
import { ValidationError } from '../../infra/http/errors.ts';

export interface RecordCaps {
  /** Measurements per inspection; 0: no cap. */
  measurementsPerInspection: number;
  /** Annotations per inspection (the service's own rust findings count, but are never refused); 0: no cap. */
  annotationsPerInspection: number;
}

export const DEFAULT_RECORD_CAPS: RecordCaps = { measurementsPerInspection: 10_000, annotationsPerInspection: 10_000 };

/** Throws a 400 on `field` when `held + adding` records would exceed `cap` (0: no cap). */
export function refuseBeyondCap(options: { field: string; what: string; inspectionId: number; held: number; adding: number; cap: number; setting: string }): void {
  const { field, what, inspectionId, held, adding, cap, setting } = options;
  if (cap === 0 || held + adding <= cap) return;
  const room = Math.max(0, cap - held);
  throw ValidationError.field(
    field,
    `Inspection ${inspectionId} holds ${held} ${what}; at most ${cap} per inspection (${setting}): ` +
      (room === 0 ? `delete some before creating more.` : `${adding} more would exceed it (room for ${room}).`),
  );
}
