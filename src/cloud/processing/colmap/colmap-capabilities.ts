// What the colmap engine can make (engine-capabilities.ts): with its dense stages (COLMAP_DENSE, on
// by default) all four outputs, the DSM and the orthomosaic only for some photos; without them only
// the sparse reconstruction's point cloud, the others for the reason its runs give (dense-plan.ts).
// Its own module, so that the route answers without loading the engine (engines.ts lazyEngine).
import { MAX_MEDIAN_TILT_DEGREES } from '../rasters/orthomosaic-feasibility.ts';
import { allAvailable } from '../engine-capabilities.ts';
import type { OutputCapabilities } from '../engine.ts';
import { DENSE_SWITCHED_OFF } from './stages/dense-plan.ts';

const PLACED = 'photos with GPS positions (without them the output system is arbitrary)';

export function colmapCapabilities(dense: boolean): OutputCapabilities {
  if (!dense) {
    const off = { available: false, reason: DENSE_SWITCHED_OFF } as const;
    return { point_cloud: { available: true, note: 'The sparse reconstruction\'s points (COLMAP_DENSE=off).' }, mesh: off, dsm: off, ortho: off };
  }
  return allAvailable({
    dsm: `Only for ${PLACED}.`,
    ortho: `Only for photos that look down (median tilt at most ${MAX_MEDIAN_TILT_DEGREES}° from nadir) and ${PLACED}.`,
  });
}
