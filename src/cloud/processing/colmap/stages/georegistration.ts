// Stage `georegistration`: the mapper's largest model placed in the output system's local frame
// (georeference.ts) by COLMAP's model_aligner fitted to the images' GPS positions (a robust fit
// and a least-squares one; the nearer kept), levelled (leveling.ts), judged (misoriented cameras,
// a strained or folded stretch: leveling.ts, model-strain.ts), and written as a COLMAP model folder
// for the stages after (`modelFolder`: the final model exactly as the outputs are written from it).
//
// The re-map loop (a misoriented, strained or folded model mapped again) lives here, not in the
// mapping stage: what starts it is only seen on a placed model (orientations against the other
// photos and the gimbal, distances to GPS positions), and each candidate must be placed to be
// compared (betterPlaced). It resumes the mapping session (mapping.ts: MapperSession) from the
// mapping stage's record rather than the mapping stage placing models itself, so that mapping stays
// "a model with enough images" and placement stays in one stage.
// Failures: 10410 when the model cannot be georeferenced (no GPS, no consistent fit).
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Quaternion, Vec3 } from '../../../../shared/geo/rotation.ts';
import { EngineError } from '../../engine.ts';
import { ALIGNMENT_MAX_ERROR_METRES, alignerArgs, converterArgs, GPS_OUTLIER_METRES, MAPPER_ATTEMPTS } from '../colmap-commands.ts';
import { readTextModel, registeredImageCount, type ColmapModel } from '../colmap-model.ts';
import { localFrame, type LocalFrame } from '../georeference.ts';
import { levelModel, medianReferenceResidual, misorientedCameras, referenceResiduals, type LevelingOutcome } from '../leveling.ts';
import { modelSimilarity, similarityMatrixText } from '../model-similarity.ts';
import { dislocatedImages, meanReprojectionError, STRAIN_RATIO, strainedImages } from '../model-strain.ts';
import type { Downloaded } from './download.ts';
import type { Extracted } from './features.ts';
import { MapperSession, type Mapped } from './mapping.ts';
import type { Matched } from './matching.ts';
import type { Stage, StageContext } from './stage.ts';

/** A mapper model georeferenced and levelled, with what the engine judges it by. */
export interface PlacedModel {
  readonly model: ColmapModel;
  /** The text model folder `model` was read from (before leveling). */
  readonly folder: string;
  readonly leveling: LevelingOutcome | null;
  /** Cameras registered in an orientation the other photos contradict (leveling.ts). */
  readonly misoriented: string[];
  /** Photos of a bent stretch of the model (model-strain.ts). */
  readonly strained: string[];
  /** Cameras of a folded stretch, far from their GPS positions (model-strain.ts). */
  readonly dislocated: string[];
  /** Mean reprojection error (pixels). */
  readonly error: number;
}

export interface Placement {
  readonly placed: PlacedModel;
  /** The output system's local frame; null for an arbitrary output system (no GPS). */
  readonly frame: LocalFrame | null;
  /** Each image's GPS position in the local frame; null without a frame. */
  readonly references: ReadonlyMap<string, Vec3> | null;
  /** For the quality report. */
  readonly matching: { method: string; pairs: number | null; exhaustive_pairs: number; fallback_pairs: number | null };
  /** A binary COLMAP model folder of `placed.model`: the dense stages start from it. */
  readonly modelFolder: string;
}

/**
 * Whether a model mapped again replaces the one placed before: fewer misoriented cameras, else fewer
 * dislocated ones (a fold misplaces cameras by tens of metres, more than any error in pixels tells),
 * else a lower mean reprojection error.
 */
export function betterPlaced(candidate: Pick<PlacedModel, 'misoriented' | 'dislocated' | 'error'>, current: Pick<PlacedModel, 'misoriented' | 'dislocated' | 'error'>): boolean {
  if (candidate.misoriented.length !== current.misoriented.length) return candidate.misoriented.length < current.misoriented.length;
  if (candidate.dislocated.length !== current.dislocated.length) return candidate.dislocated.length < current.dislocated.length;
  return candidate.error < current.error;
}

type GeoregistrationInputs = { downloaded: Downloaded; extracted: Extracted; matched: Matched; mapped: Mapped };

