// Runs `src/main.ts serve` as a real child process (what `npm start` runs), for tests that need a
// second process or a hard kill.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DemoCredentials } from '../../src/admin/bootstrap.ts';
import { InspectionClient } from '../../src/sdk/inspection-client.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServerProcess {
  child: ChildProcess;
  urls: { inspection: string; cloud: string; storage: string };
  output(): string;
  exited: Promise<number | null>;
}

/**
 * Starts the server (or, with command 'worker', workers only; with 'storage', the S3 endpoint
 * alone, its URL in urls.storage); resolves once it is ready, rejects if it exits first.
 * `openFileLimit`: the process's limit of open files (soft and hard, so Node cannot raise it).
 */
/**
 * V8 flags of every test process and of the servers and CLI commands tests start: PGlite's
 * WebAssembly compiled by Liftoff only. By default V8 also compiles its busy functions again with
 * TurboFan on background threads, which a process that opens PGlite for seconds pays without
 * gaining (about 2 s of CPU per opening: a third of an `admin` command's; with it the PGlite pass's
 * API tests took a fifth less CPU). scripts/run-tests.ts passes it to each test file's process.
 */
export const WASM_TEST_FLAGS = ['--liftoff-only'];

/**
 * The default bound on a start (`timeoutMs`): a bound on a hang, not a speed test. A server on a new
 * embedded data folder makes its database from nothing (initdb and every migration, not the tests'
 * template), 19 s alone, and CI runs with four files at a time took over 60 s (process-lifecycle;
 * storage-connection-limits, which passed its own 60 s).
 */
const SERVER_START_TIMEOUT_MS = 180_000;

export function startServerProcess(
  env: Record<string, string | undefined>,
  command: 'serve' | 'worker' | 'storage' = 'serve',
  options: { openFileLimit?: number; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const timeoutMs = options.timeoutMs ?? SERVER_START_TIMEOUT_MS;
  // --liftoff-only: a test's server lives seconds to minutes, too short for V8's optimizing
  // compiles of PGlite's WebAssembly to pay back (README, Tests: WASM_TEST_FLAGS).
  const args = [...WASM_TEST_FLAGS, '--import', 'tsx', 'src/main.ts', command];
  const [file, argv] = options.openFileLimit
    ? ['/bin/sh', ['-c', `ulimit -n ${options.openFileLimit} && exec "$0" "$@"`, process.execPath, ...args]]
    : [process.execPath, args];
  const child = spawn(file, argv, {
    cwd: ROOT,
    // ENGINE: exif unless the test asks otherwise (where COLMAP is installed the default would be colmap: minutes per project).
    // DENSE_MAX_IMAGE_SIZE: the depth maps at 320 px as in the in-process test systems (testConfig):
    // at the default 800 the distributed test's 12 lund photos spent minutes in the depth maps alone.
    env: { ...process.env, INSPECTION_PORT: '0', CLOUD_PORT: '0', STORAGE_PORT: '0', LOG_LEVEL: 'warn', ENGINE: 'exif', DENSE_MAX_IMAGE_SIZE: '320', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${output}`)), timeoutMs);
    const check = () => {
      const url = (label: string) => new RegExp(`${label}:\\s+(http://\\S+?)(/v1/|/project/| |$)`, 'm').exec(output)?.[1];
      const inspection = url('Inspection service');
      const cloud = url('Cloud service');
      const storage = /S3 endpoint(?: \(with STS AssumeRole\))?:\s+(http:\/\/\S+)/.exec(output)?.[1];
      if ((inspection && cloud && storage) || (command === 'worker' && output.includes('Workers running.')) || (command === 'storage' && storage)) {
        clearTimeout(timer);
        resolve({ child, urls: { inspection: inspection ?? '', cloud: cloud ?? '', storage: storage ?? '' }, output: () => output, exited });
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before it was ready:\n${output}`));
    });
  });
}

/** A logged-in client for the demo account that the server's first start wrote to its data folder. */
export async function demoClient(dataDir: string, server: ServerProcess): Promise<InspectionClient> {
  const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'bootstrap-credentials.json'), 'utf8')) as DemoCredentials;
  const client = new InspectionClient({ baseUrl: server.urls.inspection, apiKey: demo.api_key, organizationUuid: demo.organization_uuid });
  await client.login(demo.username, demo.password);
  return client;
}
