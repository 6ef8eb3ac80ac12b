// Stage `features`: SIFT features of every image (COLMAP feature_extractor, colmap-commands.ts),
// once per camera group (make / model / size / EXIF focal), so each group's intrinsics are seeded
// from EXIF. Progress per image from COLMAP's `Processed file [i/N]` lines. Makes the database.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { featureExtractorArgs, groupCameras, type CameraGroup, type ColmapPaths } from '../colmap-commands.ts';
import type { Downloaded } from './download.ts';
import type { Stage } from './stage.ts';

export interface Extracted {
  /** The database (features, later matches), the image folder and the mapper's output folder. */
  readonly paths: ColmapPaths;
  readonly groups: readonly CameraGroup[];
}

/** The image number of a feature_extractor progress line, or null. */
export function processedFile(line: string): { done: number; total: number } | null {
  const m = /^Processed file \[(\d+)\/(\d+)\]/.exec(line);
  return m ? { done: Number(m[1]), total: Number(m[2]) } : null;
}

export const featuresStage: Stage<{ downloaded: Downloaded }, Extracted> = {
  name: 'features',
  title: 'Extracting features',
  weight: 20,
  async run(context, { downloaded }) {
    const paths: ColmapPaths = { database: path.join(context.work, 'database.db'), images: downloaded.imageDir, sparse: path.join(context.work, 'sparse') };
    await fsp.mkdir(paths.sparse);
    const images = downloaded.images;
    const groups = groupCameras(images.map((l) => l.intrinsics));
    context.log(`camera groups:\n${groups.map((g) => `  ${g.label} (${g.focalSource}): ${g.images.length} image(s)`).join('\n')}`);
    let extracted = 0;
    for (const [g, group] of groups.entries()) {
      const listPath = path.join(context.work, `images-${g + 1}.txt`);
      await fsp.writeFile(listPath, `${group.images.join('\n')}\n`);
      const before = extracted;
      await context.colmap('feature extraction', featureExtractorArgs(paths, group, listPath), {
        text: 'Extracting features',
        parse: (line) => {
          const file = processedFile(line);
          if (!file) return null;
          extracted = before + file.done;
          return { fraction: extracted / images.length, detail: `${extracted}/${images.length} photos` };
        },
      });
      extracted = before + group.images.length;
    }
    return { paths, groups };
  },
};