export const georegistrationStage: Stage<GeoregistrationInputs, Placement> = {
  name: 'georegistration',
  title: 'Georeferencing',
  weight: 4,
  async run(context, inputs) {
    await context.progress(0, 'Georeferencing');
    const { frame, references, refPath } = await referencePositions(context, inputs.downloaded);
    const placer = new Placer(context, inputs.downloaded, frame, references, refPath);
    const session = new MapperSession(context, inputs, inputs.mapped.state);
    const placed = await placeBest(context, session, placer, inputs);
    const images = inputs.downloaded.images.length;
    const { matcher, selection } = inputs.matched;
    const { matched, fallbackPairCount } = session.state();
    const exhaustivePairs = (images * (images - 1)) / 2;
    const matching = { method: matcher, pairs: selection ? matched.length : matcher === 'exhaustive' ? exhaustivePairs : null, exhaustive_pairs: exhaustivePairs, fallback_pairs: fallbackPairCount };
    const modelFolder = await writeFinalModel(context, placed);
    return { placed, frame, references, matching, modelFolder };
  },
};

/** The local frame of the output system and the images' positions in it, written for model_aligner. */
async function referencePositions(context: StageContext, downloaded: Downloaded): Promise<{ frame: LocalFrame | null; references: Map<string, Vec3> | null; refPath: string }> {
  const { input } = context;
  const positions = input.images.filter((i) => i.latitude !== null && i.longitude !== null).map((i) => ({ latitude: i.latitude!, longitude: i.longitude!, altitude: i.altitude }));
  const frame = input.outputCrs.type === 'projected' ? localFrame(input.outputCrs, positions) : null;
  if (input.outputCrs.type === 'projected' && !frame) {
    throw new EngineError(10410, `Processing failed: the model cannot be georeferenced in ${input.outputCrs.name}: ${positions.length ? 'the image positions cannot be projected into it' : 'no image carries a GPS position (the colmap engine does not use GCPs)'}.`);
  }
  if (!frame) return { frame, references: null, refPath: '' };
  const references = new Map<string, Vec3>();
  for (const l of downloaded.images) {
    if (l.image.latitude === null || l.image.longitude === null) continue;
    const ref = frame.fromWgs84({ latitude: l.image.latitude, longitude: l.image.longitude, altitude: l.image.altitude });
    if (ref) references.set(l.name, ref);
  }
  const refPath = path.join(context.work, 'reference_positions.txt');
  await fsp.writeFile(refPath, [...references].map(([name, p]) => `${name} ${p.map((v) => v.toFixed(4)).join(' ')}`).join('\n') + '\n');
  return { frame, references, refPath };
}

/**
 * The mapper's best model placed; then, while it has misoriented cameras, a strained or a folded
 * stretch, mapped again and placed again, the better kept (betterPlaced).
 *
 * Cameras turned on their side or looking down next to level ones: a wrong registration
 * (misorientedCameras), most likely of images weakly tied to the rest: another mapper attempt
 * (another seed), kept only when it places as many images with fewer such cameras;
 * MAPPER_ATTEMPTS - 1 such attempts at most, however many came before. With selected pairs, an
 * attempt is preceded by the fallback's matching of those images with every image only when
 * anotherSeedBeforeFallback says it costs less than another seed: lund's eight photos after the
 * street corner, turned together in 2 runs of 14, have no pairs beyond their neighbours, and the
 * fallback's 152 pairs (~90 s) changed nothing in two attempts.
 *
 * A strained model (model-strain.ts: a stretch of photos whose points fit much worse than the rest,
 * a bent model) is mapped again too, after the pairs' geometric verification is run again (3 s on
 * lund, colmap-database.ts): which pairs COLMAP verifies as calibrated (an essential matrix) or not
 * (a fundamental matrix) is decided by RANSAC's draw when the camera's distortion is unknown (lund:
 * 33 of 133 pairs change from run to run), and a bent model comes of some draws more than of
 * others: on one such verification four mapper seeds gave 0.73, 0.75, 0.64 and 0.75 px, three of
 * them strained, where of 23 fresh verifications of the same matches 3 gave a strained model
 * (bench/README.md, session 19). A folded model (cameras far from their GPS positions,
 * model-strain.ts) is mapped again the same way.
 */
