// State preconditions shared by the project operations (CONTRACT §1: 409 `conflict`).
import { conflict } from '../../infra/http/errors.ts';
import type { ProjectRow } from '../cloud.tables.ts';

/** Whether a project in this status still takes inputs (uploads, registration, options). */
export function acceptsInputs(publicStatus: string): boolean {
  return publicStatus === 'NEW' || publicStatus === 'UPLOADING';
}

/** Inputs, GCPs, MTPs and marks change, and processing starts, only before processing has started. */
export function requireNotStarted(project: ProjectRow, what = 'Inputs and processing options'): void {
  if (!acceptsInputs(project.public_status)) {
    throw conflict(`Processing has already started (public_status ${project.public_status}); ${what} can no longer change.`);
  }
}
