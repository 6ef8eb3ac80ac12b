// Runs the test files with Node's test runner: `npm test` (everything), `npm run test:quick` (the
// quick set for working sessions) and CI's two passes (.ci/run). Which file runs in which pass is
// decided in one place, test/test-passes.ts:
// - without DATABASE_URL (the embedded PGlite): every file;
// - with DATABASE_URL (PostgreSQL): the files whose outcome can depend on the database kind; the
//   others ran in the PGlite pass (TEST_ALL=1 runs them here too);
// - --split, in both of CI's passes: a few once-run files move from the PGlite pass to the
//   PostgreSQL one, so that the two, run side by side, end together;
// - --quick: the unit tests that open no database (but the slow ones) and the API surface.
// Explicit file arguments run just those files. The type check (`npm run typecheck`) runs first
// unless --no-typecheck (CI runs it once, then both passes side by side). Each run ends with its
// slowest files (test/helpers/slowest-files-reporter.ts) and its wall time.
// Files start slowest first (by test/test-timings.json, a CI run's seconds per file; files it does
// not name after them, alphabetically): with two at a time, a long file started last would run
// alone at the end while the other slot idles.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { run } from 'node:test';
import * as reporters from 'node:test/reporters';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_SURFACE, HEAVY, NO_DATABASE, ONCE_IN_POSTGRES_PASS, RUN_ONCE } from '../test/test-passes.ts';
import { slowestFirst } from '../test/helpers/test-order.ts';
import slowestFiles from '../test/helpers/slowest-files-reporter.ts';
import { WASM_TEST_FLAGS } from '../test/helpers/server-process.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const named = args.filter((a) => !a.startsWith('--'));

const all = fs.readdirSync(path.join(ROOT, 'test')).filter((f) => f.endsWith('.test.ts')).sort();
for (const listed of [...Object.keys(RUN_ONCE), ...Object.keys(HEAVY), ...API_SURFACE, ...ONCE_IN_POSTGRES_PASS]) {
  // A stale name would silently run a file twice or keep a heavy one in the quick set.
  if (!all.includes(listed)) throw new Error(`test/test-passes.ts names ${listed}, which is not a file in test/`);
}
// A file the PGlite pass leaves to the PostgreSQL pass must be one whose outcome cannot depend on the database kind.
for (const moved of ONCE_IN_POSTGRES_PASS) {
  if (!(moved in RUN_ONCE)) throw new Error(`test/test-passes.ts: ${moved} is in ONCE_IN_POSTGRES_PASS but not in RUN_ONCE`);
}

const onPostgres = Boolean(process.env.DATABASE_URL);
// --split (CI, both passes side by side): ONCE_IN_POSTGRES_PASS runs in the PostgreSQL pass, not the PGlite one.
const split = args.includes('--split');
let files = named.length ? named.map((f) => path.basename(f)) : all;
if (!named.length && onPostgres && process.env.TEST_ALL !== '1') {
  const once = files.filter((f) => f in RUN_ONCE && !(split && ONCE_IN_POSTGRES_PASS.includes(f)));
  files = files.filter((f) => !once.includes(f));
  console.log(`# PostgreSQL pass: ${files.length} files whose outcome can depend on the database${split ? ` or that --split moves here (${ONCE_IN_POSTGRES_PASS.length})` : ''}; ${once.length} files run once, in the PGlite pass (test/test-passes.ts says why; TEST_ALL=1 runs them here too)`);
} else if (!named.length && !onPostgres && split) {
  files = files.filter((f) => !ONCE_IN_POSTGRES_PASS.includes(f));
  console.log(`# PGlite pass, --split: ${files.length} files; the PostgreSQL pass runs ${ONCE_IN_POSTGRES_PASS.length} once-run files (test/test-passes.ts)`);
}
if (!named.length && quick) {
  files = files.filter((f) => (f in NO_DATABASE && !(f in HEAVY)) || API_SURFACE.includes(f));
  console.log(`# quick: ${files.length} files (the unit tests and the API surface of test/test-passes.ts; npm test runs all ${all.length})`);
}

if (!args.includes('--no-typecheck')) {
  const typecheck = spawnSync('npm', ['run', '-s', 'typecheck'], { cwd: ROOT, stdio: 'inherit' });
  if (typecheck.status !== 0) {
    console.log('# the type check failed: no test ran');
    process.exit(1);
  }
}

files = slowestFirst(files, onPostgres ? 'postgres' : 'pglite');

// Two files at a time on CI's two cores; TEST_CONCURRENCY to change it. node:test's run() (not
// `node --test`, which sorts the files by name) keeps the order above.
const concurrency = Number(process.env.TEST_CONCURRENCY ?? 2);
const started = Date.now();
// Each file's CPU seconds (test/helpers/cpu-seconds-hook.ts), read by the slowest-files reporter.
process.env.TEST_CPU_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'oi-test-cpu-'));
const abort = new AbortController();
process.on('SIGINT', () => abort.abort());
process.on('SIGTERM', () => abort.abort());
const stream = run({
  files: files.map((f) => path.join(ROOT, 'test', f)),
  concurrency,
  cwd: ROOT,
  // README, Tests: Node 24's V8 can abort a process that frees WebAssembly code.
  // WASM_TEST_FLAGS (test/helpers/server-process.ts): Liftoff only, short processes.
  execArgv: ['--no-wasm-code-gc', ...WASM_TEST_FLAGS, '--import', 'tsx', '--import', path.join(ROOT, 'test', 'helpers', 'cpu-seconds-hook.ts')],
  signal: abort.signal,
});
// Each event to both reporters: the spec one (every test) and the slowest files at the end.
const [toSpec, toSlowest] = [new PassThrough({ objectMode: true }), new PassThrough({ objectMode: true })];
let failed = false;
stream.on('data', (event: { type: string; data: { details?: { type?: string } } }) => {
  if (event.type === 'test:fail') failed = true;
  toSpec.write(event);
  toSlowest.write(event);
});
stream.on('end', () => {
  toSpec.end();
  toSlowest.end();
});
await Promise.all([pipeline(toSpec, new reporters.spec(), process.stdout, { end: false }), pipeline(toSlowest, slowestFiles, process.stdout, { end: false })]);
fs.rmSync(process.env.TEST_CPU_DIR, { recursive: true, force: true });
const minutes = (Date.now() - started) / 60_000;
console.log(`# ${files.length} test files in ${minutes.toFixed(1)} min (${onPostgres ? 'PostgreSQL' : 'PGlite'}${quick ? ', quick' : ''})`);
process.exitCode = failed || abort.signal.aborted ? 1 : 0;
