// Builds the photogrammetry engines by name: the default one (configuration `ENGINE`) and the
// further ones a `start_processing` request may choose (`ENGINES`). All are configured at startup,
// so that an engine that cannot be configured (nodeodm without NODEODM_URL) stops the start rather
// than failing the first project that asks for it. The colmap and nodeodm modules themselves are
// loaded by the first project they process (lazyEngine): with their dependencies (the EGM96 geoid
// grid, a 2.6 MB module; exifr; yazl and yauzl) they held ~10 MB of a server that may never run
// them (bench/README.md, "Session 18").
import path from 'node:path';
import type { Config } from '../../config.ts';
import type { EngineInput, EngineResult, OutputCapabilities, PhotogrammetryEngine } from './engine.ts';
import { ExifEngine } from './exif-engine.ts';
import { colmapCapabilities } from './colmap/colmap-capabilities.ts';
import { NODEODM_CAPABILITIES } from './nodeodm/odm-options.ts';
import type { ImageLimits } from '../../shared/images/image-limits.ts';

/** Every engine this code base has. */
export const ENGINE_NAMES = ['exif', 'colmap', 'nodeodm'] as const;

/** Settings of the colmap and nodeodm engines (from the configuration, engineSettingsFrom). */
export interface EngineSettings {
  timeLimitSeconds: number;
  workDir: string;
  colmapBinary: string;
  /** colmap engine: the dense stages on or off, and the size of their images (COLMAP_DENSE, DENSE_MAX_IMAGE_SIZE). */
  colmapDense: boolean;
  denseMaxImageSize: number;
  nodeodmUrl: string | undefined;
  nodeodmToken: string | undefined;
  nodeodmPollSeconds: number;
  /** JSON object of extra ODM options. */
  nodeodmOptions: string | undefined;
  /** Largest image file read into memory and largest image decoded (IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS): the project thumbnails. */
  imageLimits: ImageLimits;
}

export function engineSettingsFrom(config: Config): EngineSettings {
  return {
    timeLimitSeconds: config.engineTimeLimitSeconds,
    workDir: config.engineWorkDir ?? path.join(config.dataDir, 'work'),
    colmapBinary: config.colmapBinary,
    colmapDense: config.colmapDense,
    denseMaxImageSize: config.denseMaxImageSize,
    nodeodmUrl: config.nodeodmUrl,
    nodeodmToken: config.nodeodmToken,
    nodeodmPollSeconds: config.nodeodmPollSeconds,
    nodeodmOptions: config.nodeodmOptions,
    imageLimits: { maxBytes: config.imageMaxBytes, maxPixels: config.imageMaxPixels },
  };
}

/** The engines this deployment offers. */
export interface EngineSet {
  /** The engine of a request that names none (ENGINE). */
  readonly defaultName: string;
  /** Every offered engine's name, the default first. */
  readonly names: readonly string[];
  get(name: string): PhotogrammetryEngine | undefined;
}

/** The default engine and the `extra` ones (ENGINES; the default may be listed again). */
export function createEngines(defaultName: string, extra: readonly string[], options: { simulatedSeconds: number } & Partial<EngineSettings>): EngineSet {
  const engines = new Map<string, PhotogrammetryEngine>();
  for (const [name, source] of [[defaultName, 'ENGINE is'] as const, ...extra.map((n) => [n, 'ENGINES lists'] as const)]) {
    if (engines.has(name)) continue;
    try {
      engines.set(name, createEngine(name, options));
    } catch (err) {
      throw new Error(`${source} "${name}", which cannot be configured: ${(err as Error).message}`, { cause: err });
    }
  }
  return { defaultName, names: [...engines.keys()], get: (name) => engines.get(name) };
}

export function createEngine(name: string, options: { simulatedSeconds: number } & Partial<EngineSettings>): PhotogrammetryEngine {
  switch (name) {
    case 'exif':
      return new ExifEngine(options.simulatedSeconds, options.imageLimits);
    case 'colmap': {
      const settings = { binary: options.colmapBinary, workDir: options.workDir ?? path.resolve('data', 'work'), timeLimitSeconds: options.timeLimitSeconds, imageMaxPixels: options.imageLimits?.maxPixels, dense: { enabled: options.colmapDense ?? true, maxImageSize: options.denseMaxImageSize } };
      return lazyEngine('colmap', colmapCapabilities(settings.dense.enabled), async () => new (await import('./colmap/colmap-engine.ts')).ColmapEngine(settings));
    }
    case 'nodeodm': {
      if (!options.nodeodmUrl) throw new Error('The nodeodm engine needs NODEODM_URL (the NodeODM or ClusterODM base URL).');
      const settings = {
        url: options.nodeodmUrl,
        token: options.nodeodmToken,
        workDir: options.workDir ?? path.resolve('data', 'work'),
        timeLimitSeconds: options.timeLimitSeconds,
        pollIntervalMs: (options.nodeodmPollSeconds ?? 5) * 1000,
        extraOptions: parseExtraOptions(options.nodeodmOptions),
      };
      return lazyEngine('nodeodm', NODEODM_CAPABILITIES, async () => new (await import('./nodeodm/nodeodm-engine.ts')).NodeOdmEngine(settings));
    }
    default:
      throw new Error(`Unknown engine "${name}". Available: ${ENGINE_NAMES.join(', ')}.`);
  }
}

/** An engine whose module is imported when it first runs (as load-sharp.ts loads sharp); what it can make is known before. */
function lazyEngine(name: string, capabilities: OutputCapabilities, load: () => Promise<PhotogrammetryEngine>): PhotogrammetryEngine {
  let loading: Promise<PhotogrammetryEngine> | undefined;
  return {
    name,
    capabilities,
    async run(input: EngineInput): Promise<EngineResult> {
      loading ??= load();
      return (await loading).run(input);
    },
  };
}

function parseExtraOptions(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  const parsed: unknown = JSON.parse(text);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('NODEODM_OPTIONS must be a JSON object, e.g. {"pc-quality": "high"}');
  return parsed as Record<string, unknown>;
}
