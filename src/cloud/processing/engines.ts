// Chooses the photogrammetry engine by name (configuration `ENGINE`).
import path from 'node:path';
import type { Config } from '../../config.ts';
import type { PhotogrammetryEngine } from './engine.ts';
import { ExifEngine } from './exif-engine.ts';
import { ColmapEngine } from './colmap/colmap-engine.ts';
import { NodeOdmEngine } from './nodeodm/nodeodm-engine.ts';

/** Settings of the colmap and nodeodm engines (from the configuration, engineSettingsFrom). */
export interface EngineSettings {
  timeLimitSeconds: number;
  workDir: string;
  colmapBinary: string;
  nodeodmUrl: string | undefined;
  nodeodmToken: string | undefined;
  nodeodmPollSeconds: number;
  /** JSON object of extra ODM options. */
  nodeodmOptions: string | undefined;
}

export function engineSettingsFrom(config: Config): EngineSettings {
  return {
    timeLimitSeconds: config.engineTimeLimitSeconds,
    workDir: config.engineWorkDir ?? path.join(config.dataDir, 'work'),
    colmapBinary: config.colmapBinary,
    nodeodmUrl: config.nodeodmUrl,
    nodeodmToken: config.nodeodmToken,
    nodeodmPollSeconds: config.nodeodmPollSeconds,
    nodeodmOptions: config.nodeodmOptions,
  };
}

export function createEngine(name: string, options: { simulatedSeconds: number } & Partial<EngineSettings>): PhotogrammetryEngine {
  switch (name) {
    case 'exif':
      return new ExifEngine(options.simulatedSeconds);
    case 'colmap':
      return new ColmapEngine({ binary: options.colmapBinary, workDir: options.workDir ?? path.resolve('data', 'work'), timeLimitSeconds: options.timeLimitSeconds });
    case 'nodeodm':
      if (!options.nodeodmUrl) throw new Error('ENGINE=nodeodm needs NODEODM_URL (the NodeODM or ClusterODM base URL).');
      return new NodeOdmEngine({
        url: options.nodeodmUrl,
        token: options.nodeodmToken,
        workDir: options.workDir ?? path.resolve('data', 'work'),
        timeLimitSeconds: options.timeLimitSeconds,
        pollIntervalMs: (options.nodeodmPollSeconds ?? 5) * 1000,
        extraOptions: parseExtraOptions(options.nodeodmOptions),
      });
    default:
      throw new Error(`Unknown ENGINE "${name}". Available: exif, colmap, nodeodm.`);
  }
}

function parseExtraOptions(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  const parsed: unknown = JSON.parse(text);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('NODEODM_OPTIONS must be a JSON object, e.g. {"pc-quality": "high"}');
  return parsed as Record<string, unknown>;
}
