// A Cloud-Optimized GeoTIFF in the object store, opened for windowed reads: the geotiff package
// parses the header and decodes blocks, over a source of our own that reads byte ranges of the
// object (ObjectStore.getObject with a range), so a tile costs the blocks it touches, never the
// whole file. The file's first 64 KiB (a COG's header and IFDs: GDAL writes them first) are read
// once at opening and serve the header's small reads.
// What the file claims is checked before anything is decoded, because the file comes from a
// processing node the service does not control: 8-bit unsigned samples only (kind `rgb8`, the
// orthomosaic) or one 32-bit float band (kind `elevation`, the DSM and DTM: elevation-raster.ts), at most MAX_LEVELS
// images (full resolution and overviews; masks skipped), a block of at most MAX_BLOCK_BYTES decoded,
// no single read beyond MAX_READ_BYTES. A file that breaks a rule or that geotiff cannot parse is a
// RasterRefused (422 with the reason, ortho.service.ts), never a crash.
// geotiff is loaded on the first tile, not at start-up (an idle server holds none of it: issue 14).
import type { GeoTIFF, GeoTIFFImage } from 'geotiff';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { epsgByCode } from '../../cloud/coordinate-systems/epsg.ts';

const HEADER_BYTES = 64 * 1024;
const MAX_LEVELS = 16;
/** One decoded block (tile or strip), bytes: 4096 x 1024 RGBA. */
export const MAX_BLOCK_BYTES = 16 * 1024 * 1024;
const MAX_READ_BYTES = 32 * 1024 * 1024;
/** GeoTIFF NewSubfileType bit of a transparency mask (its IFDs follow the images they mask). */
const MASK_SUBFILE = 4;

export class RasterRefused extends Error {
  constructor(
    readonly code: 'raster_unreadable' | 'raster_unsupported' | 'raster_too_large',
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'RasterRefused';
  }
}

/** One image of the file: the full resolution or an overview. */
export interface CogLevel {
  image: GeoTIFFImage;
  width: number;
  height: number;
  /** Full-resolution pixels per pixel of this level, across and down. */
  scaleX: number;
  scaleY: number;
  blockWidth: number;
  blockHeight: number;
}

export interface StoredCog {
  /** Full resolution first, then coarser and coarser overviews. */
  levels: CogLevel[];
  /** proj4 definition of the raster's system; null: geographic (model x, y are longitude, latitude). */
  proj4: string | null;
  /** Full-resolution pixel position (column, row, edges at integers) of model coordinates. */
  toPixel(x: number, y: number): [number, number];
  /** Model coordinates of a full-resolution pixel position (column, row, edges at integers). */
  toModel(column: number, row: number): [number, number];
  /** Full-resolution pixel size, model units, across and down (both positive). */
  pixelSize: [number, number];
  /** EPSG code of the raster's (horizontal) system, from its GeoKeys. */
  epsg: number;
  /** A pixel value meaning "no data" in all bands (GDAL_NODATA), when the file has no alpha. */
  noData: number | null;
}

/** What the samples must be: `rgb8` 1 to 4 bands of 8-bit unsigned (an orthomosaic), `elevation` one band of 32-bit float (a DSM or DTM). */
export type CogKind = 'rgb8' | 'elevation';

/** Opens the file (header reads only) and checks what it claims. */
export async function openStoredCog(store: ObjectStore, bucket: string, key: string, kind: CogKind = 'rgb8'): Promise<StoredCog> {
  const head = await store.headObject(bucket, key);
  if (!head) throw new StorageError('NoSuchKey', `${key} not found`);
  const source = new StoreSource(store, bucket, key, head.size);
  await source.readHeader();
  const { GeoTIFF } = await import('geotiff');
  try {
    return await parse(await GeoTIFF.fromSource(source as never), kind);
  } catch (err) {
    throw refusal(err, 'the TIFF cannot be read');
  }
}

async function parse(tiff: GeoTIFF, kind: CogKind): Promise<StoredCog> {
  const images: GeoTIFFImage[] = [];
  for (let i = 0; i < MAX_LEVELS + 8 && images.length < MAX_LEVELS; i++) {
    let image: GeoTIFFImage;
    try {
      image = await tiff.getImage(i);
    } catch (err) {
      if ((err as Error)?.constructor?.name === 'GeoTIFFImageIndexError') break;
      throw err;
    }
    const subfile = Number(image.getFileDirectory().getValue('NewSubfileType') ?? 0);
    if (i > 0 && subfile & MASK_SUBFILE) continue;
    images.push(image);
  }
  const full = images[0];
  const georef = georeferenceOf(full);
  const levels = images.map((image) => levelOf(image, full));
  // Overviews: same bands as the full resolution, coarser and coarser; anything else is left out.
  const usable = levels.filter((l, i) => i === 0 || (l.image.getSamplesPerPixel() === full.getSamplesPerPixel() && l.scaleX > levels[i - 1].scaleX));
  for (const level of usable) checkLevel(level, kind);
  const noData = full.getGDALNoData();
  return { levels: usable, ...georef, noData: Number.isFinite(noData) ? noData : null };
}

function levelOf(image: GeoTIFFImage, full: GeoTIFFImage): CogLevel {
  const width = image.getWidth();
  const height = image.getHeight();
  if (!(width > 0 && height > 0)) throw new RasterRefused('raster_unreadable', 'an image of the TIFF has no pixels');
  return { image, width, height, scaleX: full.getWidth() / width, scaleY: full.getHeight() / height, blockWidth: image.getTileWidth(), blockHeight: image.getTileHeight() };
}

