// Child processes of the benchmarks: the server under test (`dist/main.js serve` as `npm start` runs
// it, or the bench host for the benchmarks that need untimed in-process setup), and the anchors. Every one is its own
// process, so its memory can be read from /proc and the load generator never shares its event loop.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Memory {
  /** Resident set size now, MB. */
  rssMb: number;
  /** Peak resident set size since start (or since resetPeak), MB. */
  hwmMb: number;
}

/** VmRSS and VmHWM of a process, from /proc/<pid>/status (Linux). */
export function readMemory(pid: number): Memory {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: round1(kb('VmRSS') / 1024), hwmMb: round1(kb('VmHWM') / 1024) };
}

/** Resets VmHWM to the current RSS ("5" > clear_refs, Linux >= 4.0). Returns false when refused. */
export function resetPeak(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

export interface Child {
  name: string;
  child: ChildProcess;
  pid: number;
  output(): string;
  memory(): Memory;
  /** SIGTERM (a clean exit writes the --cpu-prof profile), SIGKILL after a grace period. */
  stop(): Promise<void>;
  /** IPC request/response (bench host only). */
  call<T = unknown>(message: Record<string, unknown>): Promise<T>;
  /**
   * Runs a measured part and remembers when (CLOCK_MONOTONIC, like V8's profile timestamps), so
   * that the CPU profile summary counts these windows only, not start-up and setup.
   */
  measured<T>(fn: () => Promise<T>): Promise<T>;
}

function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

// Children still running when the runner exits (an error, Ctrl-C) are killed with it.
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of running) child.kill('SIGKILL');
    process.exit(130);
  });
}

export interface SpawnOptions {
  name: string;
  /** Script and arguments after `node --import tsx` (or after `node` with `loader: false`). */
  args: string[];
  /** false: plain node, for compiled JavaScript (dist/). Default: the tsx loader. */
  loader?: boolean;
  env?: Record<string, string | undefined>;
  /** Resolves once this returns a value for the output so far. */
  ready: (output: string) => boolean;
  /** Folder for a V8 CPU profile (node --cpu-prof) of this process. */
  cpuProfDir?: string;
  ipc?: boolean;
  timeoutMs?: number;
}

export async function spawnNode(options: SpawnOptions): Promise<Child> {
  const nodeArgs = options.loader === false ? [] : ['--import', 'tsx'];
  let profileDir: string | undefined;
  if (options.cpuProfDir) {
    // One folder per process: tsx's module loader thread writes a (small) profile of its own.
    const dir = path.join(options.cpuProfDir, options.name);
    profileDir = dir;
    fs.mkdirSync(dir, { recursive: true });
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
  }
  const child = spawn(process.execPath, [...nodeArgs, ...options.args], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  running.add(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  void exited.then(() => running.delete(child));
  let nextId = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (message: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    const p = pending.get(message.id);
    if (!p) return;
    pending.delete(message.id);
    if (message.ok) p.resolve(message.result);
    else p.reject(new Error(`${options.name}: ${message.error}`));
  });
  void exited.then((code) => {
    for (const p of pending.values()) p.reject(new Error(`${options.name} exited with ${code}:\n${output.slice(-4000)}`));
    pending.clear();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.name} did not start in time:\n${output}`)), options.timeoutMs ?? 90_000);
    const check = () => {
      if (options.ready(output)) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited with ${code} before it was ready:\n${output}`));
    });
  });
  const windows: [number, number][] = [];
  return {
    name: options.name,
    child,
    async measured(fn) {
      const start = monotonicUs();
      try {
        return await fn();
      } finally {
        windows.push([start, monotonicUs()]);
        if (profileDir) fs.writeFileSync(path.join(profileDir, 'windows.json'), JSON.stringify(windows));
      }
    },
    pid: child.pid!,
    output: () => output,
    memory: () => readMemory(child.pid!),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
    call<T>(message: Record<string, unknown>): Promise<T> {
      const id = ++nextId;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ ...message, id });
      });
    },
  };
}

export interface ServerUrls {
  inspection: string;
  cloud: string;
  storage: string;
}

