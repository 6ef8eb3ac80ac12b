// Runs one COLMAP command as a child process: its output (stdout and stderr, merged line by line)
// goes to the processing log and, line by line, to a progress parser; an abort signal (a cancel,
// or the engine's time limit) kills it (SIGTERM, then SIGKILL after a grace period). The outcome
// is mapped to the cloud spec's error codes by `colmapFailure`. Where util-linux's setpriv exists
// (Debian: always) COLMAP runs under it with a parent-death signal: a worker killed with SIGKILL
// runs no exit handler, and its COLMAP went on computing for nobody beside the worker that took the
// job over (test/distributed.test.ts checks it is gone).
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import { EngineError } from '../engine.ts';

export interface ColmapRun {
  binary: string;
  /** The COLMAP command and its options, e.g. ['feature_extractor', '--database_path', ...]. */
  args: string[];
  cwd: string;
  /** Where glog writes its INFO/WARNING files (an existing folder). */
  glogDir: string;
  /** Every line of output is written here (the processing log). */
  log: Writable;
  onLine?: (line: string) => void;
  signal: AbortSignal;
}

export interface ColmapOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when we killed it (abort signal). */
  aborted: boolean;
  /** The last lines of output, for error messages. */
  tail: string[];
  /** Whether the output mentioned a memory allocation failure. */
  outOfMemory: boolean;
}

const KILL_GRACE_MS = 5000;
const SETPRIV = '/usr/bin/setpriv';
const PARENT_DEATH_SIGNAL = fs.existsSync(SETPRIV);
/** setpriv's words when it cannot execute the command (exit status 127). */
const SETPRIV_EXEC_FAILED = /^setpriv: failed to execute .*?: (.+)$/;

const TAIL_LINES = 30;
const MEMORY_PATTERN = /bad_alloc|cannot allocate memory|out of memory/i;

function notInstalled(binary: string): EngineError {
  return new EngineError(10001, `COLMAP is not installed (${binary} not found; Debian package colmap). An administrator must install it or choose another ENGINE.`);
}

/**
 * The environment COLMAP runs in: no display (CPU build, headless Qt); glog's files in `glogDir`;
 * OpenMP's idle threads sleep instead of spinning (OMP_WAIT_POLICY=PASSIVE, unless set): with the
 * cores shared, spinning threads starve the working ones (poisson_mesher on 40k points with 2
 * threads on 2 busy cores: 85 s spinning, 6.5 s passive, 4 s with 1 thread).
 */
export function colmapEnv(glogDir: string): NodeJS.ProcessEnv {
  return { ...process.env, QT_QPA_PLATFORM: 'offscreen', GLOG_log_dir: glogDir, GOOGLE_LOG_DIR: glogDir, OMP_WAIT_POLICY: process.env.OMP_WAIT_POLICY ?? 'PASSIVE' };
}

