// The `colmap` engine: real structure-from-motion with COLMAP (CPU), run locally as child
// processes in a work folder (ENGINE_WORK_DIR, default DATA_DIR/work), removed afterwards.
//
// Steps and their share of the engine's progress:
//   download the registered images from object storage              0-5 %
//   feature extraction, intrinsics seeded from EXIF (per camera)    5-25 %
//   matching (GPS-selected pairs / exhaustive / sequential)          25-50 %
//   incremental mapping                                              50-88 %
//   georegistration to the GPS positions in the output system        88-92 %
//   outputs                                                          92-100 %
// A placed model with misoriented cameras (leveling.ts), a strained stretch of photos or a folded
// one (model-strain.ts) is mapped again, the latter two after the geometric verification is run
// again (colmap-database.ts); the better of the models is kept.
// Outputs (under input.outputPrefix): `point_cloud` (LAS 1.2, point format 2 with RGB, in the
// output system, scale 0.001, offset = offset_3d_xyz), `point_cloud_ply` (the same points, PLY
// with double coordinates), `calibrated_camera_parameters_json`, `quality_report`,
// `processing_log` (every command and its output) and `project_thumb`. The dense cloud, mesh, DSM
// and orthophoto need COLMAP's CUDA dense stereo: listed `not available`.
//
// Failures (EngineError codes of the cloud spec):
//   10601 fewer than 3 readable images, or an image gone from storage;
//   10201 fewer than max(3, half of the images) registered by the mapper;
//   10002 the time limit (ENGINE_TIME_LIMIT_SECONDS) passed: COLMAP is killed;
//   10003 COLMAP ran out of memory (killed by SIGKILL / exit 137, or bad_alloc in its output);
//   10001 COLMAP missing or crashed (killed by another signal);
//   10410 COLMAP exited with an error, or georegistration failed.
// A cancel (input.signal) kills the running command and rethrows the signal's reason.
// Past 350 lines because one run's steps share its work folder, log, progress and abort handling
// (the `colmap` closure); what can stand alone does: commands, pair selection, model reading,
// georeference, leveling.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import exifr from 'exifr';
import { loadSharp } from '../../../shared/images/load-sharp.ts';
import { DEFAULT_IMAGE_LIMITS } from '../../../shared/images/image-limits.ts';
import { StorageError } from '../../../infra/storage/object-store.ts';
import { analyzeImage, openFileRangeReader } from '../../../shared/image-metadata/index.ts';
import { mapConcurrently } from '../../../shared/concurrency.ts';
import { median } from '../../../shared/median.ts';
import { conjugateQuaternion, multiplyQuaternions, normalizeQuaternion, quaternionFromAxisAngle, quaternionToMatrix, type Quaternion, type Vec3 } from '../../../shared/geo/rotation.ts';
import { writeLas, writePly, type PointCloud } from '../../../shared/pointcloud/index.ts';
import { describeCrs } from '../../coordinate-systems/crs.ts';
import { EngineError, type EngineInput, type EngineResult, type OutputType, type PhotogrammetryEngine, type ProducedOutput } from '../engine.ts';
import { colmapFailure, colmapVersion, runColmap } from './colmap-process.ts';
import {
  ALIGNMENT_MAX_ERROR_METRES,
  GPS_OUTLIER_METRES,
  alignerArgs,
  anotherSeedBeforeFallback,
  chooseMatcher,
  converterArgs,
  EXHAUSTIVE_MAX_IMAGES,
  focalFromExif,
  featureExtractorArgs,
  groupCameras,
  MAPPER_ATTEMPTS,
  MAPPER_EXTRA_ATTEMPTS_WHEN_EMPTY,
  MAPPER_EXTRA_ATTEMPTS_WHEN_INCOMPLETE,
  mapperArgs,
  mapperOutput,
  matcherArgs,
  matchesImporterArgs,
  type CameraGroup,
  type ColmapPaths,
  type ImageIntrinsicsInput,
  type MatcherKind,
} from './colmap-commands.ts';
import { intrinsicsOf, readTextModel, registeredImageCount, registeredImageNames, type ColmapModel } from './colmap-model.ts';
import { fallbackPairs, localPositions, pairListText, selectPairs, type Pair, type PairImage } from './pair-selection.ts';
import { localFrame, type LocalFrame } from './georeference.ts';
import { levelModel, medianReferenceResidual, misorientedCameras, referenceResiduals, type Leveling, type LevelingOutcome } from './leveling.ts';
import { dislocatedImages, meanReprojectionError, STRAIN_RATIO, strainedImages } from './model-strain.ts';
import { forgetVerification } from './colmap-database.ts';

export interface ColmapEngineOptions {
  /** The colmap executable (default `colmap` on the PATH). */
  binary?: string;
  /** Parent folder of the per-run work folders. */
  workDir: string;
  /** 0: no limit. */
  timeLimitSeconds?: number;
  /** sharp's limitInputPixels for the project thumbnail (IMAGE_MAX_PIXELS; default DEFAULT_IMAGE_LIMITS.maxPixels). */
  imageMaxPixels?: number;
}

/** Registered images needed: at least this share of the images, and at least MIN_REGISTERED. */
export const MIN_REGISTERED_RATIO = 0.5;
export const MIN_REGISTERED = 3;
const NOT_AVAILABLE_REASON =
  'The colmap engine makes the sparse reconstruction only: dense point cloud, mesh, DSM and orthophoto need COLMAP dense stereo (CUDA) or the nodeodm engine.';
const THUMB_SIZE = 256;

interface StepRange {
  start: number;
  end: number;
}

/** A mapper model georeferenced and levelled, with what the engine judges it by. */
interface PlacedModel {
  model: ColmapModel;
  leveling: LevelingOutcome | null;
  /** Cameras registered in an orientation the other photos contradict (leveling.ts). */
  misoriented: string[];
  /** Photos of a bent stretch of the model (model-strain.ts). */
  strained: string[];
  /** Cameras of a folded stretch, far from their GPS positions (model-strain.ts). */
  dislocated: string[];
  /** Mean reprojection error (pixels). */
  error: number;
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

export class ColmapEngine implements PhotogrammetryEngine {
  readonly name = 'colmap';
  private readonly binary: string;

