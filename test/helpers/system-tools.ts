// Tests that need a system tool skip with the reason when it is absent, and fail under CI=true.
import { spawnSync } from 'node:child_process';
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

/** In a test: false (and the test skipped) unless /usr/bin/python3 can import boto3 (Debian package python3-boto3). */
export function requireBoto3(t: TestContext): boolean {
  if (!requireTool(t, '/usr/bin/python3', 'python3')) return false;
  if (spawnSync('/usr/bin/python3', ['-c', 'import boto3']).status === 0) return true;
  const reason = 'boto3 is not importable by /usr/bin/python3 (Debian package python3-boto3)';
  if (process.env.CI === 'true') throw new Error(`${reason}; CI must install it`);
  console.log(`# skipped: ${reason}`);
  t.skip(reason);
  return false;
}
