// The report's inventory page (issue 30 §4): a table of the items with their geometry and how it
// was found (inventory/inventory-geometry.ts: triangulated from the marks on N photos with its
// residual, entered by hand, or found in the point cloud by the antenna detection), then a top-down sketch of the items that have a position: each a
// dot at its coords_3d (grid axes of the output system up and right) with an arrow along its
// azimuth, a north arrow, a scale bar. Heights are above `computation.height_reference` (the asset's base plate
// or the ground), named under the table.
import type { InventoryItemRecord } from '../inventory/inventory.service.ts';
import { sharedLabels } from './report-marker-labels.ts';

const COLUMNS: { title: string; width: number }[] = [
  { title: '#', width: 22 },
  { title: 'Item', width: 108 },
  { title: 'Azimuth', width: 50 },
  { title: 'Downtilt', width: 50 },
  { title: 'Plumb', width: 42 },
  { title: 'Height', width: 48 },
  { title: 'Width', width: 42 },
  { title: 'How found', width: 133 },
];
const SKETCH = 200;

export function drawInventory(doc: PDFKit.PDFDocument, items: InventoryItemRecord[], latin: (text: string) => string, ensureSpace: (height: number) => void): void {
  const left = doc.page.margins.left;
  const row = (cells: string[], bold: boolean) => {
    ensureSpace(28);
    const y = doc.y;
    let x = left;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(8.5);
    let bottom = y;
    cells.forEach((cell, i) => {
      doc.text(latin(cell), x, y, { width: COLUMNS[i].width - 4 });
      bottom = Math.max(bottom, doc.y);
      x += COLUMNS[i].width;
    });
    doc.y = bottom + 3;
    doc.x = left;
  };
  row(
    COLUMNS.map((c) => c.title),
    true,
  );
  for (const item of items) {
    row(
      [
        String(item.number),
        [item.name || item.model_type.replace(/_/g, ' '), item.name ? item.model_type.replace(/_/g, ' ') : '', item.model_name].filter(Boolean).join('\n'),
        degrees(item.azimuth),
        degrees(item.downtilt),
        degrees(item.plumb),
        metres(item.height),
        metres(item.width),
        howFound(item),
      ],
      false,
    );
  }
  const references = new Set(items.map((i) => i.computation?.height_reference).filter(Boolean));
  doc.moveDown(0.3).font('Helvetica').fontSize(8).fillColor('#555555');
  doc.text(
    latin(
      `Azimuth: degrees clockwise from ${items.some((i) => i.computation?.azimuth_reference.startsWith('grid')) ? 'north (true north; grid north of the output coordinate system where it could not be found)' : 'true north'}, of the direction the item faces. Downtilt: degrees below the horizontal of that direction. Plumb: lean of the item's vertical axis within its front plane. Height of the item's centre above ${references.size ? [...references].map((r) => (r === 'base_plate_location' ? "the asset's base plate" : r === 'detected_tower_base' ? 'the foot of the tower found in the point cloud' : 'the ground at the asset')).join(' or ') : "the asset's base"}.`,
    ),
    left,
  );
  doc.fillColor('black').fontSize(10);
  drawSketch(doc, items, latin, ensureSpace);
}

function howFound(item: InventoryItemRecord): string {
  const c = item.computation;
  if (!c) return item.source ? `from ${item.source}` : '';
  if (c.method === 'triangulation') return `triangulated from ${c.photos} photos, residual ${residualText(c.residual_m)}`;
  if (c.method === 'detection') return `detected in the point cloud${c.confidence !== undefined ? `, confidence ${Math.round(c.confidence * 100)} %` : ''}`;
  return item.azimuth !== null || item.height !== null ? 'entered by hand' : 'no geometry';
}

function residualText(metres: number | null): string {
  if (metres === null) return 'unknown';
  return metres < 0.001 ? 'under 1 mm' : metres < 1 ? `${Math.round(metres * 1000)} mm` : `${metres.toFixed(2)} m`;
}

