// An orthophoto of known colours for the orthomosaic tests (inspection-ortho-tiles, web-ortho-map):
// quadrants red (north-west), green (north-east), blue (south-west) and yellow (south-east) with a
// transparent block at the south-east corner, over FAKE_RASTER_EXTENT (UTM 15N, 0.25 m pixels),
// written by gdal_translate as an RGBA Cloud-Optimized GeoTIFF (256-pixel blocks, deflate, nearest
// overviews) as the engines write theirs. The fake NodeODM node serves it as its orthophoto.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import sharp from 'sharp';
import { FAKE_RASTER_EXTENT } from './fake-nodeodm.ts';

export const GDAL_TRANSLATE = '/usr/bin/gdal_translate';
const R = FAKE_RASTER_EXTENT;
export const ORTHO_WIDTH = R.width / R.orthoPixel; // 640
export const ORTHO_HEIGHT = R.height / R.orthoPixel; // 800
/** The side of the transparent block at the south-east corner, raster pixels. */
export const ORTHO_HOLE = 80;
export const RED = [255, 0, 0, 255];
export const GREEN = [0, 255, 0, 255];
export const BLUE = [0, 0, 255, 255];
export const YELLOW = [255, 255, 0, 255];
export const CLEAR = [0, 0, 0, 0];

/** The orthophoto's colour at a raster pixel (column, row); CLEAR outside it and in the hole. */
export function orthoColourAt(col: number, row: number): number[] {
  if (col < 0 || row < 0 || col >= ORTHO_WIDTH || row >= ORTHO_HEIGHT) return CLEAR;
  if (col >= ORTHO_WIDTH - ORTHO_HOLE && row >= ORTHO_HEIGHT - ORTHO_HOLE) return CLEAR;
  const north = row < ORTHO_HEIGHT / 2;
  const west = col < ORTHO_WIDTH / 2;
  return north ? (west ? RED : GREEN) : west ? BLUE : YELLOW;
}

/** Writes the COG into `work` (quadrants.tif) and returns its bytes. */
export async function quadrantCog(work: string): Promise<Buffer> {
  const pixels = Buffer.alloc(ORTHO_WIDTH * ORTHO_HEIGHT * 4);
  for (let row = 0; row < ORTHO_HEIGHT; row++) for (let col = 0; col < ORTHO_WIDTH; col++) pixels.set(orthoColourAt(col, row), (row * ORTHO_WIDTH + col) * 4);
  const png = path.join(work, 'quadrants.png');
  const cog = path.join(work, 'quadrants.tif');
  await sharp(pixels, { raw: { width: ORTHO_WIDTH, height: ORTHO_HEIGHT, channels: 4 } }).png().toFile(png);
  execFileSync(GDAL_TRANSLATE, ['-q', '-of', 'COG', '-a_srs', `EPSG:${R.epsg}`, '-a_ullr', String(R.west), String(R.north), String(R.east), String(R.south), '-co', 'BLOCKSIZE=256', '-co', 'COMPRESS=DEFLATE', '-co', 'RESAMPLING=NEAREST', png, cog]);
  return fs.readFileSync(cog);
}
