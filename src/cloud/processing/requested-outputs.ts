// The `outputs` extension of start_processing: which of the optional outputs a client asks for
// (`point_cloud`, `mesh`, `dsm`, `ortho`; the inspection service sends its generate_* processing
// parameters). A key left out means the engine's default. The engine is told (the nodeodm engine
// turns them into ODM options: odm-options.ts); then, whatever the engine, an output asked not to
// be made and not made is listed `not available` as "not requested", and one asked for that the
// engine cannot make keeps the engine's reason, said to be a requested output. An output made
// though not asked for (colmap's sparse point cloud, which coords_3d and the ground reference
// need) is kept. docs/cloud-service.md, "Requested outputs".
import { ValidationError } from '../../infra/http/errors.ts';
import type { EngineResult, OutputType } from './engine.ts';

export const REQUESTABLE_OUTPUTS = ['point_cloud', 'mesh', 'dsm', 'ortho'] as const;
export type RequestableOutput = (typeof REQUESTABLE_OUTPUTS)[number];
export type RequestedOutputs = Partial<Record<RequestableOutput, boolean>>;

/** The output type each requestable output is listed as. */
export const OUTPUT_TYPE_OF: Record<RequestableOutput, OutputType> = { point_cloud: 'point_cloud', mesh: '3d_mesh_obj_zip', dsm: 'dsm', ortho: 'ortho_rgb' };

/** The request's `outputs` (null when not given); a 400 on `outputs` for anything else than booleans under the four keys. */
export function resolveRequestedOutputs(raw: unknown): RequestedOutputs | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const fail = (message: string) => ValidationError.field('outputs', message);
  if (typeof raw !== 'object' || Array.isArray(raw)) throw fail(`Expected an object with boolean keys among ${REQUESTABLE_OUTPUTS.join(', ')}.`);
  const out: RequestedOutputs = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!(REQUESTABLE_OUTPUTS as readonly string[]).includes(key)) throw fail(`Unknown output "${key}"; requestable: ${REQUESTABLE_OUTPUTS.join(', ')}.`);
    if (typeof value !== 'boolean') throw fail(`"${key}" must be true or false.`);
    out[key as RequestableOutput] = value;
  }
  return out;
}

/** The engine's result with the not-available reasons that the request explains. */
export function applyRequestedOutputs(result: EngineResult, requested: RequestedOutputs | null | undefined, engineName: string): EngineResult {
  if (!requested) return result;
  const notAvailable = result.notAvailable.map((entry) => {
    const key = REQUESTABLE_OUTPUTS.find((k) => OUTPUT_TYPE_OF[k] === entry.outputType);
    if (!key || requested[key] === undefined) return entry;
    return requested[key]
      ? { ...entry, reason: `Requested (outputs.${key}), but the ${engineName} engine cannot make it: ${entry.reason}` }
      : { ...entry, reason: `Not requested (outputs.${key}: false).` };
  });
  return { ...result, notAvailable };
}
