// The processing of one project, as a durable job: WAITING -> PROCESSING -> DONE or ERROR.
// Stages (progress 0-100 in display_detailed_status):
//   1. the requested output coordinate system's semantic rules (10611-10615, crs.ts);
//   2. image metadata of every input, cached (0-30 %); none readable -> 10601;
//   3. the output system (requested + EGM96, WGS 84 / UTM from the positions, or arbitrary), the
//      pipeline (tags, or `mobile` detected from the images, pipelines.ts), map bounds, acquisition
//      date and geolocation, recorded on the project;
//   4. the engine the project was started with (30-100 %), then its outputs (the rasters among
//      them described as map layers, map-layers.ts) and DONE.
// Idempotent: a retry after a crash finds the project PROCESSING and runs again from the start into
// a fresh output folder; only the run that finishes records its outputs.
// Cancellation: a project deleted while processing stops the run (cancellation.ts); every write
// here matches only a live PROCESSING row, so nothing is written back for it, and the run's
// output folder is removed.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import type { MapBounds, ProjectRow } from '../cloud.tables.ts';
import type { ProjectRepository } from '../projects/project.repository.ts';
import { projectPaths } from '../projects/project.service.ts';
import { checkOutputCrs, parseCoordinateSystem, resolveOutputCrs } from '../coordinate-systems/crs.ts';
import type { ControlPointRepository } from '../control-points/control-point.repository.ts';
import { EngineError, type ProducedOutput } from './engine.ts';
import { describeRaster, type RasterInfo } from './map-layers.ts';
import { GeoTiffError } from './geotiff.ts';
import { MAP_LAYER_OUTPUTS } from './result-types.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import type { EngineSet } from './engines.ts';
import { applyRequestedOutputs } from './requested-outputs.ts';
import { PROJECT_DELETED, ProcessingCanceled, watchForCancel } from './cancellation.ts';
import { readableImages, type InputAnalyzer, type ReadableImage } from './input-analysis.ts';
import { choosePipeline } from './pipelines.ts';
import { isDatabaseUnavailable } from '../../infra/database/connection-errors.ts';

const ANALYSIS_SHARE = 30;
/** How often a run checks, between its progress reports, whether its project was deleted. */
const CANCEL_CHECK_MS = 1000;

export class ProjectProcessor {
  constructor(
    private readonly projects: ProjectRepository,
    private readonly controlPoints: ControlPointRepository,
    private readonly analyzer: InputAnalyzer,
    private readonly store: ObjectStore,
    private readonly engines: EngineSet,
    private readonly logger: Logger,
    private readonly options: { cancelCheckMs?: number } = {},
  ) {}

