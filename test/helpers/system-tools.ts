// Tests that need a system tool skip with the reason when it is absent, and fail under CI=true.
import fs from 'node:fs';
import type { TestContext } from 'node:test';

export function requireTool(t: TestContext, toolPath: string, debianPackage: string): boolean {
  if (fs.existsSync(toolPath)) return true;
  const reason = `${toolPath} is not installed (Debian package ${debianPackage})`;
  if (process.env.CI === 'true') throw new Error(`${reason}; CI must install it`);
  t.skip(reason);
  console.log(`# skipped: ${reason}`);
  return false;
}
