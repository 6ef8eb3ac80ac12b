// Reports (spec "Generate report"): POST /v1/inspections/{id}/report/ answers 202 `{}`, sets
// `report_status` to `processing` and queues a job that builds the report as JSON (report_json)
// and PDF (report_pdf) into storage, then sets `report_status` to `available` (or `error`). Both
// files are then listed by GET …/outputs/. A new request while one is being built is a 409;
// a build that has not finished within STALE_BUILD_MS can be requested again.
// With include_sharetoken (the default) each build makes a read-only share token of the inspection
// for the user who asked (auth/share-tokens.ts) and prints its link: only the token's hash is
// kept, so a link cannot be printed again; a failed build revokes its token. Older reports' tokens
// stay valid until revoked (DELETE …/share_tokens/{id}/) or expired: a report already sent keeps working.
// Each build writes a second copy of both files for share holders (report-data.ts shareHolderView:
// no share token, no e-mail), beside the first (inspectionFiles.reportForShareHolders), which the
// outputs list hands them instead: a holder's way in ends with the token they were given.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionRow, InspectionTables, ReportOptions } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { InspectionRepository, ReportOutcome } from '../inspections/inspection.repository.ts';
import type { AnnotationService } from '../annotations/annotation.service.ts';
import type { MeasurementService } from '../measurements/measurement.service.ts';
import type { ExtrasService } from '../extras/extras.service.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import { conflict, notFound } from '../../infra/http/errors.ts';
import { STALE_BUILD_MS, inspectionFiles, type FileStore } from '../storage/inspection-files.ts';
import { UNKNOWN_LOCALE, type ReportLocale } from './report-locale.ts';
import { collectReportData, shareHolderView, type ReportAnnotation, type ReportData } from './report-data.ts';
import { createReportDocument, drawReport, type CropSource } from './report-pdf.ts';
import { annotatedCrop } from './photo-crops.ts';
import { buildPlans, type PlanDrawing } from './report-plan.ts';
import type { Reconstruction } from '../pipeline/reconstruction.ts';
import { rectangleOf } from '../annotations/annotation-data.ts';
import { reportOptions } from './report-options.ts';
import { isDatabaseUnavailable } from '../../infra/database/connection-errors.ts';
import type { NewShareToken, ShareTokenService } from '../auth/share-tokens.ts';
import type { ImageReader } from '../../shared/images/image-reader.ts';
import { refusePurged } from '../retention/purged.ts';