  async process(projectId: number): Promise<void> {
    const project = await this.projects.findById(projectId);
    if (!project || !['WAITING', 'PROCESSING'].includes(project.public_status)) return; // deleted or already finished
    // Chosen at start_processing; null for a project queued before engines could be chosen.
    const engineName = project.engine ?? this.engines.defaultName;
    const log = this.logger.child({ projectId, engine: engineName });
    const started = await this.projects.updateWhile(projectId, ['WAITING', 'PROCESSING'], {
      public_status: 'PROCESSING',
      detailed_status: 'Checking the output coordinate system',
      progress: 0,
      processing_started_at: new Date(),
      engine: engineName,
    });
    if (!started) return; // deleted just now
    const watch = watchForCancel(() => this.projects.isProcessing(projectId), { intervalMs: this.options.cancelCheckMs ?? CANCEL_CHECK_MS, logger: log });
    const outputPrefix = projectPaths.outputs(project.uuid, crypto.randomUUID());
    let progress = 0;
    const report = async (percent: number, text: string) => {
      watch.signal.throwIfAborted();
      progress = Math.max(progress, Math.min(100, Math.round(percent))); // never backwards
      await this.updateOrCancel(projectId, watch.cancel, { progress, detailed_status: text });
    };
    try {
      const engine = this.engines.get(engineName);
      if (!engine) {
        // Every worker must offer the same engines (ENGINE, ENGINES) as the API that accepted the choice.
        throw new EngineError(10001, `Unexpected error: the engine "${engineName}" chosen for this project is not offered by the worker that ran it (offered: ${this.engines.names.join(', ')}).`);
      }
      this.checkRequestedCrs(project);

      const inputs = await this.projects.listInputs(projectId);
      const analyses = await this.analyzer.analyze(projectId, project.bucket_name, inputs, (done, total) =>
        report((done / total) * ANALYSIS_SHARE, `Reading image metadata (${done}/${total})`),
      );
      const images = readableImages(inputs, analyses);
      if (images.length === 0) {
        throw new EngineError(10601, `Input data not valid: none of the ${inputs.length} registered input(s) is a readable image (JPEG, PNG or TIFF).`);
      }

      const positions = images.filter((i) => i.latitude !== null && i.longitude !== null) as (ReadableImage & { latitude: number; longitude: number })[];
      const resolved = resolveOutputCrs({ requested: project.coordinate_system, geoidModel: project.geoid_model, geoidHeight: project.geoid_height, positions });
      if (!resolved.ok) throw new EngineError(resolved.code, resolved.reason);
      const pipeline = choosePipeline(project.tags, images);
      const captured = images.map((i) => i.captured_at).filter((d): d is string => d !== null).sort();
      await this.updateOrCancel(projectId, watch.cancel, {
        output_crs: JSON.stringify(resolved.crs),
        pipeline,
        is_geolocalized: positions.length > 0,
        map_bounds: positions.length > 0 ? JSON.stringify(bounds(positions)) : null,
        acquisition_date: captured[0] ? new Date(captured[0]) : null,
      });
      log.info({ pipeline, outputCrs: resolved.crs.name, images: images.length, inputs: inputs.length }, 'processing');

      const engineResult = await engine.run({
        projectId,
        projectUuid: project.uuid,
        bucket: project.bucket_name,
        inputs: inputs.map(({ key, size }) => ({ key, size })),
        images,
        outputPrefix,
        outputCrs: resolved.crs,
        pipeline,
        tags: project.tags,
        requestedOutputs: project.requested_outputs,
        controlPoints: await this.controlPoints.all(projectId),
        store: this.store,
        signal: watch.signal,
        reportProgress: (percent, text) => report(ANALYSIS_SHARE + (percent * (100 - ANALYSIS_SHARE)) / 100, text),
      });
      watch.signal.throwIfAborted();
      // Not-available reasons say whether the output was asked for (requested-outputs.ts).
      const result = applyRequestedOutputs(engineResult, project.requested_outputs, engineName);
      const unmet = result.notAvailable.filter((o) => o.reason.startsWith('Requested'));
      if (unmet.length > 0) log.info({ notAvailable: unmet }, 'requested outputs this engine cannot make');
      const rasters = await this.describeRasters(project.bucket_name, result.outputs, log);
      watch.signal.throwIfAborted();
      await this.projects.db.transaction().execute(async (trx) => {
        // The row first: it takes the lock a concurrent deletion needs, or finds the project gone.
        await this.updateOrCancel(projectId, watch.cancel, { public_status: 'DONE', progress: 100, detailed_status: 'Done', processing_ended_at: new Date() }, trx);
        await this.projects.replaceOutputs(
          projectId,
          [
            ...result.outputs.map((o) => ({ outputType: o.outputType, availability: 'done', key: o.key, note: null, raster: rasters.get(o.key) ?? null })),
            ...result.notAvailable.map((o) => ({ outputType: o.outputType, availability: 'not available', key: null, note: o.reason })),
          ],
          trx,
        );
      });
      log.info({ outputs: result.outputs.length }, 'project processed');
    } catch (err) {
      // The database connection was lost: not a processing failure. The job is retried (pg-boss)
      // and runs again from the start into a fresh output folder; this run's folder goes.
      if (isDatabaseUnavailable(err) && !watch.signal.aborted) {
        log.warn({ err }, 'database unavailable while processing; the job is retried');
        await this.store.deletePrefix(project.bucket_name, outputPrefix).catch((e) => log.warn({ err: e }, 'could not remove the outputs of an interrupted run'));
        throw err;
      }
      // Canceled, or failed while the project was being deleted: nothing is recorded for it.
      if (watch.signal.aborted || !(await this.projects.isProcessing(projectId))) {
        const reason = watch.signal.reason instanceof ProcessingCanceled ? watch.signal.reason.message : PROJECT_DELETED;
        log.info({ reason, ...(err instanceof EngineError ? { errorCode: err.errorCode } : {}) }, 'processing canceled');
        await this.store.deletePrefix(project.bucket_name, outputPrefix).catch((e) => log.warn({ err: e }, 'could not remove the outputs of a canceled run'));
        return;
      }
      const failure = err instanceof EngineError ? err : new EngineError(10001, 'Unexpected error during processing.');
      if (!(err instanceof EngineError)) log.error({ err }, 'processing crashed');
      else log.info({ errorCode: failure.errorCode, reason: failure.reason }, 'processing failed');
      await this.projects.updateWhile(projectId, ['PROCESSING'], {
        public_status: 'ERROR',
        error_code: failure.errorCode,
        error_reason: failure.reason,
        detailed_status: 'Failed',
        processing_ended_at: new Date(),
      });
    } finally {
      watch.stop();
    }
  }

