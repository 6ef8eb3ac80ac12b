// The hottest functions of V8 CPU profiles (node --cpu-prof): self time per function, as a share
// of the profile's busy (non-idle) time. Also runnable alone:
//   node --import tsx bench/profile-summary.ts <file.cpuprofile|folder> [top]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

function shortUrl(url: string): string {
  if (!url) return '';
  const clean = url.replace(/^file:\/\//, '');
  const nm = clean.lastIndexOf('node_modules/');
  if (nm >= 0) return clean.slice(nm + 'node_modules/'.length);
  const src = clean.search(/\/(src|bench|dist)\//);
  return src >= 0 ? clean.slice(src + 1) : clean.startsWith('node:') ? clean : path.basename(clean);
}

function packageOf(url: string): string {
  if (!url) return '(native/vm)';
  const clean = url.replace(/^file:\/\//, '');
  const nm = clean.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = clean.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (clean.startsWith('node:')) return 'node core';
  const src = clean.search(/\/(src|bench)\//);
  return src >= 0 ? path.dirname(clean.slice(src + 1)) : clean;
}

/**
 * Summary of one profile: self time by package (or src folder), the hottest functions by self
 * time, and the project's own functions (src/) by inclusive time. Shares of busy (non-idle) time.
 */
export function hotFunctions(file: string, top = 15, windows?: [number, number][]): string[] {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  // Sample timestamps are CLOCK_MONOTONIC microseconds, like the windows the runner recorded.
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (windows && !windows.some(([from, to]) => at >= from && at <= to)) continue;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const keyOf = (frame: ProfileNode['callFrame']) => `${frame.functionName || '(anonymous)'}  ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    busy += us;
    byFunction.set(keyOf(frame), (byFunction.get(keyOf(frame)) ?? 0) + us);
    const group = frame.functionName.startsWith('(') ? frame.functionName : packageOf(frame.url);
    byPackage.set(group, (byPackage.get(group) ?? 0) + us);
    // Inclusive: each project function on the stack once.
    const seen = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
      const f = byId.get(node)!.callFrame;
      if (!/\/(src|dist)\//.test(f.url) || f.url.includes('node_modules/')) continue;
      const k = keyOf(f);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
  }
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const topOf = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, us]) => `    ${pct(us)}  ${key}`);
  return [
    `  busy ${(busy / 1e6).toFixed(1)} s${windows ? ` within the ${windows.length} measured window(s)` : ' (whole process life)'}; self time by package:`,
    ...topOf(byPackage, 12),
    '  hottest functions (self time):',
    ...topOf(byFunction, top),
    '  project functions (src/ or dist/, inclusive time):',
    ...topOf(inclusive, top),
  ];
}

/** The main-thread profile of each process folder under `dir` (the largest file), summarised. */
export function summariseProfiles(dir: string, top = 15): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!fs.existsSync(dir)) return out;
  const folders = fs.statSync(dir).isDirectory() ? fs.readdirSync(dir).map((n) => path.join(dir, n)) : [];
  for (const folder of [dir, ...folders].filter((f) => fs.statSync(f).isDirectory())) {
    const files = fs.readdirSync(folder).filter((n) => n.endsWith('.cpuprofile')).map((n) => path.join(folder, n));
    if (files.length === 0) continue;
    const main = files.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0];
    const windowsFile = path.join(folder, 'windows.json');
    const windows = fs.existsSync(windowsFile) ? (JSON.parse(fs.readFileSync(windowsFile, 'utf8')) as [number, number][]) : undefined;
    out[main] = hotFunctions(main, top, windows);
  }
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = process.argv[2];
  const top = Number(process.argv[3] ?? 25);
  if (!target) {
    console.error('usage: node --import tsx bench/profile-summary.ts <file.cpuprofile|folder> [top]');
    process.exit(2);
  }
  const summaries = fs.statSync(target).isDirectory() ? summariseProfiles(target, top) : { [target]: hotFunctions(target, top) };
  for (const [f, lines] of Object.entries(summaries)) console.log(`${path.relative(target, f) || path.basename(f)}\n${lines.join('\n')}\n`);
}
