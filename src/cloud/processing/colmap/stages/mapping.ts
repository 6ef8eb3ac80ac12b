// Stage `mapping`: COLMAP's incremental mapper until a model holds every image or the attempts run
// out (colmap-commands.ts says how many and why: other seeds, more for attempts that built nothing
// or left images out, and with selected pairs the matching fallback when it costs less than
// another seed). The largest model is kept; fewer than max(3, half of the images) registered: 10201.
//
// The mapping session (`MapperSession`) goes on in the georegistration stage, which maps again a
// model it finds misoriented, strained or folded: its state passes between the two stages as a
// record (`MappingState`), each stage resuming it with its own context.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { EngineError } from '../../engine.ts';
import {
  anotherSeedBeforeFallback,
  MAPPER_ATTEMPTS,
  MAPPER_EXTRA_ATTEMPTS_WHEN_EMPTY,
  MAPPER_EXTRA_ATTEMPTS_WHEN_INCOMPLETE,
  mapperArgs,
  mapperOutput,
  matchesImporterArgs,
} from '../colmap-commands.ts';
import { forgetVerification } from '../colmap-database.ts';
import { registeredImageCount, registeredImageNames } from '../colmap-model.ts';
import { fallbackPairs, type Pair } from '../pair-selection.ts';
import type { Downloaded } from './download.ts';
import type { Extracted } from './features.ts';
import { importPairs, type Matched } from './matching.ts';
import { MIN_REGISTERED, MIN_REGISTERED_RATIO } from './preparation.ts';
import type { Stage, StageContext } from './stage.ts';

export interface MapperModel {
  /** A binary model folder of the mapper. */
  readonly dir: string;
  readonly registered: number;
}

/** Where the mapping session stands: what the georegistration stage resumes. */
export interface MappingState {
  readonly attempts: number;
  /** Seconds spent in the mapper so far (anotherSeedBeforeFallback weighs them). */
  readonly mappingSeconds: number;
  readonly models: readonly MapperModel[];
  /** Pairs matched so far (selected pairs and the fallback's). */
  readonly matched: readonly Pair[];
  /** Pairs the fallback matched; null when it did not run. */
  readonly fallbackPairCount: number | null;
}

export interface Mapped {
  readonly state: MappingState;
  /** The model with the most registered images. */
  readonly best: MapperModel;
}

export interface MappingInputs {
  downloaded: Downloaded;
  extracted: Extracted;
  matched: Matched;
}

/** Progress within the mapping stage: the first attempt has most of it, further ones and the fallback the end. */
const FIRST_ATTEMPT = { start: 0, end: 35 / 38 };
const FURTHER_ATTEMPTS = { start: 35 / 38, end: 1 };
const FALLBACK = { start: 35 / 38, end: 36 / 38 };

