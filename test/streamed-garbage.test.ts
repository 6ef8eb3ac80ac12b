// Streamed buffers are freed by young collections as they pass (infra/runtime/streamed-garbage.ts),
// in a child process with npm start's 16 MB semi-space: one young collection per 4 MiB stored in
// the disk object store with --expose-gc, none asked for without it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { BYTES_PER_COLLECTION } from '../src/infra/runtime/streamed-garbage.ts';

const CHILD = path.join(import.meta.dirname, 'fixtures/scripts/streamed-garbage-child.ts');
const BODY_MIB = 64;

function run(flags: string[]): { gc: boolean; size: number; asked: number; minor: number; major: number } {
  const out = execFileSync(process.execPath, [...flags, '--import', 'tsx', CHILD], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, BODY_MIB: String(BODY_MIB) } });
  return JSON.parse(out.trim().split('\n').pop()!);
}

describe('streamed garbage', () => {
  it('a young collection per 4 MiB stored', () => {
    const seen = run(['--max-semi-space-size=16', '--expose-gc']);
    const expected = (BODY_MIB * 2 ** 20) / BYTES_PER_COLLECTION;
    console.log(`# ${BODY_MIB} MiB stored with --expose-gc: ${seen.minor} young and ${seen.major} full collections`);
    assert.equal(seen.size, BODY_MIB * 2 ** 20);
    assert.equal(seen.asked, expected);
    assert.ok(seen.minor >= expected, `${seen.minor} young collections seen, ${expected} asked for`);
  });

  it('asks for nothing without --expose-gc', () => {
    const seen = run(['--max-semi-space-size=16']);
    console.log(`# ${BODY_MIB} MiB stored without --expose-gc: ${seen.minor} young and ${seen.major} full collections`);
    assert.equal(seen.gc, false);
    assert.equal(seen.size, BODY_MIB * 2 ** 20);
    assert.equal(seen.asked, 0);
  });
});
