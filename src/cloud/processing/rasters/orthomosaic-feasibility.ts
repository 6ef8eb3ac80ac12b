// Whether an orthophoto can be made from these cameras at all, and if not why, in words for the
// project's outputs list (issue 28: a stage that cannot run for a dataset is listed with its
// reason, never silently missing). Street-level photos look at façades and the horizon: each
// ground cell would be seen at a grazing angle, if at all, and the "orthophoto" would be the
// façades smeared over the street. The rule is on the median camera so that a few obliques in a
// nadir survey (or a few photos of the ground in a walk) do not decide for the whole set.
import type { Grid } from './grid.ts';
import type { OrthoCamera } from './orthomosaic-camera.ts';

/** Largest median tilt from nadir (degrees) at which an orthophoto is attempted. */
export const MAX_MEDIAN_TILT_DEGREES = 60;

export type OrthoFeasibility = { ok: true } | { ok: false; reason: string };

/**
 * `ground`: the DSM (its 10th percentile height is taken as the ground, below roofs and trees) or
 * a ground height in the local frame.
 */
export function orthoFeasibility(cameras: OrthoCamera[], ground: Grid | number): OrthoFeasibility {
  if (cameras.length === 0) return { ok: false, reason: 'no camera was reconstructed' };
  const groundHeight = typeof ground === 'number' ? ground : percentile(ground.values, 0.1);
  if (groundHeight === null || !Number.isFinite(groundHeight)) return { ok: false, reason: 'the DSM has no cell with a height' };

  // Camera axis in the local frame: the third row of the world-to-camera rotation.
  const tilts = cameras.map((c) => (Math.acos(Math.max(-1, Math.min(1, -c.rotation[8] / Math.hypot(c.rotation[6], c.rotation[7], c.rotation[8])))) * 180) / Math.PI).filter(Number.isFinite);
  if (tilts.length === 0) return { ok: false, reason: 'no camera has a finite orientation' };
  const tilt = median(tilts);
  if (tilt > MAX_MEDIAN_TILT_DEGREES) {
    const where = tilt >= 75 ? 'at the horizon' : 'obliquely';
    return { ok: false, reason: `the photos look ${where} (median tilt ${Math.round(tilt)}° from nadir): an orthophoto needs photos looking down (median tilt at most ${MAX_MEDIAN_TILT_DEGREES}°)` };
  }

  const heights = cameras
    .map((c) => {
      const [r, t] = [c.rotation, c.translation];
      return -(r[2] * t[0] + r[5] * t[1] + r[8] * t[2]) - groundHeight;
    })
    .filter(Number.isFinite);
  if (heights.length === 0) return { ok: false, reason: 'no camera has a finite position' };
  const height = median(heights);
  if (!(height > 0)) return { ok: false, reason: `the cameras are not above the ground (median camera ${(-height).toFixed(1)} below the DSM's ground height)` };
  return { ok: true };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The q-quantile of the finite values (NaN is nodata; at most ~100,000 of them read, evenly spaced), or null without any. */
export function percentile(values: Float32Array, q: number): number | null {
  const stride = Math.max(1, Math.ceil(values.length / 100_000));
  const finite = values.filter((v, i) => i % stride === 0 && Number.isFinite(v)).sort();
  return finite.length ? finite[Math.min(finite.length - 1, Math.floor(q * finite.length))] : null;
}
