// Tests that need a system tool skip with the reason when it is absent, and fail under CI=true.
import fs from 'node:fs';
import type { TestContext } from 'node:test';

/** Why a test needing `toolPath` cannot run here (printed), or undefined when it can; throws under CI=true. */
export function toolMissingReason(toolPath: string, debianPackage: string): string | undefined {
  if (fs.existsSync(toolPath)) return undefined;
  const reason = `${toolPath} is not installed (Debian package ${debianPackage})`;
  if (process.env.CI === 'true') throw new Error(`${reason}; CI must install it`);
  console.log(`# skipped: ${reason}`);
  return reason;
}

/** In a test: false (and the test skipped) when `toolPath` is absent. */
export function requireTool(t: TestContext, toolPath: string, debianPackage: string): boolean {
  const reason = toolMissingReason(toolPath, debianPackage);
  if (reason) t.skip(reason);
  return reason === undefined;
}
