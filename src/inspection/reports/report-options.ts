// The body of POST /v1/inspections/{id}/report/ (spec "Report body fields"), all optional.
import { Type } from 'typebox';
import { Nullable } from '../http/nullable.ts';
import type { ReportOptions } from '../inspection.tables.ts';

export const ReportBody = Type.Object({
  include_email: Type.Optional(Type.Boolean({ default: true, description: "The creator's e-mail address in the user section" })),
  include_annotations: Type.Optional(Type.Boolean({ default: true })),
  include_polygon_measurements: Type.Optional(Type.Boolean({ default: true })),
  include_line_measurements: Type.Optional(Type.Boolean({ default: true })),
  include_inventory_items: Type.Optional(Type.Boolean({ default: true })),
  include_only_visible: Type.Optional(Type.Boolean({ default: false, description: 'Only visible annotations, measurements and inventory items' })),
  include_sharetoken: Type.Optional(Type.Boolean({ default: true, description: 'Makes a read-only share token of the inspection for the report: `share_token` and `share_link` in the JSON, the link in the PDF (see POST /v1/inspections/{id}/share_tokens/)' })),
  include_2d_plans: Type.Optional(Type.Boolean({ default: false, description: 'A top-down plan around the asset (annotations, inventory items, measurements over the orthomosaic when there is one) on a page of the PDF, listed in `plans_2d` of the JSON' })),
  extra_remarks: Type.Optional(Nullable(Type.String({ maxLength: 10000 }))),
});

export const DEFAULT_REPORT_OPTIONS: ReportOptions = {
  include_email: true,
  include_annotations: true,
  include_polygon_measurements: true,
  include_line_measurements: true,
  include_inventory_items: true,
  include_only_visible: false,
  include_sharetoken: true,
  include_2d_plans: false,
  extra_remarks: null,
};

export function reportOptions(body: Partial<ReportOptions> | undefined): ReportOptions {
  const options = { ...DEFAULT_REPORT_OPTIONS };
  for (const [key, value] of Object.entries(body ?? {})) {
    if (value !== undefined && key in options) (options as Record<string, unknown>)[key] = value;
  }
  return options;
}
