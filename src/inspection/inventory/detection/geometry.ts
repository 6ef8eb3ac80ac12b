// Small vector and statistics helpers the detector's stages share: 3-vectors, the eigenvectors of
// a symmetric 3 x 3 matrix (covariances: PCA boxes, plane normals), quantiles of typed arrays and a
// weighted least-squares line. Plain functions over numbers, no allocation in the hot loops.
import type { Vec3 } from './detection-types.ts';

export const DEG = Math.PI / 180;

export const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const cross = (a: Vec3, b: Vec3): Vec3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
export const scale = (a: Vec3, k: number): Vec3 => [a[0] * k, a[1] * k, a[2] * k];
export const add = (a: Vec3, b: Vec3, k = 1): Vec3 => [a[0] + k * b[0], a[1] + k * b[1], a[2] + k * b[2]];
export const norm = (a: Vec3) => Math.hypot(a[0], a[1], a[2]);
export const normalise = (a: Vec3): Vec3 => scale(a, 1 / (norm(a) || 1));

/**
 * Eigen decomposition of a symmetric 3 x 3 matrix given as [xx, xy, xz, yy, yz, zz] (cyclic
 * Jacobi rotations: exact to rounding, deterministic). Values in decreasing order, vectors unit.
 */
export function eigenSymmetric3(m: readonly number[]): { values: Vec3; vectors: [Vec3, Vec3, Vec3] } {
  const a = [
    [m[0], m[1], m[2]],
    [m[1], m[3], m[4]],
    [m[2], m[4], m[5]],
  ];
  const v = [
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1],
  ];
  for (let sweep = 0; sweep < 32; sweep++) {
    const off = Math.abs(a[0][1]) + Math.abs(a[0][2]) + Math.abs(a[1][2]);
    if (off < 1e-30 + 1e-15 * (Math.abs(a[0][0]) + Math.abs(a[1][1]) + Math.abs(a[2][2]))) break;
    for (const [p, q] of [[0, 1], [0, 2], [1, 2]] as const) {
      if (Math.abs(a[p][q]) < 1e-300) continue;
      const theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
      const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
      const c = 1 / Math.sqrt(t * t + 1), s = t * c;
      for (let k = 0; k < 3; k++) {
        const akp = a[k][p], akq = a[k][q];
        a[k][p] = c * akp - s * akq;
        a[k][q] = s * akp + c * akq;
      }
      for (let k = 0; k < 3; k++) {
        const apk = a[p][k], aqk = a[q][k];
        a[p][k] = c * apk - s * aqk;
        a[q][k] = s * apk + c * aqk;
      }
      for (let k = 0; k < 3; k++) {
        const vkp = v[k][p], vkq = v[k][q];
        v[k][p] = c * vkp - s * vkq;
        v[k][q] = s * vkp + c * vkq;
      }
    }
  }
  const order = [0, 1, 2].sort((i, j) => a[j][j] - a[i][i]);
  return {
    values: order.map((i) => a[i][i]) as Vec3,
    vectors: order.map((i) => [v[0][i], v[1][i], v[2][i]] as Vec3) as [Vec3, Vec3, Vec3],
  };
}

/** Running mean and covariance of weighted 3D points (centred on the first point for precision). */
export class Moments3 {
  private ox = 0;
  private oy = 0;
  private oz = 0;
  w = 0;
  private sx = 0;
  private sy = 0;
  private sz = 0;
  private sxx = 0;
  private sxy = 0;
  private sxz = 0;
  private syy = 0;
  private syz = 0;
  private szz = 0;

  add(x: number, y: number, z: number, w = 1): void {
    if (this.w === 0) {
      this.ox = x;
      this.oy = y;
      this.oz = z;
    }
    const dx = x - this.ox, dy = y - this.oy, dz = z - this.oz;
    this.w += w;
    this.sx += w * dx;
    this.sy += w * dy;
    this.sz += w * dz;
    this.sxx += w * dx * dx;
    this.sxy += w * dx * dy;
    this.sxz += w * dx * dz;
    this.syy += w * dy * dy;
    this.syz += w * dy * dz;
    this.szz += w * dz * dz;
  }

  mean(): Vec3 {
    return [this.ox + this.sx / this.w, this.oy + this.sy / this.w, this.oz + this.sz / this.w];
  }

  /** [xx, xy, xz, yy, yz, zz] */
  covariance(): number[] {
    const w = this.w, mx = this.sx / w, my = this.sy / w, mz = this.sz / w;
    return [this.sxx / w - mx * mx, this.sxy / w - mx * my, this.sxz / w - mx * mz, this.syy / w - my * my, this.syz / w - my * mz, this.szz / w - mz * mz];
  }
}

/** The q-quantile (0..1) of the first n values, by sorting a copy (n small to moderate). */
export function quantile(values: ArrayLike<number>, q: number, n = values.length): number {
  if (n === 0) return NaN;
  const sorted = new Float64Array(n);
  for (let i = 0; i < n; i++) sorted[i] = values[i];
  sorted.sort();
  const at = Math.min(Math.max(q, 0), 1) * (n - 1);
  const lo = Math.floor(at), hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

export function median(values: ArrayLike<number>, n = values.length): number {
  return quantile(values, 0.5, n);
}

/** Median absolute deviation from the median, scaled to a gaussian's standard deviation. */
export function robustSigma(values: ArrayLike<number>, n = values.length): number {
  const m = median(values, n);
  const deviations = new Float64Array(n);
  for (let i = 0; i < n; i++) deviations[i] = Math.abs(values[i] - m);
  return 1.4826 * median(deviations);
}

/** Weighted least-squares line v = a + b t; null when the t values do not spread. */
export function fitLine(t: ArrayLike<number>, v: ArrayLike<number>, w: ArrayLike<number>): { a: number; b: number } | null {
  let sw = 0, st = 0, sv = 0;
  for (let i = 0; i < t.length; i++) {
    sw += w[i];
    st += w[i] * t[i];
    sv += w[i] * v[i];
  }
  if (!(sw > 0)) return null;
  const mt = st / sw, mv = sv / sw;
  let stt = 0, stv = 0;
  for (let i = 0; i < t.length; i++) {
    stt += w[i] * (t[i] - mt) ** 2;
    stv += w[i] * (t[i] - mt) * (v[i] - mv);
  }
  if (!(stt > 0)) return null;
  const b = stv / stt;
  return { a: mv - b * mt, b };
}

/** Tukey's biweight of a residual over its scale: 0 beyond 1. */
export function biweight(u: number): number {
  if (Math.abs(u) >= 1) return 0;
  const s = 1 - u * u;
  return s * s;
}

export const formatM = (m: number) => `${m.toFixed(m < 10 ? 2 : 1)} m`;
