// The 2D plan's PDF page (report-plan.ts makes the plan): a square of the page's width, the
// orthomosaic crop under it (or a plain background, the reason printed), then measurements (green
// lines and closed polygons, points as squares), inventory items (report-inventory.ts's marker:
// dot and facing arrow) and annotations (magenta discs with their number) at their x, y; a north
// arrow and a scale bar on white boxes so they read over any photo; a legend under the square.
// The side views of a tower: the same markers at (x, z) from the south and (y, z) from the west,
// the base plate and top point dashed.
import type { ReportData } from './report-data.ts';
import { acrossOf, planPositions, type Plan2d, type PlanDrawing, type SidePlan } from './report-plan.ts';
import { drawItemMarker, drawNorthArrow, drawScaleBar, niceLength, northConvergence } from './report-inventory.ts';
import { sharedLabels } from './report-marker-labels.ts';

/** Annotation markers: a colour no orthophoto is likely to hold, so that they stand out (and tests can find them). */
export const ANNOTATION_COLOUR = '#ff00ff';
const MEASUREMENT_COLOUR = '#00c853';

/** Draws the plan from the current position of the page (the caller starts a page for it). */
export function drawPlanPage(doc: PDFKit.PDFDocument, data: ReportData, drawing: PlanDrawing, latin: (text: string) => string): void {
  if (drawing.plan.kind === 'side') drawSideView(doc, data, drawing.plan, latin);
  else drawTopPlan(doc, data, drawing.plan, drawing.raster, latin);
}

function drawTopPlan(doc: PDFKit.PDFDocument, data: ReportData, plan: Plan2d, raster: Buffer | null, latin: (text: string) => string): void {
  const left = doc.page.margins.left;
  const size = doc.page.width - left - doc.page.margins.right;
  doc.font('Helvetica-Bold').fontSize(11).fillColor('black').text(latin(`${plan.title} around the asset`), left);
  doc
    .font('Helvetica')
    .fontSize(8.5)
    .fillColor('#555555')
    .text(latin(`${plan.side_m} m x ${plan.side_m} m${plan.coordinate_system ? `, ${plan.coordinate_system}` : ''}; x east, y north.${plan.raster ? ` Orthomosaic, ${plan.gsd_m} m per pixel.` : ` Plain background: ${plan.no_raster_reason?.replace(/\.+$/, '')}.`}`), left);
  const top = doc.y + 6;
  const scale = size / plan.side_m;
  const at = (x: number, y: number): [number, number] => [left + (x - plan.bounds.min_x) * scale, top + (plan.bounds.max_y - y) * scale];
  doc.save();
  doc.rect(left, top, size, size).clip();
  if (raster) doc.image(raster, left, top, { width: size, height: size });
  else doc.rect(left, top, size, size).fillColor('#f4f4f0').fill();
  const positions = planPositions(data);
  const measurements = new Map(data.measurements.map((m) => [m.id, m]));
  for (const m of positions.measurements) {
    const type = measurements.get(m.id)?.geometry.type;
    const points = m.points.map(([x, y]) => at(x, y));
    if (type === 'Point' || points.length === 1) {
      doc.rect(points[0][0] - 3, points[0][1] - 3, 6, 6).lineWidth(1.5).strokeColor(MEASUREMENT_COLOUR).stroke();
      continue;
    }
    // Green over a white casing: visible over green vegetation as over asphalt.
    for (const [width, colour] of [[3.6, 'white'], [1.8, MEASUREMENT_COLOUR]] as const) {
      doc.moveTo(...points[0]);
      for (const p of points.slice(1)) doc.lineTo(...p);
      if (type === 'Polygon') doc.closePath();
      doc.lineWidth(width).strokeColor(colour).stroke();
    }
  }
  const items = new Map((data.inventory_items ?? []).map((i) => [i.number, i]));
  const itemMarkers = positions.inventory.map((i) => ({ number: i.number, at: at(i.at[0], i.at[1]) }));
  const itemLabels = sharedLabels(itemMarkers);
  itemMarkers.forEach((m, k) => drawItemMarker(doc, items.get(m.number)!, ...m.at, size / 16, latin, itemLabels[k]));
  const annotationMarkers = positions.annotations.map((a) => ({ number: a.number, at: at(a.at[0], a.at[1]) }));
  const annotationLabels = sharedLabels(annotationMarkers);
  for (const [k, { at: [px, py] }] of annotationMarkers.entries()) {
    doc.circle(px, py, 5).fillColor(ANNOTATION_COLOUR).fill();
    if (!annotationLabels[k]) continue;
    // The number on a white label, readable over any photo.
    const label = latin(annotationLabels[k]);
    doc.font('Helvetica-Bold').fontSize(8);
    doc.rect(px + 6, py - 5, doc.widthOfString(label) + 3, 10).fillColor('white').fill();
    doc.fillColor('black').text(label, px + 7.5, py - 3.5, { lineBreak: false });
  }
  doc.restore();
  doc.rect(left, top, size, size).lineWidth(0.5).strokeColor('#999999').stroke();
  doc.rect(left + size - 30, top + 4, 26, 34).fillColor('white').fill();
  drawNorthArrow(doc, left + size - 17, top + 18, northConvergence(data.inventory_items ?? []));
  doc.rect(left + 4, top + size - 24, niceLength(plan.side_m / 4) * scale + 12, 20).fillColor('white').fill();
  drawScaleBar(doc, left + 10, top + size - 16, plan.side_m, scale);
  doc
    .font('Helvetica')
    .fontSize(8)
    .fillColor('#555555')
    .text(
      latin(
        `Magenta discs: annotations (${plan.items_drawn.annotations.length}); blue dots with red arrows: inventory items and the direction they face (${plan.items_drawn.inventory_items.length}); green: measurements (${plan.items_drawn.measurements.length}).`,
      ),
      left,
      top + size + 6,
      { width: size },
    );
  doc.fillColor('black').fontSize(10);
  doc.x = left;
}

