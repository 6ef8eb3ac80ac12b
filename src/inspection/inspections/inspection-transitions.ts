// The moves of an inspection's `status` that the service makes itself (spec "States and
// transitions"; the moves between processing statuses are this service's own). Every one goes
// through InspectionRepository.transition, which applies it only while the row is still in one of
// the `from` statuses (a step retried after a crash, a concurrent request or a deletion then
// changes nothing) and refuses, as a programming error, a move that is not listed here.
//
// Outside this table, on purpose:
// - creation inserts the row in status 1 New (a retry in 2 Uploading: CREATION below);
// - the spec's "any -> the given value" of PUT/PATCH with `status` is a client's override, written
//   by InspectionRepository.applyUpdate under the row lock, guarded by the status the request read;
// - deletion is no status: a soft delete from a stable status (DELETION below).
import { RESERVED_STATUSES, STABLE_STATUSES, Status } from './statuses.ts';

/**
 * Where retention may purge from: the stable statuses (CONTRACT) but 24 itself; work under way is
 * left to finish first. Also a client's reserved statuses (8, 18, 21-23), stable too.
 */
export const PURGEABLE_STATUSES = [
  Status.New,
  Status.Completed,
  Status.ErrorUploading,
  Status.ErrorExtractingVideo,
  Status.ErrorAnalyzing,
  Status.ErrorPhotogrammetry,
  Status.ErrorClipping,
  Status.ErrorNotEnoughImages,
  Status.Demo,
  ...(RESERVED_STATUSES as Status[]),
] as const;

export interface TransitionRule {
  readonly from: readonly Status[];
  readonly to: Status;
  /** What makes the move (documentation, and the error message of a refused move). */
  readonly by: string;
}

export const TRANSITIONS = [
  { from: [Status.New], to: Status.Uploading, by: 'register_images: the first images registered' },
  { from: [Status.New, Status.Uploading, Status.Waiting], to: Status.Waiting, by: 'process (allowance spent), or a retry whose inputs are copied (from 2)' },
  { from: [Status.Waiting, Status.ExtractingVideo], to: Status.ExtractingVideo, by: 'extract-video job of an is_video inspection (again after a crash)' },
  { from: [Status.ExtractingVideo], to: Status.Analyzing, by: 'extract-video: frames stored and registered as the images' },
  { from: [Status.ExtractingVideo], to: Status.ErrorExtractingVideo, by: 'extract-video: unreadable video, ffmpeg failed, no frame, or a video gone from storage' },
  { from: [Status.Waiting, Status.Analyzing], to: Status.Analyzing, by: 'analyze-images job (again after a crash)' },
  { from: [Status.Analyzing], to: Status.Photogrammetry, by: 'analyze-images: enough valid images' },
  { from: [Status.Analyzing], to: Status.ErrorNotEnoughImages, by: 'analyze-images: too few valid images' },
  { from: [Status.Photogrammetry], to: Status.Clipping, by: 'track-photogrammetry: DONE with a point cloud to clip' },
  { from: [Status.Photogrammetry], to: Status.Completed, by: 'track-photogrammetry: DONE, nothing to clip' },
  { from: [Status.Photogrammetry], to: Status.ErrorPhotogrammetry, by: 'track-photogrammetry: start refused, ERROR or CANCELED' },
  { from: [Status.Clipping], to: Status.Completed, by: 'clip-point-cloud: clipped' },
  { from: [Status.Clipping], to: Status.ErrorClipping, by: 'clip-point-cloud: the point cloud cannot be clipped' },
  { from: [Status.Uploading], to: Status.ErrorUploading, by: 'prepare-retry: an input of the original is gone' },
  { from: PURGEABLE_STATUSES, to: Status.DataPurged, by: 'purge-data: retention expired, its photos, outputs and cloud project deleted (retention/retention.service.ts)' },
] as const satisfies readonly TransitionRule[];

/** The status a new row is inserted in. */
export const CREATION = { inspection: Status.New, retry: Status.Uploading } as const;

/** Soft deletion (inspections, and those of a deleted asset): only from a stable status (CONTRACT). */
export const DELETION = { from: [...STABLE_STATUSES] as readonly number[] } as const;

const allowed = new Set(TRANSITIONS.flatMap((t) => t.from.map((from) => `${from}>${t.to}`)));

/** Throws unless every `from -> to` is in TRANSITIONS: a move outside the table is a bug, never a client's doing. */
export function assertTransition(from: readonly Status[], to: Status): void {
  const refused = from.filter((f) => !allowed.has(`${f}>${to}`));
  if (refused.length > 0 || from.length === 0) {
    throw new Error(`Inspection status move ${from.length ? refused.join(',') : '(none)'} -> ${to} is not in TRANSITIONS (inspection-transitions.ts).`);
  }
}
