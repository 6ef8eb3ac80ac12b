// Rules the console checks before sending an asset or an inspection, so that the common mistakes
// are named next to their field at once. The API checks them again (and more); its answer wins.
// Framework-free: unit tests in test/web-asset-rules.test.ts.

export type FieldMessages = Record<string, string[]>;

/** Spec (inspection-service.md, data rules): latitude/longitude in decimal degrees, at most 8 decimals. */
const COORDINATE = /^-?\d{1,3}(\.\d{1,8})?$/;

/**
 * The spec's rules of an asset that are cheap to check: name 1..255 characters, latitude within
 * ±90 and longitude within ±180 with at most 8 decimals. Empty coordinates are allowed (the API
 * stores null). Returns the messages per field; empty when fine.
 */
export function checkAsset(values: { name: string; latitude: string; longitude: string }): FieldMessages {
  const errors: FieldMessages = {};
  if (!values.name.trim()) errors.name = ['This field may not be blank.'];
  else if (values.name.length > 255) errors.name = ['Ensure this field has no more than 255 characters.'];
  for (const [field, max] of [['latitude', 90], ['longitude', 180]] as const) {
    const raw = values[field].trim();
    if (!raw) continue;
    if (!COORDINATE.test(raw)) errors[field] = ['Decimal degrees with at most 8 decimals, e.g. 55.70584539.'];
    else if (Math.abs(Number(raw)) > max) errors[field] = [`Must be between -${max} and ${max}.`];
  }
  return errors;
}

/** A date as the value of `<input type="datetime-local">` (local time, minutes). */
export function toDateTimeLocal(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * The value of a datetime-local input as the API's date-time (ISO 8601 in UTC); null when empty,
 * undefined when the browser gave something unreadable (the caller names the field).
 */
export function fromDateTimeLocal(value: string): string | null | undefined {
  if (!value.trim()) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The options the form offers: the spec's processing parameters. */
export const PROCESSING_OPTIONS = [
  'generate_point_cloud',
  'clip_point_cloud',
  'generate_mesh',
  'generate_dsm',
  'generate_ortho',
  'detect_rust',
  'detect_antennas',
  'roof_segmentation',
  'is_video',
] as const;
export type ProcessingOption = (typeof PROCESSING_OPTIONS)[number];

/** The form's defaults: the spec's default body asks for a point cloud and nothing else. */
export function defaultProcessingOptions(): Record<ProcessingOption, boolean> {
  return Object.fromEntries(PROCESSING_OPTIONS.map((key) => [key, key === 'generate_point_cloud'])) as Record<ProcessingOption, boolean>;
}

/**
 * `processing_parameters` of the create-inspection body: every option as a boolean, false for
 * those the installation cannot act on (`unavailable`, the console settings' unavailable_options:
 * the form shows them off and disabled, whatever their default), and `clipping_radius` only when
 * clipping is asked for and a radius given (empty: the service's default). A radius that is not a
 * number is sent as written, so the API names the field.
 */
export function processingParameters(options: Record<ProcessingOption, boolean>, radius: string, unavailable: Readonly<Record<string, string>> = {}): Record<string, boolean | number | string> {
  const parameters: Record<string, boolean | number | string> = {};
  for (const key of PROCESSING_OPTIONS) parameters[key] = options[key] && !(key in unavailable);
  const raw = radius.trim();
  if (parameters.clip_point_cloud && raw) parameters.clipping_radius = Number.isFinite(Number(raw)) ? Number(raw) : raw;
  return parameters;
}
