// The one severity vocabulary (issue 29 §2): the console's form, badges, lists and filters and the
// PDF report name annotation severity_level 0..5 with these words. The server cannot import the
// console's modules (two builds), so src/inspection/reports/severity-names.ts holds a copy and
// test/web-annotation-list.test.ts fails when the two differ.
//
// 0 is the spec's default (severity_level optional, default 0): an annotation saved without a
// choice. It is named "Not assessed", not "None": a defect left at the default must not read as
// harmless in the counts and the report, and the list's filter finds the ones still to grade.

export const SEVERITY_NAMES = ['Not assessed', 'Very low', 'Low', 'Medium', 'High', 'Critical'] as const;

/** Highest first: the order of the counts and the filter (what needs attention leads). */
export const SEVERITY_LEVELS_BY_URGENCY = [5, 4, 3, 2, 1, 0] as const;

/** "High", or "Level 7" for a value outside 0..5 (never blank). */
export function severityName(level: number): string {
  return SEVERITY_NAMES[level] ?? `Level ${level}`;
}

/** The form's option text: the word, then the number the API stores ("High (4)"). */
export function severityOption(level: number): string {
  return `${severityName(level)} (${level})`;
}
