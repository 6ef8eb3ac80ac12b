// Draws a report (ReportData) as an A4 PDF with pdfkit: asset, inspection and user, extra remarks,
// annotations with their annotated photo crops, measurements, inventory items, and the optional
// sections the flags ask for. The document is a stream: the caller pipes it to storage while
// this draws, so pages are not all held in memory. The built-in Helvetica is used: characters it
// cannot encode (outside Latin-1) are replaced with "?".
// pdfkit (with its font machinery, ~30 MB of a process's memory) is loaded on the first report, not
// at start: most processes never draw one (bench/README.md, "Memory").
import type { ReportAnnotation, ReportData } from './report-data.ts';
import type { Crop } from './photo-crops.ts';
import { severityName } from './severity-names.ts';
import { drawInventory } from './report-inventory.ts';
import { drawPlanPage } from './report-plan-page.ts';
import type { PlanDrawing } from './report-plan.ts';

/** An annotation's crop (photo-crops.ts), or why there is none; null: the annotation has no photo. */
export type CropSource = (annotation: ReportAnnotation) => Promise<Crop | null>;

const CROP_MAX_HEIGHT = 280;

export async function createReportDocument(data: ReportData): Promise<PDFKit.PDFDocument> {
  const { default: PDFDocument } = await import('pdfkit');
  return new PDFDocument({
    size: 'A4',
    margin: 50,
    info: { Title: latin(`Inspection report - ${data.asset.name}`), Author: 'Open Inspection', Subject: `Inspection ${data.inspection.id}` },
  });
}

