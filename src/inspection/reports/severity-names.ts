// The PDF report's names for annotation severity_level 0..5: a copy of the console's vocabulary
// (web/src/lib/severity.ts, which says why 0 is "Not assessed"). The two builds cannot share a
// module; test/web-annotation-list.test.ts fails when the copies differ.

export const SEVERITY_NAMES = ['Not assessed', 'Very low', 'Low', 'Medium', 'High', 'Critical'] as const;

/** "High", or "Level 7" for a value outside 0..5. */
export function severityName(level: number): string {
  return SEVERITY_NAMES[level] ?? `Level ${level}`;
}
