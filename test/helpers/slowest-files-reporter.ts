// A node:test reporter that prints, when the run ends, the test files that took longest (their
// wall time as the runner measured it, process start to exit), so that each CI pass shows where its
// time goes and growth is seen in every closing note (issue 41). It prints nothing else: run it
// beside the spec reporter (scripts/run-tests.ts does). Beside each file's wall seconds, the CPU
// seconds it cost when TEST_CPU_DIR holds them (cpu-seconds-hook.ts): the files that take the
// cores from the others. With TEST_TIMINGS_FILE set it also writes every file's wall seconds there
// as JSON, for comparing two runs.
import fs from 'node:fs';
import path from 'node:path';

const SHOWN = Number(process.env.TEST_SLOWEST_SHOWN ?? 15);

interface TestEvent {
  type: string;
  data: { name?: string; nesting?: number; file?: string; details?: { duration_ms?: number } };
}

/** The CPU seconds of each file (by absolute path) that cpu-seconds-hook.ts wrote, if any. */
function cpuSeconds(): Map<string, number> {
  const directory = process.env.TEST_CPU_DIR;
  const found = new Map<string, number>();
  if (!directory || !fs.existsSync(directory)) return found;
  for (const name of fs.readdirSync(directory)) found.set(decodeURIComponent(name), Number(fs.readFileSync(path.join(directory, name), 'utf8')));
  return found;
}

export default async function* slowestFiles(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const seconds = new Map<string, number>();
  for await (const event of source) {
    // With process isolation the runner closes each file with a test:complete named after the
    // file itself (as given on the command line), at nesting 0, whose duration is the whole file's.
    const { name, nesting, file, details } = event.data ?? {};
    if (event.type !== 'test:complete' || nesting !== 0 || !file || !name || path.resolve(name) !== path.resolve(file)) continue;
    seconds.set(path.relative(process.cwd(), file), (details?.duration_ms ?? 0) / 1000);
  }
  const ranked = [...seconds].sort((a, b) => b[1] - a[1]);
  const total = ranked.reduce((sum, [, s]) => sum + s, 0);
  const cpu = cpuSeconds();
  const cpuOf = (file: string) => cpu.get(path.resolve(file));
  const cpuTotal = [...cpu.values()].reduce((sum, s) => sum + s, 0);
  yield `\n# slowest ${Math.min(SHOWN, ranked.length)} of ${ranked.length} test files (sum of all files ${total.toFixed(0)} s${cpu.size ? `, CPU ${cpuTotal.toFixed(0)} s` : ''}):\n`;
  for (const [file, s] of ranked.slice(0, SHOWN)) yield `#   ${s.toFixed(1).padStart(7)} s ${cpuOf(file) === undefined ? '' : `(CPU ${cpuOf(file)!.toFixed(1).padStart(6)} s)`}  ${file}\n`;
  if (cpu.size) {
    const costliest = ranked.filter(([file]) => cpuOf(file) !== undefined).sort((a, b) => cpuOf(b[0])! - cpuOf(a[0])!);
    yield `# most CPU: ${costliest.slice(0, SHOWN).map(([file]) => `${path.basename(file, '.test.ts')} ${cpuOf(file)!.toFixed(0)} s`).join(', ')}\n`;
  }
  if (process.env.TEST_TIMINGS_FILE) fs.writeFileSync(process.env.TEST_TIMINGS_FILE, JSON.stringify(Object.fromEntries(ranked), null, 1) + '\n');
}
