// The order scripts/run-tests.ts starts test files in: slowest first, by the seconds each file
// took in a CI run (test/test-timings.json, one table per pass; refresh it from the files .ci/run
// writes, .ci/timings-pglite.json and .ci/timings-postgres.json, when the order drifts; a file missing
// from one pass's table takes its seconds from the other's), then the files it does not name,
// alphabetically. Only the order changes, never which files run: a stale
// table costs minutes, not coverage.
import fs from 'node:fs';
import path from 'node:path';

export type Pass = 'pglite' | 'postgres';

const TIMINGS = path.join(import.meta.dirname, '..', 'test-timings.json');

export function slowestFirst(files: readonly string[], pass: Pass, timings: Partial<Record<Pass, Record<string, number>>> = readTimings()): string[] {
  // A file the table has only for the other pass (moved there by --split, or new to this pass) is
  // placed by those seconds: a long file placed last would run alone at the end.
  const seconds = timings[pass] ?? {};
  const other = timings[pass === 'pglite' ? 'postgres' : 'pglite'] ?? {};
  const of = (file: string) => seconds[`test/${path.basename(file)}`] ?? other[`test/${path.basename(file)}`] ?? -1;
  return [...files].sort((a, b) => of(b) - of(a) || a.localeCompare(b));
}

function readTimings(): Partial<Record<Pass, Record<string, number>>> {
  try {
    return JSON.parse(fs.readFileSync(TIMINGS, 'utf8'));
  } catch {
    return {};
  }
}
