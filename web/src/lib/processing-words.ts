// Processing in words for people (issue 29: "words, not codes"): the cloud project's state, the
// outputs' plain names, durations, file sizes and the time left. One vocabulary for the
// processing page and the outputs tab.

/** The cloud project's `public_status` (CONTRACT: NEW ... CANCELED) as a person says it. */
const CLOUD_STATES: Record<string, string> = {
  NEW: 'Created, waiting for photos',
  UPLOADING: 'Receiving the photos',
  WAITING: 'Queued for processing',
  PROCESSING: 'Processing',
  DONE: 'Finished',
  ERROR: 'Failed',
  CANCELED: 'Cancelled',
};

export function cloudStateWords(publicStatus: string): string {
  return CLOUD_STATES[publicStatus] ?? publicStatus.toLowerCase();
}

/** Output types (the cloud's names, CONTRACT §3) in plain words; an unknown type is shown as it is. */
export const OUTPUT_NAMES: Record<string, string> = {
  point_cloud: 'Point cloud (LAS)',
  point_cloud_ply: 'Point cloud (PLY)',
  point_cloud_bundle: 'Point cloud bundle',
  '3d_mesh_obj_zip': '3D mesh (OBJ, zipped)',
  '3d_mesh_ply': '3D mesh (PLY)',
  '3d_mesh_web_ply': '3D mesh for the browser (PLY)',
  dsm: 'Surface model (DSM)',
  dtm: 'Terrain model (DTM)',
  ortho_rgb: 'Orthomosaic',
  ortho_thumb: 'Orthomosaic preview',
  calibrated_camera_parameters_json: 'Calibrated cameras (JSON)',
  quality_report: 'Quality report',
  quality_report_pdf: 'Quality report (PDF)',
  processing_log: 'Processing log',
  input_zip: 'Original photos (ZIP)',
  project_thumb: 'Project thumbnail',
  report_pdf: 'Inspection report (PDF)',
  report_json: 'Inspection report (JSON)',
};

export function outputName(outputType: string): string {
  return OUTPUT_NAMES[outputType] ?? outputType;
}

/** 45 s, 3 min 20 s, 1 h 5 min. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const minutes = Math.round((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${minutes ? ` ${minutes} min` : ''}`;
}

/** 950 B, 12 kB, 3.4 MB, 1.2 GB (decimal units, as file managers show them). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/**
 * Seconds left at a steady pace: elapsed x (100 - progress) / progress. null before 5 % (the
 * first minutes say little about the rest) and once done.
 */
export function remainingSeconds(elapsedSeconds: number, progressPercent: number | null): number | null {
  if (progressPercent === null || !(progressPercent >= 5) || progressPercent >= 100 || !(elapsedSeconds > 0)) return null;
  return (elapsedSeconds * (100 - progressPercent)) / progressPercent;
}