/** `plans`: the 2D plans with their backgrounds (report-plan.ts), each drawn on a page of its own. */
export async function drawReport(doc: PDFKit.PDFDocument, data: ReportData, crops: CropSource, plans: PlanDrawing[] = []): Promise<void> {
  const width = doc.page.width - doc.page.margins.left - doc.page.margins.right;
  const left = doc.page.margins.left;

  const ensureSpace = (height: number) => {
    if (doc.y + height > doc.page.height - doc.page.margins.bottom) doc.addPage();
  };
  const section = (title: string) => {
    ensureSpace(60);
    doc.moveDown(0.8);
    doc.font('Helvetica-Bold').fontSize(14).fillColor('#1a3c6e').text(latin(title), left);
    doc
      .moveTo(left, doc.y + 2)
      .lineTo(left + width, doc.y + 2)
      .lineWidth(0.5)
      .strokeColor('#1a3c6e')
      .stroke();
    doc.moveDown(0.5);
    doc.font('Helvetica').fontSize(10).fillColor('black');
  };
  const field = (label: string, value: string | number | null | undefined) => {
    if (value === null || value === undefined || value === '') return;
    doc.font('Helvetica-Bold').text(`${latin(label)}: `, left, doc.y, { continued: true }).font('Helvetica').text(latin(String(value)));
  };

  // Title
  doc.font('Helvetica-Bold').fontSize(22).fillColor('#1a3c6e').text('Inspection report', left);
  doc.font('Helvetica').fontSize(13).fillColor('black').text(latin(data.asset.name));
  doc.fontSize(9).fillColor('#555555').text(`Generated ${data.generated_at.replace('T', ' ').slice(0, 19)} UTC - inspection ${data.inspection.id}`);
  doc.fillColor('black');

  section('Asset');
  field('Name', data.asset.name);
  field('Type', `${data.asset.type_description} (${data.asset.family})`);
  if (data.asset.latitude && data.asset.longitude) field('Position', `${data.asset.latitude}, ${data.asset.longitude}`);
  field('Description', data.asset.description);

  section('Inspection');
  field('Name', data.inspection.name);
  field('Date', data.inspection.inspection_date?.slice(0, 16).replace('T', ' '));
  field('Status', `${data.inspection.status} - ${data.inspection.status_description}`);
  field('Images', data.inspection.images);
  field('Description', data.inspection.description);
  // A WKT (reconstructed inspections) is shown by its name: PROJCS["WGS 84 / UTM zone 33N", ...].
  field('Coordinate system', /^[A-Z_]+\["([^"]*)"/.exec(data.extras.coordinate_system)?.[1] ?? data.extras.coordinate_system);
  field('Created by', data.user.username + (data.user.email ? ` <${data.user.email}>` : ''));
  field('Reported by', data.reported_by.name + (data.reported_by.email ? ` <${data.reported_by.email}>` : ''));
  if (data.organization) field('Organization', data.organization.name);
  if (data.share_link) {
    // Clickable: a long link wraps, and a copied wrapped link would break.
    doc.font('Helvetica-Bold').text('Share link (read-only): ', left);
    doc.font('Helvetica').fillColor('#1a3c6e').text(latin(data.share_link), left, doc.y, { link: data.share_link, width }).fillColor('black');
  }

  if (data.extra_remarks) {
    section('Remarks');
    doc.text(latin(data.extra_remarks), { width });
  }

  if (data.annotations) {
    section(`Annotations (${data.annotations.length})`);
    if (data.annotations.length === 0) doc.text('No annotations.');
    const summary = data.image_annotations?.severity_summary;
    if (summary && data.annotations.length > 0) {
      const levels = ([1, 2, 3, 4, 5] as const).map((level) => `${severityName(level)} ${summary[`level_${level}`]}`);
      field('By severity', [...levels, `${severityName(0)} ${summary.other}`].join(', '));
    }
    for (const annotation of data.annotations) {
      const found = await crops(annotation).catch(() => null);
      const crop = found && 'jpeg' in found ? found : null;
      const scale = crop ? Math.min(width / crop.width, CROP_MAX_HEIGHT / crop.height, 1) : 0;
      const imageHeight = crop ? crop.height * scale : 14;
      ensureSpace(imageHeight + 90);
      doc.moveDown(0.4);
      doc
        .font('Helvetica-Bold')
        .fontSize(11)
        .text(latin(`#${annotation.number}  ${annotation.type}${annotation.name ? ` - ${annotation.name}` : ''}`), left);
      doc.font('Helvetica').fontSize(9);
      field('Severity', `${annotation.severity_level} (${severityName(annotation.severity_level)})`);
      field('Photo', annotation.photo.filename ?? `photo ${annotation.photo.photo_id}`);
      field('Description', annotation.description);
      for (const link of annotation.links) field('Link', `${link.description ? `${link.description}: ` : ''}${link.link}`);
      doc.moveDown(0.3);
      if (crop) {
        const y = doc.y;
        doc.image(crop.jpeg, left, y, { width: crop.width * scale, height: crop.height * scale });
        doc.y = y + crop.height * scale + 6;
      } else {
        const why = found && 'unavailable' in found ? `: ${found.unavailable}` : '';
        doc.fillColor('#888888').text(latin(`(photo not available${why})`), left).fillColor('black');
      }
      doc.fontSize(10);
    }
  }

  section(`Measurements (${data.measurements.length})`);
  if (data.measurements.length === 0) doc.text('No measurements.');
  for (const m of data.measurements) {
    ensureSpace(30);
    const parts = [m.geometry_type === 'LineString' ? 'Line' : m.geometry_type];
    if (m.length !== null) parts.push(`${m.geometry_type === 'Polygon' ? 'perimeter' : 'length'} ${m.length.toFixed(2)} m`);
    if (m.area !== null) parts.push(`area ${m.area.toFixed(2)} m2`);
    if (m.volume !== null) parts.push(`volume ${m.volume.toFixed(2)} m3`);
    if (m.tags.length) parts.push(`tags: ${m.tags.join(', ')}`);
    field(m.name ?? m.id.slice(0, 8), parts.join(', '));
  }

  if (data.inventory_items) {
    section(`Inventory (${data.inventory_items.length})`);
    if (data.inventory_items.length === 0) doc.text('No inventory items.');
    else drawInventory(doc, data.inventory_items, latin, ensureSpace);
  }

  if (data.plans_2d) {
    if (plans.length === 0) {
      section('2D plans');
      doc.text('No 2D plan: nothing in this report has a position.');
    }
    // Each plan on a page of its own, under the section's title (a plan is a page's width square).
    for (const plan of plans) {
      doc.addPage();
      section('2D plans');
      drawPlanPage(doc, data, plan, latin);
    }
  }
}

/** Text the standard PDF fonts can show: Latin-1 and line breaks; anything else becomes "?". */
function latin(text: string): string {
  return text.replace(/[^\n\r\t\x20-\x7e\xa0-\xff]/g, '?');
}
