// Gives memory back to the system when the process is idle.
//
// Why (bench/README.md, "Memory" and "API"): V8's young generation ("new space") grows under load
// up to twice --max-semi-space-size and is never shrunk by the scavenges of a busy process, nor
// later by an idle one: no collection runs while nothing is allocated. A small semi-space keeps
// idle memory low (2 MB: serve idled at 144 MB on PostgreSQL) but makes a loaded server collect
// garbage several times as often (the API's CPU per request 415 µs against 302 µs with 16 MB, one
// run on the same machine); a large one keeps 32 MB of young generation resident forever (172 MB
// idle). So `npm start` gives V8 the large semi-space and `--expose-gc`, and this module, once the
// start-up is over and then whenever the event loop has been nearly idle for a check period while
// the young generation is large, asks V8 for a memory-reducing collection ("last resort": it
// compacts and shrinks the young generation back to its initial size). A busy process is never
// interrupted; the collection of an idle one takes tens of milliseconds.
//
// Without --expose-gc (the test suite runs the sources through tsx without it) this does nothing.
import v8 from 'node:v8';
import { performance } from 'node:perf_hooks';

/** How often the event loop's utilisation is looked at. */
export const IDLE_CHECK_MS = 5_000;
/** Below this share of the last check period spent running JavaScript or I/O callbacks, the process is idle. */
export const IDLE_UTILIZATION = 0.1;
/** A young generation at most this large is left alone (V8 starts it at 1 MB). */
export const TRIM_ABOVE_BYTES = 4 * 1024 * 1024;

type GcFunction = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async'; flavor?: 'regular' | 'last-resort' }) => void;

export interface IdleMemoryTrimmer {
  /** Collections made so far (for tests and logs). */
  readonly trims: number;
  stop(): void;
}

function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

export interface TrimOptions {
  onTrim?: (details: { youngBeforeMb: number; youngAfterMb: number; ms: number }) => void;
  /** IDLE_CHECK_MS unless given (tests). */
  checkMs?: number;
}

export function trimMemoryWhenIdle({ onTrim, checkMs = IDLE_CHECK_MS }: TrimOptions = {}): IdleMemoryTrimmer {
  const gc = (globalThis as { gc?: GcFunction }).gc;
  let trims = 0;
  const trim = () => {
    const before = youngGenerationBytes();
    if (!gc || before <= TRIM_ABOVE_BYTES) return;
    const started = performance.now();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    trims++;
    onTrim?.({ youngBeforeMb: before / 2 ** 20, youngAfterMb: youngGenerationBytes() / 2 ** 20, ms: performance.now() - started });
  };
  if (!gc) return { trims: 0, stop() {} };
  // The start-up (migrations, module loading) is the first allocation burst: trimmed at once.
  setImmediate(trim);
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (busy < IDLE_UTILIZATION) trim();
  }, checkMs);
  timer.unref();
  return {
    get trims() {
      return trims;
    },
    stop: () => clearInterval(timer),
  };
}