  /**
   * The map-layer description of each georeferenced raster produced (map-layers.ts), by key. A
   * raster that cannot be read as a GeoTIFF in a registered system is still an output, not a layer.
   */
  private async describeRasters(bucket: string, outputs: ProducedOutput[], log: Logger): Promise<Map<string, RasterInfo>> {
    const described = new Map<string, RasterInfo>();
    for (const output of outputs.filter((o) => MAP_LAYER_OUTPUTS.includes(o.outputType))) {
      try {
        const info = await describeRaster(this.store, bucket, output.key);
        if (info) described.set(output.key, info);
        else log.warn({ outputType: output.outputType }, 'raster output in no registered coordinate system: not a map layer');
      } catch (err) {
        if (err instanceof GeoTiffError || err instanceof StorageError) log.warn({ outputType: output.outputType, reason: err.message }, 'raster output not readable as a GeoTIFF: not a map layer');
        else throw err;
      }
    }
    return described;
  }

  /** An update of the processing project; a project no longer processing cancels the run. */
  private async updateOrCancel(projectId: number, cancel: (reason: string) => void, values: Parameters<ProjectRepository['update']>[1], db?: Parameters<ProjectRepository['update']>[2]): Promise<void> {
    if (await this.projects.updateWhile(projectId, ['PROCESSING'], values, db)) return;
    cancel(PROJECT_DELETED);
    throw new ProcessingCanceled(PROJECT_DELETED);
  }

  /** The rules 10611-10615 on the system requested at creation (checked before reading any image). */
  private checkRequestedCrs(project: ProjectRow): void {
    if (!project.coordinate_system) {
      if (project.geoid_model !== null || project.geoid_height !== null) {
        // No system requested: the output is WGS 84 / UTM + EGM96 or arbitrary, chosen later; a
        // geoid given alongside names no vertical component of the client's.
        throw new EngineError(10614, 'A geoid model or geoid height is given but no coordinate_system with a vertical component. Remove it or add a vertical component.');
      }
      return;
    }
    const check = checkOutputCrs(parseCoordinateSystem(project.coordinate_system), { geoidModel: project.geoid_model, geoidHeight: project.geoid_height });
    if (!check.ok) throw new EngineError(check.code, check.reason);
  }
}

function bounds(positions: { latitude: number; longitude: number }[]): MapBounds {
  let [south, west, north, east] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const p of positions) {
    south = Math.min(south, p.latitude);
    north = Math.max(north, p.latitude);
    west = Math.min(west, p.longitude);
    east = Math.max(east, p.longitude);
  }
  return { sw: [south, west], ne: [north, east] };
}
