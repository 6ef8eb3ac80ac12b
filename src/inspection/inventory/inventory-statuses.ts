// The review half of the inventory's key of `additional_statuses` (spec "Additional statuses":
// 3 "Inventory review pending", 4 "Inventory review ongoing", 5 "Inventory review completed",
// 6 "Inventory review completed without compatible inventory"). Items are entered by hand (no
// detector ships: antenna-detection.ts), so nothing waits for a review before someone starts it
// and this service never sets 3 itself; a client may (PATCH additional_statuses, an override as
// for `status`), and the moves below accept it. Every move goes through
// InspectionRepository.inventoryTransition, which applies it only from the listed values.
//
//   null, 3, 5, 6, 7, 9 ──(an item created, changed or deleted)──> 4
//   null, 3, 4 ──(review done, at least one item)──> 5
//   null, 3, 4 ──(review done, no item)──> 6
// A change after completion reopens the review (5/6 -> 4). 7 (detection refused) and 9 (borderline
// quality, a warning) do not stop a review by hand; 8 and 10 (no tower, insufficient quality) do.
export const InventoryStatus = {
  ReviewPending: 3,
  ReviewOngoing: 4,
  ReviewCompleted: 5,
  ReviewCompletedEmpty: 6,
} as const;
export type InventoryStatus = (typeof InventoryStatus)[keyof typeof InventoryStatus];

/** A current value a move may start from: null before any inventory status. */
export type InventoryFrom = number | null;

interface InventoryTransitionRule {
  readonly from: readonly InventoryFrom[];
  readonly to: InventoryStatus;
  readonly by: string;
}

export const INVENTORY_TRANSITIONS = [
  { from: [null, 3, 4, 5, 6, 7, 9], to: InventoryStatus.ReviewOngoing, by: 'an item created, changed or deleted (POST/PATCH/DELETE …/inventory/)' },
  { from: [null, 3, 4], to: InventoryStatus.ReviewCompleted, by: 'POST …/inventory/review_done/ with at least one item' },
  { from: [null, 3, 4], to: InventoryStatus.ReviewCompletedEmpty, by: 'POST …/inventory/review_done/ with no item' },
] as const satisfies readonly InventoryTransitionRule[];

/** The values `to` may be reached from; throws when no rule leads there. */
export function inventorySources(to: InventoryStatus): readonly InventoryFrom[] {
  const rule = INVENTORY_TRANSITIONS.find((t) => t.to === to);
  if (!rule) throw new Error(`No inventory status move leads to ${to} (inventory/inventory-statuses.ts).`);
  return rule.from;
}
