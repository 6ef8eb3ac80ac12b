// Labels of markers that land on the same spot of a drawing (the plan page, the side view, the
// inventory sketch): two antennas of one sector, or an annotation drawn twice, fall within a few
// points of each other and their numbers would print over one another, showing only the last.
// Markers within CLOSE_PT of an earlier one are grouped: the first carries the whole group's
// label ("#1, #2"), the others are drawn without one.

/** Page points within which two markers count as one spot (a marker's dot is 5–10 pt across). */
export const CLOSE_PT = 6;

/** For each marker (in drawing order), its label: the group's numbers for the first of a group, '' for the rest. */
export function sharedLabels(markers: readonly { number: number; at: readonly [number, number] }[]): string[] {
  const lead: number[] = markers.map(() => -1);
  const groups = new Map<number, number[]>();
  markers.forEach((m, i) => {
    const j = markers.findIndex((o, k) => k < i && lead[k] === k && Math.hypot(o.at[0] - m.at[0], o.at[1] - m.at[1]) <= CLOSE_PT);
    lead[i] = j >= 0 ? j : i;
    groups.set(lead[i], [...(groups.get(lead[i]) ?? []), m.number]);
  });
  return markers.map((_, i) => (lead[i] === i ? groups.get(i)!.map((n) => `#${n}`).join(', ') : ''));
}
