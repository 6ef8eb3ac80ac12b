// Stage `undistortion`: `colmap image_undistorter` on the final placed model (georegistration.ts's
// model folder, in the local frame): PINHOLE images no larger than UNDISTORTED_MAX_IMAGE_SIZE
// (dense-plan.ts; the depth maps are made smaller, at DENSE_MAX_IMAGE_SIZE) and the
// workspace layout (images/, sparse/, stereo/) the depth maps, the fusion and the orthomosaic read
// (dense/fusion.ts undistorterArgs).
import path from 'node:path';
import { undistorterArgs } from '../../dense/fusion.ts';
import type { Downloaded } from './download.ts';
import type { Placement } from './georegistration.ts';
import type { Stage } from './stage.ts';

export interface DenseWorkspace {
  /** The undistorter's output folder. */
  readonly folder: string;
  /** Longest side of its images. */
  readonly maxImageSize: number;
  /** Longest side of the depth maps made from them (DENSE_MAX_IMAGE_SIZE). */
  readonly depthMapSize: number;
}

export function undistortionStage(maxImageSize: number, depthMapSize: number): Stage<{ downloaded: Downloaded; placement: Placement }, DenseWorkspace> {
  return {
    name: 'undistortion',
    title: 'Undistorting photos',
    weight: 2,
    async run(context, { downloaded, placement }) {
      const folder = path.join(context.work, 'dense');
      const args = undistorterArgs({ images: downloaded.imageDir, model: placement.modelFolder, workspace: folder }, maxImageSize);
      await context.colmap('undistortion', args, {
        text: 'Undistorting photos',
        parse: (line) => {
          const m = /Undistorting image \[(\d+)\/(\d+)\]/.exec(line);
          return m ? { fraction: Number(m[1]) / Number(m[2]), detail: `${m[1]}/${m[2]} photos` } : null;
        },
      });
      return { folder, maxImageSize, depthMapSize };
    },
  };
}
