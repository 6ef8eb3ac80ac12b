// The extent of a box's face from its points, in two steps: where the face is (coverage: the
// slices along an axis in which the face's points cover a good share of the cells across it, so a
// pipe or a bolt running past the face's end, a cell or two wide, does not extend it), then where
// its edges are (the outline of the box's cross-section, fitted to all its points: front, back and
// sides, blurred by the noise; the extremes or quantiles of noisy points would overstate a 30 cm
// panel by several centimetres, and the side faces piled at the edges would bias any quantile).
import { quantile } from './geometry.ts';

/**
 * The extent [lo, hi] along axis a of a face whose points have coordinates (a, b): per slice of
 * `cellA` along a, how many cells of `cellB` across it hold points; the face is where that
 * coverage reaches half the face's typical coverage, from its middle outwards. A pipe or a bolt
 * running past the face's end covers a cell or two across and does not count; a hole shorter
 * than `maxGap` does not end the face. The crossing is interpolated between slices.
 */
export function coverageExtent(a: ArrayLike<number>, b: ArrayLike<number>, cellA: number, cellB: number, maxGap: number): { lo: number; hi: number } | null {
  const n = a.length;
  if (n < 10) return null;
  const aLo = quantile(a, 0.005) - 2 * cellA, aHi = quantile(a, 0.995) + 2 * cellA;
  const bLo = quantile(b, 0.005) - cellB, bHi = quantile(b, 0.995) + cellB;
  const na = Math.max(1, Math.ceil((aHi - aLo) / cellA)), nb = Math.max(1, Math.ceil((bHi - bLo) / cellB));
  if (na * nb > 4_000_000) return null;
  const occupied = new Uint8Array(na * nb);
  for (let k = 0; k < n; k++) {
    const i = Math.floor((a[k] - aLo) / cellA), j = Math.floor((b[k] - bLo) / cellB);
    if (i >= 0 && i < na && j >= 0 && j < nb) occupied[i * nb + j] = 1;
  }
  const profile = new Float64Array(na);
  for (let i = 0; i < na; i++) for (let j = 0; j < nb; j++) profile[i] += occupied[i * nb + j];
  // Typical coverage: the upper quartile of the slices that hold anything (the face's own slices).
  const held = Array.from(profile).filter((v) => v > 0);
  if (!held.length) return null;
  const typical = quantile(held, 0.75);
  const level = 0.5 * typical;
  // Start at the best-covered slice nearest the points' median, walk out while gaps stay short.
  const middle = Math.min(na - 1, Math.max(0, Math.floor((quantile(a, 0.5) - aLo) / cellA)));
  let start = middle;
  for (let d = 0; d < na; d++) {
    if (middle - d >= 0 && profile[middle - d] >= level) {
      start = middle - d;
      break;
    }
    if (middle + d < na && profile[middle + d] >= level) {
      start = middle + d;
      break;
    }
  }
  const gapSlices = Math.round(maxGap / cellA);
  const walk = (step: 1 | -1) => {
    let last = start, gap = 0;
    for (let i = start + step; i >= 0 && i < na; i += step) {
      if (profile[i] >= level) [last, gap] = [i, 0];
      else if (++gap > gapSlices) break;
    }
    // Interpolate the crossing between the last covered slice and the next one.
    const next = last + step;
    const beyond = next >= 0 && next < na ? profile[next] : 0;
    const t = Math.min(1, Math.max(0, (profile[last] - level) / Math.max(profile[last] - beyond, 1e-9)));
    // Slice centres are at aLo + (i + 0.5) cellA; the crossing lies t of the way to the next centre.
    return aLo + (last + 0.5 + step * t) * cellA;
  };
  const lo = walk(-1), hi = walk(1);
  return hi > lo ? { lo, hi } : null;
}

/**
 * The extent [lo, hi] along axis a of a box seen in a cross-section (a, t), its faces at t = front
 * and t = back known: the points lie on the outline of the rectangle [lo, hi] x [back, front]
 * (front, back and both sides), blurred by gaussian noise `sigma`. Maximum likelihood for points
 * spread evenly along that outline: each point costs its squared distance to the outline over
 * 2 sigma² (capped, so clutter costs the same wherever the edges go), and every point pays the
 * log of the outline's length (a larger box explains the points less sharply). The sides pin the
 * edges where a face's points alone would leave them loose, and a face blurred by the noise does
 * not widen it. Alternating golden-section searches from `start`.
 */
export function outlineExtent(a: ArrayLike<number>, t: ArrayLike<number>, front: number, back: number, sigma: number, start: { lo: number; hi: number }): { lo: number; hi: number } {
  const n = a.length;
  const s2 = 2 * Math.max(sigma, 0.003) ** 2;
  const cap = 4.5; // (3 sigma)² / 2 sigma²
  const cost = (lo: number, hi: number) => {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const x = a[i], y = t[i];
      let d2: number;
      if (x >= lo && x <= hi && y >= back && y <= front) {
        const d = Math.min(x - lo, hi - x, front - y, y - back);
        d2 = d * d;
      } else {
        const dx = Math.max(lo - x, 0, x - hi), dy = Math.max(back - y, 0, y - front);
        d2 = dx * dx + dy * dy;
      }
      sum += Math.min(d2 / s2, cap);
    }
    return sum + n * Math.log(2 * (hi - lo) + 2 * (front - back));
  };
  const golden = (f: (v: number) => number, lo: number, hi: number) => {
    const g = (Math.sqrt(5) - 1) / 2;
    let x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    let f1 = f(x1), f2 = f(x2);
    for (let i = 0; i < 30 && hi - lo > 2e-4; i++) {
      if (f1 < f2) {
        hi = x2;
        x2 = x1;
        f2 = f1;
        x1 = hi - g * (hi - lo);
        f1 = f(x1);
      } else {
        lo = x1;
        x1 = x2;
        f1 = f2;
        x2 = lo + g * (hi - lo);
        f2 = f(x2);
      }
    }
    return (lo + hi) / 2;
  };
  let { lo, hi } = start;
  const reach = Math.max(0.1, 4 * sigma);
  for (let round = 0; round < 3; round++) {
    const h = hi;
    lo = golden((v) => cost(v, h), lo - reach, Math.min(lo + reach, h - 0.02));
    const l = lo;
    hi = golden((v) => cost(l, v), Math.max(hi - reach, l + 0.02), hi + reach);
  }
  return { lo, hi };
}
