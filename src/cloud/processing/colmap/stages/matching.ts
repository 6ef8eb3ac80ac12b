// Stage `matching`: the pairs of images matched and verified. With GPS on enough images, the pairs
// that can overlap (pair-selection.ts) through matches_importer; else exhaustive (up to
// EXHAUSTIVE_MAX_IMAGES) or sequential matching (colmap-commands.ts). Also the fallback that the
// mapping and georegistration stages call when images stay out of the model or come out
// misoriented: those images matched with every image they were not matched with yet.
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Quaternion } from '../../../../shared/geo/rotation.ts';
import type { EngineInput } from '../../engine.ts';
import { chooseMatcher, EXHAUSTIVE_MAX_IMAGES, focalFromExif, matcherArgs, matchesImporterArgs, type ColmapPaths, type ImageIntrinsicsInput, type MatcherKind } from '../colmap-commands.ts';
import { localPositions, pairListText, selectPairs, type Pair, type PairImage, type PairSelection } from '../pair-selection.ts';
import type { Downloaded } from './download.ts';
import type { Extracted } from './features.ts';
import type { ColmapOptions, LineProgress, Stage, StageContext } from './stage.ts';

export interface Matched {
  readonly matcher: MatcherKind;
  /** The selected pairs (matcher 'pairs'), else null. */
  readonly selection: PairSelection | null;
  /** Pairs matched (selected pairs only; empty for COLMAP's own matchers). */
  readonly matched: readonly Pair[];
  /** Seconds per pair of the selected pairs' matching: what a fallback's would cost (0 when none). */
  readonly secondsPerPair: number;
}

/**
 * A matcher's progress line: exhaustive_matcher's `Matching block [i/N, j/M]` (blocks of 10
 * images: N x M blocks), sequential_matcher's `Matching image [i/N]` (COLMAP 3.8); null otherwise.
 */
export function matcherProgress(line: string): LineProgress | null {
  const block = /^Matching block \[(\d+)\/(\d+), (\d+)\/(\d+)\]/.exec(line);
  if (block) {
    const done = (Number(block[1]) - 1) * Number(block[4]) + Number(block[3]);
    const total = Number(block[2]) * Number(block[4]);
    return { fraction: done / total, detail: `${done}/${total} blocks` };
  }
  const image = /^Matching image \[(\d+)\/(\d+)\]/.exec(line);
  return image ? { fraction: Number(image[1]) / Number(image[2]), detail: `${image[1]}/${image[2]} photos` } : null;
}

/**
 * matches_importer with a pair list prints one `Matching block [i/N] in 12.3s` line per block of
 * 1225 pairs (ImagePairsMatching.block_size, not an option of its command line in 3.8): one line
 * at the end for any list of up to 1225 pairs, so lund's 133 pairs (about 200 s on 2 cores) showed
 * no progress. The list is therefore imported in parts of at most IMPORT_PART_PAIRS pairs, one
 * command each (pairs are matched and verified independently: the same matches as one command;
 * each command costs about a second more to start and read the features): progress after each
 * part, and the runtime's heartbeat in between. Parts hold at least IMPORT_PART_PAIRS / 2 pairs,
 * so a short list stays one command.
 */
export const IMPORT_PART_PAIRS = 40;

export function importParts<T>(pairs: readonly T[]): T[][] {
  const count = Math.max(1, Math.round(pairs.length / IMPORT_PART_PAIRS));
  const size = Math.ceil(pairs.length / count);
  return Array.from({ length: count }, (_, k) => pairs.slice(k * size, (k + 1) * size)).filter((part) => part.length > 0);
}

export const matchingStage: Stage<{ downloaded: Downloaded; extracted: Extracted }, Matched> = {
  name: 'matching',
  title: 'Matching features',
  weight: 25,
  async run(context, { downloaded, extracted }) {
    const { input } = context;
    const images = downloaded.images;
    const withGps = input.images.filter((i) => i.latitude !== null && i.longitude !== null).length;
    const selection = chooseMatcher(images.length, withGps) === 'pairs' ? selectPairs(pairImages(images)) : null;
    const matcher: MatcherKind = selection ? 'pairs' : images.length <= EXHAUSTIVE_MAX_IMAGES ? 'exhaustive' : 'sequential';
    if (!selection) {
      await context.colmap('matching', matcherArgs(matcher === 'sequential' ? 'sequential' : 'exhaustive', extracted.paths), { text: 'Matching features', parse: matcherProgress });
      return { matcher, selection, matched: [], secondsPerPair: 0 };
    }
    context.log(
      `pair selection: ${selection.pairs.length} of ${selection.exhaustivePairs} pairs (typical spacing ${selection.spacing.toFixed(1)} m, radius ${selection.radius.toFixed(1)} m; ` +
        `${selection.withFootprint} image(s) with a ground footprint, ${selection.withDirection} with a viewing direction, ${selection.withoutPosition} without a position; ` +
        `${selection.addedForPartners} pair(s) added for the least partners, ${selection.addedToConnect} to connect)`,
    );
    const secondsPerPair = await importPairs(context, extracted.paths, downloaded, selection.pairs, 'match-pairs.txt', { text: 'Matching features' });
    return { matcher, selection, matched: [...selection.pairs], secondsPerPair };
  },
};

/**
 * Matches and verifies `pairs` (matches_importer, in parts: importParts; the lists in the work
 * folder, named after `file`); answers the seconds per pair it took.
 */
export async function importPairs(context: StageContext, paths: ColmapPaths, downloaded: Downloaded, pairs: readonly Pair[], file: string, options: Omit<ColmapOptions, 'parse'>): Promise<number> {
  const names = downloaded.images.map((l) => l.name);
  const parts = importParts(pairs);
  const within = options.within ?? { start: 0, end: 1 };
  const t = Date.now();
  let done = 0;
  await context.progress(within.start, `${options.text} (0/${pairs.length} pairs)`);
  for (const [k, part] of parts.entries()) {
    const listPath = path.join(context.work, parts.length === 1 ? file : file.replace(/(\.txt)?$/, `-${k + 1}$1`));
    await fsp.writeFile(listPath, pairListText(names, part));
    const before = done;
    const at = (fraction: number) => within.start + fraction * (within.end - within.start);
    await context.colmap('matching', matchesImporterArgs(paths, listPath), {
      ...options,
      within: { start: at(before / pairs.length), end: at((before + part.length) / pairs.length) },
      parse: (line) => (/^Matching block \[\d+\/\d+\] in /.test(line) ? { fraction: 1, detail: `${before + part.length}/${pairs.length} pairs` } : null),
    });
    done += part.length;
  }
  return (Date.now() - t) / 1000 / Math.max(1, pairs.length);
}

/** What the pair selection knows of each image: local position, gimbal orientation, height above the ground, focal. */
export function pairImages(
  local: readonly { image: Pick<EngineInput['images'][number], 'latitude' | 'longitude' | 'altitude' | 'quaternion' | 'width' | 'height'>; intrinsics: ImageIntrinsicsInput; relativeAltitude: number | null }[],
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
