// Stage `fusion`: `colmap stereo_fusion` (CPU) fuses the depth maps into the dense cloud, with
// colours and normals (dense/fusion.ts: the options and why). The cloud is delivered as the
// project's `point_cloud` (LAS) and `point_cloud_ply`, in the output system exactly as the sparse
// cloud was (sparse-outputs.ts writePointCloudOutputs, over the same keys: the sparse figures stay
// in the quality report). A fusion that keeps no point fails the stage (dense-pipeline.ts then
// keeps the sparse cloud and says so).
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../../engine.ts';
import { FUSION_OPTIONS, fusionProgress, stereoFusionArgs } from '../../dense/fusion.ts';
import { readPlyMeshFile } from '../../mesh/mesh-ply.ts';
import type { PointCloud } from '../../../../shared/pointcloud/index.ts';
import type { Vec3 } from '../../../../shared/geo/rotation.ts';
import type { Placement } from './georegistration.ts';
import { writePointCloudOutputs } from './sparse-outputs.ts';
import type { Stage } from './stage.ts';
import type { DenseWorkspace } from './undistortion.ts';

export interface FusedCloud {
  /** stereo_fusion's PLY (local frame, normals, colours): the mesh's input. */
  readonly plyPath: string;
  readonly points: number;
  /** x, y, z in the local frame (georeference.ts), for the DSM. */
  readonly localPositions: Float64Array;
}

export const fusionStage: Stage<{ workspace: DenseWorkspace; placement: Placement }, FusedCloud> = {
  name: 'fusion',
  title: 'Fusing the dense point cloud',
  weight: 6,
  async run(context, { workspace, placement }) {
    const plyPath = path.join(workspace.folder, 'fused.ply');
    await context.colmap('dense fusion (stereo_fusion)', stereoFusionArgs(workspace.folder, plyPath, os.availableParallelism(), FUSION_OPTIONS), {
      text: 'Fusing the dense point cloud',
      within: { start: 0, end: 0.8 },
      parse: (line) => {
        const p = fusionProgress(line);
        return p ? { fraction: p.done / p.total, detail: `${p.done}/${p.total} photos` } : null;
      },
    });
    const fused = await readPlyMeshFile(plyPath);
    if (fused.vertexCount === 0) throw new EngineError(10410, 'The dense fusion kept no point: the depth maps of the photos do not agree with each other.');
    await context.progress(0.85, 'Writing the dense point cloud');
    const { frame } = placement;
    const cloud: PointCloud = { count: fused.vertexCount, positions: new Float64Array(3 * fused.vertexCount), colors: fused.colors };
    for (let i = 0; i < fused.vertexCount; i++) {
      const local: Vec3 = [fused.positions[3 * i], fused.positions[3 * i + 1], fused.positions[3 * i + 2]];
      cloud.positions.set(frame ? frame.toOutput(local) : local, 3 * i);
    }
    await writePointCloudOutputs(context.input, cloud, frame ? frame.offsetOutput : [0, 0, 0]);
    context.log(`dense cloud: ${fused.vertexCount} points`);
    return { plyPath, points: fused.vertexCount, localPositions: fused.positions };
  },
};
