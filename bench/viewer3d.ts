// 3D tab benchmark (standalone, issue 28: "a few million points stay fluid"): starts a system as the
// web tests do (test/helpers/test-system.ts), seeds an inspection whose `point_cloud_ply` is a
// synthetic dense cloud of N points (terrain with a texture and buildings, binary little-endian
// PLY with colours, in tiles as a depth-map fusion writes them; written once per N to a temp
// folder) and whose `3d_mesh_web_ply` is a 20k-face terrain, opens the 3D tab in Debian's Chromium
// and prints, per N: the time from opening the tab to its first frame (the PLY's download is
// timed apart), the points drawn after the budget, frame intervals while the view orbits (a mouse
// drag, requestAnimationFrame timestamps of the frames the scene drew), the page's JS heap (CDP),
// the peak PSS of all Chromium processes (the GPU process holds the vertex buffers), and the
// longest main-thread task (PerformanceObserver 'longtask') during the load and the orbit.
//   node --import tsx bench/viewer3d.ts [--points 1000000,3000000,6000000] [--orbit-seconds 5] [--screens DIR]
// Headless Chromium draws WebGL with SwiftShader (software, on the CPU): the frame times are this
// machine's software renderer, not a GPU's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import { startTestSystem, tempDir } from '../test/helpers/test-system.ts';
import { launchChromium, openWatchedPage } from '../test/helpers/browser.ts';
import { processedInspection } from '../test/helpers/inspection-fixtures.ts';
import { writePlyMeshFile } from '../src/cloud/processing/mesh/mesh-ply.ts';
import { resultTypeOf } from '../src/cloud/processing/result-types.ts';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';

const { values } = parseArgs({
  options: {
    points: { type: 'string', default: '1000000,3000000,6000000' },
    'orbit-seconds': { type: 'string', default: '5' },
    screens: { type: 'string', default: path.join(os.tmpdir(), 'viewer3d-bench-screens') },
  },
});
const sizes = values.points.split(',').map(Number);
const orbitMs = Number(values['orbit-seconds']) * 1000;
const OFFSET = [386551, 6174045, 30];
const SIDE = 240; // metres: the site is SIDE x SIDE
const TILE = 20; // metres: one "depth map" of points, written contiguously

/** Ground height and colour at (x, y) in site metres (0..SIDE): hills, roads, grass, and boxes of buildings. */
function surface(x: number, y: number): { z: number; rgb: [number, number, number]; roof: boolean } {
  const bx = Math.floor(x / 30), by = Math.floor(y / 30);
  const inBlock = (x % 30) > 8 && (x % 30) < 24 && (y % 30) > 6 && (y % 30) < 22 && (bx + by) % 3 !== 0;
  const ground = 2 * Math.sin(x / 37) + 1.5 * Math.cos(y / 23);
  if (inBlock) return { z: ground + 6 + ((bx * 7 + by * 3) % 5) * 3, rgb: [150 + ((bx * 40) % 80), 60, 50], roof: true };
  const road = (x % 30) < 5 || (y % 30) < 4;
  const noise = ((Math.sin(x * 12.9898 + y * 78.233) * 43758.5453) % 1) * 30;
  return { z: ground, rgb: road ? [110 + noise, 110 + noise, 115 + noise] : [60 + noise, 120 + noise, 50], roof: false };
}

