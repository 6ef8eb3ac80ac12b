// Runs an admin CLI command in the test process (src/admin/admin-cli.ts) and returns the JSON it
// printed last; a command that exits non-zero fails the assertion with its arguments.
import assert from 'node:assert/strict';
import { runAdmin } from '../../src/admin/admin-cli.ts';
import type { testConfig } from './test-system.ts';

export async function adminJson(config: ReturnType<typeof testConfig>, ...argv: string[]): Promise<any> {
  const printed: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => void printed.push(args.join(' '));
  try {
    assert.equal(await runAdmin(config, argv), 0, argv.join(' '));
  } finally {
    console.log = original;
  }
  return JSON.parse(printed.at(-1)!);
}
