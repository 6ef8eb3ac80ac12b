// A robust circle through horizontal points: the cross-section of a monopole's shaft, or the circle
// through a lattice tower's legs. Geometric residuals (distance to the circle), Gauss-Newton steps
// with Tukey's biweight, the scale shrinking from a wide start to what the points support, so that
// equipment, mount arms and a lattice's bracing inside the circle carry no weight. For points spread
// with a symmetry about the centre (a ring, three equal legs with their bracing) the fitted centre
// is the centre even where the circle describes them only roughly.
import { biweight, robustSigma } from './geometry.ts';

export interface CircleFit {
  cx: number;
  cy: number;
  r: number;
  /** The biweight's final scale (m): ~4.7 x the inliers' spread about the circle. */
  scale: number;
  /** Points with weight: within the final scale of the circle. */
  inliers: number;
  /** Share of 10° sectors around the centre holding an inlier (1: a full ring; ~0.1-0.3: legs). */
  coverage: number;
  /** Inlier count per 10° sector, for the legs' directions. */
  sectors: Uint32Array;
}

const SECTORS = 36;

/**
 * Fits a circle to the points (xs, ys) starting from (cx, cy, r). `startScale` is the first
 * biweight scale (m), `minScale` the smallest it may shrink to (the noise and the structure's own
 * thickness). Null when too few points support a circle.
 */
export function fitCircle(xs: ArrayLike<number>, ys: ArrayLike<number>, n: number, start: { cx: number; cy: number; r: number }, startScale: number, minScale: number): CircleFit | null {
  if (n < 8) return null;
  let { cx, cy, r } = start;
  let scale = startScale;
  const residuals = new Float64Array(n);
  for (let iteration = 0; iteration < 30; iteration++) {
    // Normal equations of the weighted Gauss-Newton step in (cx, cy, r).
    let a00 = 0, a01 = 0, a02 = 0, a11 = 0, a12 = 0, a22 = 0, b0 = 0, b1 = 0, b2 = 0, wsum = 0;
    for (let i = 0; i < n; i++) {
      const dx = xs[i] - cx, dy = ys[i] - cy;
      const d = Math.hypot(dx, dy) || 1e-9;
      const res = d - r;
      residuals[i] = res;
      const w = biweight(res / scale);
      if (w === 0) continue;
      // d(res)/d(cx, cy, r) = (-dx/d, -dy/d, -1)
      const j0 = -dx / d, j1 = -dy / d;
      a00 += w * j0 * j0; a01 += w * j0 * j1; a02 -= w * j0; a11 += w * j1 * j1; a12 -= w * j1; a22 += w;
      b0 -= w * j0 * res; b1 -= w * j1 * res; b2 += w * res;
      wsum += w;
    }
    if (wsum < 6) return null;
    const det = a00 * (a11 * a22 - a12 * a12) - a01 * (a01 * a22 - a12 * a02) + a02 * (a01 * a12 - a11 * a02);
    if (!(Math.abs(det) > 1e-18)) return null;
    const s0 = (b0 * (a11 * a22 - a12 * a12) - a01 * (b1 * a22 - a12 * b2) + a02 * (b1 * a12 - a11 * b2)) / det;
    const s1 = (a00 * (b1 * a22 - a12 * b2) - b0 * (a01 * a22 - a12 * a02) + a02 * (a01 * b2 - b1 * a02)) / det;
    const s2 = (a00 * (a11 * b2 - b1 * a12) - a01 * (a01 * b2 - b1 * a02) + b0 * (a01 * a12 - a11 * a02)) / det;
    // A step longer than the scale is cut: the biweight's weights change within it.
    const step = Math.hypot(s0, s1, s2);
    const k = step > scale ? scale / step : 1;
    cx += k * s0;
    cy += k * s1;
    r += k * s2;
    if (!(r > 0)) return null;
    // Shrink the scale towards 4.685 robust deviations of the residuals of the points in play.
    const inPlay: number[] = [];
    for (let i = 0; i < n; i++) if (Math.abs(residuals[i]) < scale) inPlay.push(residuals[i]);
    const target = Math.max(minScale, 4.685 * (inPlay.length >= 6 ? robustSigma(inPlay) : scale));
    const next = Math.max(target, scale * 0.7);
    if (step * k < 1e-5 && Math.abs(next - scale) < 1e-4) break;
    scale = next;
  }
  const sectors = new Uint32Array(SECTORS);
  let inliers = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i] - cx, dy = ys[i] - cy;
    if (Math.abs(Math.hypot(dx, dy) - r) >= scale) continue;
    inliers++;
    const angle = Math.atan2(dx, dy); // clockwise from +y (north)
    sectors[Math.min(SECTORS - 1, Math.floor(((angle / (2 * Math.PI) + 1) % 1) * SECTORS))]++;
  }
  // A sector counts when it holds a fair share of the inliers: a stray point does not make a ring.
  let covered = 0;
  for (const c of sectors) if (c > 0 && c >= (0.2 * inliers) / SECTORS) covered++;
  return { cx, cy, r, scale, inliers, coverage: covered / SECTORS, sectors };
}
