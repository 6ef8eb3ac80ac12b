// A true orthophoto from the DSM and the cameras (issue 28, step 6): every cell is coloured from
// the cameras that see it, so that buildings stand on their own footprint and nothing hidden
// behind them is painted with their walls. The cells are the DSM's cut into `subdivision` x
// `subdivision` (orthomosaic-grid.ts: about the photos' GSD, each cell's height read bilinearly
// from the DSM); occlusion is still tested against the DSM itself.
//
// Two passes over the grid, in blocks of rows (north to south), yielding to the event loop
// between blocks of ~30 ms of CPU each (inBlocks; a 2000x2000-cell orthomosaic from 18 photos of
// 2000x1125 takes 3 to 4 s of CPU in ~140 blocks: bench/orthomosaic.ts). Worker threads were not
// worth it: the step is seconds after minutes of dense matching, on machines of 2 cores that the
// dense stage's own workers already fill.
//   1. labels: for each cell with a DSM value, the cameras whose image holds it are ranked by
//      orthomosaic-camera.ts's score (most nadir, finest, away from the image border) and the best
//      one that is not occluded (its depth map, else a walk over the DSM) labels the cell.
//      Only geometry and depth maps are read here: no photo is decoded.
//   2. colours: each cell is coloured by the cameras labelled around it, weighted by their share
//      of the window (orthomosaic-seams.ts), each sampled bilinearly where it sees the cell; inside
//      a camera's region that is the best camera alone. Photos are decoded when a block first
//      needs them (orthomosaic-images.ts).
// Why a feathered label blend rather than a two-band (Laplacian) one: the detail comes from one
// camera everywhere but in a band of a few cells along the seams, so misregistration cannot ghost
// the whole image, and it needs nothing per camera but the window counts of the block; a two-band
// blend would need each camera's low-pass image over the whole area it covers. Exposure steps
// between cameras are ramped over the band (2 * seamRadius + 1 cells) rather than equalised.
//
// Cells without a DSM value or seen by no camera are transparent (alpha 0).
import { cellCentre, type Grid } from './grid.ts';
import { subdividedSurface } from './orthomosaic-grid.ts';
import {
  DEFAULT_OCCLUSION_TOLERANCE,
  cameraScore,
  prepareCamera,
  project,
  visibleFrom,
  type DsmSurface,
  type OcclusionCounts,
  type OcclusionTolerance,
  type OrthoCamera,
  type PreparedCamera,
  type Projection,
} from './orthomosaic-camera.ts';
import { ImageCache, addBilinear } from './orthomosaic-images.ts';
import { labelWindowCounts, labelsNear } from './orthomosaic-seams.ts';

export type { OrthoCamera, OcclusionTolerance } from './orthomosaic-camera.ts';
export { orthoFeasibility } from './orthomosaic-feasibility.ts';
export { orthoResolution } from './orthomosaic-grid.ts';

export interface OrthomosaicOptions {
  signal?: AbortSignal;
  /** Ortho cells per DSM cell side (default 1: the DSM's cells); orthoResolution chooses it from the photos' GSD. */
  subdivision?: number;
  /** Rows done of both passes, out of 2 * the ortho grid's height; called after each block. */
  onProgress?(done: number, total: number): void;
  occlusion?: Partial<OcclusionTolerance>;
  /**
   * Half-width of the seam blend, in ortho cells; 0 cuts the seams sharp. Default: 8 DSM cells of
   * ground, at most 32 ortho cells (the blend's windows read that many rows beyond each block).
   */
  seamRadius?: number;
  /** Decoded photos kept at once, bytes (default 1 GiB); a block's own photos stay even beyond it. */
  imageCacheBytes?: number;
}

export interface Orthomosaic {
  /** The ortho grid: the DSM's extent, cells of dsm.cellSize / subdivision. */
  grid: Omit<Grid, 'values'>;
  subdivision: number;
  width: number;
  height: number;
  /** RGBA by pixel, row-major from the northern row, on `grid`'s cells. */
  data: Uint8Array;
  /** Share of the cells with a height (the DSM's, bilinear) that were coloured (0..1). */
  coverage: number;
  /** Cells whose best camera each camera was (cameras that labelled none are left out). */
  cellsByCamera: { name: string; cells: number }[];
  /** Occlusion tests made against depth maps and by ray marching over the DSM. */
  occlusionTests: OcclusionCounts;
}

const BLOCK_MS = 30;
const TILE_COLUMNS = 128;

