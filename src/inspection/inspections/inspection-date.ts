// `inspection_date` arrives as ISO 8601 or as the spec's `yyyy-mm-dd hh:mm` (UTC when no zone is given).
import { Type } from 'typebox';
import { Nullable } from '../http/nullable.ts';
import { ValidationError } from '../../infra/http/errors.ts';

export const InspectionDate = Nullable(
  Type.String({ maxLength: 64, pattern: '^\\d{4}-\\d{2}-\\d{2}([ T]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?)?$', description: 'ISO 8601 or `yyyy-mm-dd hh:mm` (UTC)' }),
);

export function normalizeInspectionDate(value: string | null | undefined): string | null {
  if (!value) return null;
  const zoned = /[zZ]|[+-]\d{2}:?\d{2}$/.test(value);
  const date = new Date(value.replace(' ', 'T') + (zoned || !value.includes(':') ? '' : 'Z'));
  if (Number.isNaN(date.getTime())) throw ValidationError.field('inspection_date', `"${value}" is not a valid date.`);
  return date.toISOString();
}
