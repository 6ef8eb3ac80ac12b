// Inspection statuses of the spec (inspection-service.md, "States and transitions"), for display.
// The API lists them too (GET /v1/inspections/statuses/); these names keep the first paint fast.

export const STATUS_NAMES: Record<number, string> = {
  1: 'New',
  2: 'Uploading input files',
  3: 'Analyzing input images',
  4: 'Photogrammetry processing',
  5: 'Clipping point cloud',
  7: 'Processing completed',
  12: 'Extracting video images',
  13: 'ERROR - Uploading input files',
  14: 'ERROR - Extracting video images',
  15: 'ERROR - Analyzing input images',
  16: 'ERROR - Photogrammetry processing',
  17: 'ERROR - Clipping point cloud',
  19: 'ERROR - Not enough valid images',
  20: 'Waiting for processing',
  24: 'Data purged',
  25: 'Camera processing',
  27: 'Demo',
};

export type StatusKind = 'ok' | 'error' | 'busy' | 'idle';

export function statusKind(status: number): StatusKind {
  if (status === 7 || status === 27) return 'ok';
  if ((status >= 13 && status <= 19) || [8, 18, 21, 22, 23].includes(status)) return status === 18 || status === 8 ? 'idle' : 'error';
  if ([3, 4, 5, 12, 20, 25].includes(status)) return 'busy';
  return 'idle';
}

export function statusName(status: number): string {
  return STATUS_NAMES[status] ?? `Status ${status}`;
}
