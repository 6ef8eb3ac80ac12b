// The inspection's generate_* processing parameters as the cloud's start_processing `outputs`
// extension (docs/cloud-service.md, "Requested outputs"): an option left out of the parameters is
// not asked for (false), as the spec's default body asks for a point cloud only. The cloud's
// engine acts on them (the nodeodm engine's ODM options) and lists what it cannot make, or was not
// asked to make, as `not available` with the reason. `detect_antennas` asks for the point cloud too:
// the antenna detection reads the dense cloud (inventory/antenna-detection.ts).
import type { ProcessingParameters } from '../inspection.tables.ts';

/** The spec's processing_backend values (the inspection schema, PROCESSING_BACKEND_ENGINES and the console's capabilities read them). */
export const PROCESSING_BACKENDS = ['mapper', 'vortex'] as const;

export interface RequestedOutputs {
  point_cloud: boolean;
  mesh: boolean;
  dsm: boolean;
  ortho: boolean;
}

/** The processing parameter asking for each output. */
export const OUTPUT_OPTIONS = {
  point_cloud: 'generate_point_cloud',
  mesh: 'generate_mesh',
  dsm: 'generate_dsm',
  ortho: 'generate_ortho',
} as const satisfies Record<keyof RequestedOutputs, keyof ProcessingParameters>;

export function requestedOutputsOf(parameters: ProcessingParameters): RequestedOutputs {
  return {
    point_cloud: parameters[OUTPUT_OPTIONS.point_cloud] === true || parameters.detect_antennas === true,
    mesh: parameters[OUTPUT_OPTIONS.mesh] === true,
    dsm: parameters[OUTPUT_OPTIONS.dsm] === true,
    ortho: parameters[OUTPUT_OPTIONS.ortho] === true,
  };
}
