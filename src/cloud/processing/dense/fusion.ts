// The COLMAP command lines around computeDepthMaps (depth-maps.ts): the undistortion that makes its
// workspace, and the fusion of its depth maps into the dense coloured cloud with normals.
//
// Undistortion: `image_undistorter --output_type COLMAP --max_image_size N` writes PINHOLE images
// no larger than N pixels and the workspace layout PatchMatch and fusion read.
//
// Fusion (COLMAP 3.8's stereo_fusion, CPU): starting from each pixel with a depth, it projects the
// point into the overlapping images (the check_num_images images sharing the most sparse points;
// 3.8 needs no consistency graphs) and gathers the pixels that agree: depth within
// max_depth_error (relative), reprojection within max_reproj_error pixels, normal within
// max_normal_error degrees; a point needs min_num_pixels agreeing pixels. The choices:
// - min_num_pixels 3 (COLMAP: 5): each depth map is already filtered against two source views
//   (patch-match.ts), and a drone survey's border areas are seen by few images; 3 keeps them;
// - max_normal_error 15 degrees (COLMAP: 10): our normals come from 4 PatchMatch iterations, not
//   COLMAP's 5 with a finer window, and are noisier; the depth checks carry the geometry;
// - the rest as COLMAP's defaults (max_depth_error 0.01, max_reproj_error 2).
import path from 'node:path';
import type { Writable } from 'node:stream';
import { colmapFailure, runColmap } from '../colmap/colmap-process.ts';

export interface UndistortPaths {
  images: string;
  /** The sparse model to undistort (a binary model folder). */
  model: string;
  workspace: string;
}

export function undistorterArgs(paths: UndistortPaths, maxImageSize: number): string[] {
  return ['image_undistorter', '--image_path', paths.images, '--input_path', paths.model, '--output_path', paths.workspace, '--output_type', 'COLMAP', '--max_image_size', String(maxImageSize)];
}

export const FUSION_OPTIONS = {
  minNumPixels: 3,
  maxNormalError: 15,
  maxDepthError: 0.01,
  maxReprojError: 2,
};

export function stereoFusionArgs(workspace: string, outputPath: string, threads: number, options = FUSION_OPTIONS): string[] {
  return [
    'stereo_fusion',
    '--workspace_path', workspace,
    '--workspace_format', 'COLMAP',
    '--input_type', 'geometric',
    '--output_type', 'PLY',
    '--output_path', outputPath,
    '--StereoFusion.num_threads', String(threads),
    '--StereoFusion.min_num_pixels', String(options.minNumPixels),
    '--StereoFusion.max_normal_error', String(options.maxNormalError),
    '--StereoFusion.max_depth_error', String(options.maxDepthError),
    '--StereoFusion.max_reproj_error', String(options.maxReprojError),
  ];
}

/** COLMAP's per-image progress line of stereo_fusion: `Fusing image [3/29] ...`. */
export function fusionProgress(line: string): { done: number; total: number } | null {
  const m = /Fusing image \[(\d+)\/(\d+)\]/.exec(line);
  return m ? { done: Number(m[1]), total: Number(m[2]) } : null;
}

export interface FusionRun {
  binary: string;
  workspace: string;
  glogDir: string;
  log: Writable;
  threads: number;
  signal: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** Runs stereo_fusion on the workspace; resolves with the fused PLY's path (binary PLY: x y z nx ny nz red green blue). */
export async function runStereoFusion(run: FusionRun): Promise<string> {
  const output = path.join(run.workspace, 'fused.ply');
  const outcome = await runColmap({
    binary: run.binary,
    args: stereoFusionArgs(run.workspace, output, run.threads),
    cwd: run.workspace,
    glogDir: run.glogDir,
    log: run.log,
    signal: run.signal,
    onLine: (line) => {
      const progress = fusionProgress(line);
      if (progress) run.onProgress?.(progress.done, progress.total);
    },
  });
  if (outcome.aborted) throw run.signal.reason;
  if (outcome.code !== 0) throw colmapFailure('dense fusion (stereo_fusion)', outcome);
  return output;
}
