// The dense half of the colmap engine (issue 28), after the sparse stages: which products to make
// (stages/dense-plan.ts), then the stages, each given the records of those before it:
//   undistortion   image_undistorter on the final placed model               (stages/undistortion.ts)
//   depth-maps     PatchMatch MVS on worker threads (or CUDA COLMAP's own)    (stages/depth-maps.ts)
//   fusion         stereo_fusion: the dense cloud, delivered as point_cloud   (stages/fusion.ts)
//   meshing        poisson_mesher, trimmed: 3d_mesh_obj_zip, 3d_mesh_ply      (stages/meshing.ts)
//   elevation      DSM and DTM as COGs                                        (stages/elevation.ts)
//   orthophoto     true orthomosaic as an RGBA COG, ortho_thumb               (stages/orthophoto.ts)
//   dense-report   the quality report written again with the dense figures   (stages/dense-report.ts)
// A dense stage that fails (anything but the cancel or the time limit) does not fail the run: the
// sparse results are kept, what the stage and those standing on it would have made is listed as
// not available with the failure in words, and the quality report and the log say so.
import { EngineError, type EngineResult, type OutputType, type ProducedOutput } from '../engine.ts';
import { DENSE_DEFAULT_MAX_IMAGE_SIZE, OUTPUTS_DEPENDING_ON, UNDISTORTED_MAX_IMAGE_SIZE, type DensePlan, type DenseSettings } from './stages/dense-plan.ts';
import type { DenseProducts } from './stages/dense-products.ts';
import { denseReportStage, type DenseFigures } from './stages/dense-report.ts';
import { depthMapsStage } from './stages/depth-maps.ts';
import type { Downloaded } from './stages/download.ts';
import { elevationStage } from './stages/elevation.ts';
import { fusionStage } from './stages/fusion.ts';
import type { Placement } from './stages/georegistration.ts';
import { meshingStage } from './stages/meshing.ts';
import { orthophotoStage } from './stages/orthophoto.ts';
import type { Prepared } from './stages/preparation.ts';
import type { SparseOutputs } from './stages/sparse-outputs.ts';
import type { Stage, StageRuntime } from './stages/stage.ts';
import { undistortionStage } from './stages/undistortion.ts';

export interface DenseStages {
  readonly undistortion: ReturnType<typeof undistortionStage>;
  readonly depthMaps: typeof depthMapsStage;
  readonly fusion: typeof fusionStage;
  readonly meshing: ReturnType<typeof meshingStage>;
  readonly elevation: typeof elevationStage;
  readonly orthophoto: typeof orthophotoStage;
  readonly report: typeof denseReportStage;
}

/** The dense stages of a run, in order (their weights make their share of the progress). */
export function denseStages(binary: string, settings: DenseSettings): DenseStages {
  return {
    undistortion: undistortionStage(Math.max(UNDISTORTED_MAX_IMAGE_SIZE, settings.maxImageSize ?? 0), settings.maxImageSize ?? DENSE_DEFAULT_MAX_IMAGE_SIZE),
    depthMaps: depthMapsStage,
    fusion: fusionStage,
    meshing: meshingStage(binary),
    elevation: elevationStage,
    orthophoto: orthophotoStage,
    report: denseReportStage,
  };
}

/** The stages the plan runs, in order, for the runtime's shares of the progress (none when no dense product is made). */
export function denseStageList(stages: DenseStages, plan: DensePlan): Stage<never, unknown>[] {
  if (!plan.cloud) return [];
  const list: Stage<never, unknown>[] = [stages.undistortion, stages.depthMaps, stages.fusion] as Stage<never, unknown>[];
  if (plan.mesh) list.push(stages.meshing as Stage<never, unknown>);
  if (plan.elevation) list.push(stages.elevation as Stage<never, unknown>);
  if (plan.ortho) list.push(stages.orthophoto as Stage<never, unknown>);
  list.push(stages.report as Stage<never, unknown>);
  return list;
}

interface SparseRecords {
  prepared: Prepared;
  downloaded: Downloaded;
  placement: Placement;
  sparse: SparseOutputs;
}

/** Runs the dense stages the plan asks for; answers the run's result (sparse outputs, dense outputs, what was not made and why). */
export async function runDense(runtime: StageRuntime, stages: DenseStages, plan: DensePlan, records: SparseRecords): Promise<EngineResult> {
  const outputs: ProducedOutput[] = [...records.sparse.outputs];
  const leftOut = new Map<OutputType, string>(plan.leftOut.map((l) => [l.outputType, l.reason]));
  const figures: DenseFigures = { enabled: plan.cloud, failures: [] };
  /** One stage; null when it failed (logged, its dependents listed), the cancel and the time limit rethrown. */
  const attempt = async <I, O>(stage: Stage<I, O>, inputs: I, dependents: readonly OutputType[]): Promise<O | null> => {
    try {
      return await runtime.run(stage, inputs);
    } catch (err) {
      if (runtime.signal.aborted) throw err;
      const reason = err instanceof EngineError ? err.reason : err instanceof Error ? err.message : String(err);
      runtime.note(`dense stage ${stage.name} failed: ${reason}; the sparse results are kept`);
      figures.failures.push({ stage: stage.name, reason });
      for (const outputType of dependents) leftOut.set(outputType, `The dense stage "${stage.name}" failed (${reason}); the sparse results are kept.`);
      return null;
    }
  };
  const collect = (products: DenseProducts | null) => {
    if (!products) return;
    outputs.push(...products.outputs);
    for (const l of products.leftOut) leftOut.set(l.outputType, l.reason);
  };
  if (plan.cloud) {
    const { prepared, downloaded, placement } = records;
    const workspace = await attempt(stages.undistortion, { downloaded, placement }, OUTPUTS_DEPENDING_ON.cloud);
    const depthMaps = workspace && (await attempt(stages.depthMaps, { prepared, workspace }, OUTPUTS_DEPENDING_ON.cloud));
    const fused = workspace && depthMaps && (await attempt(stages.fusion, { workspace, placement }, OUTPUTS_DEPENDING_ON.cloud));
    figures.depthMaps = depthMaps ?? undefined;
    figures.points = fused?.points;
    figures.maxImageSize = workspace?.depthMapSize;
    if (workspace && fused) {
      if (plan.mesh) collect(await attempt(stages.meshing, { fused, placement }, OUTPUTS_DEPENDING_ON.mesh));
      if (plan.elevation) {
        const elevation = await attempt(stages.elevation, { fused, placement, workspace }, OUTPUTS_DEPENDING_ON.elevation);
        collect(elevation);
        if (plan.ortho && elevation?.dsm) collect(await attempt(stages.orthophoto, { dsm: elevation.dsm, placement, workspace }, OUTPUTS_DEPENDING_ON.ortho));
      }
    }
  }
  const notAvailable = [...leftOut].filter(([outputType]) => !outputs.some((o) => o.outputType === outputType)).map(([outputType, reason]) => ({ outputType, reason }));
  if (plan.cloud) await runtime.run(stages.report, { report: records.sparse.report, figures, notAvailable });
  return { outputs, notAvailable };
}