/** The cloud as a PLY file of `count` points (double x, y, z absolute; uchar colours), tile by tile. */
function writeCloud(file: string, count: number): void {
  const header = Buffer.from(['ply', 'format binary_little_endian 1.0', 'comment synthetic terrain with buildings (bench/viewer3d.ts)', `element vertex ${count}`, 'property double x', 'property double y', 'property double z', 'property uchar red', 'property uchar green', 'property uchar blue', 'end_header', ''].join('\n'));
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, header);
  const tiles = (SIDE / TILE) ** 2;
  const chunk = Buffer.alloc(27 * 65536);
  let random = 12345;
  const next = () => ((random = (random * 1103515245 + 12345) >>> 0) / 2 ** 32);
  let written = 0;
  for (let t = 0; t < tiles; t++) {
    const perTile = Math.floor(((t + 1) * count) / tiles) - Math.floor((t * count) / tiles);
    const tx = (t % (SIDE / TILE)) * TILE, ty = Math.floor(t / (SIDE / TILE)) * TILE;
    for (let i = 0; i < perTile; ) {
      const n = Math.min(65536, perTile - i);
      for (let k = 0; k < n; k++) {
        let x = tx + next() * TILE;
        const y = ty + next() * TILE;
        const here = surface(x, y);
        let { z, rgb } = here;
        const roof = here.roof;
        // A fifth of a building's points are on its walls: from the roof's edge down to the ground.
        if (roof && next() < 0.2) {
          const ground = 2 * Math.sin(x / 37) + 1.5 * Math.cos(y / 23);
          z = ground + next() * (z - ground);
          x = Math.floor(x / 30) * 30 + (next() < 0.5 ? 8 : 24);
          rgb = [200, 190, 170];
        }
        const o = 27 * k;
        chunk.writeDoubleLE(OFFSET[0] + x - SIDE / 2, o);
        chunk.writeDoubleLE(OFFSET[1] + y - SIDE / 2, o + 8);
        chunk.writeDoubleLE(OFFSET[2] + z + (next() - 0.5) * 0.05, o + 16);
        chunk[o + 24] = rgb[0];
        chunk[o + 25] = rgb[1];
        chunk[o + 26] = rgb[2];
      }
      fs.writeSync(fd, chunk, 0, 27 * n);
      i += n;
      written += n;
    }
  }
  fs.closeSync(fd);
  if (written !== count) throw new Error(`wrote ${written} of ${count} points`);
}

/** A 101 x 101 vertex terrain mesh (20,000 faces), relative to OFFSET as the engine's web copy is. */
async function writeMesh(file: string): Promise<void> {
  const n = 101;
  const positions = new Float64Array(n * n * 3);
  const colors = new Uint8Array(n * n * 3);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const x = (i * SIDE) / (n - 1), y = (j * SIDE) / (n - 1);
      const s = surface(x, y);
      positions.set([x - SIDE / 2, y - SIDE / 2, s.z], 3 * (i * n + j));
      colors.set(s.rgb, 3 * (i * n + j));
    }
  }
  const indices: number[] = [];
  for (let i = 0; i + 1 < n; i++) for (let j = 0; j + 1 < n; j++) indices.push(i * n + j, (i + 1) * n + j, (i + 1) * n + j + 1, i * n + j, (i + 1) * n + j + 1, i * n + j + 1);
  await writePlyMeshFile(file, { vertexCount: n * n, positions, colors, faceCount: indices.length / 3, indices: new Uint32Array(indices) }, [`coordinate system: WGS 84 / UTM zone 15N minus offset_3d_xyz ${OFFSET.join(' ')}`]);
}

/** Peak-tracking sampler of the PSS (kB) summed over this process's descendants (the Chromium processes playwright started). */
function treeSampler(rootPid: number) {
  let peak = 0;
  const pss = (): number => {
    const children = new Map<number, number[]>();
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
      } catch {
        // gone meanwhile
      }
    }
    let total = 0;
    const walk = (pid: number) => {
      try {
        total += Number(/^Pss:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
      } catch {
        // gone meanwhile
      }
      for (const child of children.get(pid) ?? []) walk(child);
    };
    for (const child of children.get(rootPid) ?? []) walk(child);
    return total;
  };
  const timer = setInterval(() => (peak = Math.max(peak, pss())), 250);
  return { peakMb: () => peak / 1024, stop: () => clearInterval(timer) };
}

/**
 * Installed before the page's scripts: long tasks, and each animation frame's timestamp with the
 * scene's frame count. A string, not a function: tsx's compiled functions call a helper (__name)
 * that the page does not have.
 */
