// The inspection's orthomosaic on a web map (issue 28): where it is and how far to zoom (info), and
// its 256 x 256 Web Mercator tiles rendered from the cloud's Cloud-Optimized GeoTIFF by windowed
// reads (stored-cog.ts, tile-renderer.ts; PNG by sharp, off the event loop).
// Why geotiff and not GDAL: a tile is a few ranged reads of the object store and a few decoded
// blocks, in process, through the same store interface as every other read (S3 or the embedded
// store, no credentials or /vsis3 configuration to hand a GDAL process), and without spawning a
// process per tile (a map view asks for 20 tiles at once).
// Decisions (docs/inspection-service.md, "Orthomosaic tiles"):
// - a tile outside the raster is a transparent PNG (200), as map clients expect from an XYZ source
//   (a 204 or 404 shows as a broken tile in some); any zoom 0-24 is served: the work per tile is
//   bounded by the renderer whatever the zoom, deeper than max_zoom the pixels are magnified;
// - tiles are cached by clients per output file: ETag from the file's ETag and the tile address,
//   Cache-Control private (they need credentials), immutable (an inspection's orthomosaic is never
//   replaced: reprocessing makes a new inspection), and 304 on If-None-Match;
// - a file the renderer refuses (unreadable, not 8-bit RGB(A), no overview for the zoom) is a 422
//   with the reason, remembered per file ETag so that it is not read again; the file gone is a 409.
// Opened files (their parsed headers) are kept for the last few orthomosaics; at most RENDERS tiles
// are rendered at once, the others wait, so that a map full of tiles cannot start dozens of decodes.
// Blocks are decompressed in DECODERS worker threads (geotiff's Pool, made on the first tile and
// ended by close()): on this thread, a tile of 512-pixel deflate blocks held the event loop up to
// 84 ms (p99 70 ms), with the workers 57 ms (p99 17 ms) (4096 px test raster, loaded 2-core machine).
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { Reconstruction } from '../pipeline/reconstruction.ts';
import type { RasterLayer } from './raster-layers.ts';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import { ApiError, ValidationError } from '../../infra/http/errors.ts';
import { loadSharp } from '../../shared/images/load-sharp.ts';
import { openStoredCog, RasterRefused, type StoredCog } from './stored-cog.ts';
import { renderTile, TILE_SIZE } from './tile-renderer.ts';
import type { Pool } from 'geotiff';

export const MAX_TILE_ZOOM = 24;
const RENDERS = 4;
const OPEN_FILES = 8;
const DECODERS = 2;
/** Bumped when tiles of the same file would come out differently (the ETag changes with it). */
const RENDER_VERSION = 1;

/**
 * The record: `available: true` with where the orthomosaic is, or `available: false` with why not
 * (a 200, not a 404: the console asks for every processed inspection, and a documented absence
 * answered 404 is logged as a failed load by every browser).
 */
export type OrthoRecord = OrthoInfo | { available: false; reason: string | null; detail: string };

export interface OrthoInfo {
  available: true;
  bounds: { sw: [number, number]; ne: [number, number] };
  min_zoom: number;
  max_zoom: number;
  resolution_m: number | null;
  width: number | null;
  height: number | null;
  /** Photos the reconstruction registered. */
  photos: number | null;
  tile_url: string;
}

export interface Tile {
  /** null: the client's copy is current (If-None-Match). */
  png: Buffer | null;
  etag: string;
  /** No pixel of the raster in this tile. */
  empty: boolean;
}

export class OrthoService {
  private readonly opened = new Map<string, Promise<StoredCog>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private emptyPng: Promise<Buffer> | undefined;
  private decoders: Promise<Pool> | undefined;
  /** The most renders that ran at once (tests check the bound). */
  peakRenders = 0;

  constructor(
    private readonly access: InspectionAccess,
    private readonly store: ObjectStore,
    private readonly logger: Logger,
  ) {}

  async info(auth: AuthContext, inspectionId: number): Promise<OrthoRecord> {
    let found: Awaited<ReturnType<OrthoService['orthomosaicOf']>>;
    try {
      found = await this.orthomosaicOf(auth, inspectionId);
    } catch (err) {
      if (err instanceof NoOrthomosaic) return { available: false, reason: err.reason, detail: err.detail };
      throw err;
    }
    const { layer, reconstruction } = found;
    return {
      available: true,
      bounds: layer.bounds,
      min_zoom: layer.min_zoom,
      max_zoom: layer.max_zoom,
      resolution_m: layer.resolution_m,
      width: layer.width,
      height: layer.height,
      photos: reconstruction.images_registered,
      tile_url: `/v1/inspections/${inspectionId}/ortho/tiles/{z}/{x}/{y}.png`,
    };
  }

