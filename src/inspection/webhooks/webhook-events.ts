// The inspection service's webhook events, derived from a row of `inspection.inspections` before
// and after a change (InspectionRepository's change listener): whatever wrote the change, its
// events are found here, in one place.
import type { InspectionRow } from '../inspection.tables.ts';
import { statusDescription } from '../inspections/statuses.ts';

export const INSPECTION_WEBHOOK_EVENTS = ['inspection.status_changed', 'inspection.additional_status_changed', 'report.ready', 'inputs_zip.ready'] as const;
export type InspectionWebhookEvent = (typeof INSPECTION_WEBHOOK_EVENTS)[number];

export interface EventOf {
  type: InspectionWebhookEvent;
  data: Record<string, unknown>;
}

/** The events a change of the row makes, in this order. */
export function eventsOfChange(before: InspectionRow, after: InspectionRow): EventOf[] {
  const base = { inspection_id: after.id, asset_id: after.asset_id };
  const events: EventOf[] = [];
  if (before.status !== after.status) {
    events.push({
      type: 'inspection.status_changed',
      data: { ...base, old_status: before.status, new_status: after.status, new_status_description: statusDescription(after.status) },
    });
  }
  if (JSON.stringify(before.additional_statuses) !== JSON.stringify(after.additional_statuses)) {
    events.push({ type: 'inspection.additional_status_changed', data: { ...base, old_additional_statuses: before.additional_statuses, new_additional_statuses: after.additional_statuses } });
  }
  if (after.report_status === 'available' && (before.report_status !== 'available' || before.report_pdf_key !== after.report_pdf_key)) {
    // Where the spec fetches a report: the inspection's outputs, which list report_pdf and
    // report_json (…/report/ only builds one: a GET there is a 405).
    events.push({ type: 'report.ready', data: { ...base, report: `/v1/inspections/${after.id}/outputs/` } });
  }
  if (after.inputs_zip_status === 'available' && (before.inputs_zip_status !== 'available' || before.inputs_zip_key !== after.inputs_zip_key)) {
    events.push({ type: 'inputs_zip.ready', data: { ...base, inputs: `/v1/inspections/${after.id}/inputs/` } });
  }
  return events;
}
