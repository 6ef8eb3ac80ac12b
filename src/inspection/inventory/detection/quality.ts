// Whether the cloud can carry the detection, in words for the person reviewing it (issue 36 §3):
// - insufficient: the points around the antennas are too far apart to tell a panel's front from
//   its back or its edges (a panel is 0.3-0.5 m wide, 0.1-0.2 m deep), or the cloud stops where the
//   tower is still open and nothing was found below;
// - borderline (the items are still reported): a sparse or noisy cloud, items whose faces hold
//   few points or cover little of their outline, a top that looks cut off, or a tower with no
//   equipment found at all.
import type { DetectionQuality } from './detection-types.ts';
import type { FittedItem } from './items.ts';
import type { TowerModel } from './tower-axis.ts';

/** Spacing (m) beyond which a panel is only a few points across: nothing can be fitted. */
export const MAX_SPACING = 0.1;
/** Spacing (m) beyond which edges and depths are rough: borderline. */
const ROUGH_SPACING = 0.05;
/** Noise (m) beyond which a 0.1 m deep panel's two faces blur together: borderline. */
const ROUGH_NOISE = 0.035;
/** Confidence under which an item is named in the reasons. */
const LOW_CONFIDENCE = 0.35;

const cm = (m: number) => `${Math.round(m * 100)} cm`;

/** Before fitting: a reason when the cloud is too thin for the equipment, else null. */
export function tooThin(spacing: number): string | null {
  if (!Number.isFinite(spacing)) return 'too few points around the top of the tower to measure their spacing';
  if (spacing > MAX_SPACING) {
    return `the points around the tower's top are ${cm(spacing)} apart: a panel antenna (30-50 cm wide, 10-20 cm deep) would be a few points across, too few to fit its faces (${cm(MAX_SPACING)} at most is needed)`;
  }
  return null;
}

export function assessQuality(tower: TowerModel, items: FittedItem[], scales: { spacing: number; noise: number }): { quality: DetectionQuality; insufficient: string | null } {
  const reasons: string[] = [];
  const height = (tower.topZ - tower.baseZ).toFixed(1);
  if (!tower.topClosed) {
    const words = `the cloud seems to stop at ${height} m above the foot, where the tower is still open (no cap or top bracing): its top part and the equipment usually there may be missing`;
    if (!items.length) return { quality: { level: 'borderline', reasons: [words] }, insufficient: `${words}; nothing was found below` };
    reasons.push(words);
  }
  if (scales.spacing > ROUGH_SPACING) reasons.push(`the points around the antennas are ${cm(scales.spacing)} apart (under ${cm(ROUGH_SPACING)} is best): edges and depths are rough`);
  if (scales.noise > ROUGH_NOISE) reasons.push(`the surfaces are noisy (${cm(scales.noise)} either side): the panels' depths and tilts are rough`);
  if (!items.length && tower.topClosed) {
    reasons.push(`no antenna, RRU or dish was found on the tower although its points are ${cm(scales.spacing)} apart: a bare tower, or equipment the detector could not make out (check the 3D view)`);
  }
  const weak = items.filter((i) => i.confidence < LOW_CONFIDENCE);
  if (weak.length) {
    const panels = weak.filter((i) => i.type === 'panel_antenna').length;
    reasons.push(`${weak.length} of ${items.length} items (${panels} panel${panels === 1 ? '' : 's'}) have few points on their faces or cover under a third of their outline: their sizes and angles are uncertain`);
  }
  const cutAtTop = items.filter((i) => tower.topClosed === false && i.centre[2] + i.height / 2 > tower.topZ - 0.1);
  if (cutAtTop.length) reasons.push(`${cutAtTop.length} item(s) reach the cloud's upper edge: they may be cut off, their heights short`);
  return { quality: { level: reasons.length ? 'borderline' : 'good', reasons }, insufficient: null };
}
