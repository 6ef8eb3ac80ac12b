// The outputs this installation cannot make, for the console's `unavailable_options`
// (GET /v1/console/settings/, issue 29 §2): whether a point cloud, mesh, DSM or orthophoto can be
// made depends on the cloud's engine, which the inspection service learns from the cloud's
// GET /project/api/v3/capabilities/ (its public API, through the cloud client), with the reason
// the engine's runs give. An option is unavailable when the engine of every processing_backend
// (PROCESSING_BACKEND_ENGINES, else the cloud's default) cannot make it; clip_point_cloud too when
// no point cloud can be made, and detect_antennas (the detector reads the point cloud). The answer is kept a minute. A cloud that cannot be read (down, slow,
// an older version without the route) leaves the outputs enabled: the processing summary still
// says what was not made and why.
import type { Logger } from 'pino';
import type { CloudCapabilities } from '../cloud-client/cloud-client.ts';
import { OUTPUT_OPTIONS, PROCESSING_BACKENDS } from './output-options.ts';

/** Processing parameter -> why this installation cannot act on it. */
export type UnavailableOptions = Record<string, string>;

/** The generate_* options (and clip_point_cloud) that no engine the backends use can act on, with the engines' reasons. */
export function unavailableOutputOptions(capabilities: CloudCapabilities, backendEngines: Readonly<Record<string, string>>): UnavailableOptions {
  const names = new Set(PROCESSING_BACKENDS.map((backend) => backendEngines[backend] ?? capabilities.engine));
  const engines = [...names].map((name) => capabilities.engines.find((e) => e.engine === name));
  // An engine the cloud does not offer: processing with it is refused at start (its own message).
  if (engines.some((engine) => !engine)) return {};
  const unavailable: UnavailableOptions = {};
  for (const [output, option] of Object.entries(OUTPUT_OPTIONS)) {
    const reasons = engines.map((engine) => engine!.outputs[output]);
    if (reasons.every((c) => c && !c.available)) unavailable[option] = [...new Set(reasons.map((c) => c!.reason ?? 'The engine cannot make it.'))].join(' ');
  }
  if (unavailable.generate_point_cloud) {
    unavailable.clip_point_cloud = `No point cloud to clip: ${unavailable.generate_point_cloud}`;
    unavailable.detect_antennas = `Antennas are found in the point cloud, and none can be made: ${unavailable.generate_point_cloud}`;
  }
  return unavailable;
}

export interface OutputAvailabilityTiming {
  /** How long an answer of the cloud is kept. */
  ttlMs: number;
  /** How long a failed read is kept before the cloud is asked again. */
  failureTtlMs: number;
  /** How long the settings route waits for the cloud before answering without its outputs. */
  waitMs: number;
}

export const DEFAULT_OUTPUT_AVAILABILITY_TIMING: OutputAvailabilityTiming = { ttlMs: 60_000, failureTtlMs: 10_000, waitMs: 2_000 };

export class OutputAvailability {
  private cached: { options: UnavailableOptions; until: number } | undefined;
  private reading: Promise<UnavailableOptions> | undefined;

  constructor(
    private readonly readCapabilities: () => Promise<CloudCapabilities>,
    private readonly backendEngines: Readonly<Record<string, string>>,
    private readonly logger: Logger,
    private readonly timing: OutputAvailabilityTiming = DEFAULT_OUTPUT_AVAILABILITY_TIMING,
  ) {}

  /** The output options the cloud cannot act on; never fails, waits `waitMs` at most (then none, while the read goes on and fills the cache). */
  async unavailableOptions(): Promise<UnavailableOptions> {
    if (this.cached && this.cached.until > Date.now()) return this.cached.options;
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<UnavailableOptions>((resolve) => (timer = setTimeout(() => resolve({}), this.timing.waitMs).unref()));
    try {
      return await Promise.race([this.reading, waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async read(): Promise<UnavailableOptions> {
    try {
      const options = unavailableOutputOptions(await this.readCapabilities(), this.backendEngines);
      this.cached = { options, until: Date.now() + this.timing.ttlMs };
      return options;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'the cloud\'s capabilities could not be read: the console offers every output');
      this.cached = { options: {}, until: Date.now() + this.timing.failureTtlMs };
      return {};
    }
  }
}
