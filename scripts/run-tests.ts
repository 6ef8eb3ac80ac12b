// Runs the test files with Node's test runner: `npm test` (everything), `npm run test:quick` (the
// quick set for working sessions) and CI's two passes (.ci/run). Which file runs in which pass is
// decided in one place, test/test-passes.ts:
// - without DATABASE_URL (the embedded PGlite): every file;
// - with DATABASE_URL (PostgreSQL): the files whose outcome can depend on the database kind; the
//   others ran in the PGlite pass (TEST_ALL=1 runs them here too);
// - --quick: the unit tests that open no database (but the slow ones) and the API surface.
// Explicit file arguments run just those files. Each run ends with its slowest files
// (test/helpers/slowest-files-reporter.ts) and its wall time.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_SURFACE, HEAVY, NO_DATABASE, RUN_ONCE } from '../test/test-passes.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const named = args.filter((a) => !a.startsWith('--'));

const all = fs.readdirSync(path.join(ROOT, 'test')).filter((f) => f.endsWith('.test.ts')).sort();
for (const listed of [...Object.keys(RUN_ONCE), ...Object.keys(HEAVY), ...API_SURFACE]) {
  // A stale name would silently run a file twice or keep a heavy one in the quick set.
  if (!all.includes(listed)) throw new Error(`test/test-passes.ts names ${listed}, which is not a file in test/`);
}

const onPostgres = Boolean(process.env.DATABASE_URL);
let files = named.length ? named.map((f) => path.basename(f)) : all;
if (!named.length && onPostgres && process.env.TEST_ALL !== '1') {
  const once = files.filter((f) => f in RUN_ONCE);
  files = files.filter((f) => !(f in RUN_ONCE));
  console.log(`# PostgreSQL pass: ${files.length} files whose outcome can depend on the database; ${once.length} files run once, in the PGlite pass (test/test-passes.ts says why; TEST_ALL=1 runs them here too)`);
}
if (!named.length && quick) {
  files = files.filter((f) => (f in NO_DATABASE && !(f in HEAVY)) || API_SURFACE.includes(f));
  console.log(`# quick: ${files.length} files (the unit tests and the API surface of test/test-passes.ts; npm test runs all ${all.length})`);
}

// Two files at a time on CI's two cores; TEST_CONCURRENCY to change it.
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const started = Date.now();
const child = spawn(
  process.execPath,
  [
    '--no-wasm-code-gc', // README, Tests: Node 24's V8 can abort a process that frees WebAssembly code
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./test/helpers/slowest-files-reporter.ts',
    '--test-reporter-destination=stdout',
    ...files.map((f) => path.join('test', f)),
  ],
  { cwd: ROOT, stdio: 'inherit' },
);
const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
process.on('SIGINT', forward('SIGINT'));
process.on('SIGTERM', forward('SIGTERM'));
child.on('exit', (code, signal) => {
  const minutes = (Date.now() - started) / 60_000;
  console.log(`# ${files.length} test files in ${minutes.toFixed(1)} min (${onPostgres ? 'PostgreSQL' : 'PGlite'}${quick ? ', quick' : ''})`);
  process.exit(code ?? (signal ? 1 : 0));
});