  constructor(private readonly options: ColmapEngineOptions) {
    this.binary = options.binary || 'colmap';
  }

  async run(input: EngineInput): Promise<EngineResult> {
    const started = Date.now();
    const limitSeconds = this.options.timeLimitSeconds ?? 0;
    const timeLimit = new AbortController();
    const timer = limitSeconds > 0 ? setTimeout(() => timeLimit.abort(new Error('time limit')), limitSeconds * 1000) : undefined;
    const signal = AbortSignal.any([input.signal, timeLimit.signal]);
    await fsp.mkdir(this.options.workDir, { recursive: true });
    const work = await fsp.mkdtemp(path.join(this.options.workDir, `colmap-${input.projectUuid}-`));
    const logPath = path.join(work, 'processing_log.txt');
    const glogDir = path.join(work, 'glog');
    await fsp.mkdir(glogDir);
    const log = fs.createWriteStream(logPath);
    const logKey = `${input.outputPrefix}processing_log.txt`;
    const timings: Record<string, number> = {};
    const commands: string[][] = [];
    let step = 'preparation';
    let percent = 0;
    const progress = async (value: number, text: string) => {
      const next = Math.max(percent, Math.min(100, Math.floor(value)));
      if (next === percent && value !== 0) return;
      percent = next;
      await input.reportProgress(next, text);
    };
    /** Runs one COLMAP command; true when it succeeded. With `mayFail`, an exit code 1 (a command that ran
     * and found nothing, like a mapper with no initial pair) answers false instead of failing the job. */
    const colmap = async (name: string, args: string[], range: StepRange, text: string, parse?: (line: string) => number | null, mayFail = false): Promise<boolean> => {
      step = name;
      commands.push([this.binary, ...args]);
      const t0 = Date.now();
      let pending: Promise<void> = Promise.resolve();
      const outcome = await runColmap({
        binary: this.binary,
        args,
        cwd: work,
        glogDir,
        log,
        signal,
        onLine: (line) => {
          const fraction = parse?.(line);
          if (fraction === null || fraction === undefined) return;
          const value = range.start + Math.min(1, Math.max(0, fraction)) * (range.end - range.start);
          pending = pending.then(() => progress(value, text)).catch(() => undefined);
        },
      });
      await pending;
      timings[name] = (timings[name] ?? 0) + (Date.now() - t0) / 1000;
      if (outcome.aborted || signal.aborted) throw this.abortError(input, timeLimit.signal, limitSeconds, name);
      if (mayFail && outcome.code === 1 && !outcome.signal) return false;
      if (outcome.code !== 0 || outcome.signal) throw colmapFailure(name, outcome);
      return true;
    };

    log.write(`open-inspection colmap engine, project ${input.projectUuid}, ${input.images.length} image(s), output system ${input.outputCrs.name}\n`);
    try {
      if (input.images.length < MIN_REGISTERED) {
        throw new EngineError(10601, `Input data not valid: photogrammetry needs at least ${MIN_REGISTERED} images, the project has ${input.images.length} readable image(s).`);
      }

      const version = await colmapVersion(this.binary, glogDir, signal);
      log.write(`${version ?? 'COLMAP (version unknown)'}\n`);

      // 1. Download.
      step = 'download';
      await progress(0, `Downloading images (0/${input.images.length})`);
      const imageDir = path.join(work, 'images');
      await fsp.mkdir(imageDir);
      const names = fileNames(input.images.map((i) => i.key));
      let downloaded = 0;
      const t0 = Date.now();
      const local = await mapConcurrently(input.images, 4, async (image, i) => {
        signal.throwIfAborted();
        const file = path.join(imageDir, names[i]);
        try {
          const { body } = await input.store.getObject(input.bucket, image.key);
          await pipeline(body, fs.createWriteStream(file), { signal });
        } catch (err) {
          if (err instanceof StorageError) throw new EngineError(10601, `Input data not valid: ${image.key} is no longer readable from storage (${err.code}).`);
          throw err;
        }
        downloaded++;
        await progress((5 * downloaded) / input.images.length, `Downloading images (${downloaded}/${input.images.length})`);
        const { intrinsics, relativeAltitude } = await exifIntrinsics(file, image);
        return { image, name: names[i], file, intrinsics: { ...intrinsics, name: names[i] }, relativeAltitude };
      }).catch((err) => {
        if (signal.aborted) throw this.abortError(input, timeLimit.signal, limitSeconds, 'download');
        throw err;
      });
      timings.download = (Date.now() - t0) / 1000;
      const byName = new Map(local.map((l) => [l.name, l]));

      const paths: ColmapPaths = { database: path.join(work, 'database.db'), images: imageDir, sparse: path.join(work, 'sparse') };
      await fsp.mkdir(paths.sparse);

      // 2. Features, one camera per group.
      const groups = groupCameras(local.map((l) => l.intrinsics));
      log.write(`camera groups:\n${groups.map((g) => `  ${g.label} (${g.focalSource}): ${g.images.length} image(s)`).join('\n')}\n`);
      let extracted = 0;
      for (const [g, group] of groups.entries()) {
        const listPath = path.join(work, `images-${g + 1}.txt`);
        await fsp.writeFile(listPath, `${group.images.join('\n')}\n`);
        const before = extracted;
        await colmap('feature extraction', featureExtractorArgs(paths, group, listPath), { start: 5, end: 25 }, 'Extracting features', (line) => {
          const m = /^Processed file \[(\d+)\/(\d+)\]/.exec(line);
          if (!m) return null;
          extracted = before + Number(m[1]);
          return extracted / local.length;
        });
        extracted = before + group.images.length;
      }

      // 3. Matching: the pairs GPS says can overlap (pair-selection.ts), else by size.
      const withGps = input.images.filter((i) => i.latitude !== null && i.longitude !== null).length;
      const selection = chooseMatcher(local.length, withGps) === 'pairs' ? selectPairs(pairImages(local)) : null;
      const matcher: MatcherKind = selection ? 'pairs' : local.length <= EXHAUSTIVE_MAX_IMAGES ? 'exhaustive' : 'sequential';
      const matched: Pair[] = selection ? [...selection.pairs] : [];
      let fallbackPairCount: number | null = null;
      /** Seconds per pair of the selected pairs' matching: what the fallback's would cost. */
      let secondsPerPair = 0;
      /** Matches and verifies `pairs` (matches_importer); the first call has the matching share of progress. */
      const importPairs = async (pairs: Pair[], file: string, range: StepRange, text: string) => {
        const listPath = path.join(work, file);
        await fsp.writeFile(listPath, pairListText(local.map((l) => l.name), pairs));
        const t = Date.now();
        await colmap('matching', matchesImporterArgs(paths, listPath), range, text, (line) => {
          const block = /^Matching block \[(\d+)\/(\d+)\] in /.exec(line);
          return block ? Number(block[1]) / Number(block[2]) : null;
        });
        secondsPerPair ||= (Date.now() - t) / 1000 / Math.max(1, pairs.length);
      };
      if (selection) {
        log.write(
          `pair selection: ${selection.pairs.length} of ${selection.exhaustivePairs} pairs (typical spacing ${selection.spacing.toFixed(1)} m, radius ${selection.radius.toFixed(1)} m; ` +
            `${selection.withFootprint} image(s) with a ground footprint, ${selection.withDirection} with a viewing direction, ${selection.withoutPosition} without a position; ` +
            `${selection.addedForPartners} pair(s) added for the least partners, ${selection.addedToConnect} to connect)\n`,
        );
        await importPairs(selection.pairs, 'match-pairs.txt', { start: 25, end: 50 }, `Matching features (${selection.pairs.length} of ${selection.exhaustivePairs} pairs)`);
      } else {
        await colmap('matching', matcherArgs(matcher === 'sequential' ? 'sequential' : 'exhaustive', paths), { start: 25, end: 50 }, `Matching features (${matcher})`, (line) => {
          const block = /^Matching block \[(\d+)\/(\d+), (\d+)\/(\d+)\]/.exec(line);
          if (block) return ((Number(block[1]) - 1) * Number(block[4]) + Number(block[3])) / (Number(block[2]) * Number(block[4]));
          const image = /^Matching image \[(\d+)\/(\d+)\]/.exec(line);
          return image ? Number(image[1]) / Number(image[2]) : null;
        });
      }
      /**
       * The fallback: `images` (left out of the best model, or registered in an orientation the
       * other photos contradict) matched with every image they were not matched with yet.
       */
      const matchWithAll = async (images: number[], why: 'not registered' | 'misoriented') => {
        const pairs = fallbackPairs(local.length, images, matched);
        fallbackPairCount = pairs.length;
        log.write(`matching fallback: ${images.length} image(s) ${why} (${images.map((i) => local[i].name).join(' ')}): matching their ${pairs.length} remaining pair(s), then mapping again\n`);
        if (!pairs.length) return;
        await importPairs(pairs, 'match-pairs-fallback.txt', { start: 85, end: 86 }, `Matching the ${why === 'not registered' ? 'unregistered' : 'misoriented'} images (${pairs.length} pairs)`);
        matched.push(...pairs);
      };
      /** Every matched pair verified again (colmap-database.ts): the matches are kept, RANSAC draws again. */
      const verifyAgain = async () => {
        const pairs = forgetVerification(paths.database);
        const listPath = path.join(work, 'verify-pairs.txt');
        await fsp.writeFile(listPath, `${pairs.map((p) => p.join(' ')).join('\n')}\n`);
        log.write(`geometric verification of the ${pairs.length} matched pair(s) run again\n`);
        await colmap('verification', matchesImporterArgs(paths, listPath), { start: 88, end: 88 }, 'Verifying the matches again');
      };
      /** Indexes of the images not in the model at `bestDir` (all of them without a model). */
      const missingFrom = async (bestDir: string | undefined) => {
        const registeredNames = new Set(bestDir ? await registeredImageNames(bestDir) : []);
        return local.flatMap((l, i) => (registeredNames.has(l.name) ? [] : [i]));
      };

      // 4. Mapping.
      const refineFocal = groups.some((g) => g.focalPx === null);
      const models: { dir: string; registered: number }[] = [];
      let attempts = 0;
      let mappingSeconds = 0;
      const mapOnce = async () => {
        const attempt = ++attempts;
        const t = Date.now();
        // The first attempt has the mapping share of progress; further ones the end of it.
        const range = attempt === 1 ? { start: 50, end: 85 } : { start: 85, end: 88 };
        await fsp.mkdir(mapperOutput(paths, attempt), { recursive: true });
        // COLMAP's mapper exits with 1 when it finds no initial image pair (now and then on a dozen
        // lund photos): that attempt has no model, and the next one starts from another seed.
        const ran = await colmap('mapping', mapperArgs(paths, refineFocal, attempt), range, attempt === 1 ? 'Reconstructing cameras and points' : `Reconstructing again (attempt ${attempt})`, (line) => {
          const m = /^Registering image #\d+ \((\d+)\)/.exec(line);
          return m ? Number(m[1]) / local.length : null;
        }, true);
        mappingSeconds += (Date.now() - t) / 1000;
        if (!ran) log.write(`mapper attempt ${attempt}: COLMAP built no model (exit code 1)\n`);
        const found = await modelFolders(mapperOutput(paths, attempt));
        models.push(...found);
        const most = Math.max(0, ...models.map((m) => m.registered));
        log.write(`mapper attempt ${attempt}: largest model so far ${most} of ${local.length} images\n`);
        return found.sort((a, b) => b.registered - a.registered)[0];
      };
      let emptyAttempts = 0;
      let incompleteAttempts = 0;
      /** Attempts made before the fallback's matching: the usual ones are counted from there. */
      let attemptsBeforeFallback = 0;
      /**
       * Attempts allowed: MAPPER_ATTEMPTS (after the fallback, when it came), plus one for each
       * attempt that built nothing (up to a limit), plus those granted to an incomplete model.
       */
      const attemptsAllowed = () => attemptsBeforeFallback + MAPPER_ATTEMPTS + Math.min(emptyAttempts, MAPPER_EXTRA_ATTEMPTS_WHEN_EMPTY) + incompleteAttempts;
      /** Selected pairs and no fallback yet: seeds are tried as anotherSeedBeforeFallback says. */
      const beforeFallback = () => selection !== null && fallbackPairCount === null;
      /** Whether another seed comes before the fallback's matching of `images` (logged when it does). */
      const seedFirst = (images: number[], why: 'not registered' | 'misoriented') => {
        const fallbackSeconds = fallbackPairs(local.length, images, matched).length * secondsPerPair;
        if (!anotherSeedBeforeFallback({ attempts, mappingSeconds, fallbackSeconds })) return false;
        log.write(`mapper: another seed ${why === 'misoriented' ? 'for the misoriented cameras ' : ''}before the fallback (mapping so far ${mappingSeconds.toFixed(1)} s; the fallback's matching about ${fallbackSeconds.toFixed(1)} s)\n`);
        return true;
      };
      for (;;) {
        if (!beforeFallback() && attempts >= attemptsAllowed()) {
          const most = Math.max(0, ...models.map((m) => m.registered));
          if (incompleteAttempts > 0 || most < local.length / 2 || most >= local.length) break;
          incompleteAttempts = MAPPER_EXTRA_ATTEMPTS_WHEN_INCOMPLETE;
          log.write(`mapper: ${local.length - most} image(s) still left out after ${attempts} attempts: ${incompleteAttempts} more\n`);
        }
        if (!(await mapOnce())) emptyAttempts++;
        const most = Math.max(0, ...models.map((m) => m.registered));
        if (most >= local.length) break;
        // Selected pairs and images left out: another seed, or the missing images matched with
        // every image and mapped again, whichever anotherSeedBeforeFallback says costs less.
        if (beforeFallback()) {
          const missing = await missingFrom(models.slice().sort((a, b) => b.registered - a.registered)[0]?.dir);
          if (seedFirst(missing, 'not registered')) continue;
          await matchWithAll(missing, 'not registered');
          attemptsBeforeFallback = attempts;
          emptyAttempts = 0;
        }
      }
      const best = models.sort((a, b) => b.registered - a.registered)[0];
      const needed = Math.max(MIN_REGISTERED, Math.ceil(MIN_REGISTERED_RATIO * local.length));
      const registered = best?.registered ?? 0;
      log.write(`models: ${models.map((m) => `${path.relative(work, m.dir)}: ${m.registered} image(s)`).join(', ') || 'none'}\n`);
      if (registered < needed) {
        throw new EngineError(
          10201,
          `Too few cameras calibrated: ${registered} of ${local.length} images could be placed (at least ${needed} needed). Check image quality and overlap${groups.some((g) => g.focalPx === null) ? '; some images carry no focal length in their EXIF' : ''}.`,
        );
      }

      // 5. Georegistration into the output system.
      step = 'georegistration';
      await progress(88, 'Georeferencing');
      const positions = input.images.filter((i) => i.latitude !== null && i.longitude !== null).map((i) => ({ latitude: i.latitude!, longitude: i.longitude!, altitude: i.altitude }));
      const frame = input.outputCrs.type === 'projected' ? localFrame(input.outputCrs, positions) : null;
      if (input.outputCrs.type === 'projected' && !frame) {
        throw new EngineError(10410, `Processing failed: the model cannot be georeferenced in ${input.outputCrs.name}: ${positions.length ? 'the image positions cannot be projected into it' : 'no image carries a GPS position (the colmap engine does not use GCPs)'}.`);
      }
      // A binary model exported to text (model_converter) and read.
      const exportModel = async (from: string, folder: string): Promise<ColmapModel> => {
        const textDir = path.join(work, folder);
        await fsp.mkdir(textDir);
        await colmap('model export', converterArgs(from, textDir), { start: 91, end: 92 }, 'Georeferencing');
        return readTextModel(textDir);
      };
      const maxError = ALIGNMENT_MAX_ERROR_METRES / (frame?.unitFactor ?? 1); // in the output system's unit
      let references: Map<string, Vec3> | null = null;
      let refPath = '';
      if (frame) {
        references = new Map();
        for (const l of local) {
          if (l.image.latitude === null || l.image.longitude === null) continue;
          const ref = frame.fromWgs84({ latitude: l.image.latitude, longitude: l.image.longitude, altitude: l.image.altitude });
          if (ref) references.set(l.name, ref);
        }
        refPath = path.join(work, 'reference_positions.txt');
        await fsp.writeFile(refPath, [...references].map(([name, p]) => `${name} ${p.map((v) => v.toFixed(4)).join(' ')}`).join('\n') + '\n');
      }
      /** A mapper model georeferenced (when GPS allows) and levelled; `tag` keeps its folders apart. */
      const place = async (dir: string, tag: string): Promise<PlacedModel> => {
        if (!frame || !references) return placedModel(await exportModel(dir, `model${tag}`), null, [], [], tag);
        /** Each camera's distance to its GPS position, in metres. */
        const metresFromGps = (m: ColmapModel) => new Map([...referenceResiduals(m, references)].map(([name, d]) => [name, d * frame.unitFactor]));
        // Two fits of the model to the GPS positions: COLMAP's robust one (RANSAC, 10 m) and a plain
        // least-squares one over every position. On noisy phone GPS along a walk the robust fit
        // now and then settles on a poor scale (lund: cameras a median 25-36 m from their GPS
        // positions in 2 runs of 8, 4-7 m otherwise); the fit whose cameras lie nearer their GPS
        // positions (median) is kept.
        const fits: { name: string; model: ColmapModel; residual: number; furthest: number; far: number }[] = [];
        for (const [name, robust] of [['robust', true], ['least squares', false]] as const) {
          const aligned = path.join(work, `${robust ? 'aligned' : 'aligned-ls'}${tag}`);
          await fsp.mkdir(aligned);
          await colmap('georegistration', alignerArgs(dir, aligned, refPath, maxError, robust), { start: robust ? 88 : 90, end: robust ? 90 : 91 }, 'Georeferencing');
          if ((await registeredImageCount(aligned)) === 0) continue;
          const fitted = await exportModel(aligned, `${robust ? 'model' : 'model-ls'}${tag}`);
          const metres = [...metresFromGps(fitted).values()];
          const far = metres.filter((d) => d > GPS_OUTLIER_METRES).length;
          fits.push({ name, model: fitted, residual: medianReferenceResidual(fitted, references) * frame.unitFactor, furthest: Math.max(0, ...metres), far });
        }
        // The furthest camera and the count of GPS outliers: what a fold would show (model-strain.ts).
        log.write(
          `georegistration${tag}: ${fits.map((f) => `${f.name} fit, cameras a median ${f.residual.toFixed(2)} m from their GPS positions (${f.far} beyond ${GPS_OUTLIER_METRES} m, furthest ${f.furthest.toFixed(1)} m)`).join('; ') || 'no fit'}\n`,
        );
        fits.sort((a, b) => a.residual - b.residual);
        if (!fits.length) {
          throw new EngineError(10410, `Processing failed: georegistration found no consistent fit between the model and the GPS positions of ${references.size} image(s) (at least 3 calibrated images with a GPS position within ${ALIGNMENT_MAX_ERROR_METRES} m are needed). See the processing log.`);
        }
        const model = fits[0].model;
        const leveling = levelModel(model, references, maxError);
        if (leveling.reason) {
          const refit = leveling.refit;
          log.write(
            `${leveling.reason === 'collinear' ? 'cameras nearly collinear' : leveling.reason === 'tilted' ? 'model rolled' : 'model upside down'} (spread ratio ${leveling.spreadRatio.toFixed(3)}): model turned ${leveling.rotationDeg.toFixed(1)} degrees about the cameras' main direction, ` +
              `then refitted level to the GPS positions (scale ${refit?.scale.toFixed(4)}, turn ${refit?.turnDeg.toFixed(2)} degrees, ${refit?.used} positions)\n`,
          );
        }
        const misoriented = misorientedCameras(model, (name) => {
          const q = byName.get(name)?.image.quaternion;
          return q?.length === 4 ? (q as Quaternion) : null;
        });
        if (misoriented.length) log.write(`misoriented cameras${tag} (on their side, or not seeing up where the other photos or their gimbal angles say): ${misoriented.length}: ${misoriented.join(' ')}\n`);
        const metres = metresFromGps(model);
        const dislocated = dislocatedImages(metres);
        if (dislocated.length) log.write(`folded model${tag}: ${dislocated.length} camera(s) far from their GPS positions: ${dislocated.map((name) => `${name} ${metres.get(name)!.toFixed(0)} m`).join(', ')}\n`);
        return placedModel(model, leveling, misoriented, dislocated, tag);
      };
      /** The placed model with its strain (model-strain.ts) and mean reprojection error, logged. */
      const placedModel = (model: ColmapModel, leveling: LevelingOutcome | null, misoriented: string[], dislocated: string[], tag: string): PlacedModel => {
        const strained = strainedImages(model);
        const error = meanReprojectionError(model) ?? Infinity;
        log.write(`model${tag}: mean reprojection error ${error.toFixed(3)} px${strained.length ? `; strained (points fitting over ${STRAIN_RATIO} times worse than the median photo's) in ${strained.length} photo(s): ${strained.join(' ')}` : ''}\n`);
        return { model, leveling, misoriented, strained, dislocated, error };
      };
      let placed = await place(best.dir, '');
      // Cameras turned on their side or looking down next to level ones: a wrong registration
      // (misorientedCameras), most likely of images weakly tied to the rest: another mapper attempt
      // (another seed), kept only when it places as many images with fewer such cameras;
      // MAPPER_ATTEMPTS - 1 such attempts at most, however many came before. With selected pairs,
      // an attempt is preceded by the fallback's matching of those images with every image only
      // when anotherSeedBeforeFallback says it costs less than another seed: lund's eight photos
      // after the street corner, turned together in 2 runs of 14, have no pairs beyond their
      // neighbours, and the fallback's 152 pairs (~90 s) changed nothing in two attempts.
      //
      // A strained model (model-strain.ts: a stretch of photos whose points fit much worse than the
      // rest, a bent model) is mapped again too, after the pairs' geometric verification is run
      // again (3 s on lund, colmap-database.ts): which pairs COLMAP verifies as calibrated (an
      // essential matrix) or not (a fundamental matrix) is decided by RANSAC's draw when the camera's
      // distortion is unknown (lund: 33 of 133 pairs change from run to run), and a bent model
      // comes of some draws more than of others: on one such verification four mapper seeds gave
      // 0.73, 0.75, 0.64 and 0.75 px, three of them strained, where of 23 fresh verifications of
      // the same matches 3 gave a strained model (bench/README.md, session 19). A folded model
      // (cameras far from their GPS positions, model-strain.ts) is mapped again the same way. Of
      // the two models the better is kept (betterPlaced: fewer misoriented, then fewer dislocated
      // cameras, then the lower mean reprojection error).
      const lastAttempt = attempts + MAPPER_ATTEMPTS - 1;
      while ((placed.misoriented.length || placed.strained.length || placed.dislocated.length) && attempts < lastAttempt) {
        if (placed.misoriented.length && beforeFallback()) {
          const misoriented = new Set(placed.misoriented);
          const images = local.flatMap((l, i) => (misoriented.has(l.name) ? [i] : []));
          if (!seedFirst(images, 'misoriented')) await matchWithAll(images, 'misoriented');
        } else if (!placed.misoriented.length) {
          await verifyAgain();
        }
        const again = await mapOnce();
        if (!again || again.registered < registered) continue;
        const candidate = await place(again.dir, `-${attempts}`);
        const kept = betterPlaced(candidate, placed);
        log.write(
          `mapper attempt ${attempts}: ${candidate.misoriented.length} misoriented camera(s) against ${placed.misoriented.length}, ${candidate.dislocated.length} dislocated against ${placed.dislocated.length}, ` +
            `mean reprojection error ${candidate.error.toFixed(3)} against ${placed.error.toFixed(3)} px: ${kept ? 'kept' : 'not kept'}\n`,
        );
        if (kept) placed = candidate;
      }
      const { model, leveling } = placed;

      // 6. Outputs.
      step = 'outputs';
      await progress(92, 'Writing outputs');
      const exhaustivePairs = (local.length * (local.length - 1)) / 2;
      const matching = { method: matcher, pairs: selection ? matched.length : matcher === 'exhaustive' ? exhaustivePairs : null, exhaustive_pairs: exhaustivePairs, fallback_pairs: fallbackPairCount };
      const result = await this.writeOutputs(input, { version, model, frame, references, leveling, byName, groups, matching, timings, commands, started, logKey });
      log.write(`\ndone in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      await closeLog(log);
      await input.store.putObject(input.bucket, logKey, fs.createReadStream(logPath), { contentType: 'text/plain; charset=utf-8' });
      result.outputs.push({ outputType: 'processing_log', key: logKey });
      await progress(100, 'Done');
      return result;
    } catch (err) {
      const failure = signal.aborted && !(err instanceof EngineError) ? this.abortError(input, timeLimit.signal, limitSeconds, step) : err;
      log.write(`\nfailed during ${step}: ${failure instanceof Error ? failure.message : String(failure)}\n`);
      await closeLog(log);
      // The log of a failed run is kept too (not listed as an output: the run has none).
      await input.store.putObject(input.bucket, logKey, fs.createReadStream(logPath), { contentType: 'text/plain; charset=utf-8' }).catch(() => undefined);
      throw failure;
    } finally {
      if (timer) clearTimeout(timer);
      await fsp.rm(work, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** The error of an aborted run: the time limit (10002) or the caller's cancel (its reason). */
  private abortError(input: EngineInput, limit: AbortSignal, seconds: number, step: string): unknown {
    if (limit.aborted && !input.signal.aborted) {
      return new EngineError(10002, `Processing exceeded the allotted time of ${seconds} s (ENGINE_TIME_LIMIT_SECONDS) during ${step}.`);
    }
    return input.signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
  }

  private async writeOutputs(
    input: EngineInput,
    run: {
      version: string | null;
      model: ColmapModel;
      frame: LocalFrame | null;
      references: Map<string, Vec3> | null;
      leveling: Leveling | null;
      byName: Map<string, { image: EngineInput['images'][number]; file: string; intrinsics: ImageIntrinsicsInput }>;
      groups: CameraGroup[];
      matching: { method: string; pairs: number | null; exhaustive_pairs: number; fallback_pairs: number | null };
      timings: Record<string, number>;
      commands: string[][];
      started: number;
      logKey: string;
    },
  ): Promise<EngineResult> {
    const { model, frame } = run;
    const crs = input.outputCrs;
    const unitFactor = frame?.unitFactor ?? 1;
    const toOutput = (p: Vec3): Vec3 => (frame ? frame.toOutput(p) : p);
    const offset: Vec3 = frame ? frame.offsetOutput : [0, 0, 0];
    const convergence = frame ? quaternionFromAxisAngle([0, 0, 1], frame.convergence) : ([1, 0, 0, 0] as Quaternion);
    const pointIndex = new Map<number, number>();
    model.pointIds.forEach((id, i) => pointIndex.set(id, i));

    // Cameras.
    const residuals: { name: string; horizontal: number; vertical: number; total: number }[] = [];
    const gsds: number[] = [];
    const cameras = model.images
      .slice()
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((img) => {
        const camera = model.cameras.get(img.cameraId)!;
        const k = intrinsicsOf(camera);
        const R = quaternionToMatrix(img.qvec); // world -> camera
        const t = img.tvec;
        const centre: Vec3 = [0, 1, 2].map((a) => -(R[0][a] * t[0] + R[1][a] * t[1] + R[2][a] * t[2])) as Vec3;
        const cameraToWorld = normalizeQuaternion(conjugateQuaternion(img.qvec));
        const quaternion = normalizeQuaternion(multiplyQuaternions(convergence, cameraToWorld));
        const Rcw = quaternionToMatrix(cameraToWorld);
        const rotationOutput = frame?.swapped ? [Rcw[1], Rcw[0], Rcw[2]] : Rcw;
        const ref = run.references?.get(img.name);
        let gpsResidual: number | null = null;
        if (ref) {
          const horizontal = Math.hypot(centre[0] - ref[0], centre[1] - ref[1]) * unitFactor;
          const vertical = Math.abs(centre[2] - ref[2]) * unitFactor;
          gpsResidual = Math.hypot(horizontal, vertical);
          residuals.push({ name: img.name, horizontal, vertical, total: gpsResidual });
        }
        const depths: number[] = [];
        for (const id of img.point3dIds) {
          const i = pointIndex.get(id);
          if (i === undefined) continue;
          const X = [model.positions[3 * i], model.positions[3 * i + 1], model.positions[3 * i + 2]];
          const z = R[2][0] * X[0] + R[2][1] * X[1] + R[2][2] * X[2] + t[2];
          if (z > 0) depths.push(z);
        }
        if (depths.length) gsds.push((median(depths) * unitFactor) / k.fx);
        const source = run.byName.get(img.name)!;
        const wgs = frame?.toWgs84(centre) ?? null;
        const p = toOutput(centre);
        return {
          key: source.image.key,
          image_name: img.name,
          width: camera.width,
          height: camera.height,
          make: source.image.make,
          model: source.image.model,
          camera_id: camera.id,
          intrinsics: {
            model: camera.model,
            params: camera.params,
            focal_length_px: k.fx,
            ...k,
            prior_focal_length_px: source.intrinsics ? groupPrior(run.groups, img.name) : null,
          },
          position_output_crs: { x: p[0], y: p[1], z: p[2] },
          position_wgs84: wgs ? { latitude: wgs.latitude, longitude: wgs.longitude, altitude: wgs.altitude } : null,
          quaternion,
          rotation_matrix_output_crs: rotationOutput,
          gps: source.image.latitude !== null ? { latitude: source.image.latitude, longitude: source.image.longitude, altitude: source.image.altitude } : null,
          observations: img.point3dIds.length,
          // Distance between the calibrated position and the image's GPS position, metres; an
          // outlier (> GPS_OUTLIER_METRES) is a wrong registration or a GPS jump: check it.
          gps_residual_m: gpsResidual,
          gps_outlier: gpsResidual !== null && gpsResidual > GPS_OUTLIER_METRES,
        };
      });
    const registeredNames = new Set(model.images.map((i) => i.name));
    const notCalibrated = [...run.byName.entries()].filter(([name]) => !registeredNames.has(name)).map(([name, s]) => ({ key: s.image.key, image_name: name, reason: 'not registered by the incremental mapper (too few matches with the model)' }));

    // Points.
    const count = model.pointIds.length;
    const cloud: PointCloud = { count, positions: new Float64Array(3 * count), colors: model.colors };
    for (let i = 0; i < count; i++) {
      const q = toOutput([model.positions[3 * i], model.positions[3 * i + 1], model.positions[3 * i + 2]]);
      cloud.positions[3 * i] = q[0];
      cloud.positions[3 * i + 1] = q[1];
      cloud.positions[3 * i + 2] = q[2];
    }
    let observations = 0;
    for (let i = 0; i < count; i++) observations += model.trackLengths[i];

    const crsInfo = describeCrs(crs);
    const georeferencing = frame
      ? {
          method: 'similarity transform of the model to the images\' GPS positions (COLMAP model_aligner, robust)',
          robust_max_error_m: ALIGNMENT_MAX_ERROR_METRES,
          images_with_position: run.references?.size ?? 0,
          residuals_m: residuals.length
            ? {
                count: residuals.length,
                rmse_horizontal: rms(residuals.map((r) => r.horizontal)),
                rmse_vertical: rms(residuals.map((r) => r.vertical)),
                median_total: median(residuals.map((r) => r.total)),
                within_max_error: residuals.filter((r) => r.total <= ALIGNMENT_MAX_ERROR_METRES).length,
                outliers: residuals.filter((r) => r.total > GPS_OUTLIER_METRES).map((r) => ({ image_name: r.name, distance_m: r.total })),
              }
            : null,
          vertical: frame.hasHeights ? 'EGM96 height: GPS altitudes taken as ellipsoidal, minus the EGM96 geoid undulation' : 'no image altitude: heights are relative (0 at the images\' mean)',
          grid_convergence_deg: (frame.convergence * 180) / Math.PI,
          // Collinear cameras leave the roll about their track free (leveling.ts).
          camera_spread_ratio: run.leveling?.spreadRatio ?? null,
          track_leveling_deg: run.leveling?.rotationDeg ?? 0,
        }
      : { method: 'none: arbitrary output system (no image carries a GPS position); coordinates and scale are COLMAP\'s own' };

    const calibrated = {
      engine: this.name,
      reconstructed: true,
      note: 'Cameras refined by COLMAP structure from motion (bundle adjustment), georeferenced to the images\' GPS positions.',
      conventions: {
        quaternion: '[w, x, y, z] rotating the camera frame (x right, y down, z along the optical axis) to local East-North-Up at the images\' centre (arbitrary system: to the model\'s axes)',
        rotation_matrix_output_crs: 'row-major 3x3, camera frame -> output coordinate system axes (x, y, z), for rays in the point cloud\'s system',
        pixel: 'u right, v down, (0, 0) the top-left corner of the image as stored',
        intrinsics: 'pixels; OpenCV distortion k1, k2, p1, p2 (COLMAP SIMPLE_RADIAL: k1 only)',
        position_wgs84_altitude: 'ellipsoidal height (WGS 84), metres',
      },
      pipeline: input.pipeline,
      tags: input.tags,
      output_coordinate_system: crsInfo,
      coordinate_system: crs.wkt,
      offset_3d_xyz: offset,
      georeferencing,
      images_total: input.images.length,
      images_registered: model.images.length,
      cameras,
      not_calibrated: notCalibrated,
      control_points: input.controlPoints,
    };

    const report = {
      engine: this.name,
      engine_version: run.version ?? 'COLMAP (version unknown)',
      images: { total: input.images.length, registered: model.images.length, ratio: model.images.length / input.images.length },
      mean_reprojection_error_px: meanReprojectionError(model),
      points: count,
      observations,
      mean_track_length: count ? observations / count : null,
      gsd_cm: gsds.length ? median(gsds) * 100 : null,
      gsd_note: 'median over cameras of (median depth of the points a camera sees / focal length in pixels)',
      // pairs: matched pairs (null for sequential: COLMAP's own); fallback_pairs: null
      // when the selected pairs registered every image at once.
      matching: { ...run.matching, exhaustive_max_images: EXHAUSTIVE_MAX_IMAGES },
      camera_groups: run.groups.map((g) => ({ label: g.label, make: g.make, model: g.model, width: g.width, height: g.height, prior_focal_length_px: g.focalPx, focal_source: g.focalSource, images: g.images.length })),
      georeferencing,
      coordinate_system: crs.wkt,
      output_coordinate_system: crsInfo,
      offset_3d_xyz: offset,
      not_available: ['dense point cloud', '3d_mesh_obj_zip', 'dsm', 'ortho_rgb'],
      timings_s: { ...run.timings, total: (Date.now() - run.started) / 1000 },
      commands: run.commands.map((c) => c.join(' ')),
      processing_log: run.logKey,
    };

    const prefix = input.outputPrefix;
    const outputs: ProducedOutput[] = [];
    const put = async (outputType: OutputType, name: string, body: Buffer, contentType: string) => {
      const key = `${prefix}${name}`;
      await input.store.putObject(input.bucket, key, body, { contentType });
      outputs.push({ outputType, key });
    };
    const projected = crs.type === 'projected';
    await put(
      'point_cloud',
      'point_cloud.las',
      writeLas(cloud, {
        pointFormat: 2,
        scale: 0.001,
        offset,
        wkt: crs.wkt,
        horizontalEpsg: projected ? crs.horizontal_epsg : null,
        verticalEpsg: projected ? crs.vertical_epsg : null,
        generatingSoftware: 'open-inspection colmap',
      }),
      'application/vnd.las',
    );
    await put('point_cloud_ply', 'point_cloud.ply', writePly(cloud, [`coordinate system: ${crs.name}`, `offset_3d_xyz: ${offset.join(' ')}`]), 'application/octet-stream');
    await put('calibrated_camera_parameters_json', 'calibrated_camera_parameters.json', Buffer.from(JSON.stringify(calibrated, null, 2)), 'application/json');
    await put('quality_report', 'quality_report.json', Buffer.from(JSON.stringify(report, null, 2)), 'application/json');
    const thumb = await thumbnail(run.byName.values().next().value?.file, this.options.imageMaxPixels ?? DEFAULT_IMAGE_LIMITS.maxPixels);
    if (thumb) await put('project_thumb', 'project_thumb.jpg', thumb, 'image/jpeg');
    return {
      outputs,
      notAvailable: (['3d_mesh_obj_zip', 'dsm', 'ortho_rgb'] as const).map((outputType) => ({ outputType, reason: NOT_AVAILABLE_REASON })),
    };
  }
}

/** File names for the work folder: unique, short, safe, keeping the original name for the log. */
export function fileNames(keys: string[]): string[] {
  return keys.map((key, i) => {
    const base = path.posix.basename(key).replace(/[^A-Za-z0-9._-]/g, '_').slice(-80) || 'image';
    return `${String(i + 1).padStart(5, '0')}_${base}`;
  });
}

/**
 * What feature extraction needs of an image's EXIF (focal lengths), read from the local file, and
 * DJI's RelativeAltitude (metres above the take-off point) for the pair selection's footprints.
 */
export async function exifIntrinsics(
  file: string,
  image: Pick<EngineInput['images'][number], 'width' | 'height' | 'make' | 'model' | 'focal_length_35mm'>,
): Promise<{ intrinsics: ImageIntrinsicsInput; relativeAltitude: number | null }> {
  let focalLengthMm: number | null = null;
  let relativeAltitude: number | null = null;
  let focalLength35mm: number | null = image.focal_length_35mm;
  const reader = await openFileRangeReader(file);
  try {
    const analysis = await analyzeImage(reader.readRange, reader.size);
    if (analysis.ok) {
      focalLengthMm = analysis.metadata.focalLengthMm;
      focalLength35mm = analysis.metadata.focalLength35mm ?? focalLength35mm;
      relativeAltitude = analysis.metadata.relativeAltitude;
    }
  } finally {
    await reader.close();
  }
  let focalPlanePixelsPerMm: number | null = null;
  if (!focalLength35mm && focalLengthMm) {
    try {
      const tags = await exifr.parse(file, { pick: ['FocalPlaneXResolution', 'FocalPlaneResolutionUnit', 'ExifImageWidth'], translateValues: false });
      const resolution = Number(tags?.FocalPlaneXResolution);
      const unitMm = ({ 2: 25.4, 3: 10, 4: 1, 5: 0.001 } as Record<number, number>)[Number(tags?.FocalPlaneResolutionUnit ?? 2)];
      if (resolution > 0 && unitMm) focalPlanePixelsPerMm = (resolution / unitMm) * (image.width / (Number(tags?.ExifImageWidth) || image.width));
    } catch {
      // no focal plane resolution
    }
  }
  return {
    intrinsics: { name: '', width: image.width, height: image.height, make: image.make, model: image.model, focalLengthMm, focalLength35mm, focalPlanePixelsPerMm },
    relativeAltitude,
  };
}

/** What the pair selection knows of each image: local position, gimbal orientation, height above the ground, focal. */
export function pairImages(
  local: { image: Pick<EngineInput['images'][number], 'latitude' | 'longitude' | 'altitude' | 'quaternion' | 'width' | 'height'>; intrinsics: ImageIntrinsicsInput; relativeAltitude: number | null }[],
): PairImage[] {
  const positions = localPositions(local.map(({ image }) => (image.latitude !== null && image.longitude !== null ? { latitude: image.latitude, longitude: image.longitude, altitude: image.altitude } : null)));
  return local.map(({ image, intrinsics, relativeAltitude }, i) => ({
    position: positions[i],
    orientation: image.quaternion?.length === 4 ? (image.quaternion as Quaternion) : null,
    heightAboveGround: relativeAltitude,
    width: image.width,
    height: image.height,
    focalPx: focalFromExif(intrinsics).focalPx,
  }));
}

async function modelFolders(sparse: string): Promise<{ dir: string; registered: number }[]> {
  const entries = await fsp.readdir(sparse, { withFileTypes: true }).catch(() => []);
  const dirs = entries.filter((e) => e.isDirectory()).map((e) => path.join(sparse, e.name));
  return Promise.all(dirs.map(async (dir) => ({ dir, registered: await registeredImageCount(dir) })));
}

function groupPrior(groups: CameraGroup[], name: string): number | null {
  return groups.find((g) => g.images.includes(name))?.focalPx ?? null;
}

function rms(values: number[]): number {
  return Math.sqrt(values.reduce((a, v) => a + v * v, 0) / values.length);
}

function closeLog(log: fs.WriteStream): Promise<void> {
  return new Promise((resolve) => (log.closed ? resolve() : log.end(resolve)));
}

/** Read by libvips from the downloaded file, not into this process's memory; decoding bounded by the pixel limit. */
async function thumbnail(file: string | undefined, limitInputPixels: number): Promise<Buffer | null> {
  if (!file) return null;
  try {
    const sharp = await loadSharp();
    return await sharp(file, { limitInputPixels }).rotate().resize(THUMB_SIZE, THUMB_SIZE, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 80 }).toBuffer();
  } catch {
    return null;
  }
}
