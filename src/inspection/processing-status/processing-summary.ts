// What a finished processing made, in a form a person reads at a glance (issue 29: "when done, a
// summary: photos placed N of M, points, reprojection error, ground sampling distance, outputs
// made and the ones not made with why, time per stage"). Built from what the cloud publishes:
// - the project's outputs list: each output made (its size, read from the store) and each one
//   `not available` with the engine's reason (`note`);
// - the reconstruction record the inspection imported (photos placed);
// - the cloud's `quality_report` when it is the JSON report of the local engine or NodeODM's:
//   points (the dense cloud's when it was made), mean reprojection error, ground sampling distance
//   and seconds per stage. Any of these the report does not carry is null: the exif engine makes
//   no report, and a report is the processing node's file, so it is read defensively (size cap,
//   JSON parse, each field type-checked) and an unreadable one only leaves the figures null.
import { buffer } from 'node:stream/consumers';
import { Type, type Static } from 'typebox';
import type { CloudOutput } from '../cloud-client/cloud-client.ts';
import type { FileStore } from '../storage/inspection-files.ts';

/** A quality report larger than this is not read (ours are a few kB; ODM's stats a few hundred). */
export const MAX_REPORT_BYTES = 2 * 1024 * 1024;

const NullableNumber = Type.Union([Type.Number(), Type.Null()]);

export const ProcessingSummary = Type.Object(
  {
    photos_total: Type.Integer({ description: 'Photos the cloud project holds' }),
    photos_placed: Type.Union([Type.Integer(), Type.Null()], { description: 'Photos the reconstruction placed (calibrated); null when the engine does not reconstruct' }),
    points: Type.Union([Type.Integer(), Type.Null()], { description: 'Points of the delivered point cloud (the dense one when it was made)' }),
    dense: Type.Union([Type.Boolean(), Type.Null()], { description: 'Whether the delivered point cloud is dense; null when unknown' }),
    mean_reprojection_error_px: NullableNumber,
    gsd_cm: Type.Union([Type.Number(), Type.Null()], { description: 'Ground sampling distance of the photos, centimetres per pixel' }),
    outputs_made: Type.Array(Type.Object({ output_type: Type.String(), size_bytes: Type.Union([Type.Integer(), Type.Null()]) })),
    outputs_not_made: Type.Array(Type.Object({ output_type: Type.String(), reason: Type.String() })),
    stage_seconds: Type.Array(Type.Object({ stage: Type.String(), title: Type.String({ description: 'The stage in words (its name when the engine gives none)' }), seconds: Type.Number() }), {
      description: 'Time of each processing stage in the order they ran; empty when the engine does not report them',
    }),
  },
  { description: 'What a finished (DONE) processing made' },
);
export type ProcessingSummary = Static<typeof ProcessingSummary>;

/** The summary of a DONE project from its outputs; `photosPlaced` from the imported reconstruction. */
export async function processingSummary(files: FileStore, outputs: CloudOutput[], photos: { total: number; placed: number | null }): Promise<ProcessingSummary> {
  const made = outputs.filter((o) => o.availability === 'done' && o.s3_key);
  const report = await readReport(files, made.find((o) => o.output_type === 'quality_report'));
  return {
    photos_total: photos.total,
    photos_placed: photos.placed,
    ...reportFigures(report),
    outputs_made: await Promise.all(made.map(async (o) => ({ output_type: o.output_type, size_bytes: (await files.store.headObject(o.s3_bucket ?? files.bucket, o.s3_key!).catch(() => undefined))?.size ?? null }))),
    outputs_not_made: outputs.filter((o) => o.availability === 'not available').map((o) => ({ output_type: o.output_type, reason: o.note?.trim() || 'The engine gave no reason.' })),
  };
}

async function readReport(files: FileStore, output: CloudOutput | undefined): Promise<Record<string, unknown> | null> {
  if (!output) return null;
  try {
    const bucket = output.s3_bucket ?? files.bucket;
    const head = await files.store.headObject(bucket, output.s3_key!);
    if (!head || head.size > MAX_REPORT_BYTES) return null;
    const parsed: unknown = JSON.parse((await buffer((await files.store.getObject(bucket, output.s3_key!)).body)).toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null; // gone from the store, or not JSON: no figures, the rest of the summary stands
  }
}

type ReportFigures = Pick<ProcessingSummary, 'points' | 'dense' | 'mean_reprojection_error_px' | 'gsd_cm' | 'stage_seconds'>;

/** The figures of a quality report: the local engine's (sparse-outputs.ts, dense-report.ts) or NodeODM's (its stats under `odm_stats`). */
export function reportFigures(report: Record<string, unknown> | null): ReportFigures {
  if (!report) return { points: null, dense: null, mean_reprojection_error_px: null, gsd_cm: null, stage_seconds: [] };
  const dense = objectOr(report.dense);
  const titles = objectOr(report.stage_titles);
  const densePoints = count(dense?.points);
  // ODM's stats.json: reconstruction_statistics (OpenSfM's sparse figures), odm_processing_statistics (average_gsd, cm).
  const odmStats = objectOr(report.odm_stats);
  const odm = objectOr(odmStats?.reconstruction_statistics);
  return {
    points: densePoints ?? count(report.points) ?? count(odm?.reconstructed_points_count),
    dense: dense ? densePoints !== null : null,
    mean_reprojection_error_px: finite(report.mean_reprojection_error_px) ?? finite(odm?.reprojection_error_pixels),
    gsd_cm: finite(report.gsd_cm) ?? finite(objectOr(odmStats?.odm_processing_statistics)?.average_gsd),
    stage_seconds: Object.entries(objectOr(report.stage_timings_s) ?? {})
      .filter((entry): entry is [string, number] => finite(entry[1]) !== null)
      .map(([stage, seconds]) => ({ stage, title: text(titles?.[stage]) ?? stage, seconds: Math.round(seconds * 10) / 10 })),
  };
}

function objectOr(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() && value.length <= 200 ? value : null;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}