export async function orthomosaic(dsm: Grid, cameras: OrthoCamera[], options: OrthomosaicOptions = {}): Promise<Orthomosaic> {
  if (dsm.values.length !== dsm.width * dsm.height) throw new Error(`the DSM has ${dsm.values.length} values for ${dsm.width}x${dsm.height} cells`);
  if (cameras.length > 32767) throw new Error('more than 32767 cameras');
  const subdivision = options.subdivision ?? 1;
  options.signal?.throwIfAborted();
  // The cells coloured: the DSM's, or finer ones with bilinear heights (`fine`); occlusion is
  // tested against the DSM (`surface`).
  const fine = subdividedSurface(dsm, subdivision);
  const { width, height, values } = fine;
  const tolerance: OcclusionTolerance = { ...DEFAULT_OCCLUSION_TOLERANCE, ...options.occlusion };
  const radius = Math.max(0, Math.round(options.seamRadius ?? Math.min(32, 8 * subdivision)));
  const prepared = cameras.map(prepareCamera);
  let top = -Infinity;
  for (const v of dsm.values) if (v > top) top = v;
  let valued = 0;
  for (const v of values) if (v === v) valued++;
  const surface: DsmSurface = { grid: dsm, top };
  const counts: OcclusionCounts = { depthMap: 0, rayMarch: 0 };

  // Pass 1: labels.
  const labels = new Int16Array(width * height).fill(-1);
  const candidates = new Int32Array(prepared.length);
  const scores = new Float64Array(prepared.length);
  const p: Projection = { u: 0, v: 0, depth: 0 };
  const progress = (offset: number) => (rowsDone: number) => options.onProgress?.(offset + rowsDone, 2 * height);
  await inBlocks(height, options.signal, progress(0), async (firstRow, endRow) => {
    const tiles: { firstColumn: number; endColumn: number; framing: PreparedCamera[] }[] = [];
    for (let firstColumn = 0; firstColumn < width; firstColumn += TILE_COLUMNS) {
      const endColumn = Math.min(width, firstColumn + TILE_COLUMNS);
      const framing = camerasFraming(prepared, fine, firstRow, endRow, firstColumn, endColumn);
      if (framing.length) tiles.push({ firstColumn, endColumn, framing });
    }
    return (row) => {
      for (const { firstColumn, endColumn, framing } of tiles) {
        for (let col = firstColumn; col < endColumn; col++) {
          const i = row * width + col;
          const z = values[i];
          if (z !== z) continue;
          const [x, y] = cellCentre(fine, col, row);
          let n = 0;
          for (const camera of framing) {
            if (!project(camera, x, y, z, p)) continue;
            const score = cameraScore(camera, x, y, z, p);
            if (score > 0) {
              candidates[n] = camera.index;
              scores[n++] = score;
            }
          }
          // Best first until one sees the cell.
          while (n > 0) {
            let best = 0;
            for (let k = 1; k < n; k++) if (scores[k] > scores[best]) best = k;
            const camera = prepared[candidates[best]];
            project(camera, x, y, z, p);
            if (visibleFrom(camera, x, y, z, p, surface, tolerance, counts)) {
              labels[i] = camera.index;
              break;
            }
            candidates[best] = candidates[--n];
            scores[best] = scores[n];
          }
        }
      }
    };
  });

  // Pass 2: colours, feathered across the seams.
  const cache = new ImageCache(cameras, options.imageCacheBytes ?? 1024 ** 3);
  const data = new Uint8Array(4 * width * height);
  const sum = new Float64Array(3);
  await inBlocks(height, options.signal, progress(height), async (firstRow, endRow) => {
    const images = await cache.load(labelsNear(labels, width, height, firstRow, endRow, radius));
    const windows = labelWindowCounts(labels, width, height, firstRow, endRow, radius);
    const present = [...windows.keys()];
    const weights = present.map((k) => windows.get(k)!);
    const decoded = present.map((k) => images.get(k)!);
    return (row) => {
      for (let col = 0; col < width; col++) {
        const i = row * width + col;
        const label = labels[i];
        if (label < 0) continue;
        const local = (row - firstRow) * width + col;
        const [x, y] = cellCentre(fine, col, row);
        const z = values[i];
        sum.fill(0);
        let weightSum = 0;
        for (let k = 0; k < present.length; k++) {
          const w = weights[k][local];
          if (w === 0) continue;
          const camera = prepared[present[k]];
          if (!project(camera, x, y, z, p)) continue;
          if (present[k] !== label && !(cameraScore(camera, x, y, z, p) > 0 && visibleFrom(camera, x, y, z, p, surface, tolerance, counts))) continue;
          addBilinear(decoded[k], p.u, p.v, w, sum);
          weightSum += w;
        }
        const o = 4 * i;
        data[o] = Math.round(sum[0] / weightSum);
        data[o + 1] = Math.round(sum[1] / weightSum);
        data[o + 2] = Math.round(sum[2] / weightSum);
        data[o + 3] = 255;
      }
    };
  });

  const cells = new Array<number>(cameras.length).fill(0);
  let coloured = 0;
  for (const label of labels) {
    if (label >= 0) {
      cells[label]++;
      coloured++;
    }
  }
  return {
    grid: { width, height, originEast: fine.originEast, originNorth: fine.originNorth, cellSize: fine.cellSize },
    subdivision,
    width,
    height,
    data,
    coverage: valued ? coloured / valued : 0,
    cellsByCamera: cameras.map((c, k) => ({ name: c.name, cells: cells[k] })).filter((c) => c.cells > 0),
    occlusionTests: counts,
  };
}

