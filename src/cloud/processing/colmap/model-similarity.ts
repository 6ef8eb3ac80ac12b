// The similarity (scale, rotation, translation) that takes one COLMAP model's cameras onto
// another's: the georegistration stage exports the final placed model (levelled in memory by
// leveling.ts) as a COLMAP model folder for the dense stages by running `model_transformer` on the
// text model it was read from, with this similarity. Leveling is a similarity, so the fit is exact:
// the rotation from each camera's orientation (x_cam = R_i x_world, so R = R_i'^T R_i for every
// camera; averaged), which holds even when the centres lie on a line (lund's walk), and the scale
// and translation from the camera centres.
import { conjugateQuaternion, multiplyQuaternions, normalizeQuaternion, quaternionToMatrix, type Quaternion, type Vec3 } from '../../../shared/geo/rotation.ts';
import { cameraCentre, type ColmapModel } from './colmap-model.ts';

export interface Similarity {
  scale: number;
  /** Row-major 3x3. */
  rotation: number[][];
  translation: Vec3;
}

/** A camera's centre in the model's frame: -R^T t. */
/** x_to = scale * rotation * x_from + translation, fitted on the images both models share (by name). */
export function modelSimilarity(from: Pick<ColmapModel, 'images'>, to: Pick<ColmapModel, 'images'>): Similarity {
  const target = new Map(to.images.map((img) => [img.name, img]));
  const pairs = from.images.flatMap((img) => {
    const other = target.get(img.name);
    return other ? [{ from: img, to: other }] : [];
  });
  if (!pairs.length) throw new Error('the two models share no image');
  // Rotation: q = conj(q_to) * q_from for each camera, signs aligned to the first, averaged.
  const quaternions = pairs.map((p) => multiplyQuaternions(conjugateQuaternion(p.to.qvec), p.from.qvec));
  const sum = [0, 0, 0, 0];
  for (const q of quaternions) {
    const sign = q.reduce((s, v, i) => s + v * quaternions[0][i], 0) < 0 ? -1 : 1;
    for (let i = 0; i < 4; i++) sum[i] += sign * q[i];
  }
  const rotation = quaternionToMatrix(normalizeQuaternion(sum as Quaternion));
  const a = pairs.map((p) => cameraCentre(p.from));
  const b = pairs.map((p) => cameraCentre(p.to));
  const mean = (points: Vec3[]) => [0, 1, 2].map((k) => points.reduce((s, p) => s + p[k], 0) / points.length) as Vec3;
  const ma = mean(a);
  const mb = mean(b);
  const spread = (points: Vec3[], m: Vec3) => points.reduce((s, p) => s + (p[0] - m[0]) ** 2 + (p[1] - m[1]) ** 2 + (p[2] - m[2]) ** 2, 0);
  const spreadA = spread(a, ma);
  const scale = spreadA > 0 ? Math.sqrt(spread(b, mb) / spreadA) : 1;
  const rotated = rotation.map((row) => row[0] * ma[0] + row[1] * ma[1] + row[2] * ma[2]);
  const translation: Vec3 = [0, 1, 2].map((k) => mb[k] - scale * rotated[k]) as Vec3;
  return { scale, rotation, translation };
}

export function applySimilarity(s: Similarity, p: Vec3): Vec3 {
  return s.rotation.map((row, k) => s.scale * (row[0] * p[0] + row[1] * p[1] + row[2] * p[2]) + s.translation[k]) as Vec3;
}

/** The 3x4 matrix [scale * rotation | translation], three lines of four numbers, as model_transformer reads it. */
export function similarityMatrixText(s: Similarity): string {
  return s.rotation.map((row, k) => [...row.map((v) => s.scale * v), s.translation[k]].map((v) => v.toPrecision(17)).join(' ')).join('\n') + '\n';
}
