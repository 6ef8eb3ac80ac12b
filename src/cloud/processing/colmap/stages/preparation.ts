// Stage `preparation`: enough images to try (10601), and COLMAP installed (10001 otherwise), its
// version for the log and the quality report. No share of the progress: it takes a second.
import { EngineError } from '../../engine.ts';
import { colmapVersion } from '../colmap-process.ts';
import type { Stage } from './stage.ts';

/** Registered images needed: at least this share of the images, and at least MIN_REGISTERED. */
export const MIN_REGISTERED_RATIO = 0.5;
export const MIN_REGISTERED = 3;

export interface Prepared {
  /** COLMAP's version line, or null when it prints none. */
  readonly version: string | null;
}

export function preparationStage(binary: string): Stage<Record<string, never>, Prepared> {
  return {
    name: 'preparation',
    title: 'Preparing',
    weight: 0,
    async run(context) {
      const { input } = context;
      if (input.images.length < MIN_REGISTERED) {
        throw new EngineError(10601, `Input data not valid: photogrammetry needs at least ${MIN_REGISTERED} images, the project has ${input.images.length} readable image(s).`);
      }
      const version = await colmapVersion(binary, context.glogDir, context.signal);
      context.log(version ?? 'COLMAP (version unknown)');
      return { version };
    },
  };
}
