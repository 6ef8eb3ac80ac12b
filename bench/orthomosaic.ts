// Orthomosaic benchmark (standalone): a true orthomosaic (src/cloud/processing/rasters/
// orthomosaic.ts) of a synthetic survey, the size of brighton_beach at the dense stage's scale:
// 18 nadir cameras of 2000x1125 pixels 60 above a 100 x 100 area with boxes of 4 to 12, over a
// DSM of 2000x2000 cells (0.05). Photos (JPEG) and depth maps are ray-cast once into --work by
// test/helpers/ray-cast-scene.ts (about a minute) and reused.
//   node --import tsx bench/orthomosaic.ts [--work DIR] [--cells 2000] [--no-depth]
// Prints the time, the CPU time, the peak resident memory (a 50 ms sampler and VmHWM), the
// longest block in main-thread CPU (it must stay near 30 ms) and the event loop's longest delay
// and 99th percentile (on a loaded machine these also count the waits for a core), the share of
// cells whose colour is within 16 of the scene's, and the load average beside them (the machines
// are shared: read the CPU times when the load is high).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import sharp from 'sharp';
import { cellCentre, gridCovering } from '../src/cloud/processing/rasters/grid.ts';
import { orthomosaic, type OrthoCamera } from '../src/cloud/processing/rasters/orthomosaic.ts';
import { gimbalCamera, render, surfaceColour, surfaceHeight, type SceneBox, type SceneCamera } from '../test/helpers/ray-cast-scene.ts';

const { values } = parseArgs({
  options: {
    work: { type: 'string', default: path.join(os.tmpdir(), 'orthomosaic-bench') },
    cells: { type: 'string', default: '2000' },
    'no-depth': { type: 'boolean', default: false },
  },
});
const work = values.work!;
const cells = Number(values.cells);
await fs.mkdir(work, { recursive: true });

const boxes: SceneBox[] = [];
for (let i = 0; i < 6; i++) {
  for (let j = 0; j < 6; j++) {
    if ((i + j) % 2 === 0) boxes.push({ west: -45 + i * 16, east: -39 + i * 16, south: -45 + j * 16, north: -39 + j * 16, top: 4 + ((i * j) % 5) * 2, roof: [200, 40, 40], wall: [40, 40, 200] });
  }
}
const size = { width: 2000, height: 1125, focal: 1900 };
const sceneCameras: SceneCamera[] = [];
for (let i = 0; i < 6; i++) for (let j = 0; j < 3; j++) sceneCameras.push(gimbalCamera(`c${i}_${j}`, [-40 + i * 16, -30 + j * 30, 60], { yaw: 0, pitch: -90 }, size));

const cameras: OrthoCamera[] = [];
for (const camera of sceneCameras) {
  const imagePath = path.join(work, `${camera.name}.jpg`);
  const depthPath = path.join(work, `${camera.name}.depth`);
  let depth: Float32Array;
  try {
    const bytes = await fs.readFile(depthPath);
    await fs.access(imagePath);
    depth = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  } catch {
    console.log(`rendering ${camera.name}`);
    const rendered = render(boxes, camera);
    await sharp(Buffer.from(rendered.rgb), { raw: { width: size.width, height: size.height, channels: 3 } }).jpeg({ quality: 90 }).toFile(imagePath);
    await fs.writeFile(depthPath, Buffer.from(rendered.depth.buffer));
    depth = rendered.depth;
  }
  cameras.push({ ...camera, imagePath, depthMap: values['no-depth'] ? null : { width: size.width, height: size.height, data: depth } });
}

const dsm = gridCovering(-50, -50, 50, 50, 100 / cells);
for (let r = 0; r < dsm.height; r++) {
  for (let c = 0; c < dsm.width; c++) {
    const [e, n] = cellCentre(dsm, c, r);
    dsm.values[r * dsm.width + c] = surfaceHeight(boxes, e, n);
  }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
const before = process.memoryUsage().rss;
const depthBytes = cameras.reduce((s, c) => s + (c.depthMap?.data.byteLength ?? 0), 0);
console.log(`inputs in memory: rss ${mb(before)} (DSM ${mb(dsm.values.byteLength)}, depth maps ${mb(depthBytes)})`);
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
const load = os.loadavg()[0];
const cpu = process.cpuUsage();
const started = performance.now();
// Main-thread CPU between two progress calls: one block and the yield after it, what the
// orthomosaic itself holds the event loop for, whatever the machine's load.
let blockCpu = process.threadCpuUsage();
let longestBlockMs = 0;
let blocks = 0;
const onProgress = () => {
  const used = process.threadCpuUsage(blockCpu);
  longestBlockMs = Math.max(longestBlockMs, (used.user + used.system) / 1000);
  blockCpu = process.threadCpuUsage();
  blocks++;
};
const ortho = await orthomosaic(dsm, cameras, { onProgress });
const seconds = (performance.now() - started) / 1000;
const cpuSeconds = (process.cpuUsage(cpu).user + process.cpuUsage(cpu).system) / 1e6;
delay.disable();
clearInterval(sampler);
const hwm = /VmHWM:\s+(\d+) kB/.exec(await fs.readFile('/proc/self/status', 'utf8'))?.[1];

let good = 0;
let sampled = 0;
for (let i = 0; i < dsm.width * dsm.height; i += 7) {
  if (!ortho.data[4 * i + 3]) continue;
  sampled++;
  const [e, n] = cellCentre(dsm, i % dsm.width, Math.floor(i / dsm.width));
  const expected = surfaceColour(boxes, e, n);
  if (Math.max(...[0, 1, 2].map((k) => Math.abs(ortho.data[4 * i + k] - expected[k]))) <= 16) good++;
}
console.log(`${dsm.width}x${dsm.height} cells, ${cameras.length} cameras of ${size.width}x${size.height}, occlusion by ${values['no-depth'] ? 'ray march over the DSM' : 'depth maps'}`);
console.log(`  ${seconds.toFixed(2)} s (CPU ${cpuSeconds.toFixed(2)} s, load average ${load.toFixed(1)} on ${os.cpus().length} cores)`);
console.log(`  peak rss ${mb(peak)} (VmHWM ${hwm ? mb(Number(hwm) * 1024) : '?'}), from ${mb(before)} with the inputs loaded`);
console.log(`  ${blocks} blocks, the longest ${longestBlockMs.toFixed(0)} ms of main-thread CPU; event-loop delay max ${(delay.max / 1e6).toFixed(0)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms`);
console.log(`  coverage ${(100 * ortho.coverage).toFixed(1)} %, colour within 16 of the scene at ${((100 * good) / sampled).toFixed(1)} % of sampled cells; occlusion tests ${JSON.stringify(ortho.occlusionTests)}`);