function drawSketch(doc: PDFKit.PDFDocument, items: InventoryItemRecord[], latin: (text: string) => string, ensureSpace: (height: number) => void): void {
  const placed = items.filter((i) => Array.isArray(i.coords_3d) && i.coords_3d.length === 3);
  if (placed.length === 0) return;
  ensureSpace(SKETCH + 40);
  const left = doc.page.margins.left;
  doc.moveDown(0.6).font('Helvetica-Bold').fontSize(10).text('Plan view (from above)', left);
  const top = doc.y + 4;
  const xs = placed.map((i) => i.coords_3d[0] as number);
  const ys = placed.map((i) => i.coords_3d[1] as number);
  const [cx, cy] = [(Math.min(...xs) + Math.max(...xs)) / 2, (Math.min(...ys) + Math.max(...ys)) / 2];
  // At least 4 m across so that one item or a tight cluster is not blown up; arrows 1/8 of the span.
  const span = Math.max(4, Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)) * 1.4;
  const scale = SKETCH / span;
  const at = (x: number, y: number): [number, number] => [left + SKETCH / 2 + (x - cx) * scale, top + SKETCH / 2 - (y - cy) * scale];
  doc.rect(left, top, SKETCH, SKETCH).lineWidth(0.5).strokeColor('#999999').stroke();
  const markers = placed.map((item) => ({ number: item.number, at: at(item.coords_3d[0] as number, item.coords_3d[1] as number) }));
  const labels = sharedLabels(markers);
  placed.forEach((item, i) => drawItemMarker(doc, item, ...markers[i].at, SKETCH / 8, latin, labels[i]));
  drawNorthArrow(doc, left + SKETCH - 14, top + 18, northConvergence(placed));
  drawScaleBar(doc, left + 8, top + SKETCH - 12, span, scale);
  doc.font('Helvetica').fontSize(8).fillColor('#555555').text(latin('Dots: item centres; arrows: the direction each item faces.'), left, top + SKETCH + 4);
  doc.fillColor('black').fontSize(10);
  doc.x = left;
}

/** An item at page point (px, py): a dot, an arrow of `length` points along the direction it faces (the plan's axes are the output system's grid: the facing normal there), its number (or the `label` of its spot, report-marker-labels.ts; '' for none) on the other side. Also drawn on the 2D plan (report-plan-page.ts). */
export function drawItemMarker(doc: PDFKit.PDFDocument, item: InventoryItemRecord, px: number, py: number, length: number, latin: (text: string) => string, label = `#${item.number}`): void {
  doc.circle(px, py, 2.5).fillColor('#1a3c6e').fill();
  const grid = item.computation?.normal ? Math.atan2(item.computation.normal[0], item.computation.normal[1]) : item.azimuth !== null ? (item.azimuth * Math.PI) / 180 : null;
  if (grid !== null) {
    const a = grid;
    const [ex, ey] = [px + Math.sin(a) * length, py - Math.cos(a) * length];
    doc.moveTo(px, py).lineTo(ex, ey).lineWidth(1.2).strokeColor('#c0392b').stroke();
    const back = 5;
    for (const side of [-0.5, 0.5]) doc.moveTo(ex, ey).lineTo(ex - Math.sin(a + side) * back, ey + Math.cos(a + side) * back).stroke();
  }
  // The label on the side away from the arrow.
  const away = grid === null ? 0 : grid + Math.PI;
  if (label) doc.fillColor('black').font('Helvetica').fontSize(7).text(latin(label), px + Math.sin(away) * 9 - 4, py - Math.cos(away) * 9 - 3, { lineBreak: false });
}

/** Radians from the grid's up to true north (meridian convergence) where an item's computation found it; 0 otherwise. */
export function northConvergence(items: InventoryItemRecord[]): number {
  return ((items.find((i) => typeof i.computation?.north_convergence_deg === 'number')?.computation?.north_convergence_deg ?? 0) * Math.PI) / 180;
}

/** A north arrow centred at (nx, ny), turned `gamma` radians clockwise from the page's up. */
export function drawNorthArrow(doc: PDFKit.PDFDocument, nx: number, ny: number, gamma: number, colour = 'black'): void {
  const tip = (r: number, turn = 0): [number, number] => [nx + Math.sin(gamma + turn) * r, ny - Math.cos(gamma + turn) * r];
  const [tx, ty] = tip(10);
  const [bx0, by0] = tip(-8);
  doc.moveTo(bx0, by0).lineTo(tx, ty).lineWidth(1).strokeColor(colour).stroke();
  const [lx, ly] = tip(6, -0.35);
  const [rx, ry] = tip(6, 0.35);
  doc.moveTo(lx, ly).lineTo(tx, ty).lineTo(rx, ry).stroke();
  doc.fillColor(colour).fontSize(7).text('N', nx - 2.5, ny + 9, { lineBreak: false });
}

/** A scale bar from (bx, by) of a round length near a quarter of `span` metres, at `scale` points per metre (that length: `niceLength(span / 4)`). */
export function drawScaleBar(doc: PDFKit.PDFDocument, bx: number, by: number, span: number, scale: number, colour = 'black'): void {
  const barMetres = niceLength(span / 4);
  doc.moveTo(bx, by).lineTo(bx + barMetres * scale, by).lineWidth(1.5).strokeColor(colour).stroke();
  doc.fillColor(colour).fontSize(7).text(`${barMetres} m`, bx, by + 2, { lineBreak: false });
}

export function niceLength(metres: number): number {
  const power = 10 ** Math.floor(Math.log10(metres));
  for (const step of [1, 2, 5, 10]) if (step * power >= metres) return step * power;
  return 10 * power;
}

const degrees = (value: number | null) => (value === null ? '-' : `${value.toFixed(1)}°`);
const metres = (value: number | null) => (value === null ? '-' : `${value.toFixed(2)} m`);
