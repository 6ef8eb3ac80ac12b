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
import type { ColmapOptions, Stage, StageContext } from './stage.ts';

export interface Matched {
  readonly matcher: MatcherKind;
  /** The selected pairs (matcher 'pairs'), else null. */
  readonly selection: PairSelection | null;
  /** Pairs matched (selected pairs only; empty for COLMAP's own matchers). */
  readonly matched: readonly Pair[];
  /** Seconds per pair of the selected pairs' matching: what a fallback's would cost (0 when none). */
  readonly secondsPerPair: number;
}

/** The fraction done of a matcher's progress line (exhaustive blocks, sequential images), or null. */
export function matcherProgress(line: string): number | null {
  const block = /^Matching block \[(\d+)\/(\d+), (\d+)\/(\d+)\]/.exec(line);
  if (block) return ((Number(block[1]) - 1) * Number(block[4]) + Number(block[3])) / (Number(block[2]) * Number(block[4]));
  const image = /^Matching image \[(\d+)\/(\d+)\]/.exec(line);
  return image ? Number(image[1]) / Number(image[2]) : null;
}

/** The fraction done of a matches_importer progress line, or null. */
export function importerProgress(line: string): number | null {
  const block = /^Matching block \[(\d+)\/(\d+)\] in /.exec(line);
  return block ? Number(block[1]) / Number(block[2]) : null;
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
      await context.colmap('matching', matcherArgs(matcher === 'sequential' ? 'sequential' : 'exhaustive', extracted.paths), { text: `Matching features (${matcher})`, parse: matcherProgress });
      return { matcher, selection, matched: [], secondsPerPair: 0 };
    }
    context.log(
      `pair selection: ${selection.pairs.length} of ${selection.exhaustivePairs} pairs (typical spacing ${selection.spacing.toFixed(1)} m, radius ${selection.radius.toFixed(1)} m; ` +
        `${selection.withFootprint} image(s) with a ground footprint, ${selection.withDirection} with a viewing direction, ${selection.withoutPosition} without a position; ` +
        `${selection.addedForPartners} pair(s) added for the least partners, ${selection.addedToConnect} to connect)`,
    );
    const secondsPerPair = await importPairs(context, extracted.paths, downloaded, selection.pairs, 'match-pairs.txt', { text: `Matching features (${selection.pairs.length} of ${selection.exhaustivePairs} pairs)` });
    return { matcher, selection, matched: [...selection.pairs], secondsPerPair };
  },
};

/** Matches and verifies `pairs` (matches_importer, the list in the work folder's `file`); answers the seconds per pair it took. */
export async function importPairs(context: StageContext, paths: ColmapPaths, downloaded: Downloaded, pairs: readonly Pair[], file: string, options: Omit<ColmapOptions, 'parse'>): Promise<number> {
  const listPath = path.join(context.work, file);
  await fsp.writeFile(listPath, pairListText(downloaded.images.map((l) => l.name), [...pairs]));
  const t = Date.now();
  await context.colmap('matching', matchesImporterArgs(paths, listPath), { ...options, parse: importerProgress });
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
