// The processing of one project, as a durable job: WAITING -> PROCESSING -> DONE or ERROR.
// Idempotent: a retry after a crash finds the project PROCESSING and runs the engine again from
// the start into a fresh output folder; only the run that finishes records its outputs.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import type { ProjectRepository } from '../projects/project.repository.ts';
import { projectPaths } from '../projects/project.service.ts';
import { EngineError, type PhotogrammetryEngine } from './engine.ts';

export class ProjectProcessor {
  constructor(
    private readonly projects: ProjectRepository,
    private readonly store: ObjectStore,
    private readonly engine: PhotogrammetryEngine,
    private readonly logger: Logger,
  ) {}

  async process(projectId: number): Promise<void> {
    const project = await this.projects.findById(projectId);
    if (!project || !['WAITING', 'PROCESSING'].includes(project.public_status)) return; // deleted or already finished
    const log = this.logger.child({ projectId, engine: this.engine.name });
    await this.projects.update(projectId, {
      public_status: 'PROCESSING',
      detailed_status: 'Starting',
      progress: 0,
      processing_started_at: new Date(),
      engine: this.engine.name,
    });
    let progress = 0;
    const inputs = await this.projects.listInputs(projectId);
    try {
      const result = await this.engine.run({
        projectId,
        projectUuid: project.uuid,
        bucket: project.bucket_name,
        inputs,
        outputPrefix: projectPaths.outputs(project.uuid, crypto.randomUUID()),
        coordinateSystem: project.coordinate_system,
        tags: project.tags,
        store: this.store,
        signal: new AbortController().signal,
        reportProgress: async (percent, text) => {
          progress = Math.max(progress, Math.min(100, Math.round(percent))); // never backwards
          await this.projects.update(projectId, { progress, detailed_status: text });
        },
      });
      await this.projects.db.transaction().execute(async (trx) => {
        await this.projects.replaceOutputs(
          projectId,
          [
            ...result.outputs.map((o) => ({ outputType: o.outputType, resultType: o.resultType, availability: 'done', key: o.key, note: null })),
            ...result.notAvailable.map((o) => ({ outputType: o.outputType, resultType: 'file', availability: 'not available', key: null, note: o.reason })),
          ],
          trx,
        );
        await this.projects.update(projectId, { public_status: 'DONE', progress: 100, detailed_status: 'Done', processing_ended_at: new Date() }, trx);
      });
      log.info({ outputs: result.outputs.length }, 'project processed');
    } catch (err) {
      const failure = err instanceof EngineError ? err : new EngineError(10001, 'Unexpected error during processing.');
      if (!(err instanceof EngineError)) log.error({ err }, 'engine crashed');
      await this.projects.update(projectId, {
        public_status: 'ERROR',
        error_code: failure.errorCode,
        error_reason: failure.reason,
        processing_ended_at: new Date(),
      });
    }
  }
}
