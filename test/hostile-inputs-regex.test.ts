// Issue 27, finding 1 and its audit: no regular expression that runs on what a client sends may
// backtrack for a long time on a long input (250,000 digits in an uploaded .SRT froze every API of
// the process for 78 s). Each case of test/helpers/hostile-pattern-cases.ts runs in a worker thread
// of its own with a long adversarial input and must finish well within a generous bound: the
// patterns these inputs were written against took a minute or more on each (the bound stops the
// worker instead of waiting for them), the code now takes milliseconds. Not a speed measurement:
// "does not hang" only.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { HOSTILE_CASES } from './helpers/hostile-pattern-cases.ts';

/** The case's own run, from its worker: generous (the cases take milliseconds, the old patterns minutes). */
const BOUND_MS = 10_000;
/** The worker as a whole (start-up with the TypeScript loader included) is stopped after this. */
const HARD_LIMIT_MS = 30_000;

function runCase(name: string): Promise<{ ms: number; result?: unknown; error?: string }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./helpers/hostile-pattern-cases.ts', import.meta.url), { workerData: { hostileCase: name } });
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`${name}: still running after ${HARD_LIMIT_MS / 1000} s (stopped)`));
    }, HARD_LIMIT_MS);
    worker.once('message', (message: { ms: number; result?: unknown; error?: string }) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(message);
    });
    worker.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

describe('regular expressions on hostile input finish in linear time', () => {
  for (const [name, hostile] of Object.entries(HOSTILE_CASES)) {
    it(`${name}: ${hostile.what}`, async () => {
      const outcome = await runCase(name);
      assert.equal(outcome.error, undefined, outcome.error);
      assert.ok(outcome.ms < BOUND_MS, `${name} took ${Math.round(outcome.ms)} ms`);
      if ('expect' in hostile) assert.deepEqual(outcome.result, hostile.expect);
    });
  }
});
