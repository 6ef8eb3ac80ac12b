// Which dense products a colmap run makes, decided before the dense stages start (issue 28):
//   dense point cloud   undistortion -> depth maps -> fusion        (outputs.point_cloud)
//   mesh                the fused cloud -> poisson_mesher           (outputs.mesh)
//   DSM and DTM         the fused cloud gridded, ground filtered     (outputs.dsm)
//   orthomosaic         the DSM and the cameras                      (outputs.ortho)
// A key of start_processing's `outputs` left out means the engine's default: make it. The mesh,
// the DSM and the orthomosaic stand on the fused cloud, so it is made whenever one of them is
// asked for (and then delivered: an output made though not asked for is kept, requested-outputs.ts);
// the orthomosaic stands on the DSM likewise. Whatever is not made is listed with its reason in
// words, never silently missing: not requested (requested-outputs.ts words it), the dense stages
// switched off (COLMAP_DENSE=off), or, later, a stage that cannot run for this dataset or failed
// (dense-pipeline.ts).
import type { OutputType } from '../../engine.ts';
import type { RequestedOutputs } from '../../requested-outputs.ts';

/** Longest side of the depth maps by default (DENSE_MAX_IMAGE_SIZE; the fusion scales each camera to its map). */
export { DEFAULT_DEPTH_MAP_SIZE as DENSE_DEFAULT_MAX_IMAGE_SIZE } from '../../dense/depth-map-size.ts';

/**
 * Longest side of the undistorted photos the orthomosaic and the fused colours are read from: finer
 * than the depth maps, so that the orthophoto keeps the photos' detail (12 s for brighton's 18).
 */
export const UNDISTORTED_MAX_IMAGE_SIZE = 2000;

export interface DenseSettings {
  /** COLMAP_DENSE: off skips every dense stage. */
  enabled: boolean;
  /** DENSE_MAX_IMAGE_SIZE: the depth maps' longest side. */
  maxImageSize?: number;
}

export interface DensePlan {
  /** Undistortion, depth maps and fusion run. */
  readonly cloud: boolean;
  readonly mesh: boolean;
  /** DSM and DTM (the orthomosaic needs the DSM). */
  readonly elevation: boolean;
  readonly ortho: boolean;
  /** Outputs the plan leaves out, with why. */
  readonly leftOut: readonly { outputType: OutputType; reason: string }[];
}

/** Why a run with COLMAP_DENSE=off makes no mesh, DSM or orthomosaic (also the engine's capabilities, colmap-capabilities.ts). */
export const DENSE_SWITCHED_OFF = 'The dense stages of the colmap engine are switched off on this installation (COLMAP_DENSE=off): only the sparse reconstruction is made.';

/** The dense products of a run. */
export function densePlan(requested: RequestedOutputs | null | undefined, settings: DenseSettings): DensePlan {
  const wanted = (key: keyof RequestedOutputs) => requested?.[key] !== false;
  if (!settings.enabled) {
    const reason = DENSE_SWITCHED_OFF;
    return { cloud: false, mesh: false, elevation: false, ortho: false, leftOut: OUTPUTS_DEPENDING_ON.cloud.map((outputType) => ({ outputType, reason })) };
  }
  const ortho = wanted('ortho');
  const elevation = ortho || wanted('dsm');
  const mesh = wanted('mesh');
  const cloud = mesh || elevation || wanted('point_cloud');
  const leftOut: { outputType: OutputType; reason: string }[] = [];
  if (!mesh) leftOut.push({ outputType: '3d_mesh_obj_zip', reason: 'Not requested (outputs.mesh: false).' }, { outputType: '3d_mesh_ply', reason: 'Not requested (outputs.mesh: false).' });
  if (!elevation) leftOut.push({ outputType: 'dsm', reason: 'Not requested (outputs.dsm: false).' }, { outputType: 'dtm', reason: 'Not requested (outputs.dsm: false).' });
  if (!ortho) leftOut.push({ outputType: 'ortho_rgb', reason: 'Not requested (outputs.ortho: false).' });
  return { cloud, mesh, elevation, ortho, leftOut };
}

/** The outputs a dense stage makes, and those of the stages that stand on it: what its failure leaves out. */
export const OUTPUTS_DEPENDING_ON: Record<'cloud' | 'mesh' | 'elevation' | 'ortho', readonly OutputType[]> = {
  cloud: ['3d_mesh_obj_zip', '3d_mesh_ply', 'dsm', 'dtm', 'ortho_rgb'],
  mesh: ['3d_mesh_obj_zip', '3d_mesh_ply'],
  elevation: ['dsm', 'dtm', 'ortho_rgb'],
  ortho: ['ortho_rgb'],
};
