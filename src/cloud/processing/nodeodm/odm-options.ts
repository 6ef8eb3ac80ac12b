// The ODM options of a project: its pipeline and tags mapped to ODM's settings.
//
// | Pipeline / tag | ODM options                                                                    |
// |----------------|--------------------------------------------------------------------------------|
// | every run      | `dsm: true` (the `dsm` output), `auto-boundary: true`                          |
// | nadir          | ODM's defaults (made for nadir mapping flights)                                |
// | nadir + flat   | `fast-orthophoto: true`: the orthophoto from the sparse reconstruction, as ODM |
// |                | recommends for flat terrain (no dense cloud, no textured mesh)                 |
// | oblique        | `pc-quality: high`, `mesh-size: 300000`, `use-3dmesh: true`                    |
// | building       | oblique's, plus `feature-quality: ultra`, `min-num-features: 16000` and        |
// |                | `mesh-octree-depth: 12` (more features on featureless facades)                 |
// | mobile         | `pc-quality: high`, `skip-orthophoto: true` (a hand-held capture of an object) |
// Then start_processing's `outputs` (requested-outputs.ts), when given, over the pipeline's:
// | `mesh: false`  | `skip-3dmodel: true`   | `mesh: true`  | (ODM's default: the 3D model is made) |
// | `dsm: false`   | no `dsm`               | `dsm: true`   | `dsm: true`                           |
// | `ortho: false` | `skip-orthophoto: true`| `ortho: true` | no `skip-orthophoto` (even `mobile`)  |
// (`point_cloud`: ODM always makes one, every other output is built from it.)
// Then NODEODM_OPTIONS (a JSON object) overrides any of them. Options the node does not list in
// its `/options` are left out (and named in the processing log), so an older ODM still runs.
import type { Pipeline } from '../pipelines.ts';
import type { RequestedOutputs } from '../requested-outputs.ts';
import { allAvailable } from '../engine-capabilities.ts';

/** ODM makes all four outputs (engine-capabilities.ts); a run whose options skip one lists it with the reason. */
export const NODEODM_CAPABILITIES = allAvailable();

export function odmOptionsFor(pipeline: Pipeline, tags: readonly string[], extra: Record<string, unknown> = {}, requested: RequestedOutputs | null = null): Record<string, unknown> {
  const options: Record<string, unknown> = { dsm: true, 'auto-boundary': true };
  switch (pipeline) {
    case 'nadir':
      if (tags.includes('flat')) options['fast-orthophoto'] = true;
      break;
    case 'oblique':
      Object.assign(options, { 'pc-quality': 'high', 'mesh-size': 300000, 'use-3dmesh': true });
      break;
    case 'building':
      Object.assign(options, { 'pc-quality': 'high', 'mesh-size': 300000, 'use-3dmesh': true, 'feature-quality': 'ultra', 'min-num-features': 16000, 'mesh-octree-depth': 12 });
      break;
    case 'mobile':
      Object.assign(options, { 'pc-quality': 'high', 'skip-orthophoto': true });
      break;
  }
  if (requested?.mesh === false) options['skip-3dmodel'] = true;
  if (requested?.mesh === true) delete options['skip-3dmodel'];
  if (requested?.dsm === false) delete options.dsm;
  if (requested?.dsm === true) options.dsm = true;
  if (requested?.ortho === false) options['skip-orthophoto'] = true;
  if (requested?.ortho === true) delete options['skip-orthophoto'];
  return { ...options, ...extra };
}

/** The options the node accepts, as NodeODM's `[{name, value}]`, and the names it does not know. */
export function acceptedOptions(options: Record<string, unknown>, known: ReadonlySet<string>): { accepted: { name: string; value: unknown }[]; dropped: string[] } {
  const accepted: { name: string; value: unknown }[] = [];
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(options)) {
    if (known.size === 0 || known.has(name)) accepted.push({ name, value });
    else dropped.push(name);
  }
  return { accepted, dropped };
}
