// Stage `dense-report`: the quality report (sparse-outputs.ts) written again once the dense stages
// are over, with their figures (`dense`: points, depth maps, failures), the outputs not made and
// why (`not_available`, replacing the sparse stage's list) and every stage's time.
import type { OutputType } from '../../engine.ts';
import type { DepthMaps } from './depth-maps.ts';
import { writeQualityReport, type QualityReport } from './sparse-outputs.ts';
import type { Stage } from './stage.ts';

export interface DenseFigures {
  enabled: boolean;
  maxImageSize?: number;
  depthMaps?: DepthMaps;
  /** Points of the fused cloud. */
  points?: number;
  failures: { stage: string; reason: string }[];
}

interface DenseReportInputs {
  report: QualityReport;
  figures: DenseFigures;
  notAvailable: { outputType: OutputType; reason: string }[];
}

export const denseReportStage: Stage<DenseReportInputs, void> = {
  name: 'dense-report',
  title: 'Writing the quality report',
  weight: 0,
  async run(context, { report, figures, notAvailable }) {
    const record = context.record();
    const dense = {
      enabled: figures.enabled,
      max_image_size: figures.maxImageSize ?? null,
      depth_maps: figures.depthMaps ? { method: figures.depthMaps.method, ...(figures.depthMaps.summary ?? {}) } : null,
      points: figures.points ?? null,
      failures: figures.failures,
    };
    await writeQualityReport(context.input, {
      ...report,
      // The sparse cloud's figures stay under `points`; the delivered cloud is the dense one when `dense.points` is set.
      dense,
      not_available: notAvailable.map((n) => ({ output_type: n.outputType, reason: n.reason })),
      timings_s: { ...(report.timings_s as object), ...record.commandSeconds, total: (Date.now() - record.started) / 1000 },
      stage_timings_s: record.stageSeconds,
      stage_titles: record.stageTitles,
      commands: record.commands.map((c) => c.join(' ')),
    });
  },
};