const INSTRUMENT = `
  window.__bench = { longTasks: [], frames: [] };
  new PerformanceObserver((list) => list.getEntries().forEach((e) => window.__bench.longTasks.push([e.startTime, e.duration]))).observe({ type: 'longtask', buffered: true });
  const tick = (time) => {
    const drawn = Number(document.querySelector('canvas.viewer-3d-canvas')?.getAttribute('data-frames') ?? 0);
    const points = Number(document.querySelector('canvas.viewer-3d-canvas')?.getAttribute('data-points-drawn') ?? NaN);
    window.__bench.frames.push([time, drawn, points]);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
`;

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN;
}

/** Drags across the canvas's middle for `ms`, swinging left and right: the orbit controls turn the view. */
async function orbit(page: Page, ms: number): Promise<void> {
  const box = (await page.locator('canvas.viewer-3d-canvas').boundingBox())!;
  const cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  const started = Date.now();
  while (Date.now() - started < ms) {
    const t = (Date.now() - started) / 1000;
    await page.mouse.move(cx + 250 * Math.sin(t * 2), cy + 60 * Math.sin(t * 1.3));
  }
  await page.mouse.up();
}

const workDir = tempDir('oi-viewer3d-bench-');
fs.mkdirSync(values.screens, { recursive: true });
await ensureConsoleBuilt({ quiet: true });
const system = await startTestSystem();
const account = await system.newAccount({ projects: sizes.length + 1 });
const browser: Browser = await launchChromium();
const meshFile = path.join(workDir, 'mesh.ply');
await writeMesh(meshFile);
const rows: string[] = [];
try {
  for (const count of sizes) {
    const cloudFile = path.join(workDir, `cloud-${count}.ply`);
    const started = performance.now();
    writeCloud(cloudFile, count);
    const fileMb = fs.statSync(cloudFile).size / 1e6;
    console.log(`# ${count.toLocaleString()} points: ${fileMb.toFixed(0)} MB written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const { inspection } = await processedInspection(account);
    const project = await (await system.inspection.cloudFor(inspection.id)).getProject(inspection.project_id);
    const db = system.database.db as Kysely<any>;
    for (const [outputType, file] of [['point_cloud_ply', cloudFile], ['3d_mesh_web_ply', meshFile]] as const) {
      const key = `results/${project.uuid}/bench/${outputType}.ply`;
      await system.store.putObject(project.bucket_name, key, fs.createReadStream(file));
      await db.insertInto('cloud.project_outputs').values({ project_id: inspection.project_id, output_type: outputType, result_type: resultTypeOf(outputType), availability: 'done', s3_key: key, note: null, raster: null }).execute();
    }
    fs.rmSync(cloudFile);

    const w = await openWatchedPage(browser, { viewport: { width: 1280, height: 800 }, folder: values.screens });
    const { page } = w;
    await page.addInitScript(INSTRUMENT);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const download: { start?: number; end?: number } = {};
    page.context().on('requestfinished', (request) => {
      if (!request.url().includes('point_cloud_ply')) return;
      const timing = request.timing();
      download.start = timing.startTime;
      download.end = timing.startTime + timing.responseEnd;
    });
    await page.goto(`${system.urls.inspection}/#/signin?next=${encodeURIComponent(`#/inspections/${inspection.id}?tab=measurements`)}`);
    await page.getByLabel('Username').fill(account.username);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('tab', { name: 'Measurements' }).waitFor();
    const memory = treeSampler(process.pid);
    const opened = await page.evaluate((id) => {
      const t = performance.now();
      location.hash = `#/inspections/${id}?tab=3d`;
      return { t, epoch: performance.timeOrigin + t };
    }, inspection.id);
    const canvas = page.locator('canvas.viewer-3d-canvas[data-frames]');
    await canvas.waitFor({ timeout: 600_000 });
    // The first drawn frame's timestamp, and the tasks that ran on the main thread until then.
    const loaded = await page.evaluate(() => (window as any).__bench as { longTasks: [number, number][]; frames: [number, number, number][] });
    const firstFrame = loaded.frames.find(([, drawn]) => drawn >= 1)?.[0] ?? NaN;
    const loadLongest = Math.max(0, ...loaded.longTasks.filter(([start]) => start >= opened.t && start <= firstFrame + 1000).map(([, d]) => d));
    const drawn = Number(await canvas.getAttribute('data-points-loaded'));
    await page.waitForTimeout(1000);
    const heap = (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? NaN;
    const renderer = await page.evaluate(() => {
      const gl = document.createElement('canvas').getContext('webgl');
      const info = gl?.getExtension('WEBGL_debug_renderer_info');
      return info ? String(gl!.getParameter(info.UNMASKED_RENDERER_WEBGL)) : 'unknown';
    });

    const window0 = await page.evaluate(() => performance.now());
    await orbit(page, orbitMs);
    const window1 = await page.evaluate(() => performance.now());
    const after = await page.evaluate(() => (window as any).__bench as { longTasks: [number, number][]; frames: [number, number, number][] });
    // Frames in which the scene drew (its count moved): the intervals between them are what a user sees while orbiting.
    // From the drag's start: a first frame that blocks the page is an interval too (the tick that
    // sees a frame's count move is the one after it).
    const drawnAt: number[] = [window0];
    const movingPoints: number[] = [];
    for (let i = 1; i < after.frames.length; i++) {
      const [time, frames, points] = after.frames[i];
      if (time >= window0 && time <= window1 && frames > after.frames[i - 1][1]) {
        drawnAt.push(time);
        movingPoints.push(points);
      }
    }
    movingPoints.sort((a, b) => a - b);
    const intervals = drawnAt.slice(1).map((t, i) => t - drawnAt[i]).sort((a, b) => a - b);
    const orbitLongest = Math.max(0, ...after.longTasks.filter(([start]) => start >= window0 && start <= window1).map(([, d]) => d));
    // The frame at rest once the damping has settled (no frame for a second; it glides for a few
    // seconds after the drag), and the tasks until then.
    for (let before = -1, now = 0; before !== now; ) {
      before = now;
      await page.waitForTimeout(1000);
      now = Number(await canvas.getAttribute('data-frames'));
    }
    const settled = await page.evaluate(() => (window as any).__bench as { longTasks: [number, number][] });
    const restLongest = Math.max(0, ...settled.longTasks.filter(([start]) => start > window1).map(([, d]) => d));
    const restPoints = Number(await canvas.getAttribute('data-points-drawn') ?? drawn);
    memory.stop();
    const shot = await w.screenshot(`3d-${count}`);
    const downloadS = download.start !== undefined && download.end !== undefined ? `${((download.end - download.start) / 1000).toFixed(1)} s (from ${((download.start - opened.epoch) / 1000).toFixed(1)} s)` : 'not seen';
    const load = os.loadavg().map((l) => l.toFixed(1)).join(' ');
    const row = `| ${count.toLocaleString()} (${fileMb.toFixed(0)} MB) | ${((firstFrame - opened.t) / 1000).toFixed(1)} s | ${downloadS} | ${drawn.toLocaleString()} / ${restPoints.toLocaleString()} / ${Number.isNaN(percentile(movingPoints, 0.5)) ? 'all' : percentile(movingPoints, 0.5).toLocaleString()} | ${percentile(intervals, 0.5).toFixed(0)} / ${percentile(intervals, 0.95).toFixed(0)} / ${(intervals.at(-1) ?? NaN).toFixed(0)} ms (${intervals.length} frames) | ${(heap / 1e6).toFixed(0)} MB | ${memory.peakMb().toFixed(0)} MB | ${loadLongest.toFixed(0)} / ${orbitLongest.toFixed(0)} / ${restLongest.toFixed(0)} ms | ${load} |`;
    rows.push(row);
    console.log(`# renderer: ${renderer}; screenshot ${shot}; browser problems: ${JSON.stringify(w.problems)}`);
    console.log(row);
    await page.context().close();
  }
} finally {
  await browser.close();
  await system.stop();
  fs.rmSync(workDir, { recursive: true, force: true });
}
console.log('\n| points in the file | open → first frame | PLY download | points drawn: first frame / at rest after the orbit / orbiting (median) | frame interval orbiting: median / p95 / longest | JS heap | Chromium PSS peak | longest main-thread task: load / orbit / after it | load average 1/5/15 min |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
