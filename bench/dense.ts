// Dense benchmark (standalone): PatchMatch depth maps (src/cloud/processing/dense/) and COLMAP's
// stereo_fusion on a sparse model made beforehand with the COLMAP CLI.
//   node --import tsx bench/dense.ts --images DIR --model SPARSE_DIR --work DIR [--size 1000,800]
//        [--undistort-size N] [--threads N] [--iterations N] [--geometric N] [--views N]
// Per depth-map size: `image_undistorter` (once, at --undistort-size, default the largest --size)
// into DIR/undistorted, then computeDepthMaps at that size and stereo_fusion; prints the seconds
// per image and pass, the total, the CPU seconds (all threads), the valid share, the fused points and the peak resident memory of
// this process (the workers are threads of it) and of stereo_fusion (from /proc's VmHWM, sampled).
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PassThrough } from 'node:stream';
import { runColmap } from '../src/cloud/processing/colmap/colmap-process.ts';
import { computeDepthMaps } from '../src/cloud/processing/dense/depth-maps.ts';
import { runStereoFusion, undistorterArgs } from '../src/cloud/processing/dense/fusion.ts';

const { values } = parseArgs({
  options: {
    images: { type: 'string' },
    model: { type: 'string' },
    work: { type: 'string' },
    size: { type: 'string', default: '1000' },
    'undistort-size': { type: 'string' },
    threads: { type: 'string', default: '2' },
    iterations: { type: 'string', default: '4' },
    geometric: { type: 'string', default: '2' },
    views: { type: 'string', default: '5' },
  },
});
if (!values.images || !values.model || !values.work) throw new Error('--images, --model and --work are required');
const sizes = values.size.split(',').map(Number);
const undistortSize = Number(values['undistort-size'] ?? Math.max(...sizes));
const signal = new AbortController().signal;
const log = new PassThrough().resume();
const ws = path.join(values.work, `undistorted-${undistortSize}`);

if (!(await fs.stat(path.join(ws, 'sparse')).catch(() => null))) {
  const started = performance.now();
  const outcome = await runColmap({ binary: 'colmap', args: undistorterArgs({ images: values.images, model: values.model, workspace: ws }, undistortSize), cwd: values.work, glogDir: values.work, log, signal });
  if (outcome.code !== 0) throw new Error(`image_undistorter failed: ${outcome.tail.join('\n')}`);
  console.log(`undistorted at ${undistortSize} px in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

for (const size of sizes) {
  for (const dir of ['depth_maps', 'normal_maps']) {
    await fs.rm(path.join(ws, 'stereo', dir), { recursive: true, force: true });
    await fs.mkdir(path.join(ws, 'stereo', dir), { recursive: true });
  }
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const summary = await computeDepthMaps(ws, { maxImageSize: size, threads: Number(values.threads), iterations: Number(values.iterations), geometricIterations: Number(values.geometric), sourceViews: Number(values.views) }, () => {}, signal);
  const depthSeconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const depthCpuSeconds = (cpu.user + cpu.system) / 1e6;
  const depthRss = process.resourceUsage().maxRSS / 1024;
  const fuseStarted = performance.now();
  let fusionPeak = 0;
  const sampler = setInterval(() => void sampleChildPeak().then((kb) => (fusionPeak = Math.max(fusionPeak, kb))), 200);
  const fused = await runStereoFusion({ binary: 'colmap', workspace: ws, glogDir: values.work, log, threads: Number(values.threads), signal });
  clearInterval(sampler);
  const fuseSeconds = (performance.now() - fuseStarted) / 1000;
  const header = (await fs.readFile(fused)).subarray(0, 400).toString('latin1');
  const points = Number(/element vertex (\d+)/.exec(header)?.[1]);
  await fs.copyFile(fused, path.join(values.work, `fused-${size}.ply`));
  console.log(
    JSON.stringify({
      size: `${summary.width}x${summary.height}`,
      images: summary.images,
      photometricSecondsPerImage: +(summary.photometricSeconds / summary.images * Number(values.threads)).toFixed(1),
      geometricSecondsPerImage: +(summary.geometricSeconds / summary.images * Number(values.threads)).toFixed(1),
      depthMapsSeconds: +depthSeconds.toFixed(1),
      // CPU time of all threads: on a shared machine the wall time overstates; cpu / threads is the wall time on free cores
      depthMapsCpuSeconds: +depthCpuSeconds.toFixed(1),
      cpuSecondsPerImage: +(depthCpuSeconds / summary.images).toFixed(1),
      validShare: +summary.validShare.toFixed(3),
      fusionSeconds: +fuseSeconds.toFixed(1),
      fusedPoints: points,
      peakRssMB: Math.round(depthRss),
      fusionPeakRssMB: Math.round(fusionPeak / 1024),
    }),
  );
}

/** The largest VmHWM (kB) among this process's colmap children. */
async function sampleChildPeak(): Promise<number> {
  let peak = 0;
  for (const pid of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    if (!/^Name:\s+colmap/m.test(status) || !new RegExp(`^PPid:\\s+${process.pid}$`, 'm').test(status)) continue;
    peak = Math.max(peak, Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0));
  }
  return peak;
}
