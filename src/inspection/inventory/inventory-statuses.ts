// The inventory's key of `additional_statuses` (spec "Additional statuses" 1–10): the automatic
// antenna detection's moves (`detect_antennas`, antenna-detection.ts) and the review's (items by
// hand, inventory.service.ts). Every move goes through InspectionRepository.inventoryTransition,
// which applies it only from the values listed here (a job run twice, or after a crash, changes
// nothing) and refuses a move not listed as a programming error, as inspection-transitions.ts does
// for `status`. `inventory_reason` carries the words beside 7, 8, 9 and 10.
//
//   process / retry with detect_antennas ──> 1 ──(processing completed: job queued)──> 2 ──> 3 items written (quality good)
//                                             │                                         ├──> 9 items written, borderline quality (a warning)
//                                             │                                         ├──> 8 no tower in the cloud
//                                             │                                         ├──> 10 a tower, but too little cloud to find its equipment
//                                             │                                         └──> 7 the detection failed (no point cloud, unreadable, detector error)
//                                             └──(processing ended in an error status)──> 7 never ran
//   null, 3, 5, 6, 7, 9 ──(an item created, changed or deleted)──> 4
//   null, 3, 4, 9 ──(review done, at least one item)──> 5
//   null, 3, 4, 9 ──(review done, no item)──> 6
// A change after completion reopens the review (5/6 -> 4). 7 and 9 do not stop a review by hand;
// 8 and 10 do (the cloud says there is nothing to inventory); 1 and 2 wait for the detection. 6 is
// the review's own: a detection that finds nothing on a good cloud ends in 3 (review pending), and
// the reviewer says "no compatible inventory".
// A client's PUT/PATCH of additional_statuses.inventory is an override outside this table, as for `status`.
import { statusCategory, statusDescription } from '../inspections/statuses.ts';

export const InventoryStatus = {
  DetectionPending: 1,
  Detecting: 2,
  ReviewPending: 3,
  ReviewOngoing: 4,
  ReviewCompleted: 5,
  ReviewCompletedEmpty: 6,
  DetectionError: 7,
  NoTower: 8,
  BorderlineQuality: 9,
  InsufficientQuality: 10,
} as const;
export type InventoryStatus = (typeof InventoryStatus)[keyof typeof InventoryStatus];

/** A current value a move may start from: null before any inventory status. */
export type InventoryFrom = number | null;

interface InventoryTransitionRule {
  /** 'any': whatever the current value. */
  readonly from: readonly InventoryFrom[] | 'any';
  readonly to: InventoryStatus;
  readonly by: string;
}

const S = InventoryStatus;

export const INVENTORY_TRANSITIONS = [
  // The automatic detection (antenna-detection.ts).
  { from: 'any', to: S.DetectionPending, by: 'process (or a retry starting processing) of an inspection with detect_antennas' },
  { from: [S.DetectionPending, S.Detecting], to: S.Detecting, by: 'detect-antennas job (again after a crash)' },
  { from: [S.Detecting], to: S.ReviewPending, by: 'detect-antennas: detected on a good cloud, the items written' },
  { from: [S.Detecting], to: S.BorderlineQuality, by: 'detect-antennas: detected on a borderline cloud, the items written, the reasons given' },
  { from: [S.Detecting], to: S.NoTower, by: 'detect-antennas: no tower in the cloud' },
  { from: [S.Detecting], to: S.InsufficientQuality, by: 'detect-antennas: a cloud too thin or cut off to find the equipment' },
  { from: [S.Detecting], to: S.DetectionError, by: 'detect-antennas: no point cloud, an unreadable one, or the detector failed' },
  { from: [S.DetectionPending], to: S.DetectionError, by: 'processing ended in an error status: the detection never ran' },
  // The review (inventory.service.ts).
  { from: [null, S.ReviewPending, S.ReviewOngoing, S.ReviewCompleted, S.ReviewCompletedEmpty, S.DetectionError, S.BorderlineQuality], to: S.ReviewOngoing, by: 'an item created, changed or deleted (POST/PATCH/DELETE …/inventory/)' },
  { from: [null, S.ReviewPending, S.ReviewOngoing, S.BorderlineQuality], to: S.ReviewCompleted, by: 'POST …/inventory/review_done/ with at least one item' },
  { from: [null, S.ReviewPending, S.ReviewOngoing, S.BorderlineQuality], to: S.ReviewCompletedEmpty, by: 'POST …/inventory/review_done/ with no item' },
] as const satisfies readonly InventoryTransitionRule[];

/** The statuses a review move (4, 5, 6) may start from: its one rule's. Throws for any other target. */
export function inventorySources(to: InventoryStatus): readonly InventoryFrom[] {
  const rules = INVENTORY_TRANSITIONS.filter((t) => t.to === to);
  if (rules.length !== 1 || rules[0].from === 'any') throw new Error(`No single inventory status move leads to ${to} (inventory/inventory-statuses.ts): name the statuses it starts from.`);
  return rules[0].from;
}

/** Throws unless `from -> to` is in INVENTORY_TRANSITIONS (every value of `from` within one rule's). */
export function assertInventoryTransition(from: readonly InventoryFrom[] | 'any', to: InventoryStatus): void {
  const ok = INVENTORY_TRANSITIONS.some(
    (t) => t.to === to && (t.from === 'any' ? from === 'any' : from !== 'any' && from.length > 0 && from.every((f) => (t.from as readonly InventoryFrom[]).includes(f))),
  );
  if (!ok) throw new Error(`Inventory status move ${from === 'any' ? 'any' : from.join(',')} -> ${to} is not in INVENTORY_TRANSITIONS (inventory/inventory-statuses.ts).`);
}

/**
 * The inventory status an inspection's move to `status` settles: a pending detection never runs
 * when processing ends in an error status (it needs the processed cloud), so it ends in 7 with
 * this reason, in the same statement as the move (InspectionRepository.transition). Null otherwise.
 */
export function inventorySettledBy(status: number): { inventory: typeof InventoryStatus.DetectionError; inventory_reason: string } | null {
  if (statusCategory(status) !== 'error') return null;
  assertInventoryTransition([InventoryStatus.DetectionPending], InventoryStatus.DetectionError);
  return {
    inventory: InventoryStatus.DetectionError,
    inventory_reason: `The automatic antenna detection did not run: processing ended in status ${status} (${statusDescription(status)}). The Tower inventory unit spent with processing is recycled by a retry.`,
  };
}
