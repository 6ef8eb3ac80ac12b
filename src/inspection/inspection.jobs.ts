// The inspection service's job catalogue: name -> payload.
import type { ReportLocale } from './reports/report-locale.ts';

export type InspectionJobs = {
  /** Status 12 of an is_video inspection: frames from its videos become its images (video/video-extraction.ts). */
  'inspection.extract-video': { inspectionId: number };
  'inspection.analyze-images': { inspectionId: number };
  'inspection.track-photogrammetry': { inspectionId: number };
  'inspection.clip-point-cloud': { inspectionId: number };
  /** After processing completed, with detect_rust: rust findings become annotations (rust/rust-analysis.ts). */
  'inspection.detect-rust': { inspectionId: number };
  /** After processing completed, with detect_antennas: the dense cloud searched for the tower's equipment, inventory items written (inventory/antenna-detection.ts). */
  'inspection.detect-antennas': { inspectionId: number };
  /** Copies a retry's inputs from its original into its own project, registers them, starts processing. */
  'inspection.prepare-retry': { inspectionId: number };
  'inspection.build-inputs-zip': { inspectionId: number };
  /**
   * `requestedBy`: the user who asked (the report's reported_by; absent in jobs queued before it
   * existed); `locale`: reported_by's preferred_language and country, from the request's
   * Accept-Language (reports/report-locale.ts; absent: null).
   */
  'inspection.build-report': { inspectionId: number; requestedBy?: number; locale?: ReportLocale };
  'inspection.send-email': { to: string; subject: string; text: string };
  /** Cloud projects, project group and stored files of deleted inspections and assets. */
  'inspection.delete-resources': { projectIds: number[]; projectGroupId: number | null; inspectionIds: number[] };
  /** Daily (RETENTION_SCHEDULE): inspections past their retention are given up for purging (retention/retention.service.ts). `now`: ISO time to judge by (tests); default the time it runs. */
  'inspection.retention-sweep': { now?: string };
  /** Deletes a given-up inspection's photos, outputs, inputs ZIP and cloud project, then status 24; idempotent. */
  'inspection.purge-data': { inspectionId: number };
  /** One attempt at delivering a webhook message (webhooks/webhook.service.ts); a failed one queues the next, delayed. */
  'inspection.deliver-webhook': { messageId: number };
};
