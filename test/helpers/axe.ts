/// <reference lib="dom" />
// axe-core in a playwright page (issue 29 §5): its source is evaluated in the page (no axe-playwright
// package: one dev dependency, pinned; evaluated, not a <script>, which the console's CSP refuses) and run on the whole document. Answers the violations grouped
// by impact, each with the rule, its help text and where (CSS selectors), so a test can assert "0
// serious or critical" and print the rest.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export type AxeImpact = 'minor' | 'moderate' | 'serious' | 'critical';

export interface AxeViolation {
  id: string;
  impact: AxeImpact;
  help: string;
  /** The first few elements' selectors. */
  where: string[];
}

export type AxeReport = Record<AxeImpact, AxeViolation[]>;

/** Runs axe-core on the page as it is now (WCAG 2.x A and AA rules and best practices). */
export async function axeViolations(page: Page): Promise<AxeReport> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const results = await axe.run(document, { resultTypes: ['violations'] });
    return results.violations.map((v) => ({ id: v.id, impact: v.impact ?? 'minor', help: v.help, where: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  const report: AxeReport = { minor: [], moderate: [], serious: [], critical: [] };
  for (const violation of found) report[violation.impact as AxeImpact].push(violation as AxeViolation);
  return report;
}

/** "serious 0, critical 0, moderate 1 (region), minor 0": one line for a test's log. */
export function axeSummary(report: AxeReport): string {
  return (['critical', 'serious', 'moderate', 'minor'] as const)
    .map((impact) => `${impact} ${report[impact].length}${report[impact].length ? ` (${report[impact].map((v) => v.id).join(', ')})` : ''}`)
    .join(', ');
}

/** The serious and critical violations, written out for an assertion message. */
export function axeBlocking(report: AxeReport): AxeViolation[] {
  return [...report.critical, ...report.serious];
}
