// Builds what `npm start`, `npm run worker` and `npm run storage` run: the server compiled to
// JavaScript (tsc -p tsconfig.build.json: src/ -> dist/, incremental, about 2 s when nothing changed)
// and, unless --server-only, the web console (console-build.ts, rebuilt only when its sources
// changed). The services then run on plain Node, without a TypeScript loader. `npm run build`
// passes --force to rebuild the console too.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ensureConsoleBuilt } from './console-build.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function buildServer(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`the server did not compile (tsc exited with ${result.status ?? result.signal})`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildServer();
  if (!process.argv.includes('--server-only')) await ensureConsoleBuilt({ force: process.argv.includes('--force') });
}
