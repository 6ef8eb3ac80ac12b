// Cloud-Optimized GeoTIFF writing for the colmap engine's DSM, DTM (one Float32 band with a nodata
// value) and orthomosaic (four Uint8 bands, the fourth alpha), and their thumbnails.
//
// Why GDAL (gdal_translate -of COG) rather than a TypeScript writer: the COG layout (tiles, then
// overviews, then the full-resolution data, with the IFDs first), nodata-aware and alpha-aware
// overview resampling, floating-point predictors, and above all the GeoKeys of any output system
// (a compound projected + vertical system is written as GeoTIFF 1.1 keys with both EPSG codes; a
// system without an EPSG code as user-defined keys GDAL derives from the WKT) are what GDAL's COG
// driver does and validates; a writer of our own would have to redo each and would read back only
// by itself. GDAL is already on the processing machine (the COLMAP engine's system tools). The
// pixels reach GDAL as a raw file described by a VRT (VRTRawRasterBand: no copy through another
// library), and gdal_translate runs as a child process (gdal-tools.ts): abortable, off the event loop.
//
// Layout of `raster.data`: band-interleaved by pixel (BIP): value of band b at column c, row r is
// data[(r * width + c) * bands + b], row 0 the northern row; RGBA pixels as the orthomosaic keeps
// them. Float32 NaN is written as `nodata` (default -9999, ODM's and GDAL's DEM convention, which
// any reader understands; NaN as nodata is not).
//
// Coordinates: `originX`/`originY` are GeoTIFF model coordinates of the top-left corner of the
// top-left pixel, easting first. GeoTIFF model space is always (easting, northing) whatever
// axis order the EPSG definition declares (GDAL writes and reads GeoTIFF in the "traditional GIS
// order": for a northing-first system such as EPSG:2193 `gdalinfo` reports "Data axis to CRS axis
// mapping: 2,1" and the geotransform's x is still the easting), so output-raster.ts swaps the
// colmap frame's offset back to easting first.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGdal, type GdalRun } from './gdal-tools.ts';

export interface RasterData {
  width: number;
  height: number;
  bands: number;
  /** Band-interleaved by pixel, row 0 northern (see the head comment). */
  data: Float32Array | Uint8Array;
  /** The value that means "no data" (Float32 NaN is written as this). */
  nodata?: number;
}

export interface RasterGeoreference {
  /** Model x (easting) of the top-left corner of the top-left pixel, output system units. */
  originX: number;
  /** Model y (northing) of the top-left corner. */
  originY: number;
  /** Side of a square pixel, output system units. */
  cellSize: number;
  /** WKT of the output system (the compound one, with its vertical component). */
  wkt: string;
  /** EPSG code of the horizontal system, or null when it has none. */
  epsg: number | null;
}

export interface CogOptions extends GdalRun {
  /**
   * Tile side in pixels (default 256, GDAL's smallest useful and the web map's tile). Overviews
   * (OVERVIEWS=AUTO) are halvings made until one tile holds the image, so a raster larger than a
   * tile always has some: at 512 a DSM of 500 x 400 cells (brighton's) had none, and a map reading
   * it at a low zoom had to read every pixel.
   */
  blockSize?: number;
  compression?: 'DEFLATE' | 'LZW';
  /** Overview resampling; default AVERAGE (nodata- and alpha-aware: no smearing of nodata into heights). */
  resampling?: 'AVERAGE' | 'BILINEAR' | 'NEAREST' | 'CUBIC';
}

