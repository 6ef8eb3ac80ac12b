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

/** Stable statuses (CONTRACT.md §2): nothing is under way, polling can stop. */
export function isStable(status: number): boolean {
  return [1, 7, 13, 14, 15, 16, 17, 19, 24, 27, 8, 18, 21, 22, 23].includes(status);
}

export type StepState = 'done' | 'current' | 'failed' | 'todo';

/** The error status of each step (spec: 13–17, 19 "not enough valid images" belongs to analysis). */
const ERROR_OF_STEP: Record<number, number[]> = { 2: [13], 12: [14], 3: [15, 19], 4: [16], 5: [17] };

/**
 * The processing steps as a stepper: upload (2) → waiting (20) → [video 12] → analysis (3) →
 * photogrammetry (4) → clipping (5) → completed (7), each done, current, failed or to do.
 */
export function processingSteps(status: number, isVideo: boolean, clips = true): { status: number; state: StepState }[] {
  // Clipping (5) is a step only for inspections that asked for it (or are in it).
  const order = [2, 20, ...(isVideo ? [12] : []), 3, 4, ...(clips || status === 5 || status === 17 ? [5] : []), 7];
  const failedStep = Object.entries(ERROR_OF_STEP).find(([, errors]) => errors.includes(status));
  const position = failedStep ? order.indexOf(Number(failedStep[0])) : status === 25 ? order.indexOf(4) : status === 1 ? -1 : order.indexOf(status);
  return order.map((step, index) => {
    let state: StepState = 'todo';
    if (status === 7 || index < position) state = 'done';
    else if (index === position) state = failedStep ? 'failed' : 'current';
    return { status: step, state };
  });
}
