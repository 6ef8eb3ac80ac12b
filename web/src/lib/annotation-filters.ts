// The inspection-wide annotation list's logic (issue 29 §4): which annotations a filter keeps, the
// count per severity beside the filter, the types to choose from, and the list's order. The
// filter lives in the address (?tab=annotations&type=crack&severity=4,5) so a filtered list can be
// sent to a colleague or reopened with Back; parse and format are here. Framework-free, unit-tested.
import { SEVERITY_LEVELS_BY_URGENCY } from './severity.ts';

/** What the list needs of an annotation (the API's record has more). */
export interface ListedAnnotation {
  id: number;
  number: number;
  type: string;
  severity_level: number;
  photo_id: number;
  name?: string | null;
}

export interface AnnotationFilter {
  /** An exact type, compared without case ("Crack" = "crack"); '' keeps every type. */
  type: string;
  /** The levels kept; empty keeps every level. */
  severities: number[];
}

export const NO_FILTER: AnnotationFilter = { type: '', severities: [] };

const sameType = (a: string, b: string) => a.trim().toLocaleLowerCase() === b.trim().toLocaleLowerCase();

export function filterAnnotations<T extends ListedAnnotation>(annotations: readonly T[], filter: AnnotationFilter): T[] {
  return annotations.filter((a) => (!filter.type || sameType(a.type, filter.type)) && (filter.severities.length === 0 || filter.severities.includes(a.severity_level)));
}

/**
 * How many annotations of each level, among those of the chosen type (the severity filter does not
 * change its own counts: they say what ticking a level would show). Every level 0..5 is present,
 * also at 0, so the counts line never shifts.
 */
export function countBySeverity(annotations: readonly ListedAnnotation[], type = ''): Map<number, number> {
  const counts = new Map<number, number>(SEVERITY_LEVELS_BY_URGENCY.map((level) => [level, 0]));
  for (const a of annotations) if (!type || sameType(a.type, type)) counts.set(a.severity_level, (counts.get(a.severity_level) ?? 0) + 1);
  return counts;
}

/** The types present, each once (the first spelling met), with their counts, most frequent first. */
export function typesPresent(annotations: readonly ListedAnnotation[]): { type: string; count: number }[] {
  const byKey = new Map<string, { type: string; count: number }>();
  for (const a of annotations) {
    const key = a.type.trim().toLocaleLowerCase();
    const entry = byKey.get(key) ?? { type: a.type.trim(), count: 0 };
    entry.count++;
    byKey.set(key, entry);
  }
  return [...byKey.values()].sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
}

/** Most severe first, then by number (the order they were made in): what to look at first leads. */
export function sortForReview<T extends ListedAnnotation>(annotations: readonly T[]): T[] {
  return [...annotations].sort((a, b) => b.severity_level - a.severity_level || a.number - b.number);
}

/** The filter from the address's `type` and `severity` ("4,5"); anything unreadable is ignored. */
export function parseFilter(query: { type?: string; severity?: string }): AnnotationFilter {
  const severities = (query.severity ?? '')
    .split(',')
    .filter((s) => /^[0-5]$/.test(s))
    .map(Number);
  return { type: (query.type ?? '').trim().slice(0, 255), severities: [...new Set(severities)].sort((a, b) => b - a) };
}

/** The address's parameters for a filter (none for no filter). */
export function filterParams(filter: AnnotationFilter): { type?: string; severity?: string } {
  return {
    type: filter.type || undefined,
    severity: filter.severities.length ? [...filter.severities].sort((a, b) => b - a).join(',') : undefined,
  };
}