export function runColmap(run: ColmapRun): Promise<ColmapOutcome> {
  return new Promise((resolve, reject) => {
    if (run.signal.aborted) {
      resolve({ code: null, signal: null, aborted: true, tail: [], outOfMemory: false });
      return;
    }
    run.log.write(`\n$ ${[run.binary, ...run.args].map(shellQuote).join(' ')}\n`);
    // Its own process group, so that a kill reaches whatever it started too.
    // Under setpriv: COLMAP gets SIGKILL when this process dies (PR_SET_PDEATHSIG survives the exec).
    const [file, args] = PARENT_DEATH_SIGNAL ? [SETPRIV, ['--pdeathsig', 'KILL', '--', run.binary, ...run.args]] : [run.binary, run.args];
    const child = spawn(file, args, { cwd: run.cwd, env: colmapEnv(run.glogDir), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let failed = false;
    if (child.pid) running.add(child.pid);
    const tail: string[] = [];
    let outOfMemory = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const partial = { stdout: '', stderr: '' };
    const onText = (stream: 'stdout' | 'stderr', chunk: Buffer) => {
      run.log.write(chunk);
      // COLMAP rewrites progress lines with \r on some commands: treat \r as a line end too.
      const text = partial[stream] + chunk.toString('utf8');
      const lines = text.split(/\r\n|\n|\r/);
      partial[stream] = lines.pop() ?? '';
      for (const line of lines) handleLine(line);
    };
    const handleLine = (line: string) => {
      if (!line.trim()) return;
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
      if (MEMORY_PATTERN.test(line)) outOfMemory = true;
      try {
        run.onLine?.(line);
      } catch {
        // a parser's bug must not stop the run
      }
    };
    child.stdout.on('data', (c: Buffer) => onText('stdout', c));
    child.stderr.on('data', (c: Buffer) => onText('stderr', c));
    const onAbort = () => {
      aborted = true;
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS);
    };
    run.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err: NodeJS.ErrnoException) => {
      failed = true;
      run.signal.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      run.log.write(`cannot start ${run.binary}: ${err.message}\n`);
      if (err.code === 'ENOENT') reject(notInstalled(run.binary));
      else reject(new EngineError(10001, `COLMAP could not be started: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      if (child.pid) running.delete(child.pid);
      if (failed) return;
      run.signal.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      for (const stream of ['stdout', 'stderr'] as const) if (partial[stream]) handleLine(partial[stream]);
      run.log.write(`[exit ${signal ? `by signal ${signal}` : `code ${code}`}]\n`);
      // setpriv could not start COLMAP: the same errors as spawning it directly.
      const execFailed = PARENT_DEATH_SIGNAL && code === 127 ? tail.map((line) => SETPRIV_EXEC_FAILED.exec(line.trim())).find(Boolean) : undefined;
      if (execFailed) {
        run.log.write(`cannot start ${run.binary}: ${execFailed[1]}\n`);
        reject(/No such file or directory/.test(execFailed[1]) ? notInstalled(run.binary) : new EngineError(10001, `COLMAP could not be started: ${execFailed[1]}`));
        return;
      }
      resolve({ code, signal, aborted, tail, outOfMemory });
    });
  });
}

/** COLMAP's version line (`COLMAP 3.8 (Commit ... without CUDA)`), or null; 10001 when it is not installed. */
export function colmapVersion(binary: string, glogDir: string, signal?: AbortSignal): Promise<string | null> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['-h'], { env: colmapEnv(glogDir), timeout: 30_000, signal }, (err, stdout) => {
      if (signal?.aborted) return reject(signal.reason);
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(notInstalled(binary));
        return;
      }
      const line = String(stdout ?? '').split('\n').find((l) => /^COLMAP \d/.test(l.trim()));
      const detail = String(stdout ?? '').split('\n').find((l) => /Commit|CUDA/.test(l));
      resolve(line ? [line.trim().replace(/ --.*$/, ''), detail?.trim().replace(/^\(|\)$/g, '')].filter(Boolean).join(' ') : null);
    });
  });
}

/** Process groups of the COLMAP commands running now: killed if this process exits first. */
const running = new Set<number>();
process.once('exit', () => {
  for (const pid of running) killGroup(pid, 'SIGKILL');
});

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * The EngineError of a failed COLMAP step (not an abort):
 * - killed by SIGKILL (the kernel's out-of-memory killer), exit status 137, or a memory allocation
 *   failure in the output -> 10003 (exceeded available resources);
 * - killed by another signal (SIGSEGV, SIGABRT: a crash) -> 10001 (unexpected error);
 * - any other non-zero exit -> 10410 (processing failed), with COLMAP's last error line.
 */
export function colmapFailure(step: string, outcome: ColmapOutcome): EngineError {
  const lastError = [...outcome.tail].reverse().find((l) => /error|failed|check failed|exception/i.test(l)) ?? outcome.tail.at(-1) ?? '';
  const detail = lastError ? `: ${lastError.trim().slice(0, 300)}` : '';
  if (outcome.outOfMemory || outcome.signal === 'SIGKILL' || outcome.code === 137) {
    return new EngineError(10003, `Processing exceeded the available memory during ${step} (COLMAP was ${outcome.signal === 'SIGKILL' || outcome.code === 137 ? 'killed' : 'out of memory'}). Use fewer or smaller images, or a machine with more memory.`);
  }
  if (outcome.signal) return new EngineError(10001, `COLMAP crashed during ${step} (signal ${outcome.signal})${detail}. See the processing log.`);
  return new EngineError(10410, `Processing failed during ${step}: COLMAP exited with code ${outcome.code}${detail}. See the processing log.`);
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
