// The inspection's generate_* processing parameters as the cloud's start_processing `outputs`
// extension (docs/cloud-service.md, "Requested outputs"): an option left out of the parameters is
// not asked for (false), as the spec's default body asks for a point cloud only. The cloud's
// engine acts on them (the nodeodm engine's ODM options) and lists what it cannot make, or was not
// asked to make, as `not available` with the reason.
import type { ProcessingParameters } from '../inspection.tables.ts';

export interface RequestedOutputs {
  point_cloud: boolean;
  mesh: boolean;
  dsm: boolean;
  ortho: boolean;
}

export function requestedOutputsOf(parameters: ProcessingParameters): RequestedOutputs {
  return {
    point_cloud: parameters.generate_point_cloud === true,
    mesh: parameters.generate_mesh === true,
    dsm: parameters.generate_dsm === true,
    ortho: parameters.generate_ortho === true,
  };
}
