// The answer of a route that would serve data retention deleted (retention.service.ts): 410 Gone
// in the CONTRACT's {detail, code} format, saying in words what went and what stayed. Keyed on
// `purged_at` rather than on status 24, so that the data stays refused whatever the status says.
import { ApiError } from '../../infra/http/errors.ts';
import type { InspectionRow } from '../inspection.tables.ts';

export const PURGED_CODE = 'purged';

export function purgedError(inspection: Pick<InspectionRow, 'id' | 'purged_at'>): ApiError {
  const when = inspection.purged_at ? ` on ${inspection.purged_at.toISOString().slice(0, 10)}` : '';
  return new ApiError(
    410,
    PURGED_CODE,
    `The data of inspection ${inspection.id} was deleted by its organization's retention period${when}: its photos, cameras, outputs, inputs ZIP and cloud project are gone. Its record, annotations, measurements and report remain.`,
  );
}

/** Throws the 410 when the inspection's data was given up by retention. */
export function refusePurged(inspection: Pick<InspectionRow, 'id' | 'purged_at'>): void {
  if (inspection.purged_at) throw purgedError(inspection);
}
