// Start-up time and idle memory of `serve`: compiled JavaScript on plain node (`dist/main.js`, what
// `npm start` runs) against the TypeScript sources through the tsx loader, on PGlite and on
// PostgreSQL. Rounds alternate between the two; each start is on a fresh data folder (and a fresh
// PostgreSQL database), so it includes migrations and the first-start bootstrap.
//   node --import tsx bench/runtime.ts [rounds]
// Start-up: from spawning the process to the start banner (both services and the S3 endpoint
// listening). Idle: VmRSS and VmHWM 10 s after start-up, no request served.
import { buildServer } from '../scripts/build.ts';
import { readMemory, startServer, type DatabaseKind } from './lib/processes.ts';

const rounds = Number(process.argv[2] ?? 3);
const IDLE_MS = 10_000;

interface Sample {
  startupS: number;
  rssMb: number;
  hwmMb: number;
}

async function measure(entry: 'main' | 'compiled', database: DatabaseKind): Promise<Sample> {
  const started = performance.now();
  const server = await startServer({ name: `runtime-${entry}-${database}`, database, entry, env: { ENGINE: 'exif' } });
  const startupS = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const memory = readMemory(server.pid);
  await server.dispose();
  return { startupS, rssMb: memory.rssMb, hwmMb: memory.hwmMb };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

buildServer();
const results = new Map<string, Sample[]>();
for (let round = 0; round < rounds; round++) {
  for (const database of ['pglite', 'postgres'] as const) {
    // Alternating which goes first, so neither always starts on a warmer machine.
    const order: ('main' | 'compiled')[] = round % 2 ? ['main', 'compiled'] : ['compiled', 'main'];
    for (const entry of order) {
      const key = `${entry === 'compiled' ? 'compiled (node dist/main.js)' : 'tsx (src/main.ts)'}|${database}`;
      const sample = await measure(entry, database);
      results.set(key, [...(results.get(key) ?? []), sample]);
      console.log(`round ${round + 1} ${key.replace('|', ' on ')}: start-up ${sample.startupS.toFixed(2)} s, idle VmRSS ${sample.rssMb} MB`);
    }
  }
}
console.log(`\nserve on Node ${process.version}, median of ${rounds} round(s)\n`);
console.log('| runtime | database | start-up s | idle VmRSS MB | VmHWM MB |');
console.log('|---|---|---|---|---|');
for (const [key, samples] of results) {
  const [runtime, database] = key.split('|');
  console.log(`| ${runtime} | ${database} | ${median(samples.map((s) => s.startupS)).toFixed(2)} | ${median(samples.map((s) => s.rssMb)).toFixed(0)} | ${median(samples.map((s) => s.hwmMb)).toFixed(0)} |`);
}
