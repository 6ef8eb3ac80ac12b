// Stage `orthophoto`: a true orthomosaic at about the photos' ground sampling distance
// (rasters/orthomosaic-grid.ts: the DSM's cells cut k x k, heights bilinear from the DSM;
// rasters/orthomosaic.ts: each cell coloured from the most nadir camera that sees it, occlusion by
// the depth maps, seams feathered),
// delivered as `ortho_rgb` (RGBA COG with overviews) and `ortho_thumb` (PNG). Photos that do not
// look down (street-level photos) make no orthophoto: listed with that reason
// (rasters/orthomosaic-feasibility.ts), as is an orthomosaic that no camera colours.
import path from 'node:path';
import { orthomosaic } from '../../rasters/orthomosaic.ts';
import { orthoFeasibility } from '../../rasters/orthomosaic-feasibility.ts';
import { orthoResolution } from '../../rasters/orthomosaic-grid.ts';
import { orthoCamerasFromWorkspace } from '../../rasters/orthomosaic-workspace.ts';
import { writeOrthomosaic } from '../../rasters/orthomosaic-output.ts';
import type { Grid } from '../../rasters/grid.ts';
import { putFile, type DenseProducts } from './dense-products.ts';
import type { Placement } from './georegistration.ts';
import type { Stage } from './stage.ts';
import type { DenseWorkspace } from './undistortion.ts';

export const orthophotoStage: Stage<{ dsm: Grid; placement: Placement; workspace: DenseWorkspace }, DenseProducts> = {
  name: 'orthophoto',
  title: 'Making the orthomosaic',
  weight: 4,
  async run(context, { dsm, placement, workspace }) {
    const notMade = (reason: string): DenseProducts => ({ outputs: [], leftOut: [{ outputType: 'ortho_rgb', reason }] });
    const cameras = await orthoCamerasFromWorkspace(workspace.folder);
    const feasible = orthoFeasibility(cameras, dsm);
    if (!feasible.ok) return notMade(`No orthomosaic for these photos: ${feasible.reason}.`);
    const { subdivision, gsd } = orthoResolution(dsm, cameras);
    const frame = placement.frame!;
    const cm = (units: number) => `${(units * frame.unitFactor * 100).toFixed(1)} cm`;
    context.log(`orthomosaic grid: ${subdivision}x${subdivision} cells per DSM cell of ${cm(dsm.cellSize)}: ${cm(dsm.cellSize / subdivision)} (photos' GSD ${gsd === null ? 'unknown' : cm(gsd)})`);
    const started = performance.now();
    let reported = Promise.resolve();
    const ortho = await orthomosaic(dsm, cameras, {
      subdivision,
      signal: context.signal,
      onProgress: (done, total) => {
        reported = reported.then(() => context.progress((0.8 * done) / total, `Making the orthomosaic (${Math.round((100 * done) / total)} % of the rows)`)).catch(() => undefined);
      },
    });
    await reported;
    if (ortho.coverage === 0) return notMade('No orthomosaic: no photo sees the surface model without occlusion.');
    const files = { cog: path.join(context.work, 'orthomosaic.tif'), thumbnail: path.join(context.work, 'ortho_thumb.png') };
    const crs = context.input.outputCrs;
    await writeOrthomosaic(ortho, frame, { wkt: crs.wkt, horizontal_epsg: crs.type === 'projected' ? crs.horizontal_epsg : null }, files, { signal: context.signal });
    const peakMb = Math.round(process.resourceUsage().maxRSS / 1024);
    context.log(`orthomosaic: ${ortho.width}x${ortho.height} in ${((performance.now() - started) / 1000).toFixed(1)} s (process peak RSS ${peakMb} MB), ${(100 * ortho.coverage).toFixed(1)} % of the cells coloured; cells per camera: ${ortho.cellsByCamera.map((c) => `${c.name} ${c.cells}`).join(', ')}`);
    const outputs = [await putFile(context.input, 'ortho_rgb', files.cog, 'orthomosaic.tif', 'image/tiff'), await putFile(context.input, 'ortho_thumb', files.thumbnail, 'ortho_thumb.png', 'image/png')];
    return { outputs, leftOut: [] };
  },
};
