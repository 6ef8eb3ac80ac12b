// Stage `elevation`: the DSM and the DTM gridded from the dense cloud (rasters/dsm.ts: the median
// of each cell's highest points, spikes removed, gaps filled inside the footprint;
// rasters/ground-filter.ts: a progressive morphological filter), as Cloud-Optimized GeoTIFFs in
// the output system (rasters/cog-writer.ts, GDAL's COG driver). The cell is two ground sampling
// distances of the images the cloud was fused from (at least 5 cm, at most 50 million cells).
// Needs a georeferenced model: in an arbitrary output system (no photo with a GPS position) the
// rasters cannot be placed, and are listed with that reason.
import path from 'node:path';
import { median } from '../../../../shared/median.ts';
import { cameraCentre, intrinsicsOf } from '../colmap-model.ts';
import { demCellSize, groundSampleDistance, robustBounds, surfaceModel } from '../../rasters/dsm.ts';
import { groundModel } from '../../rasters/ground-filter.ts';
import { writeCog } from '../../rasters/cog-writer.ts';
import { gridToOutput } from '../../rasters/output-raster.ts';
import type { Grid } from '../../rasters/grid.ts';
import { putFile, type DenseProducts } from './dense-products.ts';
import type { FusedCloud } from './fusion.ts';
import type { Placement } from './georegistration.ts';
import type { Stage } from './stage.ts';
import type { DenseWorkspace } from './undistortion.ts';

export interface Elevation extends DenseProducts {
  /** The DSM in the local frame, for the orthomosaic; null when none could be made. */
  readonly dsm: Grid | null;
}

export const elevationStage: Stage<{ fused: FusedCloud; placement: Placement; workspace: DenseWorkspace }, Elevation> = {
  name: 'elevation',
  title: 'Gridding the surface and terrain models',
  weight: 4,
  async run(context, { fused, placement, workspace }) {
    const { frame } = placement;
    if (!frame) {
      const reason = 'The output system is arbitrary (no photo carries a GPS position): a DSM or an orthomosaic cannot be placed on the map.';
      return { dsm: null, outputs: [], leftOut: (['dsm', 'dtm', 'ortho_rgb'] as const).map((outputType) => ({ outputType, reason })) };
    }
    const points = { positions: fused.localPositions, count: fused.points };
    const heights: number[] = [];
    for (let i = 2; i < fused.localPositions.length; i += 3 * Math.max(1, Math.floor(fused.points / 20000))) heights.push(fused.localPositions[i]);
    const ground = median(heights);
    const cameras = placement.placed.model.images.map((image) => {
      const camera = placement.placed.model.cameras.get(image.cameraId)!;
      const centre = cameraCentre(image);
      // The dense cloud comes from images scaled to the workspace's size: its pixels are that much coarser.
      const scale = Math.min(1, workspace.depthMapSize / Math.max(camera.width, camera.height));
      return { centre, focalPx: intrinsicsOf(camera).fx * scale };
    });
    const bounds = robustBounds(points);
    const cell = demCellSize(groundSampleDistance(cameras, ground), bounds.maxEast - bounds.minEast, bounds.maxNorth - bounds.minNorth, { unitFactor: frame.unitFactor });
    const dsm = surfaceModel(points, cell, { unitFactor: frame.unitFactor, bounds });
    await context.progress(0.3, `Gridding the terrain model (${dsm.width}x${dsm.height} cells)`);
    const { dtm } = groundModel(dsm, { unitFactor: frame.unitFactor });
    await context.progress(0.6, 'Writing the surface and terrain models');
    const crs = context.input.outputCrs;
    const system = { wkt: crs.wkt, horizontal_epsg: crs.type === 'projected' ? crs.horizontal_epsg : null };
    const outputs = [];
    for (const [grid, outputType, name] of [[dsm, 'dsm', 'dsm.tif'], [dtm, 'dtm', 'dtm.tif']] as const) {
      const file = path.join(context.work, name);
      const { raster, georef } = gridToOutput(grid, frame, system);
      await writeCog(file, raster, georef, { signal: context.signal });
      outputs.push(await putFile(context.input, outputType, file, name, 'image/tiff'));
    }
    context.log(`DSM and DTM: ${dsm.width}x${dsm.height} cells of ${(cell * frame.unitFactor * 100).toFixed(1)} cm`);
    return { dsm, outputs, leftOut: [] };
  },
};
