// Inspection statuses (spec "States and transitions", CONTRACT section 2).
export const Status = {
  New: 1,
  Uploading: 2,
  Analyzing: 3,
  Photogrammetry: 4,
  Clipping: 5,
  Completed: 7,
  ExtractingVideo: 12,
  ErrorUploading: 13,
  ErrorExtractingVideo: 14,
  ErrorAnalyzing: 15,
  ErrorPhotogrammetry: 16,
  ErrorClipping: 17,
  ErrorNotEnoughImages: 19,
  Waiting: 20,
  DataPurged: 24,
  CameraProcessing: 25,
  Demo: 27,
} as const;

/** A status the service itself sets (the named ones above); clients may also set the reserved ones. */
export type Status = (typeof Status)[keyof typeof Status];

export const STATUSES: { id: number; description: string }[] = [
  { id: 1, description: 'New' },
  { id: 2, description: 'Uploading input files' },
  { id: 3, description: 'Analyzing input images' },
  { id: 4, description: 'Photogrammetry processing' },
  { id: 5, description: 'Clipping point cloud' },
  { id: 7, description: 'Processing completed' },
  { id: 12, description: 'Extracting video images' },
  { id: 13, description: 'ERROR - Uploading input files' },
  { id: 14, description: 'ERROR - Extracting video images' },
  { id: 15, description: 'ERROR - Analyzing input images' },
  { id: 16, description: 'ERROR - Photogrammetry processing' },
  { id: 17, description: 'ERROR - Clipping point cloud' },
  { id: 19, description: 'ERROR - Not enough valid images' },
  { id: 20, description: 'Waiting for processing' },
  { id: 24, description: 'Data purged' },
  { id: 25, description: 'Camera processing' },
  { id: 27, description: 'Demo' },
];

export const ADDITIONAL_STATUSES: { id: number; description: string }[] = [
  { id: 1, description: 'Inventory automatic detection pending' },
  { id: 2, description: 'Inventory automatic detection' },
  { id: 3, description: 'Inventory review pending' },
  { id: 4, description: 'Inventory review ongoing' },
  { id: 5, description: 'Inventory review completed' },
  { id: 6, description: 'Inventory review completed without compatible inventory' },
  { id: 7, description: 'ERROR - Inventory automatic detection' },
  { id: 8, description: 'ERROR - Inventory: No tower' },
  { id: 9, description: 'WARNING - Inventory: Borderline quality' },
  { id: 10, description: 'ERROR - Inventory: Insufficient quality' },
  { id: 11, description: 'Rust analysis pending' },
  { id: 12, description: 'Rust analysis ongoing' },
  { id: 13, description: 'Rust analysis completed' },
  { id: 14, description: 'Rust analysis error' },
];

/** Unnamed in the spec; reserved (CONTRACT): stable and retryable, never set by the service. */
export const RESERVED_STATUSES = [8, 18, 21, 22, 23];

/** CONTRACT: stable statuses; every other status means work is under way. */
export const STABLE_STATUSES = new Set([1, 7, 13, 14, 15, 16, 17, 19, 24, 27, ...RESERVED_STATUSES]);

/** Statuses from which `process` may start (spec transition table). */
export const PROCESSABLE_STATUSES = [Status.New, Status.Uploading, Status.Waiting];

/**
 * Whether image files may still be uploaded to and registered with an inspection: not a retry
 * (it reuses its original's inputs) and processing never started (spec rule 4). register_images
 * and the storage credentials' write check (auth/storage-grants.ts) apply this one rule.
 */
export function takesUploads(inspection: { status: number; processing_started_at: unknown; retry_of: number | null }): boolean {
  return inspection.retry_of === null && !inspection.processing_started_at && PROCESSABLE_STATUSES.includes(inspection.status as 1 | 2 | 20);
}

/** Statuses in which an inspection may be retried (spec retry condition 3). */
export const RETRYABLE_STATUSES = new Set([7, 8, 14, 16, 17, 18, 21, 22, 23]);

/** Every status a client may set through update: the spec's statuses and the reserved ones. */
export const SETTABLE_STATUSES = new Set([...STATUSES.map((s) => s.id), ...RESERVED_STATUSES]);

/**
 * E-mail categories of a status (spec "Events": e-mail for started, finished or error values):
 * started = work under way, finished = 7, error = the ERROR statuses. Others send nothing.
 */
export function statusCategory(status: number): 'started' | 'finished' | 'error' | null {
  if ([2, 3, 4, 5, 12, 20, 25].includes(status)) return 'started';
  if (status === Status.Completed) return 'finished';
  if ([13, 14, 15, 16, 17, 19].includes(status)) return 'error';
  return null;
}

export function statusDescription(status: number): string {
  return STATUSES.find((s) => s.id === status)?.description ?? `Status ${status}`;
}