export class ReportService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly access: InspectionAccess,
    private readonly annotations: AnnotationService,
    private readonly measurements: MeasurementService,
    private readonly extras: ExtrasService,
    private readonly cloud: CloudClient,
    private readonly files: FileStore,
    private readonly jobs: JobQueue,
    private readonly logger: Logger,
    private readonly shareTokens: ShareTokenService,
    private readonly images: ImageReader,
  ) {}

  /** `locale`: reported_by's language and country, from the request's Accept-Language (report-locale.ts). */
  async request(auth: AuthContext, id: number, body: Partial<ReportOptions> | undefined, locale: ReportLocale = UNKNOWN_LOCALE): Promise<Record<string, never>> {
    const visible = await this.access.requireInspection(auth, id);
    const options = reportOptions(body);
    await this.db.transaction().execute(async (trx) => {
      const inspection = await this.inspections.lock(trx, visible.id);
      if (inspection.deleted_at) throw notFound('Inspection');
      // Its photos are gone (retention): the report made before stays as it is, never rebuilt without them.
      refusePurged(inspection);
      if (inspection.report_status === 'processing' && inspection.report_requested_at && Date.now() - inspection.report_requested_at.getTime() < STALE_BUILD_MS) {
        throw conflict('A report of this inspection is being generated; wait until report_status is available or error.');
      }
      await this.inspections.reportRequested(trx, inspection.id, options);
      await this.jobs.send<InspectionJobs, 'inspection.build-report'>('inspection.build-report', { inspectionId: inspection.id, requestedBy: auth.userId, locale }, { trx });
    });
    return {};
  }

  /** The job. Idempotent: builds only while the request it was queued for is still the current one. */
  async build(inspectionId: number, requestedBy?: number, locale: ReportLocale = UNKNOWN_LOCALE): Promise<void> {
    const inspection = await this.inspections.find(inspectionId);
    if (!inspection || inspection.report_status !== 'processing' || !inspection.report_requested_at) return;
    const generation = inspection.report_requested_at.getTime();
    const keys = { pdf: inspectionFiles.reportPdf(inspection.id, generation), json: inspectionFiles.reportJson(inspection.id, generation) };
    const options = inspection.report_options ?? reportOptions(undefined);
    let share: NewShareToken | undefined;
    try {
      const reporter = requestedBy ?? inspection.user_id;
      if (options.include_sharetoken) share = await this.shareTokens.mint(inspection, reporter, `report ${new Date(generation).toISOString()}`);
      await this.write(inspection, options, keys, { id: reporter, locale }, share);
    } catch (err) {
      if (share) await this.shareTokens.revokeById(share.id).catch(() => undefined); // its link was printed nowhere
      // A lost database connection is no fault of the report: the job is retried (issue 10).
      if (isDatabaseUnavailable(err)) throw err;
      this.logger.error({ err, inspectionId }, 'report generation failed');
      await this.finish(inspection.id, generation, { report_status: 'error', report_error: (err as Error).message.slice(0, 500) });
      return;
    }
    const previous = await this.finish(inspection.id, generation, { report_status: 'available', report_pdf_key: keys.pdf, report_json_key: keys.json });
    if (previous === undefined) {
      await this.files.store.deletePrefix(this.files.bucket, keys.pdf.slice(0, keys.pdf.lastIndexOf('/') + 1)); // superseded
      if (share) await this.shareTokens.revokeById(share.id); // and so is the link it printed
    } else if (previous.pdf && previous.pdf !== keys.pdf) {
      await this.files.store.deletePrefix(this.files.bucket, previous.pdf.slice(0, previous.pdf.lastIndexOf('/') + 1));
    }
    this.logger.info({ inspectionId }, 'report ready');
  }

  private async write(inspection: InspectionRow, options: ReportOptions, keys: { pdf: string; json: string }, reporter: { id: number; locale: ReportLocale }, share: NewShareToken | undefined): Promise<void> {
    const [annotations, measurements, extras] = await Promise.all([
      this.annotations.allOf(inspection, false),
      this.measurements.allOf(inspection),
      this.extras.of(inspection),
    ]);
    const { data, cameras } = await collectReportData(this.db, { inspection, annotations, measurements, extras, options, reportedBy: reporter.id, locale: reporter.locale, share });
    const plans = options.include_2d_plans ? await buildPlans(data, inspection.reconstruction as Reconstruction | null, inspection.base_plate_location, inspection.top_point_location, this.files.store) : [];
    if (options.include_2d_plans) data.plans_2d = plans.map((p) => p.plan);
    const photoBucket = inspection.project_id !== null && data.annotations?.length ? (await this.cloud.as(inspection).getProject(inspection.project_id)).bucket_name : this.files.bucket;
    const forShareHolders = shareHolderView(data);
    await this.files.store.putObject(this.files.bucket, keys.json, Buffer.from(JSON.stringify(data, null, 2)), { contentType: 'application/json' });
    await this.files.store.putObject(this.files.bucket, inspectionFiles.reportForShareHolders(keys.json), Buffer.from(JSON.stringify(forShareHolders, null, 2)), { contentType: 'application/json' });

    const crop = async (annotation: ReportAnnotation) => {
      const camera = cameras.get(annotation.photo.photo_id);
      if (!camera) return null;
      // Within the image limits, or the reason in its place (photo-crops.ts).
      return annotatedCrop(this.images, photoBucket, camera.image_key, rectangleOf(annotation.coords_2d));
    };
    // Both PDFs show the same crops: drawn side by side, each crop is cut once and forgotten
    // once both have taken it (so no more than a few crops are held, however many annotations).
    const crops = new Map<number, { crop: ReturnType<CropSource>; taken: number }>();
    const cropOnce: CropSource = (annotation) => {
      const entry = crops.get(annotation.id) ?? { crop: crop(annotation), taken: 0 };
      if (++entry.taken === 2) crops.delete(annotation.id);
      else crops.set(annotation.id, entry);
      return entry.crop;
    };
    const written = await Promise.allSettled([
      this.writePdf(keys.pdf, data, cropOnce, plans),
      this.writePdf(inspectionFiles.reportForShareHolders(keys.pdf), forShareHolders, cropOnce, plans),
    ]);
    for (const outcome of written) if (outcome.status === 'rejected') throw outcome.reason;
  }

  private async writePdf(key: string, data: ReportData, crops: CropSource, plans: PlanDrawing[]): Promise<void> {
    const doc = await createReportDocument(data);
    const upload = this.files.store.putObject(this.files.bucket, key, doc, { contentType: 'application/pdf' });
    upload.catch(() => undefined); // a store failure while drawing is awaited below, never left unhandled
    try {
      await drawReport(doc, data, crops, plans);
      doc.end();
    } catch (err) {
      doc.destroy(err as Error);
      await upload.catch(() => undefined);
      throw err;
    }
    await upload;
  }

  /** Records the outcome if the build is still the current one; returns the previous file keys, or undefined when superseded. */
  private finish(inspectionId: number, generation: number, outcome: ReportOutcome): Promise<{ pdf: string | null } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const locked = await this.inspections.lock(trx, inspectionId);
      if (locked.deleted_at || locked.report_status !== 'processing' || locked.report_requested_at?.getTime() !== generation) return undefined;
      await this.inspections.reportFinished(trx, inspectionId, outcome);
      return { pdf: locked.report_pdf_key };
    });
  }
}