/** Writes `raster` as a COG at `file` (replaced atomically: written beside it, then renamed). */
export async function writeCog(file: string, raster: RasterData, georef: RasterGeoreference, options: CogOptions = {}): Promise<void> {
  const { width, height, bands, data } = raster;
  if (!(width > 0 && height > 0 && bands > 0) || data.length !== width * height * bands) throw new RangeError(`raster of ${width}x${height}x${bands} with ${data.length} values`);
  if (!(georef.cellSize > 0)) throw new RangeError('cell size must be positive');
  const float = data instanceof Float32Array;
  // The raw pixels, the VRT, GDAL's temporary overview file and the COG itself are made in a
  // working folder beside the target (one file system: the final rename is atomic), removed after.
  const work = await fs.mkdtemp(path.join(path.dirname(file), '.cog-'));
  const partial = path.join(work, 'cog.tif');
  try {
    const rawFile = path.join(work, 'pixels.raw');
    await writeRaw(rawFile, data, float ? raster.nodata : undefined);
    const vrtFile = path.join(work, 'pixels.vrt');
    await fs.writeFile(vrtFile, vrtXml(raster, georef, rawFile));
    const args = [
      '-q',
      '-of', 'COG',
      '-co', `BLOCKSIZE=${options.blockSize ?? 256}`,
      '-co', `COMPRESS=${options.compression ?? 'DEFLATE'}`,
      '-co', 'PREDICTOR=YES', // 2 (horizontal) for bytes, 3 (floating point) for Float32
      '-co', `OVERVIEW_RESAMPLING=${options.resampling ?? 'AVERAGE'}`,
      '-co', 'OVERVIEWS=AUTO',
      '-co', 'BIGTIFF=IF_SAFER',
      vrtFile,
      partial,
    ];
    await runGdal('gdal_translate', args, options);
    await fs.rename(partial, file);
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

export interface ThumbnailOptions extends GdalRun {
  /** Longest side in pixels (default 512); a smaller raster is not enlarged. */
  maxSize?: number;
  format?: 'png' | 'jpeg';
}

/**
 * A PNG or JPEG preview of a GeoTIFF (the orthomosaic's `ortho_thumb`), read from its overviews:
 * Uint8 bands as they are (RGBA keeps its alpha in PNG; JPEG takes bands 1-3), other types
 * stretched from their minimum to their maximum.
 */
export async function thumbnail(source: string, target: string, options: ThumbnailOptions = {}): Promise<{ width: number; height: number }> {
  const info = JSON.parse(await runGdal('gdalinfo', ['-json', source], options)) as { size: [number, number]; bands: { type: string }[] };
  const [width, height] = info.size;
  const maxSize = options.maxSize ?? 512;
  const scale = Math.min(1, maxSize / Math.max(width, height));
  const outWidth = Math.max(1, Math.round(width * scale));
  const outHeight = Math.max(1, Math.round(height * scale));
  const format = options.format ?? 'png';
  const args = ['-q', '-of', format === 'png' ? 'PNG' : 'JPEG', '-outsize', String(outWidth), String(outHeight), '-r', 'average'];
  if (info.bands.some((b) => b.type !== 'Byte')) args.push('-ot', 'Byte', '-scale');
  if (format === 'jpeg') {
    for (let b = 1; b <= Math.min(3, info.bands.length); b++) args.push('-b', String(b));
    args.push('-co', 'QUALITY=85');
  }
  const partial = `${target}.partial`;
  try {
    await runGdal('gdal_translate', [...args, source, partial], options);
    await fs.rename(partial, target);
  } finally {
    await fs.rm(partial, { force: true });
  }
  return { width: outWidth, height: outHeight };
}

/** The SRS given to GDAL: the WKT (keeps the vertical component) when it names the EPSG code, else the code itself. */
export function srsForGdal(georef: Pick<RasterGeoreference, 'wkt' | 'epsg'>): string {
  if (georef.epsg === null) return georef.wkt;
  const named = new RegExp(`(AUTHORITY\\["EPSG",\\s*"${georef.epsg}"\\])|(ID\\["EPSG",\\s*${georef.epsg}\\])`);
  return named.test(georef.wkt) ? georef.wkt : `EPSG:${georef.epsg}`;
}

function vrtXml(raster: RasterData, georef: RasterGeoreference, rawFile: string): string {
  const { width, height, bands } = raster;
  const float = raster.data instanceof Float32Array;
  const size = float ? 4 : 1;
  const interp = bands >= 3 && !float ? ['Red', 'Green', 'Blue', 'Alpha'] : [];
  const nodata = interp[bands - 1] === 'Alpha' ? undefined : raster.nodata; // with alpha, alpha says what is empty
  const bandXml = Array.from({ length: bands }, (_, b) =>
    [
      `  <VRTRasterBand dataType="${float ? 'Float32' : 'Byte'}" band="${b + 1}" subClass="VRTRawRasterBand">`,
      interp[b] ? `    <ColorInterp>${interp[b]}</ColorInterp>` : '',
      nodata !== undefined ? `    <NoDataValue>${nodata}</NoDataValue>` : '',
      `    <SourceFilename relativeToVRT="0">${escapeXml(rawFile)}</SourceFilename>`,
      `    <ImageOffset>${b * size}</ImageOffset>`,
      `    <PixelOffset>${bands * size}</PixelOffset>`,
      `    <LineOffset>${width * bands * size}</LineOffset>`,
      `    <ByteOrder>${os.endianness() === 'LE' ? 'LSB' : 'MSB'}</ByteOrder>`,
      '  </VRTRasterBand>',
    ]
      .filter(Boolean)
      .join('\n'),
  );
  const transform = [georef.originX, georef.cellSize, 0, georef.originY, 0, -georef.cellSize].map((v) => v.toPrecision(17)).join(', ');
  return [
    `<VRTDataset rasterXSize="${width}" rasterYSize="${height}">`,
    `  <SRS>${escapeXml(srsForGdal(georef))}</SRS>`,
    `  <GeoTransform>${transform}</GeoTransform>`,
    ...bandXml,
    '</VRTDataset>',
    '',
  ].join('\n');
}

/** Writes the pixels as they lie in memory, NaN replaced by `nodata`, in slices (no second full copy). */
async function writeRaw(file: string, data: Float32Array | Uint8Array, nodata: number | undefined): Promise<void> {
  const handle = await fs.open(file, 'w');
  try {
    const slice = 1 << 20;
    for (let start = 0; start < data.length; start += slice) {
      const end = Math.min(data.length, start + slice);
      let part: Float32Array | Uint8Array = data.subarray(start, end);
      if (part instanceof Float32Array && nodata !== undefined) {
        const copy = new Float32Array(part);
        for (let i = 0; i < copy.length; i++) if (Number.isNaN(copy[i])) copy[i] = nodata;
        part = copy;
      }
      await handle.write(new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
    }
  } finally {
    await handle.close();
  }
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
