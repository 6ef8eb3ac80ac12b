// Builds the web console (web/ -> web/dist) when its sources are newer than the last build.
// `npm start` runs it first (prestart), so `npm ci && npm start` serves a console on a fresh clone;
// the browser tests call ensureConsoleBuilt() too. `npm run build:web` forces a build.
// Without Vite (an install with --omit=dev) it leaves a previous build in place and says so.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WEB_DIR = path.join(ROOT, 'web');
const DIST_INDEX = path.join(WEB_DIR, 'dist', 'index.html');

function newestMtime(entry: string): number {
  const stat = fs.statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of fs.readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, child)));
  return newest;
}

export function consoleBuildIsStale(): boolean {
  const built = fs.statSync(DIST_INDEX, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const sources = Math.max(
    newestMtime(path.join(WEB_DIR, 'src')),
    newestMtime(path.join(WEB_DIR, 'index.html')),
    newestMtime(path.join(WEB_DIR, 'vite.config.ts')),
    newestMtime(path.join(ROOT, 'package-lock.json')),
  );
  return built < sources;
}

export async function ensureConsoleBuilt(options: { force?: boolean; quiet?: boolean } = {}): Promise<void> {
  if (!options.force && !consoleBuildIsStale()) return;
  let vite: typeof import('vite');
  try {
    vite = await import('vite');
  } catch {
    const note = fs.existsSync(DIST_INDEX) ? 'serving the previous build' : 'the console will not be served';
    console.warn(`web console: Vite is not installed (npm ci without --omit=dev installs it); ${note}.`);
    return;
  }
  const started = Date.now();
  await vite.build({ configFile: path.join(WEB_DIR, 'vite.config.ts'), logLevel: options.quiet ? 'warn' : 'info' });
  if (!options.quiet) console.log(`web console built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await ensureConsoleBuilt({ force: process.argv.includes('--force') });
}
