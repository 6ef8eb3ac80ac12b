// An annotation's severity_level (spec: 0..5) from the share of the photo a rust finding covers.
// This is the extent of corrosion seen in one photo, not a structural assessment: the same patch
// covers more of a close-up than of a wide shot. 0 ("not rated") is never given to a finding.
// docs/inspection-service.md, "Rust analysis".

/** Upper bounds (fractions of the photo's area) of severities 1..4; anything larger is 5. */
export const SEVERITY_AREA_BOUNDS = [0.001, 0.005, 0.02, 0.05] as const;

export function severityOfArea(fraction: number): number {
  const below = SEVERITY_AREA_BOUNDS.findIndex((bound) => fraction < bound);
  return below === -1 ? 5 : below + 1;
}