/** 8-bit unsigned samples (rgb8) or one 32-bit float band (elevation), blocks of a bounded size. */
function checkLevel(level: CogLevel, kind: CogKind): void {
  const { image } = level;
  const samples = image.getSamplesPerPixel();
  if (kind === 'elevation') {
    // SampleFormat 3: IEEE floating point.
    if (samples !== 1 || image.getBitsPerSample(0) !== 32 || image.getSampleFormat(0) !== 3) throw new RasterRefused('raster_unsupported', 'an elevation raster is one band of 32-bit floats (this one is not)');
  } else {
    if (!(samples >= 1 && samples <= 4)) throw new RasterRefused('raster_unsupported', `${samples} samples per pixel (an orthomosaic has 3 or 4: RGB or RGBA)`);
    for (let s = 0; s < samples; s++) {
      if (image.getBitsPerSample(s) !== 8 || image.getSampleFormat(s) !== 1) throw new RasterRefused('raster_unsupported', 'only 8-bit unsigned samples are tiled (the orthomosaic is not an 8-bit RGB(A) image)');
    }
  }
  const blockBytes = level.blockWidth * level.blockHeight * samples * (kind === 'elevation' ? 4 : 1);
  if (!(blockBytes > 0) || blockBytes > MAX_BLOCK_BYTES) {
    throw new RasterRefused('raster_too_large', `blocks of ${level.blockWidth} x ${level.blockHeight} pixels (at most ${MAX_BLOCK_BYTES / 4 / 1024 / 1024} Mpx per tile or strip; a Cloud-Optimized GeoTIFF has 256 or 512 pixel tiles)`);
  }
}

function georeferenceOf(full: GeoTIFFImage): Pick<StoredCog, 'proj4' | 'toPixel' | 'toModel' | 'pixelSize' | 'epsg'> {
  let origin: number[];
  let resolution: number[];
  try {
    origin = full.getOrigin();
    resolution = full.getResolution();
  } catch (err) {
    throw refusal(err, 'the TIFF is not georeferenced');
  }
  const [rx, ry] = resolution;
  let [ox, oy] = origin;
  if (![ox, oy, rx, ry].every(Number.isFinite) || rx === 0 || ry === 0) throw new RasterRefused('raster_unreadable', 'the TIFF\'s georeferencing is not usable');
  // PixelIsPoint: the tiepoint names the centre of the first pixel (GDAL's reading).
  if (!full.pixelIsArea()) {
    ox -= rx / 2;
    oy -= ry / 2;
  }
  const keys = full.getGeoKeys() ?? {};
  const code = Number(keys.ProjectedCSTypeGeoKey ?? keys.GeographicTypeGeoKey);
  const entry = Number.isInteger(code) ? epsgByCode(code) : undefined;
  if (!entry) throw new RasterRefused('raster_unsupported', 'the TIFF\'s coordinate system is not an EPSG system');
  const geographic = entry.kind === 'CRS-GEOGCRS' || entry.kind === 'CRS-GEOG3DCRS';
  if (!geographic && !entry.proj4) throw new RasterRefused('raster_unsupported', `EPSG:${code} has no PROJ definition`);
  return {
    proj4: geographic ? null : entry.proj4,
    toPixel: (x, y) => [(x - ox) / rx, (y - oy) / ry],
    toModel: (column, row) => [ox + column * rx, oy + row * ry],
    pixelSize: [Math.abs(rx), Math.abs(ry)],
    epsg: code,
  };
}

function refusal(err: unknown, what: string): unknown {
  if (err instanceof RasterRefused || err instanceof StorageError) return err;
  return new RasterRefused('raster_unreadable', `${what}: ${(err as Error)?.message ?? String(err)}`);
}

/** The geotiff package's source interface (BaseSource: fetch(slices), fileSize) over ranged reads of the object. */
class StoreSource {
  private header: Buffer = Buffer.alloc(0);

  constructor(
    private readonly store: ObjectStore,
    private readonly bucket: string,
    private readonly key: string,
    private readonly size: number,
  ) {}

  get fileSize(): number {
    return this.size;
  }

  async readHeader(): Promise<void> {
    this.header = await this.read(0, Math.min(HEADER_BYTES, this.size));
  }

  fetch(slices: { offset: number; length: number }[]): Promise<ArrayBuffer[]> {
    return Promise.all(
      slices.map(async ({ offset, length }) => {
        const start = Math.max(0, offset);
        const end = Math.min(this.size, offset + length);
        if (!(end > start)) return new ArrayBuffer(0);
        if (end - start > MAX_READ_BYTES) throw new RasterRefused('raster_too_large', `a read of ${end - start} bytes (a block or a table larger than ${MAX_READ_BYTES / 1024 / 1024} MiB)`);
        const bytes = end <= this.header.length ? this.header.subarray(start, end) : await this.read(start, end);
        return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
      }),
    );
  }

  async close(): Promise<void> {}

  /** Bytes [start, end) of the object. */
  private async read(start: number, end: number): Promise<Buffer> {
    if (end <= start) return Buffer.alloc(0);
    const { body } = await this.store.getObject(this.bucket, this.key, { start, end: end - 1 });
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }
}
