// The orthomosaic as the project's outputs: `ortho_rgb`, an RGBA Cloud-Optimized GeoTIFF laid on
// its own grid (the DSM's extent, the DSM's cells cut by the subdivision: orthomosaic-grid.ts;
// the alpha band marks cells without a colour; overviews averaged alpha-aware by GDAL,
// cog-writer.ts), and `ortho_thumb`, a PNG of at most 512 pixels read from the COG's overviews
// (transparent where the orthomosaic is). The map layer's bounds and zooms are then
// read from the COG's own header as for any engine's raster (map-layers.ts).
import { thumbnail, writeCog, type CogOptions } from './cog-writer.ts';
import { gridGeoreference, type FrameOffset, type OutputSystem } from './output-raster.ts';
import type { Orthomosaic } from './orthomosaic.ts';

export async function writeOrthomosaic(
  ortho: Orthomosaic,
  frame: FrameOffset,
  crs: OutputSystem,
  files: { cog: string; thumbnail: string },
  options: CogOptions = {},
): Promise<{ thumbnail: { width: number; height: number } }> {
  await writeCog(files.cog, { width: ortho.width, height: ortho.height, bands: 4, data: ortho.data }, gridGeoreference(ortho.grid, frame, crs), options);
  return { thumbnail: await thumbnail(files.cog, files.thumbnail, { signal: options.signal, binDir: options.binDir, maxSize: 512, format: 'png' }) };
}
