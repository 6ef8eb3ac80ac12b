// computeDepthMaps: PatchMatch depth and normal maps for every image of an undistorted COLMAP
// workspace (`colmap image_undistorter --output_type COLMAP`), written in COLMAP's format so that
// `colmap stereo_fusion --input_type geometric` fuses them (fusion.ts). Debian's COLMAP has no
// CUDA, so its patch_match_stereo refuses to run; this replaces it on the CPU.
//
// Two passes, as COLMAP runs them: a photometric pass over all images (random planes seeded by the
// sparse points, propagation, refinement), then a geometric pass that starts from each image's
// photometric planes and adds the forward-backward reprojection error through the source views'
// photometric depth maps to the cost, and finally filters (patch-match.ts). Each pass runs on
// worker threads, one per core, one reference image per worker at a time. The grey images (and,
// for the geometric pass, the photometric depths) sit in SharedArrayBuffers that every worker reads.
// The depth maps may be smaller than the workspace's images (maxImageSize): fusion scales each
// camera to its depth map's size itself (fusion.cc, bitmap_scales_), so the maps are written as
// computed.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { writeColmapMat } from './depth-map-io.ts';
import { DEFAULT_DEPTH_MAP_SIZE } from './depth-map-size.ts';
import { DEFAULT_PATCH_MATCH_PARAMS, type PatchMatchInput, type PatchMatchOutput, type PatchMatchParams, type PatchMatchView } from './patch-match.ts';
import { readSparseModel, type SparseImage } from './sparse-model.ts';
import { planReferences } from './view-selection.ts';

export interface DepthMapOptions {
  /** Longest side of the depth maps (the images are scaled down to it, never up). */
  maxImageSize?: number;
  /** Worker threads (default: one per core). */
  threads?: number;
  /** Source views per reference image. */
  sourceViews?: number;
  /** PatchMatch iterations of the photometric pass, and of the geometric pass (0: no geometric pass). */
  iterations?: number;
  geometricIterations?: number;
  windowRadius?: number;
  windowStep?: number;
  seed?: number;
  /** Coarse to fine down to images of this longer side (patch-match.ts; 0: one level). */
  pyramidMinSize?: number;
  /** Also write the photometric maps (`<image>.photometric.bin`). */
  writePhotometric?: boolean;
}

export interface DepthMapSummary {
  images: number;
  width: number;
  height: number;
  /** Share of pixels with a depth after filtering, over all maps. */
  validShare: number;
  photometricSeconds: number;
  geometricSeconds: number;
}

export const DEFAULT_DEPTH_MAP_OPTIONS = {
  maxImageSize: DEFAULT_DEPTH_MAP_SIZE,
  sourceViews: 5,
  iterations: 4,
  geometricIterations: 2,
};

interface LoadedImage {
  image: SparseImage;
  view: PatchMatchView;
  /** Depth-map size over the workspace image's size. */
  scale: number;
}

export async function computeDepthMaps(workspace: string, options: DepthMapOptions, onProgress: (done: number, total: number) => void, signal: AbortSignal): Promise<DepthMapSummary> {
  signal.throwIfAborted();
  const model = await readSparseModel(path.join(workspace, 'sparse'));
  const plans = planReferences(model, options.sourceViews ?? DEFAULT_DEPTH_MAP_OPTIONS.sourceViews);
  const maxSize = options.maxImageSize ?? DEFAULT_DEPTH_MAP_OPTIONS.maxImageSize;
  const loaded: LoadedImage[] = [];
  for (const image of model.images) {
    signal.throwIfAborted();
    loaded.push(await loadGrey(path.join(workspace, 'images', image.name), image, maxSize));
  }
  const params: PatchMatchParams = {
    ...DEFAULT_PATCH_MATCH_PARAMS,
    iterations: options.iterations ?? DEFAULT_DEPTH_MAP_OPTIONS.iterations,
    windowRadius: options.windowRadius ?? DEFAULT_PATCH_MATCH_PARAMS.windowRadius,
    windowStep: options.windowStep ?? DEFAULT_PATCH_MATCH_PARAMS.windowStep,
    seed: options.seed ?? DEFAULT_PATCH_MATCH_PARAMS.seed,
    pyramidMinSize: options.pyramidMinSize ?? DEFAULT_PATCH_MATCH_PARAMS.pyramidMinSize,
  };
  const geometricIterations = options.geometricIterations ?? DEFAULT_DEPTH_MAP_OPTIONS.geometricIterations;
  const references = loaded.map((_, i) => i).filter((i) => plans[i].sources.length > 0 && plans[i].maxDepth > 0);
  const total = references.length * (geometricIterations > 0 ? 2 : 1);
  let done = 0;
  const pool = new WorkerPool(options.threads ?? os.availableParallelism(), signal);
  try {
    const inputOf = (r: number, geometric: boolean, initial?: PatchMatchOutput): PatchMatchInput => {
      const plan = plans[r];
      const { scale } = loaded[r];
      const seeds = plan.seeds.map((v, k) => (k % 3 === 2 ? v : v * scale));
      return {
        ref: loaded[r].view,
        sources: plan.sources.map((s) => loaded[s].view),
        minDepth: plan.minDepth,
        maxDepth: plan.maxDepth,
        seeds,
        initial: initial && { depth: initial.depth, normal: initial.normal },
        geometric,
        filter: geometric || geometricIterations === 0,
        params: { ...params, seed: params.seed + r, iterations: geometric ? geometricIterations : params.iterations },
      };
    };
    const dirs = { depth: path.join(workspace, 'stereo/depth_maps'), normal: path.join(workspace, 'stereo/normal_maps') };
    await fs.mkdir(dirs.depth, { recursive: true });
    await fs.mkdir(dirs.normal, { recursive: true });
    const write = async (r: number, out: PatchMatchOutput, kind: 'photometric' | 'geometric') => {
      const { view, image } = loaded[r];
      // image names may hold folders (`images/01.jpg` when the photos sat in a subfolder)
      await fs.mkdir(path.dirname(path.join(dirs.depth, image.name)), { recursive: true });
      await fs.mkdir(path.dirname(path.join(dirs.normal, image.name)), { recursive: true });
      await writeColmapMat(path.join(dirs.depth, `${image.name}.${kind}.bin`), { width: view.width, height: view.height, channels: 1, data: out.depth });
      await writeColmapMat(path.join(dirs.normal, `${image.name}.${kind}.bin`), { width: view.width, height: view.height, channels: 3, data: out.normal });
    };

    const started = performance.now();
    const photometric = new Map<number, PatchMatchOutput>();
    await Promise.all(
      references.map(async (r) => {
        const out = await pool.run(inputOf(r, false));
        photometric.set(r, out);
        if (options.writePhotometric || geometricIterations === 0) await write(r, out, geometricIterations === 0 ? 'geometric' : 'photometric');
        onProgress(++done, total);
      }),
    );
    const photometricSeconds = (performance.now() - started) / 1000;

    let valid = 0;
    let pixels = 0;
    const count = (out: PatchMatchOutput) => {
      pixels += out.depth.length;
      for (const d of out.depth) if (d > 0) valid++;
    };
    const geometricStart = performance.now();
    if (geometricIterations > 0) {
      // The photometric depths, shared: every geometric job reads its sources' maps.
      for (const [r, out] of photometric) loaded[r].view.depth = toShared(out.depth);
      await Promise.all(
        references.map(async (r) => {
          const out = await pool.run(inputOf(r, true, photometric.get(r)));
          await write(r, out, 'geometric');
          count(out);
          onProgress(++done, total);
        }),
      );
    } else {
      for (const out of photometric.values()) count(out);
    }
    return {
      images: references.length,
      width: Math.max(...loaded.map((l) => l.view.width)),
      height: Math.max(...loaded.map((l) => l.view.height)),
      validShare: pixels ? valid / pixels : 0,
      photometricSeconds,
      geometricSeconds: (performance.now() - geometricStart) / 1000,
    };
  } finally {
    await pool.close();
  }
}

