// Stage `depth-maps`: a depth and a normal map per undistorted photo, by PatchMatch multi-view
// stereo in TypeScript on worker threads (dense/depth-maps.ts), written as COLMAP's `.bin` maps
// for the fusion. A COLMAP built with CUDA (its version line says "with CUDA") runs its own
// patch_match_stereo instead (geometric consistency on); this machine's Debian build has none, so
// that branch is not exercised by the tests.
import { computeDepthMaps, type DepthMapSummary } from '../../dense/depth-maps.ts';
import type { Prepared } from './preparation.ts';
import type { Stage } from './stage.ts';
import type { DenseWorkspace } from './undistortion.ts';

export interface DepthMaps {
  /** Which implementation made them. */
  readonly method: 'patch-match (TypeScript, CPU)' | 'COLMAP patch_match_stereo (CUDA)';
  readonly summary: DepthMapSummary | null;
}

export const depthMapsStage: Stage<{ prepared: Prepared; workspace: DenseWorkspace }, DepthMaps> = {
  name: 'depth-maps',
  title: 'Computing depth maps',
  weight: 30,
  async run(context, { prepared, workspace }) {
    if (prepared.version?.includes('with CUDA')) {
      const args = ['patch_match_stereo', '--workspace_path', workspace.folder, '--workspace_format', 'COLMAP', '--PatchMatchStereo.geom_consistency', 'true', '--PatchMatchStereo.max_image_size', String(workspace.depthMapSize)];
      await context.colmap('depth maps (patch_match_stereo)', args, {
        text: 'Computing depth maps',
        parse: (line) => {
          const m = /Processing view (\d+) \/ (\d+)/.exec(line);
          return m ? { fraction: Number(m[1]) / Number(m[2]), detail: `${m[1]}/${m[2]} maps` } : null;
        },
      });
      return { method: 'COLMAP patch_match_stereo (CUDA)', summary: null };
    }
    let reported = Promise.resolve();
    const summary = await computeDepthMaps(
      workspace.folder,
      { maxImageSize: workspace.depthMapSize },
      (done, total) => {
        reported = reported.then(() => context.progress(done / total, `Computing depth maps (${done}/${total} maps)`)).catch(() => undefined);
      },
      context.signal,
    );
    await reported;
    context.log(
      `depth maps: ${summary.images} image(s) at ${summary.width}x${summary.height} at most, ${(100 * summary.validShare).toFixed(1)} % of the pixels kept; ` +
        `photometric pass ${summary.photometricSeconds.toFixed(1)} s, geometric pass ${summary.geometricSeconds.toFixed(1)} s`,
    );
    return { method: 'patch-match (TypeScript, CPU)', summary };
  },
};