export interface Server extends Child {
  urls: ServerUrls;
  dataDir: string;
  /** The server's PostgreSQL database (postgres runs), for anchors that read the same rows. */
  databaseUrl?: string;
  /** Stops the process, removes its data folder and its PostgreSQL database. */
  dispose(): Promise<void>;
}

function parseUrls(output: string): ServerUrls | undefined {
  const url = (label: string) => new RegExp(`${label}:\\s+(http://\\S+?)(/v1/|/project/| |$)`, 'm').exec(output)?.[1];
  const inspection = url('Inspection service');
  const cloud = url('Cloud service');
  const storage = /S3 endpoint:\s+(http:\/\/\S+)/.exec(output)?.[1];
  return inspection && cloud && storage ? { inspection, cloud, storage } : undefined;
}

export type DatabaseKind = 'pglite' | 'postgres';

export interface ServerOptions {
  name: string;
  database: DatabaseKind;
  /**
   * 'compiled' (the default): `npm start`'s command on plain node (npmStartCommand; build dist/
   * first: run.ts does); 'main': `src/main.ts serve` through tsx; 'host': bench/host.ts (the same
   * startSystem through tsx, plus IPC for untimed setup).
   */
  entry?: 'main' | 'compiled' | 'host';
  env?: Record<string, string>;
  cpuProfDir?: string;
}

/**
 * The command of `npm start` (package.json): its environment assignments (e.g. glibc's
 * MALLOC_MMAP_THRESHOLD_), then node's options and the script, e.g. `--max-semi-space-size=16
 * dist/main.js serve`. The 'compiled' server under test runs exactly what a deployment runs.
 */
export function npmStartCommand(): { env: Record<string, string>; args: string[] } {
  const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const words = scripts.start.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
    const [name, ...value] = words.shift()!.split('=');
    env[name] = value.join('=');
  }
  if (words[0] !== 'node' || !words.includes('dist/main.js')) throw new Error(`package.json's start script is not "[VAR=value ...] node [options] dist/main.js ...": ${scripts.start}`);
  return { env, args: words.slice(1) };
}

/** PostgreSQL server for the postgres runs (trust auth on loopback, as the tests use). */
export const POSTGRES_BASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_${crypto.randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_BASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_BASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: POSTGRES_BASE_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** Starts the server under test on its own data folder, ports 0, LOG_LEVEL=warn. */
export async function startServer(options: ServerOptions): Promise<Server> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `oi-bench-${options.name}-`));
  const database = options.database === 'postgres' ? await createPostgresDatabase() : undefined;
  const entry = options.entry ?? 'compiled';
  const npmStart = npmStartCommand();
  try {
    const child = await spawnNode({
      name: options.name,
      args: entry === 'main' ? ['src/main.ts', 'serve'] : entry === 'compiled' ? npmStart.args : ['bench/host.ts'],
      loader: entry !== 'compiled',
      ipc: entry === 'host',
      cpuProfDir: options.cpuProfDir,
      env: {
        DATA_DIR: dataDir,
        DATABASE_URL: database?.url ?? '',
        INSPECTION_PORT: '0',
        CLOUD_PORT: '0',
        STORAGE_PORT: '0',
        // Request logging (info) would pipe two lines per request into this process, which also
        // runs the load generator; both sides of every ratio run without per-request logs.
        LOG_LEVEL: 'warn',
        BOOTSTRAP_DEMO: 'true',
        ...(entry === 'compiled' ? npmStart.env : {}),
        ...options.env,
      },
      ready: (output) => parseUrls(output) !== undefined,
    });
    return {
      ...child,
      urls: parseUrls(child.output())!,
      dataDir,
      databaseUrl: database?.url,
      async dispose() {
        await child.stop();
        await database?.drop().catch(() => undefined);
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await database?.drop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/** Drops the OS page cache's dirty pages so that one side's writes do not slow the next side. */
export async function syncDisks(): Promise<void> {
  await new Promise<void>((resolve) => spawn('sync', { stdio: 'ignore' }).on('exit', () => resolve()));
}