async function loadGrey(file: string, image: SparseImage, maxSize: number): Promise<LoadedImage> {
  const { camera } = image;
  const scale = Math.min(1, maxSize / Math.max(camera.width, camera.height));
  const width = Math.max(1, Math.round(camera.width * scale));
  const height = Math.max(1, Math.round(camera.height * scale));
  const { data } = await sharp(file).greyscale().resize(width, height, { fit: 'fill', kernel: 'lanczos3' }).raw().toBuffer({ resolveWithObject: true });
  const gray = new Float32Array(new SharedArrayBuffer(4 * width * height));
  for (let i = 0; i < gray.length; i++) gray[i] = data[i] / 255;
  // The same scaling as fusion's (depth map size over image size, per axis).
  const sx = width / camera.width;
  const sy = height / camera.height;
  return {
    image,
    scale: sx,
    view: { gray, width, height, fx: camera.fx * sx, fy: camera.fy * sy, cx: camera.cx * sx, cy: camera.cy * sy, R: Array.from(image.R), t: Array.from(image.t) },
  };
}

function toShared(values: Float32Array): Float32Array {
  const shared = new Float32Array(new SharedArrayBuffer(values.byteLength));
  shared.set(values);
  return shared;
}

/** Worker threads running runPatchMatch, each one job at a time; an abort terminates them. */
class WorkerPool {
  private readonly idle: Worker[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly workers: Worker[] = [];
  private nextId = 0;

  constructor(size: number, private readonly signal: AbortSignal) {
    // Under tsx the module is a .ts file (the worker inherits the --import tsx loader); built, a .js.
    const entry = new URL(`./depth-map-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
    for (let i = 0; i < Math.max(1, size); i++) {
      const worker = new Worker(entry);
      this.workers.push(worker);
      this.idle.push(worker);
    }
  }

  async run(input: PatchMatchInput): Promise<PatchMatchOutput> {
    while (!this.idle.length) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.signal.throwIfAborted();
    const worker = this.idle.pop()!;
    const id = this.nextId++;
    try {
      return await new Promise<PatchMatchOutput>((resolve, reject) => {
        const onAbort = () => reject(this.signal.reason);
        const onError = (err: Error) => reject(err);
        const onExit = (code: number) => reject(new Error(`a PatchMatch worker exited with code ${code}`));
        const onMessage = (m: { id: number; out?: PatchMatchOutput; error?: string }) => {
          if (m.id !== id) return;
          cleanup();
          if (m.out) resolve(m.out);
          else reject(new Error(`PatchMatch failed: ${m.error}`));
        };
        const cleanup = () => {
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          this.signal.removeEventListener('abort', onAbort);
        };
        worker.on('message', onMessage);
        worker.once('error', onError);
        worker.once('exit', onExit);
        this.signal.addEventListener('abort', onAbort, { once: true });
        worker.postMessage({ id, input });
      });
    } finally {
      this.idle.push(worker);
      this.waiting.shift()?.();
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
