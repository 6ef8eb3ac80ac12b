// What each reference image is matched against, from the sparse model: the source views that
// share the most sparse points with it among those whose triangulation angle (median over the
// shared points) is at least a few degrees (COLMAP's GetMaxOverlappingImages: many shared points,
// a baseline wide enough for depth), and the reference's depth range and seeds (the camera-frame
// depths of the points it sees).
import { cameraCenter, type SparseModel } from './sparse-model.ts';

export interface ReferencePlan {
  /** Indices into model.images. */
  sources: number[];
  minDepth: number;
  maxDepth: number;
  /** col, row, depth of the points the reference sees, at the model's image size. */
  seeds: Float32Array;
}

/** Pairs with fewer shared points are not considered. */
const MIN_SHARED_POINTS = 10;
/** At most this many shared points per pair enter the median angle. */
const ANGLE_SAMPLES = 200;

export function planReferences(model: SparseModel, maxSources: number, minAngleDegrees = 3): ReferencePlan[] {
  const seenBy = new Map<number, number[]>();
  model.images.forEach((image, i) => {
    for (const p of image.points) {
      const list = seenBy.get(p);
      if (list) list.push(i);
      else seenBy.set(p, [i]);
    }
  });
  const centers = model.images.map(cameraCenter);
  const P = model.points;
  return model.images.map((image, r) => {
    const shared = new Map<number, number[]>();
    for (const p of image.points) for (const s of seenBy.get(p) ?? []) if (s !== r) (shared.get(s) ?? shared.set(s, []).get(s)!).push(p);
    const candidates: { index: number; count: number; angle: number }[] = [];
    for (const [s, points] of shared) {
      if (points.length < MIN_SHARED_POINTS) continue;
      const angles: number[] = [];
      const stride = Math.max(1, Math.floor(points.length / ANGLE_SAMPLES));
      for (let k = 0; k < points.length; k += stride) {
        const p = points[k];
        const a = [P[3 * p] - centers[r][0], P[3 * p + 1] - centers[r][1], P[3 * p + 2] - centers[r][2]];
        const b = [P[3 * p] - centers[s][0], P[3 * p + 1] - centers[s][1], P[3 * p + 2] - centers[s][2]];
        const cos = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / (Math.hypot(a[0], a[1], a[2]) * Math.hypot(b[0], b[1], b[2]));
        angles.push((Math.acos(Math.min(1, Math.max(-1, cos))) * 180) / Math.PI);
      }
      angles.sort((x, y) => x - y);
      candidates.push({ index: s, count: points.length, angle: angles[angles.length >> 1] });
    }
    candidates.sort((x, y) => y.count - x.count);
    const wide = candidates.filter((c) => c.angle >= minAngleDegrees);
    // Too few wide pairs (a narrow corridor of photos): fill up with the best-overlapping others.
    const chosen = [...wide, ...candidates.filter((c) => c.angle < minAngleDegrees)].slice(0, maxSources).map((c) => c.index);

    const { R, t, camera } = image;
    const seeds: number[] = [];
    const depths: number[] = [];
    for (const p of image.points) {
      const x = P[3 * p], y = P[3 * p + 1], z = P[3 * p + 2];
      const zc = R[6] * x + R[7] * y + R[8] * z + t[2];
      if (!(zc > 0)) continue;
      const col = (camera.fx * (R[0] * x + R[1] * y + R[2] * z + t[0])) / zc + camera.cx;
      const row = (camera.fy * (R[3] * x + R[4] * y + R[5] * z + t[1])) / zc + camera.cy;
      seeds.push(col, row, zc);
      depths.push(zc);
    }
    depths.sort((a, b) => a - b);
    const at = (q: number) => depths[Math.min(depths.length - 1, Math.floor(q * depths.length))];
    // The 2nd-98th percentile of the sparse depths, widened: the dense surface reaches past them.
    const minDepth = depths.length ? at(0.02) * 0.6 : 0;
    const maxDepth = depths.length ? at(0.98) * 1.6 : 0;
    return { sources: chosen, minDepth, maxDepth, seeds: Float32Array.from(seeds) };
  });
}
