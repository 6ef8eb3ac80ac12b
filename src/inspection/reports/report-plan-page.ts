// The 2D plan's PDF page (report-plan.ts makes the plan): a square of the page's width, the
// orthomosaic crop under it (or a plain background, the reason printed), then measurements (green
// lines and closed polygons, points as squares), inventory items (report-inventory.ts's marker:
// dot and facing arrow) and annotations (magenta discs with their number) at their x, y; a north
// arrow and a scale bar on white boxes so they read over any photo; a legend under the square.
import type { ReportData } from './report-data.ts';
import { planPositions, type PlanDrawing } from './report-plan.ts';
import { drawItemMarker, drawNorthArrow, drawScaleBar, niceLength, northConvergence } from './report-inventory.ts';

/** Annotation markers: a colour no orthophoto is likely to hold, so that they stand out (and tests can find them). */
export const ANNOTATION_COLOUR = '#ff00ff';
const MEASUREMENT_COLOUR = '#00c853';

/** Draws the plan from the current position of the page (the caller starts a page for it). */
export function drawPlanPage(doc: PDFKit.PDFDocument, data: ReportData, drawing: PlanDrawing, latin: (text: string) => string): void {
  const { plan, raster } = drawing;
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
  for (const i of positions.inventory) drawItemMarker(doc, items.get(i.number)!, ...at(...i.at), size / 16, latin);
  for (const a of positions.annotations) {
    const [px, py] = at(...a.at);
    doc.circle(px, py, 5).fillColor(ANNOTATION_COLOUR).fill();
    // The number on a white label, readable over any photo.
    const label = latin(`#${a.number}`);
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
