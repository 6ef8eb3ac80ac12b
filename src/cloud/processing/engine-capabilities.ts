// What this installation's engines can make of the four requestable outputs (point cloud, mesh,
// DSM, orthophoto), known without running them: GET /project/api/v3/capabilities/ (an extension,
// docs/cloud-service.md "Capabilities"). Each engine states its own (PhotogrammetryEngine
// `capabilities`), with the very reason its runs give when they list an output `not available`,
// so that a client (the inspection service's console) can disable what cannot be made and say why
// before anyone uploads photos. An output stated available may still be missing from a run (an
// orthophoto of photos that look at the horizon); the run's outputs say so, with the reason.
import { REQUESTABLE_OUTPUTS, OUTPUT_TYPE_OF } from './requested-outputs.ts';
import type { EngineResult, OutputCapabilities, OutputCapability } from './engine.ts';
import type { EngineSet } from './engines.ts';

/** Every output made, with what some of them still depend on. */
export function allAvailable(notes: Partial<Record<keyof OutputCapabilities, string>> = {}): OutputCapabilities {
  return Object.fromEntries(REQUESTABLE_OUTPUTS.map((key) => [key, { available: true, note: notes[key] ?? null }])) as Record<keyof OutputCapabilities, OutputCapability>;
}

/** No output made, for one reason. */
export function noneAvailable(reason: string): OutputCapabilities {
  return Object.fromEntries(REQUESTABLE_OUTPUTS.map((key) => [key, { available: false, reason }])) as Record<keyof OutputCapabilities, OutputCapability>;
}

/** The `notAvailable` entries of a run for the outputs the engine cannot make at all. */
export function unmakeableOutputs(capabilities: OutputCapabilities): EngineResult['notAvailable'] {
  return REQUESTABLE_OUTPUTS.flatMap((key) => {
    const capability = capabilities[key];
    return capability.available ? [] : [{ outputType: OUTPUT_TYPE_OF[key], reason: capability.reason }];
  });
}

/** One output as the route answers it: reason null when made, note null when nothing more to say. */
export interface OutputCapabilityRecord {
  available: boolean;
  reason: string | null;
  note: string | null;
}

export interface EngineCapabilitiesRecord {
  engine: string;
  outputs: Record<keyof OutputCapabilities, OutputCapabilityRecord>;
}

/** The route's answer: the default engine's, and every offered engine's (the default first). */
export interface CapabilitiesRecord extends EngineCapabilitiesRecord {
  engines: EngineCapabilitiesRecord[];
}

export function capabilitiesRecord(engines: EngineSet): CapabilitiesRecord {
  const offered = engines.names.map((name) => engineRecord(name, engines.get(name)!.capabilities));
  return { ...offered[0], engines: offered };
}

function engineRecord(engine: string, capabilities: OutputCapabilities): EngineCapabilitiesRecord {
  const outputs = Object.fromEntries(
    REQUESTABLE_OUTPUTS.map((key) => {
      const c = capabilities[key];
      return [key, c.available ? { available: true, reason: null, note: c.note } : { available: false, reason: c.reason, note: null }];
    }),
  ) as EngineCapabilitiesRecord['outputs'];
  return { engine, outputs };
}