/** Side view height at most, points: the rest of an A4 page under the titles. */
const SIDE_MAX_HEIGHT = 560;

/**
 * The tower from the south (x east to the right) or the west (y north to the left, as a person
 * standing there sees it), z up, on a plain background; the base plate and top point as dashed lines.
 */
function drawSideView(doc: PDFKit.PDFDocument, data: ReportData, plan: SidePlan, latin: (text: string) => string): void {
  const left = doc.page.margins.left;
  const maxWidth = doc.page.width - left - doc.page.margins.right;
  const [minA, maxA] = 'min_x' in plan.bounds ? [plan.bounds.min_x, plan.bounds.max_x] : [plan.bounds.min_y, plan.bounds.max_y];
  const [spanX, spanZ] = [maxA - minA, plan.bounds.max_z - plan.bounds.min_z];
  const scale = Math.min(maxWidth / spanX, SIDE_MAX_HEIGHT / spanZ);
  const [width, height] = [spanX * scale, spanZ * scale];
  doc.font('Helvetica-Bold').fontSize(11).fillColor('black').text(latin(plan.title), left);
  doc
    .font('Helvetica')
    .fontSize(8.5)
    .fillColor('#555555')
    .text(latin(`${Math.round(spanX)} m across, ${Math.round(spanZ)} m high${plan.coordinate_system ? `, ${plan.coordinate_system}` : ''}; ${plan.from === 'south' ? 'x east to the right' : 'y north to the left'}, height up; seen from the ${plan.from}.`), left);
  const top = doc.y + 6;
  // From the west, north is on the viewer's left: y grows leftwards.
  const at = (a: number, z: number): [number, number] => [left + (plan.from === 'south' ? a - minA : maxA - a) * scale, top + (plan.bounds.max_z - z) * scale];
  doc.rect(left, top, width, height).fillColor('#f4f4f0').fill();
  doc.save();
  doc.rect(left, top, width, height).clip();
  for (const [z, label] of [
    [plan.base_z, 'base plate'],
    [plan.top_z, 'top'],
  ] as const) {
    if (z === null) continue;
    const [, y] = at(minA, z);
    doc.moveTo(left, y).lineTo(left + width, y).dash(4, { space: 3 }).lineWidth(0.8).strokeColor('#777777').stroke().undash();
    doc.font('Helvetica').fontSize(7).fillColor('#555555').text(latin(label), left + 4, y - 9, { lineBreak: false });
  }
  const positions = planPositions(data);
  for (const m of positions.measurements) {
    const points = m.points.filter((p) => p[2] !== null).map((p) => at(acrossOf(plan.from, p), p[2]!));
    if (points.length === 0) continue;
    if (points.length === 1) {
      doc.rect(points[0][0] - 3, points[0][1] - 3, 6, 6).lineWidth(1.5).strokeColor(MEASUREMENT_COLOUR).stroke();
      continue;
    }
    doc.moveTo(...points[0]);
    for (const p of points.slice(1)) doc.lineTo(...p);
    doc.lineWidth(1.8).strokeColor(MEASUREMENT_COLOUR).stroke();
  }
  const itemMarkers = positions.inventory.flatMap((i) => (i.at[2] === null ? [] : [{ number: i.number, at: at(acrossOf(plan.from, i.at), i.at[2]) }]));
  const itemLabels = sharedLabels(itemMarkers);
  for (const [k, { at: [px, py] }] of itemMarkers.entries()) {
    doc.circle(px, py, 3).fillColor('#1a3c6e').fill();
    // Right-aligned to the dot's left.
    const label = latin(itemLabels[k]);
    if (label) doc.font('Helvetica').fontSize(7).fillColor('black').text(label, px - 5 - doc.widthOfString(label), py - 3, { lineBreak: false });
  }
  const annotationMarkers = positions.annotations.flatMap((a) => (a.at[2] === null ? [] : [{ number: a.number, at: at(acrossOf(plan.from, a.at), a.at[2]) }]));
  const annotationLabels = sharedLabels(annotationMarkers);
  for (const [k, { at: [px, py] }] of annotationMarkers.entries()) {
    doc.circle(px, py, 5).fillColor(ANNOTATION_COLOUR).fill();
    if (annotationLabels[k]) doc.font('Helvetica-Bold').fontSize(8).fillColor('black').text(latin(annotationLabels[k]), px + 7.5, py - 3.5, { lineBreak: false });
  }
  doc.restore();
  doc.rect(left, top, width, height).lineWidth(0.5).strokeColor('#999999').stroke();
  drawScaleBar(doc, left + 10, top + height - 16, Math.min(spanX, spanZ), scale);
  doc
    .font('Helvetica')
    .fontSize(8)
    .fillColor('#555555')
    .text(latin(`Magenta discs: annotations (${plan.items_drawn.annotations.length}); blue dots: inventory items (${plan.items_drawn.inventory_items.length}); green: measurements (${plan.items_drawn.measurements.length}).`), left, top + height + 6, { width: maxWidth });
  doc.fillColor('black').fontSize(10);
  doc.x = left;
}