async function placeBest(context: StageContext, session: MapperSession, placer: Placer, inputs: GeoregistrationInputs): Promise<PlacedModel> {
  const { best } = inputs.mapped;
  let placed = await placer.place(best.dir, '');
  const lastAttempt = session.attempts + MAPPER_ATTEMPTS - 1;
  while ((placed.misoriented.length || placed.strained.length || placed.dislocated.length) && session.attempts < lastAttempt) {
    if (placed.misoriented.length && session.beforeFallback()) {
      const misoriented = new Set(placed.misoriented);
      const images = inputs.downloaded.images.flatMap((l, i) => (misoriented.has(l.name) ? [i] : []));
      if (!session.seedFirst(images, 'misoriented')) await session.matchWithAll(images, 'misoriented');
    } else if (!placed.misoriented.length) {
      await session.verifyAgain();
    }
    const again = await session.mapOnce();
    if (!again || again.registered < best.registered) continue;
    const candidate = await placer.place(again.dir, `-${session.attempts}`);
    const kept = betterPlaced(candidate, placed);
    context.log(
      `mapper attempt ${session.attempts}: ${candidate.misoriented.length} misoriented camera(s) against ${placed.misoriented.length}, ${candidate.dislocated.length} dislocated against ${placed.dislocated.length}, ` +
        `mean reprojection error ${candidate.error.toFixed(3)} against ${placed.error.toFixed(3)} px: ${kept ? 'kept' : 'not kept'}`,
    );
    if (kept) placed = candidate;
  }
  return placed;
}

/** Places mapper models: georeferenced (when GPS allows), levelled, judged. */
class Placer {
  private readonly maxError: number;

  constructor(
    private readonly context: StageContext,
    private readonly downloaded: Downloaded,
    private readonly frame: LocalFrame | null,
    private readonly references: Map<string, Vec3> | null,
    private readonly refPath: string,
  ) {
    this.maxError = ALIGNMENT_MAX_ERROR_METRES / (frame?.unitFactor ?? 1); // in the output system's unit
  }

  /** A mapper model (binary folder `dir`) placed; `tag` keeps its folders apart. */
  async place(dir: string, tag: string): Promise<PlacedModel> {
    const { context, frame, references } = this;
    if (!frame || !references) {
      const folder = await this.exportModel(dir, `model${tag}`);
      return this.judged(await readTextModel(folder), folder, null, [], [], tag);
    }
    // Two fits of the model to the GPS positions: COLMAP's robust one (RANSAC, 10 m) and a plain
    // least-squares one over every position. On noisy phone GPS along a walk the robust fit now
    // and then settles on a poor scale (lund: cameras a median 25-36 m from their GPS positions in
    // 2 runs of 8, 4-7 m otherwise); the fit whose cameras lie nearer their GPS positions (median) is kept.
    const fits: { name: string; model: ColmapModel; folder: string; residual: number; furthest: number; far: number }[] = [];
    for (const [name, robust] of [['robust', true], ['least squares', false]] as const) {
      const aligned = path.join(context.work, `${robust ? 'aligned' : 'aligned-ls'}${tag}`);
      await fsp.mkdir(aligned);
      await context.colmap('georegistration', alignerArgs(dir, aligned, this.refPath, this.maxError, robust), { text: 'Georeferencing', within: robust ? { start: 0, end: 0.5 } : { start: 0.5, end: 0.75 } });
      if ((await registeredImageCount(aligned)) === 0) continue;
      const folder = await this.exportModel(aligned, `${robust ? 'model' : 'model-ls'}${tag}`);
      const fitted = await readTextModel(folder);
      const metres = [...this.metresFromGps(fitted).values()];
      const far = metres.filter((d) => d > GPS_OUTLIER_METRES).length;
      fits.push({ name, model: fitted, folder, residual: medianReferenceResidual(fitted, references) * frame.unitFactor, furthest: Math.max(0, ...metres), far });
    }
    // The furthest camera and the count of GPS outliers: what a fold would show (model-strain.ts).
    context.log(
      `georegistration${tag}: ${fits.map((f) => `${f.name} fit, cameras a median ${f.residual.toFixed(2)} m from their GPS positions (${f.far} beyond ${GPS_OUTLIER_METRES} m, furthest ${f.furthest.toFixed(1)} m)`).join('; ') || 'no fit'}`,
    );
    fits.sort((a, b) => a.residual - b.residual);
    if (!fits.length) {
      throw new EngineError(10410, `Processing failed: georegistration found no consistent fit between the model and the GPS positions of ${references.size} image(s) (at least 3 calibrated images with a GPS position within ${ALIGNMENT_MAX_ERROR_METRES} m are needed). See the processing log.`);
    }
    const { model, folder } = fits[0];
    const leveling = levelModel(model, references, this.maxError);
    if (leveling.reason) {
      const refit = leveling.refit;
      context.log(
        `${leveling.reason === 'collinear' ? 'cameras nearly collinear' : leveling.reason === 'tilted' ? 'model rolled' : 'model upside down'} (spread ratio ${leveling.spreadRatio.toFixed(3)}): model turned ${leveling.rotationDeg.toFixed(1)} degrees about the cameras' main direction, ` +
          `then refitted level to the GPS positions (scale ${refit?.scale.toFixed(4)}, turn ${refit?.turnDeg.toFixed(2)} degrees, ${refit?.used} positions)`,
      );
    }
    const byName = new Map(this.downloaded.images.map((l) => [l.name, l]));
    const misoriented = misorientedCameras(model, (name) => {
      const q = byName.get(name)?.image.quaternion;
      return q?.length === 4 ? (q as Quaternion) : null;
    });
    if (misoriented.length) context.log(`misoriented cameras${tag} (on their side, or not seeing up where the other photos or their gimbal angles say): ${misoriented.length}: ${misoriented.join(' ')}`);
    const metres = this.metresFromGps(model);
    const dislocated = dislocatedImages(metres);
    if (dislocated.length) context.log(`folded model${tag}: ${dislocated.length} camera(s) far from their GPS positions: ${dislocated.map((name) => `${name} ${metres.get(name)!.toFixed(0)} m`).join(', ')}`);
    return this.judged(model, folder, leveling, misoriented, dislocated, tag);
  }

