// How well a mapper model holds together, read from its points' reprojection errors and from its
// cameras' distances to their GPS positions.
//
// A street walk (lund) now and then comes out of COLMAP's incremental mapping bent: every photo is
// placed, but along one stretch of the walk the points fit their photos twice as badly as elsewhere
// (photos 12-19 at 1.2-1.3 px where the rest have 0.6-0.8: mean 0.81 px, against 0.62-0.70 for a
// model of the same photos that holds together). Bundle adjustment does not leave such a minimum;
// mapping again does, above all after the pairs' geometric verification is run again (the engine
// says why). `strainedImages` names the photos of such a stretch.
//
// It also comes out folded: a stretch of the walk turned away from the rest with no stretch of
// photos fitting markedly worse (lund: 0.76 and 0.85 px, not strained; 2 of 17 runs on one day),
// its cameras tens to hundreds of metres from their GPS positions after the best fit of the whole
// model to them (the furthest 242 m, the median camera 6.7 m; in 16 models without a fold the
// furthest was 9-93 m, none flagged: bench/README.md, session 20). `dislocatedImages` names them;
// the engine maps such a model again as it does a strained one.
import { median } from '../../../shared/median.ts';
import type { ColmapModel } from './colmap-model.ts';
import { GPS_OUTLIER_METRES } from './colmap-commands.ts';

/** A photo whose points fit this many times worse than the median photo's is strained. */
export const STRAIN_RATIO = 1.5;
/**
 * A model is strained when at least this many photos are (and this share of them): one photo
 * that fits badly (a blurred one, a reflection) is not a bent model. Lund, 62 mapper models
 * measured (bench/README.md, session 19): the 6 at 0.73 px or more had 3-8 strained photos each,
 * the 56 at 0.62-0.73 px 0-2; brighton_beach's models none.
 */
export const STRAINED_MIN_IMAGES = 3;
export const STRAINED_MIN_SHARE = 0.1;

/**
 * A camera further from its GPS position after the model's fit to them than GPS_OUTLIER_METRES
 * (30 m, three times the robust fit's outlier distance: well beyond a phone's GPS error along a
 * street, lund: a median 4-7 m) and this many times the median camera's distance is dislocated. A
 * model is folded when at least STRAINED_MIN_IMAGES of its cameras (and STRAINED_MIN_SHARE of
 * them) are: one photo with a bad GPS fix is not a fold.
 */
export const DISLOCATED_MEDIAN_RATIO = 5;

/** The mean reprojection error over every observation (pixels), as COLMAP weighs it; null: no points. */
export function meanReprojectionError(model: Pick<ColmapModel, 'errors' | 'trackLengths'>): number | null {
  let observations = 0;
  let weighted = 0;
  for (let i = 0; i < model.errors.length; i++) {
    observations += model.trackLengths[i];
    weighted += model.errors[i] * model.trackLengths[i];
  }
  return observations ? weighted / observations : null;
}

/** Each image's mean over the reprojection errors of the points it observes (images without points left out). */
export function imageReprojectionErrors(model: Pick<ColmapModel, 'images' | 'errors' | 'pointIds'>): Map<string, number> {
  const indexOf = new Map<number, number>();
  model.pointIds.forEach((id, i) => indexOf.set(id, i));
  const perImage = new Map<string, number>();
  for (const image of model.images) {
    let sum = 0;
    let count = 0;
    for (const id of image.point3dIds) {
      const i = indexOf.get(id);
      if (i === undefined) continue;
      sum += model.errors[i];
      count++;
    }
    if (count) perImage.set(image.name, sum / count);
  }
  return perImage;
}

/** The photos of a strained model (see STRAINED_MIN_IMAGES), worst first; empty when the model holds together. */
export function strainedImages(model: Pick<ColmapModel, 'images' | 'errors' | 'pointIds'>): string[] {
  const perImage = [...imageReprojectionErrors(model)].sort((a, b) => b[1] - a[1]);
  if (!perImage.length) return [];
  const typical = median(perImage.map(([, error]) => error));
  const strained = perImage.filter(([, error]) => error > STRAIN_RATIO * typical).map(([name]) => name);
  return aStretch(strained, perImage.length);
}

/**
 * The cameras of a folded model (see DISLOCATED_MEDIAN_RATIO), furthest first; empty when the model
 * agrees with its GPS positions. `metres`: each camera's distance to its GPS position.
 */
export function dislocatedImages(metres: Map<string, number>): string[] {
  const distances = [...metres].sort((a, b) => b[1] - a[1]);
  if (!distances.length) return [];
  const limit = Math.max(GPS_OUTLIER_METRES, DISLOCATED_MEDIAN_RATIO * median(distances.map(([, d]) => d)));
  return aStretch(
    distances.filter(([, d]) => d > limit).map(([name]) => name),
    distances.length,
  );
}

/** `names` when they are a stretch of the model's `total` photos (STRAINED_MIN_IMAGES, STRAINED_MIN_SHARE), else none. */
function aStretch(names: string[], total: number): string[] {
  return names.length >= Math.max(STRAINED_MIN_IMAGES, Math.ceil(STRAINED_MIN_SHARE * total)) ? names : [];
}