export const mappingStage: Stage<MappingInputs, Mapped> = {
  name: 'mapping',
  title: 'Reconstructing cameras and points',
  weight: 38,
  async run(context, inputs) {
    const images = inputs.downloaded.images;
    const session = new MapperSession(context, inputs, { attempts: 0, mappingSeconds: 0, models: [], matched: inputs.matched.matched, fallbackPairCount: null });
    let emptyAttempts = 0;
    let incompleteAttempts = 0;
    /** Attempts made before the fallback's matching: the usual ones are counted from there. */
    let attemptsBeforeFallback = 0;
    /**
     * Attempts allowed: MAPPER_ATTEMPTS (after the fallback, when it came), plus one for each
     * attempt that built nothing (up to a limit), plus those granted to an incomplete model.
     */
    const attemptsAllowed = () => attemptsBeforeFallback + MAPPER_ATTEMPTS + Math.min(emptyAttempts, MAPPER_EXTRA_ATTEMPTS_WHEN_EMPTY) + incompleteAttempts;
    for (;;) {
      if (!session.beforeFallback() && session.attempts >= attemptsAllowed()) {
        const most = session.mostRegistered();
        if (incompleteAttempts > 0 || most < images.length / 2 || most >= images.length) break;
        incompleteAttempts = MAPPER_EXTRA_ATTEMPTS_WHEN_INCOMPLETE;
        context.log(`mapper: ${images.length - most} image(s) still left out after ${session.attempts} attempts: ${incompleteAttempts} more`);
      }
      if (!(await session.mapOnce())) emptyAttempts++;
      if (session.mostRegistered() >= images.length) break;
      // Selected pairs and images left out: another seed, or the missing images matched with
      // every image and mapped again, whichever anotherSeedBeforeFallback says costs less.
      if (session.beforeFallback()) {
        const missing = await session.missingFrom(session.best()?.dir);
        if (session.seedFirst(missing, 'not registered')) continue;
        await session.matchWithAll(missing, 'not registered');
        attemptsBeforeFallback = session.attempts;
        emptyAttempts = 0;
      }
    }
    const best = session.best();
    const needed = Math.max(MIN_REGISTERED, Math.ceil(MIN_REGISTERED_RATIO * images.length));
    const registered = best?.registered ?? 0;
    context.log(`models: ${session.models.map((m) => `${path.relative(context.work, m.dir)}: ${m.registered} image(s)`).join(', ') || 'none'}`);
    if (!best || registered < needed) {
      const noFocal = inputs.extracted.groups.some((g) => g.focalPx === null);
      throw new EngineError(10201, `Too few cameras calibrated: ${registered} of ${images.length} images could be placed (at least ${needed} needed). Check image quality and overlap${noFocal ? '; some images carry no focal length in their EXIF' : ''}.`);
    }
    return { state: session.state(), best };
  },
};

/** A mapping session: mapper attempts, the matching fallback, the verification run again. */
export class MapperSession {
  private current: MappingState;

  constructor(
    private readonly context: StageContext,
    private readonly inputs: MappingInputs,
    state: MappingState,
  ) {
    this.current = state;
  }

  get attempts(): number {
    return this.current.attempts;
  }

  get models(): readonly MapperModel[] {
    return this.current.models;
  }

  state(): MappingState {
    return this.current;
  }

  mostRegistered(): number {
    return Math.max(0, ...this.current.models.map((m) => m.registered));
  }

  best(): MapperModel | undefined {
    return this.current.models.slice().sort((a, b) => b.registered - a.registered)[0];
  }

  /** Selected pairs and no fallback yet: seeds are tried as anotherSeedBeforeFallback says. */
  beforeFallback(): boolean {
    return this.inputs.matched.selection !== null && this.current.fallbackPairCount === null;
  }

  /** One mapper attempt; its largest model (undefined: it built none). */
  async mapOnce(): Promise<MapperModel | undefined> {
    const { paths, groups } = this.inputs.extracted;
    const images = this.inputs.downloaded.images;
    const attempt = this.current.attempts + 1;
    this.current = { ...this.current, attempts: attempt };
    const refineFocal = groups.some((g) => g.focalPx === null);
    const t = Date.now();
    await fsp.mkdir(mapperOutput(paths, attempt), { recursive: true });
    // COLMAP counts the images of the model it is building: a second model starts again from 2.
    let placed = 0;
    // COLMAP's mapper exits with 1 when it finds no initial image pair (now and then on a dozen
    // lund photos): that attempt has no model, and the next one starts from another seed.
    const ran = await this.context.colmap('mapping', mapperArgs(paths, refineFocal, attempt), {
      text: attempt === 1 ? 'Reconstructing cameras and points' : `Reconstructing again (attempt ${attempt})`,
      within: attempt === 1 ? FIRST_ATTEMPT : FURTHER_ATTEMPTS,
      parse: (line) => {
        const m = /^Registering image #\d+ \((\d+)\)/.exec(line);
        if (!m) return null;
        placed = Math.max(placed, Number(m[1]));
        return { fraction: placed / images.length, detail: `${placed}/${images.length} photos placed` };
      },
      mayFail: true,
    });
    if (!ran) this.context.log(`mapper attempt ${attempt}: COLMAP built no model (exit code 1)`);
    const found = await modelFolders(mapperOutput(paths, attempt));
    this.current = { ...this.current, mappingSeconds: this.current.mappingSeconds + (Date.now() - t) / 1000, models: [...this.current.models, ...found] };
    this.context.log(`mapper attempt ${attempt}: largest model so far ${this.mostRegistered()} of ${images.length} images`);
    return found.sort((a, b) => b.registered - a.registered)[0];
  }