  /** A binary model exported to text (model_converter) in the work folder's `folder`. */
  private async exportModel(from: string, folder: string): Promise<string> {
    const textDir = path.join(this.context.work, folder);
    await fsp.mkdir(textDir);
    await this.context.colmap('model export', converterArgs(from, textDir), { text: 'Georeferencing', within: { start: 0.75, end: 1 } });
    return textDir;
  }

  /** Each camera's distance to its GPS position, in metres. */
  private metresFromGps(model: ColmapModel): Map<string, number> {
    return new Map([...referenceResiduals(model, this.references!)].map(([name, d]) => [name, d * this.frame!.unitFactor]));
  }

  /** The placed model with its strain (model-strain.ts) and mean reprojection error, logged. */
  private judged(model: ColmapModel, folder: string, leveling: LevelingOutcome | null, misoriented: string[], dislocated: string[], tag: string): PlacedModel {
    const strained = strainedImages(model);
    const error = meanReprojectionError(model) ?? Infinity;
    this.context.log(`model${tag}: mean reprojection error ${error.toFixed(3)} px${strained.length ? `; strained (points fitting over ${STRAIN_RATIO} times worse than the median photo's) in ${strained.length} photo(s): ${strained.join(' ')}` : ''}`);
    return { model, folder, leveling, misoriented, strained, dislocated, error };
  }
}

/**
 * The final model as a binary COLMAP model folder (`final-model/`): its text folder (as read, before
 * leveling) transformed by model_transformer with the similarity that takes it onto the model in
 * memory (model-similarity.ts), so that the dense stages see the cameras and points the outputs
 * are written from.
 */
export async function writeFinalModel(context: StageContext, placed: Pick<PlacedModel, 'model' | 'folder'>): Promise<string> {
  const source = await readTextModel(placed.folder);
  const transformPath = path.join(context.work, 'final-model-transform.txt');
  await fsp.writeFile(transformPath, similarityMatrixText(modelSimilarity(source, placed.model)));
  const output = path.join(context.work, 'final-model');
  await fsp.mkdir(output);
  await context.colmap('model export', ['model_transformer', '--input_path', placed.folder, '--output_path', output, '--transform_path', transformPath], { text: 'Georeferencing', within: { start: 1, end: 1 } });
  return output;
}