/**
 * Runs a pass over rows [0, height) in blocks, yielding to the event loop between them. For each
 * block `prepare` does what the block's rows share (choosing cameras, decoding photos, the seam
 * windows) and returns the per-row work, which runs row by row until the block's rows are done or
 * the block has used BLOCK_MS of the main thread's CPU (or twice that of wall time, on a loaded
 * machine); the next block starts at the first row not done and is sized from the rows per CPU
 * millisecond just seen (a row's cost changes where the grid enters or leaves photos: the
 * deadline keeps a block from running long, the sizing keeps its shared work worth it). Sized by
 * CPU rather than wall time: on a loaded machine the wall clock also counts the time the process
 * waits for a core, and blocks sized by it would shrink to a row each, their shared work (the seam
 * windows of 2 * seamRadius extra rows) repeated for every row.
 */
async function inBlocks(height: number, signal: AbortSignal | undefined, onRows: (rowsDone: number) => void, prepare: (firstRow: number, endRow: number) => Promise<(row: number) => void>): Promise<void> {
  let rows = 2;
  for (let firstRow = 0; firstRow < height; ) {
    signal?.throwIfAborted();
    const endRow = Math.min(height, firstRow + rows);
    const started = mainThreadCpuMs();
    const perRow = await prepare(firstRow, endRow);
    const wallStarted = performance.now();
    let row = firstRow;
    while (row < endRow) {
      perRow(row++);
      if (mainThreadCpuMs() - started > BLOCK_MS || performance.now() - wallStarted > 2 * BLOCK_MS) break;
    }
    const used = mainThreadCpuMs() - started;
    const rowsDone = row - firstRow;
    rows = Math.max(1, Math.min(Math.ceil(rows * 1.5), used > 0 ? Math.floor((rowsDone * BLOCK_MS) / used) : rows * 2));
    firstRow = row;
    onRows(firstRow);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  signal?.throwIfAborted();
}

/** CPU time of this thread (the event loop's), milliseconds: what a block takes from the loop. */
function mainThreadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/** Cameras whose image may frame some cell of the tile: the tile's box (its DSM heights) projected. */
function camerasFraming(cameras: PreparedCamera[], dsm: Grid, firstRow: number, endRow: number, firstColumn: number, endColumn: number): PreparedCamera[] {
  let low = Infinity;
  let high = -Infinity;
  for (let row = firstRow; row < endRow; row++) {
    for (let i = row * dsm.width + firstColumn, end = row * dsm.width + endColumn; i < end; i++) {
      const v = dsm.values[i];
      if (v < low) low = v;
      if (v > high) high = v;
    }
  }
  if (low > high) return [];
  const west = dsm.originEast + firstColumn * dsm.cellSize;
  const east = dsm.originEast + endColumn * dsm.cellSize;
  const north = dsm.originNorth - firstRow * dsm.cellSize;
  const south = dsm.originNorth - endRow * dsm.cellSize;
  return cameras.filter((camera) => {
    if (!(camera.centre[2] > low)) return false;
    const { r, t, source } = camera;
    let minU = Infinity;
    let maxU = -Infinity;
    let minV = Infinity;
    let maxV = -Infinity;
    for (const x of [west, east]) {
      for (const y of [south, north]) {
        for (const z of [low, high]) {
          const depth = r[6] * x + r[7] * y + r[8] * z + t[2];
          if (!(depth > 0)) return true; // part of the box behind the camera: keep it, the cells decide
          const u = (source.fx * (r[0] * x + r[1] * y + r[2] * z + t[0])) / depth + source.cx;
          const v = (source.fy * (r[3] * x + r[4] * y + r[5] * z + t[1])) / depth + source.cy;
          minU = Math.min(minU, u);
          maxU = Math.max(maxU, u);
          minV = Math.min(minV, v);
          maxV = Math.max(maxV, v);
        }
      }
    }
    return maxU >= 0 && maxV >= 0 && minU < source.width && minV < source.height;
  });
}
