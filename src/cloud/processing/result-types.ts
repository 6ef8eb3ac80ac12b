// `result_type` of an output: the group it belongs to, which clients filter on (Pix4D's demo
// client picks `result_type == 'ortho'`, then an `output_type` inside the group). The names are
// those of the real cloud API's published output list (Pix4D/demo-pix4d-cloud-api, "Get Project"):
// ortho_rgb -> ortho, dsm -> dsm, point_cloud -> point_cloud, 3d_mesh_obj_zip -> 3d_mesh_obj,
// calibrated_camera_parameters_json -> calibrated_camera_parameters, quality_report ->
// quality_report, the engine's log -> mapper_log, input_zip -> input_zip, project_thumb ->
// project_thumb. Outputs the real list does not show are grouped by what they are (dtm -> dtm; the
// PLY point cloud with the point clouds). docs/cloud-service.md, "Outputs".
import type { OutputType } from './engine.ts';

const RESULT_TYPES: Record<OutputType, string> = {
  ortho_rgb: 'ortho',
  ortho_thumb: 'ortho',
  dsm: 'dsm',
  dtm: 'dtm',
  point_cloud: 'point_cloud',
  point_cloud_ply: 'point_cloud',
  // The real list files the point cloud bundle under 3d_mesh_obj; it is a point cloud.
  point_cloud_bundle: 'point_cloud',
  '3d_mesh_obj_zip': '3d_mesh_obj',
  '3d_mesh_ply': '3d_mesh_obj',
  '3d_mesh_web_ply': '3d_mesh_obj',
  calibrated_camera_parameters_json: 'calibrated_camera_parameters',
  quality_report: 'quality_report',
  quality_report_pdf: 'quality_report',
  processing_log: 'mapper_log',
  input_zip: 'input_zip',
  project_thumb: 'project_thumb',
};

/** The result_type of an output type (an unknown one is its own group). */
export function resultTypeOf(outputType: string): string {
  return Object.hasOwn(RESULT_TYPES, outputType) ? RESULT_TYPES[outputType as OutputType] : outputType;
}

/** Output types that are georeferenced rasters, shown as map layers (map-layers.ts). */
export const MAP_LAYER_OUTPUTS: readonly OutputType[] = ['ortho_rgb', 'dsm', 'dtm'];
