// Cancellation of a processing run. Deleting a project that is queued or processing
// (project.service.ts) marks its row deleted and CANCELED. The run may be in this process or in
// another worker process, so it learns of it through the database, not from memory: the processor
// checks the row on every progress report (its writes match only a live PROCESSING row) and, in
// between, every `intervalMs` (an engine may report nothing for minutes), then aborts the signal
// the engine runs with. The engines obey it: COLMAP's child process is killed, the NodeODM task
// canceled and removed on the node.
import type { Logger } from 'pino';

/** The abort reason of a canceled run: not a failure, nothing is recorded for it. */
export class ProcessingCanceled extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ProcessingCanceled';
  }
}

export const PROJECT_DELETED = 'The project was deleted while processing.';

export interface CancellationWatch {
  /** Aborted (reason: a ProcessingCanceled) once the run must stop. */
  readonly signal: AbortSignal;
  /** Aborts the run now, e.g. when a write found the project gone. */
  cancel(reason: string): void;
  stop(): void;
}

/** Checks `stillWanted` every `intervalMs` and aborts once it answers false. */
export function watchForCancel(stillWanted: () => Promise<boolean>, options: { intervalMs: number; logger: Logger }): CancellationWatch {
  const controller = new AbortController();
  const cancel = (reason: string) => {
    if (!controller.signal.aborted) controller.abort(new ProcessingCanceled(reason));
  };
  let checking = false;
  const timer = setInterval(() => {
    if (checking || controller.signal.aborted) return;
    checking = true;
    stillWanted()
      .then((wanted) => {
        if (!wanted) cancel(PROJECT_DELETED);
      })
      // A database hiccup does not cancel anything: the next check, or the next write, decides.
      .catch((err) => options.logger.warn({ err }, 'could not check whether processing is still wanted'))
      .finally(() => {
        checking = false;
      });
  }, options.intervalMs);
  timer.unref();
  return { signal: controller.signal, cancel, stop: () => clearInterval(timer) };
}
