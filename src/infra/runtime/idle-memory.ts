// Gives memory back to the system when the process goes idle.
//
// Why (bench/README.md, "Memory"): nothing is collected while nothing is allocated, so an idle
// process keeps whatever its last burst of work left: the start-up's garbage (migrations, module
// loading, on PGlite its SQL parser's compilation), or a grown young generation. So, once the
// start-up is over and then once after each period of work (a check period with the event loop at
// least WORK_UTILIZATION busy) followed by 30 s of idle ones, or when the young generation has grown
// while the loop looked idle, this asks V8 for a memory-reducing collection ("last resort": it
// compacts the old generation and shrinks the young one to its initial size). Idle `serve`:
// PostgreSQL 144 → 129 MB, PGlite 225–249 → 211–217 MB. A busy process is never interrupted; the
// collection takes 0.1–0.2 s of an idle one.
//
// npm start's 16 MB semi-space (for the API's CPU per request) relies on this: a young generation
// grown under load is shrunk here once the load is over. (Its price under uploads, full collections
// of piled-up stream buffers, is paid by streamed-garbage.ts.)
//
// The price, found in session 12 and paid by a flag: after such a collection V8 sized the old
// generation's allocation limit just above what survived it (~60 MB on PGlite), and under the next
// uploads it ran a full mark-compact every ~130 ms (15 a second against 1-2 before it): 100 x 4 MiB
// PutObjects fell from ~0.95x to ~0.70x the verifying sink, for the rest of the process's life.
// `--initial-old-space-size=72` (npm start, worker, storage) keeps that limit at 72 MB or more:
// uploads 1.00-1.11x after collections, idle memory unchanged (a limit, not memory).
//
// Needs --expose-gc (npm start, worker, storage pass it); without it (the test suite runs the
// sources through tsx) this does nothing.
import v8 from 'node:v8';
import { performance } from 'node:perf_hooks';

/** How often the event loop's utilisation is looked at. */
export const IDLE_CHECK_MS = 5_000;
/** Below this share of the last check period spent running JavaScript or I/O callbacks, the process is idle. */
export const IDLE_UTILIZATION = 0.1;
/**
 * At or above this share it worked (served requests, ran jobs); between the two it is neither. An
 * idle server's own timers (pg-boss polling, on PGlite a synchronous WebAssembly query each) reach
 * 10–20 %, and must not count as work: they would make it collect every 10 s for nothing.
 */
export const WORK_UTILIZATION = 0.3;
/**
 * Idle check periods in a row before a collection (30 s): a lull between bursts of work is not
 * idleness. A memory-reducing collection also drops compiled code, so the next burst runs
 * unoptimised for a while; in the API benchmark, whose servers take turns with 16–24 s between
 * their loads, collecting after 5 s cost the server ~30 % more CPU per request (540 against 415 µs).
 */
export const IDLE_CHECKS_BEFORE_TRIM = 6;
/** A young generation at most this large is left alone (V8 starts it at 1 MB). */
export const TRIM_ABOVE_BYTES = 4 * 1024 * 1024;

type GcFunction = (options?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async'; flavor?: 'regular' | 'last-resort' }) => void;

export interface IdleMemoryTrimmer {
  /** Collections made so far (for tests and logs). */
  readonly trims: number;
  stop(): void;
}

function measureYoungGeneration(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

export interface TrimOptions {
  onTrim?: (details: { youngBeforeMb: number; youngAfterMb: number; ms: number }) => void;
  /** IDLE_CHECK_MS and IDLE_CHECKS_BEFORE_TRIM unless given (tests). */
  checkMs?: number;
  idleChecks?: number;
  /** V8's collector and young generation unless given (tests: a collection that does not shrink it). */
  gc?: GcFunction;
  youngGenerationBytes?: () => number;
}

export function trimMemoryWhenIdle({
  onTrim,
  checkMs = IDLE_CHECK_MS,
  idleChecks = IDLE_CHECKS_BEFORE_TRIM,
  gc = (globalThis as { gc?: GcFunction }).gc,
  youngGenerationBytes = measureYoungGeneration,
}: TrimOptions = {}): IdleMemoryTrimmer {
  if (!gc) return { trims: 0, stop() {} };
  let trims = 0;
  // What the last collection left of the young generation. V8 does not always shrink it to 1 MB
  // (under load, CI's two test processes on two cores, once to 4-5 MB): growth is measured from
  // there, or an idle process would collect again every check period for a young generation no
  // collection makes smaller (found looking into session 19's CI failure).
  let youngAfterTrim = 0;
  let last = performance.eventLoopUtilization();
  const trim = () => {
    const before = youngGenerationBytes();
    const started = performance.now();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    trims++;
    youngAfterTrim = youngGenerationBytes();
    // The collection's own time is not work: counted in the next check period it could make it look
    // busy (0.1-0.2 s of a 5 s period is not, but of a test's 200 ms period it is, the more so
    // under load, CI) and bring another collection after the next idle stretch, and so on.
    last = performance.eventLoopUtilization();
    onTrim?.({ youngBeforeMb: before / 2 ** 20, youngAfterMb: youngAfterTrim / 2 ** 20, ms: performance.now() - started });
  };
  const youngGrew = () => youngGenerationBytes() > Math.max(TRIM_ABOVE_BYTES, youngAfterTrim);
  // The start-up (migrations, module loading) is the first burst of work: trimmed once it is over.
  setImmediate(trim);
  let worked = false;
  let idleStreak = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    idleStreak = busy < IDLE_UTILIZATION ? idleStreak + 1 : 0;
    if (busy >= WORK_UTILIZATION) worked = true;
    else if (idleStreak >= idleChecks && (worked || youngGrew())) {
      // Once per idle period that follows work (a busy check period), or allocations that grew
      // the young generation while the loop looked idle.
      worked = false;
      trim();
    }
  }, checkMs);
  timer.unref();
  return {
    get trims() {
      return trims;
    },
    stop: () => clearInterval(timer),
  };
}