  /** Indexes of the images not in the model at `dir` (all of them without a model). */
  async missingFrom(dir: string | undefined): Promise<number[]> {
    const registeredNames = new Set(dir ? await registeredImageNames(dir) : []);
    return this.inputs.downloaded.images.flatMap((l, i) => (registeredNames.has(l.name) ? [] : [i]));
  }

  /** Whether another seed comes before the fallback's matching of `images` (logged when it does). */
  seedFirst(images: number[], why: 'not registered' | 'misoriented'): boolean {
    const { attempts, mappingSeconds } = this.current;
    const fallbackSeconds = fallbackPairs(this.inputs.downloaded.images.length, images, this.current.matched).length * this.inputs.matched.secondsPerPair;
    if (!anotherSeedBeforeFallback({ attempts, mappingSeconds, fallbackSeconds })) return false;
    this.context.log(`mapper: another seed ${why === 'misoriented' ? 'for the misoriented cameras ' : ''}before the fallback (mapping so far ${mappingSeconds.toFixed(1)} s; the fallback's matching about ${fallbackSeconds.toFixed(1)} s)`);
    return true;
  }

  /**
   * The fallback: `images` (left out of the best model, or registered in an orientation the
   * other photos contradict) matched with every image they were not matched with yet.
   */
  async matchWithAll(images: number[], why: 'not registered' | 'misoriented'): Promise<void> {
    const local = this.inputs.downloaded.images;
    const pairs = fallbackPairs(local.length, images, this.current.matched);
    this.current = { ...this.current, fallbackPairCount: pairs.length };
    this.context.log(`matching fallback: ${images.length} image(s) ${why} (${images.map((i) => local[i].name).join(' ')}): matching their ${pairs.length} remaining pair(s), then mapping again`);
    if (!pairs.length) return;
    await importPairs(this.context, this.inputs.extracted.paths, this.inputs.downloaded, pairs, 'match-pairs-fallback.txt', {
      text: `Matching the ${why === 'not registered' ? 'unregistered' : 'misoriented'} images`,
      within: FALLBACK,
    });
    this.current = { ...this.current, matched: [...this.current.matched, ...pairs] };
  }

  /** Every matched pair verified again (colmap-database.ts): the matches are kept, RANSAC draws again. */
  async verifyAgain(): Promise<void> {
    const { paths } = this.inputs.extracted;
    const pairs = forgetVerification(paths.database);
    const listPath = path.join(this.context.work, 'verify-pairs.txt');
    await fsp.writeFile(listPath, `${pairs.map((p) => p.join(' ')).join('\n')}\n`);
    this.context.log(`geometric verification of the ${pairs.length} matched pair(s) run again`);
    await this.context.colmap('verification', matchesImporterArgs(paths, listPath), { text: 'Verifying the matches again', within: { start: 1, end: 1 } });
  }
}

async function modelFolders(sparse: string): Promise<MapperModel[]> {
  const entries = await fsp.readdir(sparse, { withFileTypes: true }).catch(() => []);
  const dirs = entries.filter((e) => e.isDirectory()).map((e) => path.join(sparse, e.name));
  return Promise.all(dirs.map(async (dir) => ({ dir, registered: await registeredImageCount(dir) })));
}