  /** `z`, `x`, `y` as the path gives them: decimal integers, z from 0 to MAX_TILE_ZOOM, x and y from 0 to 2^z - 1, else a 400 naming them. */
  async tile(auth: AuthContext, inspectionId: number, zText: string, xText: string, yText: string, ifNoneMatch?: string): Promise<Tile> {
    const { z, x, y } = tileAddress(zText, xText, yText);
    const { layer } = await this.orthomosaicOf(auth, inspectionId);
    const etag = `"${crypto.createHash('sha256').update(`${RENDER_VERSION}\n${layer.bucket}\n${layer.key}\n${layer.etag}\n${z}/${x}/${y}`).digest('base64url').slice(0, 27)}"`;
    if (ifNoneMatch && ifNoneMatch.split(',').some((t) => t.trim() === etag)) return { png: null, etag, empty: false };
    const started = performance.now();
    const rendered = await this.limited(async () => renderTile(await this.open(layer), layer.bounds, z, x, y, await this.decoderPool())).catch((err: unknown) => {
      throw tileError(err, inspectionId);
    });
    if (!rendered) return { png: await this.empty(), etag, empty: true };
    const sharp = await loadSharp();
    const png = await sharp(rendered.rgba, { raw: { width: TILE_SIZE, height: TILE_SIZE, channels: 4 } }).png({ compressionLevel: 6 }).toBuffer();
    this.logger.debug({ inspectionId, z, x, y, level: rendered.level, window: rendered.window, ms: Math.round(performance.now() - started) }, 'ortho tile');
    return { png, etag, empty: false };
  }

  private async orthomosaicOf(auth: AuthContext, inspectionId: number): Promise<{ layer: RasterLayer; reconstruction: Reconstruction }> {
    const inspection = await this.access.requireInspectionData(auth, inspectionId); // 410 once purged (retention)
    const reconstruction = inspection.reconstruction as Reconstruction | null;
    const layer = reconstruction?.rasters?.orthomosaic;
    if (!reconstruction || !layer) {
      const reason = reconstruction?.rasters?.orthomosaic_missing_reason ?? null;
      const detail = !reconstruction
        ? `Inspection ${inspectionId} has no orthomosaic: its photos have not been processed.`
        : `Inspection ${inspectionId} has no orthomosaic${reason ? `: ${reason}` : ': processing did not make one (ask for it with processing_parameters.generate_ortho and an engine that makes orthomosaics).'}`;
      throw new NoOrthomosaic(detail, reason);
    }
    return { layer, reconstruction };
  }

  /** Ends the decoding threads (the server is closing); a later tile makes new ones. */
  async close(): Promise<void> {
    const pool = this.decoders;
    this.decoders = undefined;
    if (pool) await (await pool).destroy();
  }

  private decoderPool(): Promise<Pool> {
    this.decoders ??= import('geotiff').then(({ Pool }) => new Pool(DECODERS));
    return this.decoders;
  }

  private open(layer: RasterLayer): Promise<StoredCog> {
    const key = `${layer.bucket}\n${layer.key}\n${layer.etag}`;
    let pending = this.opened.get(key);
    if (pending) {
      this.opened.delete(key); // re-inserted: the most recently used last
      this.opened.set(key, pending);
      return pending;
    }
    pending = openStoredCog(this.store, layer.bucket, layer.key);
    // A refusal is kept (the same file is refused again without reading it); a storage failure is not.
    pending.catch((err: unknown) => {
      if (!(err instanceof RasterRefused)) this.opened.delete(key);
    });
    this.opened.set(key, pending);
    if (this.opened.size > OPEN_FILES) this.opened.delete(this.opened.keys().next().value!);
    return pending;
  }

  private empty(): Promise<Buffer> {
    this.emptyPng ??= loadSharp().then((sharp) =>
      sharp(Buffer.alloc(TILE_SIZE * TILE_SIZE * 4), { raw: { width: TILE_SIZE, height: TILE_SIZE, channels: 4 } })
        .png()
        .toBuffer(),
    );
    return this.emptyPng;
  }

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= RENDERS) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    this.peakRenders = Math.max(this.peakRenders, this.running);
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

const DECIMAL = /^(0|[1-9][0-9]{0,8})$/;

/** The tile address of the path's z, x, y; a 400 naming each wrong one with its range. */
export function tileAddress(zText: string, xText: string, yText: string): { z: number; x: number; y: number } {
  const z = DECIMAL.test(zText) ? Number(zText) : NaN;
  if (!(z >= 0 && z <= MAX_TILE_ZOOM)) throw ValidationError.field('z', `A zoom from 0 to ${MAX_TILE_ZOOM}.`);
  const count = 2 ** z;
  const x = DECIMAL.test(xText) ? Number(xText) : NaN;
  const y = DECIMAL.test(yText) ? Number(yText) : NaN;
  const fields: Record<string, string[]> = {};
  if (!(x >= 0 && x < count)) fields.x = [`At zoom ${z}, a column from 0 to ${count - 1}.`];
  if (!(y >= 0 && y < count)) fields.y = [`At zoom ${z}, a row from 0 to ${count - 1}.`];
  if (Object.keys(fields).length) throw new ValidationError(fields);
  return { z, x, y };
}

/** 404 in the CONTRACT's format, with the cloud's reason beside the detail (`reason`, null without one) for the console's line. */
class NoOrthomosaic extends ApiError {
  constructor(
    detail: string,
    readonly reason: string | null,
  ) {
    super(404, 'not_found', detail);
  }

  override body(): object {
    return { detail: this.detail, code: this.code, reason: this.reason };
  }
}

/** A refused file: 422 with the reason; the file gone from the store: 409. */
function tileError(err: unknown, inspectionId: number): unknown {
  if (err instanceof RasterRefused) return new ApiError(422, err.code, `The orthomosaic of inspection ${inspectionId} cannot be tiled: ${err.reason.replace(/\.+$/, '')}.`);
  if (err instanceof StorageError && err.code === 'NoSuchKey') return new ApiError(409, 'conflict', `The orthomosaic file of inspection ${inspectionId} is no longer in storage.`);
  return err;
}
