// The `colmap` engine: real structure-from-motion with COLMAP (CPU), run locally as child
// processes in a work folder (ENGINE_WORK_DIR, default DATA_DIR/work), removed afterwards.
//
// The pipeline, one stage per module in stages/ (stage.ts: the runtime that gives each its share
// of the progress, its section of the processing log, the COLMAP runner and the abort handling),
// each getting the records of the stages before it and returning its own; share of the progress:
//   preparation       enough images (10601), COLMAP installed (10001), its version          0 %
//   download          the images from object storage, their EXIF focal lengths (10601)      0-5 %
//   features          SIFT per camera group, intrinsics seeded from EXIF                     5-25 %
//   matching          GPS-selected pairs / exhaustive / sequential                           25-50 %
//   mapping           incremental mapper, other seeds, the matching fallback (10201)         50-88 %
//   georegistration   model_aligner to the GPS positions, leveling, the re-map loop for a
//                     misoriented, strained or folded model (10410); the final model folder  88-92 %
//   sparse-outputs    LAS, PLY, calibrated cameras, quality report, thumbnail                92-100 %
// then `furtherStages` (options), each given the sparse result, their weights added to the total,
// then the dense stages (dense-pipeline.ts; COLMAP_DENSE, on by default in the configuration):
//   undistortion      image_undistorter on the final model (DENSE_MAX_IMAGE_SIZE)        weight 2
//   depth-maps        PatchMatch MVS in TypeScript on worker threads (CUDA COLMAP's own) weight 30
//   fusion            stereo_fusion: the dense cloud, delivered as point_cloud            weight 6
//   meshing           poisson_mesher, trimmed: 3d_mesh_obj_zip, 3d_mesh_ply                weight 6
//   elevation         DSM and DTM as Cloud-Optimized GeoTIFFs                              weight 4
//   orthophoto        true orthomosaic (RGBA COG) and ortho_thumb                          weight 4
//   dense-report      the quality report again, with the dense figures                    weight 0
// only those the requested outputs need (stages/dense-plan.ts); a dense stage that fails keeps the
// sparse results and lists what it would have made as not available, with the failure.
// Every COLMAP command can fail with 10003 (out of memory),
// 10001 (crashed) or 10410 (exit code): colmap-process.ts. The time limit
// (ENGINE_TIME_LIMIT_SECONDS) kills COLMAP: 10002; a cancel (input.signal) kills the running
// command and rethrows the signal's reason.
import { DEFAULT_IMAGE_LIMITS } from '../../../shared/images/image-limits.ts';
import type { EngineInput, EngineResult, OutputCapabilities, PhotogrammetryEngine, ProducedOutput } from '../engine.ts';
import { colmapCapabilities } from './colmap-capabilities.ts';
import { downloadStage, type Downloaded } from './stages/download.ts';
import { featuresStage, type Extracted } from './stages/features.ts';
import { georegistrationStage, type Placement } from './stages/georegistration.ts';
import { mappingStage } from './stages/mapping.ts';
import { matchingStage } from './stages/matching.ts';
import { preparationStage } from './stages/preparation.ts';
import { sparseOutputsStage } from './stages/sparse-outputs.ts';
import { StageRuntime, type Stage } from './stages/stage.ts';
import { denseStageList, denseStages, runDense } from './dense-pipeline.ts';
import { densePlan, type DenseSettings } from './stages/dense-plan.ts';

export { exifIntrinsics, fileNames } from './stages/download.ts';
export { pairImages } from './stages/matching.ts';
export { betterPlaced } from './stages/georegistration.ts';
export { MIN_REGISTERED, MIN_REGISTERED_RATIO } from './stages/preparation.ts';

/** What the sparse stages made, for the stages after them. */
export interface SparseResult {
  readonly downloaded: Downloaded;
  readonly extracted: Extracted;
  /** The final placed model, and `modelFolder`: the same model as a binary COLMAP model folder. */
  readonly placement: Placement;
  /** The outputs written so far. */
  readonly result: EngineResult;
}

/** A stage after the sparse ones: it adds outputs. */
export type FurtherStage = Stage<SparseResult, ProducedOutput[]>;

export interface ColmapEngineOptions {
  /** The colmap executable (default `colmap` on the PATH). */
  binary?: string;
  /** Parent folder of the per-run work folders. */
  workDir: string;
  /** 0: no limit. */
  timeLimitSeconds?: number;
  /** sharp's limitInputPixels for the project thumbnail (IMAGE_MAX_PIXELS; default DEFAULT_IMAGE_LIMITS.maxPixels). */
  imageMaxPixels?: number;
  /** Stages run after the sparse ones, in order. */
  furtherStages?: readonly FurtherStage[];
  /** The dense stages (dense-pipeline.ts); off when not given (engines.ts passes the configuration's: COLMAP_DENSE, on by default, and DENSE_MAX_IMAGE_SIZE). */
  dense?: DenseSettings;
}

export class ColmapEngine implements PhotogrammetryEngine {
  readonly name = 'colmap';
  readonly capabilities: OutputCapabilities;
  private readonly binary: string;

  constructor(private readonly options: ColmapEngineOptions) {
    this.binary = options.binary || 'colmap';
    this.capabilities = colmapCapabilities(options.dense?.enabled ?? false);
  }

  async run(input: EngineInput): Promise<EngineResult> {
    const preparation = preparationStage(this.binary);
    const further = this.options.furtherStages ?? [];
    const denseSettings = this.options.dense ?? { enabled: false };
    const dense = denseStages(this.binary, denseSettings);
    const plan = densePlan(input.requestedOutputs, denseSettings);
    // Without a dense stage the sparse stage's quality report is the final one: it lists what is not made, and why.
    const sparseOutputs = sparseOutputsStage(this.options.imageMaxPixels ?? DEFAULT_IMAGE_LIMITS.maxPixels, plan.cloud ? null : plan.leftOut);
    const stages = [preparation, downloadStage, featuresStage, matchingStage, mappingStage, georegistrationStage, sparseOutputs, ...further, ...denseStageList(dense, plan)];
    const runtime = new StageRuntime(input, stages, { binary: this.binary, workDir: this.options.workDir, timeLimitSeconds: this.options.timeLimitSeconds ?? 0 });
    try {
      await runtime.open(`open-inspection colmap engine, project ${input.projectUuid}, ${input.images.length} image(s), output system ${input.outputCrs.name}`);
      const prepared = await runtime.run(preparation, {});
      const downloaded = await runtime.run(downloadStage, {});
      const extracted = await runtime.run(featuresStage, { downloaded });
      const matched = await runtime.run(matchingStage, { downloaded, extracted });
      const mapped = await runtime.run(mappingStage, { downloaded, extracted, matched });
      const placement = await runtime.run(georegistrationStage, { downloaded, extracted, matched, mapped });
      const sparse = await runtime.run(sparseOutputs, { prepared, downloaded, extracted, placement });
      for (const stage of further) {
        const outputs = await runtime.run(stage, { downloaded, extracted, placement, result: sparse });
        sparse.outputs.push(...outputs);
      }
      const result = await runDense(runtime, dense, plan, { prepared, downloaded, placement, sparse });
      result.outputs.push({ outputType: 'processing_log', key: await runtime.finish() });
      return result;
    } catch (err) {
      throw await runtime.fail(err);
    } finally {
      await runtime.close();
    }
  }
}
