// The rust analysis' key of `additional_statuses` (spec "Additional statuses": 11 pending,
// 12 ongoing, 13 completed, 14 error), beside `rust_reason` when there is something to explain.
// Every move goes through InspectionRepository.rustTransition, which applies it only from the
// listed statuses (a job run twice, or after a crash, changes nothing), and refuses a move not
// listed here as a programming error, as inspection-transitions.ts does for `status`.
//
//   process / retry with detect_rust ──> 11 ──(processing completed: job queued)──> 12 ──> 13
//                                         │                                         └──> 14 no photo analysable
//                                         └──(processing ended in an error status)──> 14 never ran
// A client's PUT/PATCH of additional_statuses.rust is an override outside this table, as for `status`.
import { statusCategory, statusDescription } from '../inspections/statuses.ts';

export const RustStatus = {
  Pending: 11,
  Ongoing: 12,
  Completed: 13,
  Error: 14,
} as const;
export type RustStatus = (typeof RustStatus)[keyof typeof RustStatus];

interface RustTransitionRule {
  /** 'any': whatever the current value (null before any analysis). */
  readonly from: readonly RustStatus[] | 'any';
  readonly to: RustStatus;
  readonly by: string;
}

export const RUST_TRANSITIONS = [
  { from: 'any', to: RustStatus.Pending, by: 'process (or a retry starting processing) of an inspection with detect_rust' },
  { from: [RustStatus.Pending, RustStatus.Ongoing], to: RustStatus.Ongoing, by: 'detect-rust job (again after a crash)' },
  { from: [RustStatus.Ongoing], to: RustStatus.Completed, by: 'detect-rust: every photo analysed, or skipped with its reason' },
  { from: [RustStatus.Ongoing], to: RustStatus.Error, by: 'detect-rust: no photo could be analysed' },
  { from: [RustStatus.Pending], to: RustStatus.Error, by: 'processing ended in an error status: the analysis never ran' },
] as const satisfies readonly RustTransitionRule[];

/** Throws unless `from -> to` is in RUST_TRANSITIONS. */
export function assertRustTransition(from: readonly RustStatus[] | 'any', to: RustStatus): void {
  const ok = RUST_TRANSITIONS.some(
    (t) => t.to === to && (t.from === 'any' ? from === 'any' : from !== 'any' && from.length > 0 && from.every((f) => (t.from as readonly RustStatus[]).includes(f))),
  );
  if (!ok) throw new Error(`Rust status move ${from === 'any' ? 'any' : from.join(',')} -> ${to} is not in RUST_TRANSITIONS (rust/rust-statuses.ts).`);
}

/**
 * The rust status an inspection's move to `status` settles: a pending analysis never runs when
 * processing ends in an error status (it needs the processed photos), so it ends in 14 with this
 * reason, in the same statement as the move (InspectionRepository.transition). Null otherwise.
 */
export function rustSettledBy(status: number): { rust: typeof RustStatus.Error; rust_reason: string } | null {
  if (statusCategory(status) !== 'error') return null;
  assertRustTransition([RustStatus.Pending], RustStatus.Error);
  return { rust: RustStatus.Error, rust_reason: `The rust analysis did not run: processing ended in status ${status} (${statusDescription(status)}).` };
}
