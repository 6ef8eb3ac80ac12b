// What every benchmark gets from the runner and gives back.
import type { Row } from './stats.ts';
import type { Child, Memory } from './processes.ts';

export interface BenchOptions {
  rounds: number;
  /** Folder for CPU profiles of the servers under test (--profile), else undefined. */
  profileDir?: string;
  /** Databases to run the server on where a benchmark takes both. */
  databases: ('pglite' | 'postgres')[];
  /** Scale sizes (keys registered / cameras listed). */
  scaleSizes: number[];
  /** API benchmark: seconds per measured run. */
  apiSeconds: number;
  /** Upload benchmark: number of PutObjects per run and their size. */
  uploadCount: number;
  uploadMiB: number;
  /** Multipart upload size, MiB (0: skip). */
  multipartMiB: number;
}

export interface MemoryRecord {
  benchmark: string;
  process: string;
  /** When: 'idle' (after start-up and setup, before the benchmark), 'end', ... */
  when: string;
  rssMb: number;
  hwmMb: number;
  /** Largest VmRSS seen by the 100 ms sampler during the benchmark. */
  sampledPeakMb?: number;
}

export interface BenchResult {
  rows: Row[];
  memory: MemoryRecord[];
  notes: string[];
}

export function memoryRecord(benchmark: string, child: Child, when: string, extra: Partial<Memory> & { sampledPeakMb?: number } = {}): MemoryRecord {
  const m = child.memory();
  return { benchmark, process: child.name, when, rssMb: m.rssMb, hwmMb: m.hwmMb, ...extra };
}

/** Samples VmRSS of a process every `ms` until stopped; returns the largest value, MB. */
export function rssSampler(child: Child, ms = 100): { stop(): number } {
  let peak = 0;
  const tick = () => {
    try {
      peak = Math.max(peak, child.memory().rssMb);
    } catch {
      // process gone
    }
  };
  tick();
  const timer = setInterval(tick, ms);
  return {
    stop() {
      clearInterval(timer);
      tick();
      return peak;
    },
  };
}
