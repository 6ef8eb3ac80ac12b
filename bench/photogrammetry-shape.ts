// Where the dense cloud's residual against the reference comes from (issue 28, brighton's accuracy):
// the signed vertical residual dz = reference - ours of the nearest pairs, after the median
// vertical offset, modelled by shapes a georegistration or calibration error would leave:
//   tilt       a plane over east / north (a model turned about a horizontal axis);
//   dome       the plane plus a radial term r² from the cloud's centre (a bowl or a dome: a wrong
//              focal length or radial distortion on a nadir flight);
//   quadratic  the full quadratic in east / north;
//   relief     dz against the height above the cloud's median height (a wrong focal length scales
//              the scene's depth: tall things too tall or too short);
// each with the median accuracy after removing it (the nearest reference point searched again from
// the corrected points), and dz's median by ring of distance from the centre. A shape that takes
// the median well down is systematic; a residual that none of them moves is noise.
import { median } from '../src/shared/median.ts';
import type { PointCloud } from '../src/shared/pointcloud/index.ts';
import { PointGrid } from './photogrammetry-reference.ts';

/** Least-squares coefficients of `basis` (one row of regressors per sample) fitting `values`: the normal equations, solved by Gaussian elimination. */
export function leastSquares(basis: number[][], values: number[]): number[] {
  const n = basis[0]?.length ?? 0;
  const a = Array.from({ length: n }, () => new Array<number>(n + 1).fill(0));
  for (let s = 0; s < basis.length; s++)
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) a[i][j] += basis[s][i] * basis[s][j];
      a[i][n] += basis[s][i] * values[s];
    }
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r][c]) > Math.abs(a[pivot][c])) pivot = r;
    [a[c], a[pivot]] = [a[pivot], a[c]];
    for (let r = 0; r < n; r++) {
      if (r === c || a[c][c] === 0) continue;
      const f = a[r][c] / a[c][c];
      for (let k = c; k <= n; k++) a[r][k] -= f * a[c][k];
    }
  }
  return a.map((row, i) => (row[i] === 0 ? 0 : row[n] / row[i]));
}

interface Shape {
  name: string;
  /** Regressors of a point (east, north relative to the centre; height above the median). */
  basis(x: number, y: number, h: number): number[];
  describe(c: number[]): string;
}

const SHAPES: Shape[] = [
  { name: 'tilt', basis: (x, y) => [1, x, y], describe: (c) => `slope ${(Math.atan(Math.hypot(c[1], c[2])) * 180 / Math.PI).toFixed(2)}°` },
  { name: 'dome', basis: (x, y) => [1, x, y, x * x + y * y], describe: (c) => `r² term ${(c[3] * 1e4).toFixed(3)} m per (100 m)² (at 40 m: ${(c[3] * 1600).toFixed(3)} m)` },
  { name: 'quadratic', basis: (x, y) => [1, x, y, x * x, x * y, y * y], describe: (c) => `xx ${(c[3] * 1e4).toFixed(3)}, xy ${(c[4] * 1e4).toFixed(3)}, yy ${(c[5] * 1e4).toFixed(3)} m per (100 m)²` },
  { name: 'relief', basis: (x, y, h) => [1, x, y, h], describe: (c) => `dz per metre of height ${c[3].toFixed(3)}` },
];

/** The residual analysis of our cloud against the reference (both in the same system and height datum). */
export function shapeFigures(ours: PointCloud, reference: PointCloud, maxSamples = 100_000): string[] {
  const stride = Math.max(1, Math.ceil(ours.count / maxSamples));
  const grid = new PointGrid(reference.positions, reference.count, 1);
  const p = ours.positions;
  const r = reference.positions;
  const at: number[] = [];
  const dz: number[] = [];
  for (let i = 0; i < ours.count; i += stride) {
    const n = grid.nearest(p[3 * i], p[3 * i + 1], p[3 * i + 2], 10);
    if (n.at < 0) continue;
    at.push(i);
    dz.push(r[3 * n.at + 2] - p[3 * i + 2]);
  }
  const offset = median(dz);
  const centre = [0, 1, 2].map((k) => median(at.map((i) => p[3 * i + k])));
  const rel = (i: number) => [p[3 * i] - centre[0], p[3 * i + 1] - centre[1], p[3 * i + 2] - centre[2]];
  // Fitted on the pairs within 1 m of the offset: a pair across a tree's edge is no surface residual.
  const fitted = at.map((_, s) => s).filter((s) => Math.abs(dz[s] - offset) < 1);
  const accuracyAfter = (correction: (i: number) => number): number => {
    const d: number[] = [];
    for (const i of at) {
      const n = grid.nearest(p[3 * i], p[3 * i + 1], p[3 * i + 2] + correction(i), 10);
      if (n.at >= 0) d.push(n.distance);
    }
    return median(d);
  };
  const m = (v: number) => `${v.toFixed(3)} m`;
  const lines = [
    `residual shape (${at.length} nearest pairs, ${fitted.length} within 1 m of the median dz ${m(offset)} fitted; centre east ${centre[0].toFixed(1)}, north ${centre[1].toFixed(1)}): ` +
      `after the vertical offset median ${m(accuracyAfter(() => offset))}, median |dz - offset| ${m(median(dz.map((v) => Math.abs(v - offset))))}`,
  ];
  for (const shape of SHAPES) {
    const c = leastSquares(fitted.map((s) => shape.basis(...(rel(at[s]) as [number, number, number]))), fitted.map((s) => dz[s]));
    const model = (i: number) => shape.basis(...(rel(i) as [number, number, number])).reduce((sum, b, k) => sum + b * c[k], 0);
    const left = fitted.map((s) => Math.abs(dz[s] - model(at[s])));
    lines.push(`  ${shape.name}: ${shape.describe(c)}; median |dz - fit| ${m(median(left))}; accuracy after removing it ${m(accuracyAfter(model))}`);
  }
  const rings = new Map<number, number[]>();
  for (const s of fitted) {
    const [x, y] = rel(at[s]);
    const ring = Math.floor(Math.hypot(x, y) / 10);
    if (!rings.has(ring)) rings.set(ring, []);
    rings.get(ring)!.push(dz[s] - offset);
  }
  lines.push(
    '  median dz - offset by distance from the centre: ' +
      [...rings.entries()].sort((a, b) => a[0] - b[0]).map(([ring, v]) => `${ring * 10}-${ring * 10 + 10} m ${v.length < 50 ? '(few) ' : ''}${median(v).toFixed(3)}`).join(', '),
  );
  return lines;
}
