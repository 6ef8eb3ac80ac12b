// The rust analysis of an inspection with `detect_rust` (spec "Additional statuses" 11–14), as a
// durable job, `inspection.detect-rust`, queued in the transaction that completes processing
// (pipeline/inspection-pipeline.ts): it runs on the processed inspection, so every camera has its
// photo and, when the engine reconstructed, its calibration for `coords_3d`.
//
// 12 Ongoing -> every camera's photo is read from the object store (the cloud project's bucket,
// as the image analysis reads it) and analysed (rust-detector.ts); each finding becomes an
// annotation of type "Corrosion" (the default annotation type for rust, annotation-types.ts) with
// its rectangle, its severity and, when the inspection has a point cloud and the camera a
// calibration, its coords_3d (annotations/coords-3d.ts, as `?coords_3d=true` computes it).
// -> 13 Completed, the annotations written in the same transaction (a crash before leaves none,
// and the job, retried, starts again); or 14 Error when no photo could be analysed.
// A photo that cannot be decoded, that is over the image limits (IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS:
// shared/images, read through the ImageReader, never whole beyond them), or that is gone from
// storage, is skipped: the others are still worth analysing. It is named with its reason in
// `additional_statuses.rust_reason`, on 13 too. Other storage errors fail the job for pg-boss to
// retry it.
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { CameraRow, InspectionRow, InspectionTables } from '../inspection.tables.ts';
import { CAMERA_COLUMNS } from '../inspection.tables.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import type { Coords3dLocator } from '../annotations/coords-3d.ts';
import type { AnnotationService, DetectedAnnotation } from '../annotations/annotation.service.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { ImageRefused } from '../../shared/images/image-limits.ts';
import type { ImageReader } from '../../shared/images/image-reader.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';
import { analysePhoto, type RustFinding } from './rust-detector.ts';
import { RustStatus } from './rust-statuses.ts';

/** The annotation type of a rust finding (a default type, annotation-types.ts). */
export const RUST_ANNOTATION_TYPE = 'Corrosion';
export const RUST_ANNOTATION_NAME = 'Rust';
/** Photos decoded at once: a 20 MP photo takes ~60 MB decoded. */
const PHOTOS_AT_ONCE = 2;
/** Skipped photos named in rust_reason (the count is always given). */
const NAMED_SKIPS = 10;

/** In the transaction that starts processing: 11 Pending when the inspection asks for rust analysis. */
export async function markRustPending(inspections: InspectionRepository, trx: Transaction<InspectionTables>, inspectionId: number): Promise<void> {
  const row = await inspections.find(inspectionId, trx);
  if (row?.processing_parameters.detect_rust) await inspections.rustTransition(inspectionId, 'any', RustStatus.Pending, null, trx);
}

/** In the transaction that completes processing: the analysis job queued when it is pending. */
export async function queueRustAnalysis(inspections: InspectionRepository, jobs: JobQueue, trx: Transaction<InspectionTables>, inspectionId: number): Promise<void> {
  const row = await inspections.find(inspectionId, trx);
  if (row?.additional_statuses.rust !== RustStatus.Pending) return;
  await jobs.send<InspectionJobs, 'inspection.detect-rust'>('inspection.detect-rust', { inspectionId }, { trx });
}

export class RustAnalysis {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly annotations: AnnotationService,
    private readonly cloud: CloudClient,
    private readonly images: ImageReader,
    private readonly locator: Coords3dLocator,
    private readonly logger: Logger,
  ) {}

  /** The `inspection.detect-rust` job. */
  async run(inspectionId: number): Promise<void> {
    if (!(await this.inspections.rustTransition(inspectionId, [RustStatus.Pending, RustStatus.Ongoing], RustStatus.Ongoing, null))) return;
    const inspection = (await this.inspections.find(inspectionId))!;
    const cameras = await this.db.selectFrom('inspection.cameras').select(CAMERA_COLUMNS).where('inspection_id', '=', inspectionId).orderBy('id').execute();
    const { bucket_name: bucket } = await this.cloud.as(inspection).getProject(inspection.project_id!);
    const skipped: { filename: string; reason: string }[] = [];
    const found: DetectedAnnotation[] = [];
    await mapConcurrently(cameras, PHOTOS_AT_ONCE, async (camera) => {
      const outcome = await this.analyse(inspection, camera, bucket);
      if ('skipped' in outcome) skipped.push({ filename: camera.filename, reason: outcome.skipped });
      else found.push(...outcome.annotations);
    });
    const log = this.logger.child({ inspectionId });
    const analysed = cameras.length - skipped.length;
    log.info({ photos: cameras.length, skipped: skipped.length, findings: found.length }, 'rust analysis done');
    const skips = skipped.length ? describeSkips(skipped) : null;
    if (analysed === 0) {
      const reason = cameras.length === 0 ? 'No photo to analyse: the inspection has no cameras.' : `No photo could be analysed. ${skips}`;
      await this.inspections.rustTransition(inspectionId, [RustStatus.Ongoing], RustStatus.Error, reason);
      return;
    }
    // Photo order, then largest first within a photo: the annotation numbers follow it.
    found.sort((a, b) => a.photoId - b.photoId);
    await this.db.transaction().execute(async (trx) => {
      if (!(await this.inspections.rustTransition(inspectionId, [RustStatus.Ongoing], RustStatus.Completed, skips, trx))) return;
      await this.annotations.insertDetected(trx, inspection, found);
    });
  }

  /** One camera's findings as annotations, or why its photo was skipped. */
  private async analyse(inspection: InspectionRow, camera: CameraRow, bucket: string): Promise<{ annotations: DetectedAnnotation[] } | { skipped: string }> {
    let photo: Awaited<ReturnType<ImageReader['read']>>;
    try {
      photo = await this.images.read(bucket, camera.image_key);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NoSuchKey') return { skipped: 'the photo is no longer in storage' };
      if (err instanceof ImageRefused) return { skipped: err.reason };
      throw err;
    }
    let findings: RustFinding[];
    try {
      findings = (await analysePhoto(photo.bytes, undefined, this.images.limits.maxPixels)).findings;
    } catch (err) {
      return { skipped: this.images.refuse(bucket, camera.image_key, photo.etag, err).reason };
    }
    const annotations: DetectedAnnotation[] = [];
    for (const f of findings) {
      const coords2d: [number, number][] = [
        [f.left, f.top],
        [f.right, f.top],
        [f.right, f.bottom],
        [f.left, f.bottom],
      ].map(([x, y]) => [round6(x), round6(y)] as [number, number]);
      annotations.push({
        photoId: camera.id,
        type: RUST_ANNOTATION_TYPE,
        name: RUST_ANNOTATION_NAME,
        coords2d,
        severityLevel: f.severity,
        description: `Found by the automatic rust analysis: rust-coloured area covering ${(f.areaFraction * 100).toFixed(2)} % of the photo.`,
        coords3d: await this.locator.locate(inspection, camera, coords2d),
      });
    }
    return { annotations };
  }
}

function describeSkips(skipped: { filename: string; reason: string }[]): string {
  // By file name: the cameras' order (their ids) follows the order in which analysis inserted them.
  const named = [...skipped]
    .sort((a, b) => a.filename.localeCompare(b.filename))
    .slice(0, NAMED_SKIPS)
    .map((s) => `${s.filename}: ${s.reason}`)
    .join('; ');
  const more = skipped.length > NAMED_SKIPS ? `; and ${skipped.length - NAMED_SKIPS} more` : '';
  return `${skipped.length} photo(s) skipped: ${named}${more}.`;
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
