// One 256 x 256 Web Mercator tile (XYZ addressing, as OpenStreetMap's) of an orthomosaic, in RGBA:
// each tile pixel is placed in the raster (tile pixel -> WGS 84 -> the raster's system with proj4
// -> raster pixel) and takes the value of the raster pixel it falls on (nearest), read from the
// overview whose pixels are the coarsest still no coarser than the tile's, so a low zoom reads a
// small overview, never the full resolution.
// Projecting all 65,536 pixels is not needed: as GDAL's approximate transformer does, the exact
// transform runs on a 17 x 17 grid of control points laid over the part of the tile the raster's
// WGS 84 extent covers, and the pixels in between are interpolated bilinearly (over 16 pixels of a
// tile the transform is linear to far below a pixel). The grid covers only the raster's extent so
// that, at low zooms, no control point lands where the raster's projection (a UTM zone, say)
// means nothing.
// The work per tile is bounded before anything is read: the window of the chosen image is at most
// MAX_WINDOW_SIDE pixels a side and touches at most MAX_BLOCKS blocks (a raster without overviews
// seen from far away is refused, not decoded whole).
import proj4 from 'proj4';
import type { Pool } from 'geotiff';
import { RasterRefused, type CogLevel, type StoredCog } from './stored-cog.ts';
import { StorageError } from '../../infra/storage/object-store.ts';

export const TILE_SIZE = 256;
const CELLS = 16;
const MAX_WINDOW_SIDE = 2048;
const MAX_BLOCKS = 64;

/** Extent in WGS 84: [latitude, longitude] of the south-west and north-east corners. */
export interface LatLonBounds {
  sw: [number, number];
  ne: [number, number];
}

/** Global pixel coordinates (tile size 256) of a WGS 84 point at zoom z. */
export function mercatorPixel(z: number, latitude: number, longitude: number): [number, number] {
  const size = TILE_SIZE * 2 ** z;
  const lat = Math.max(-85.05112878, Math.min(85.05112878, latitude)) * (Math.PI / 180);
  return [((longitude + 180) / 360) * size, ((1 - Math.log(Math.tan(lat) + 1 / Math.cos(lat)) / Math.PI) / 2) * size];
}

/** The WGS 84 point [longitude, latitude] of global pixel coordinates at zoom z. */
export function mercatorLonLat(z: number, px: number, py: number): [number, number] {
  const size = TILE_SIZE * 2 ** z;
  return [(px / size) * 360 - 180, (Math.atan(Math.sinh(Math.PI * (1 - (2 * py) / size))) * 180) / Math.PI];
}

export interface RenderedTile {
  /** RGBA, TILE_SIZE x TILE_SIZE. */
  rgba: Uint8Array;
  /** The image read (0: full resolution) and its window: what the tile cost. */
  level: number;
  window: [number, number, number, number];
}

/** The tile's pixels, or null when the raster has nothing in it. `decoders`: blocks are decompressed in those worker threads (else on this one). */
export async function renderTile(cog: StoredCog, bounds: LatLonBounds, z: number, x: number, y: number, decoders?: Pool): Promise<RenderedTile | null> {
  // The part of the tile the raster's extent covers (a pixel of margin), in tile pixels.
  const [west, north] = mercatorPixel(z, bounds.ne[0], bounds.sw[1]);
  const [east, south] = mercatorPixel(z, bounds.sw[0], bounds.ne[1]);
  const u0 = Math.max(0, Math.floor(west - x * TILE_SIZE) - 1);
  const u1 = Math.min(TILE_SIZE, Math.ceil(east - x * TILE_SIZE) + 1);
  const v0 = Math.max(0, Math.floor(north - y * TILE_SIZE) - 1);
  const v1 = Math.min(TILE_SIZE, Math.ceil(south - y * TILE_SIZE) + 1);
  if (u1 <= u0 || v1 <= v0) return null;

  // Control points: full-resolution raster pixel of each grid node.
  const toRaster = cog.proj4 ? proj4(cog.proj4) : null;
  const n = CELLS + 1;
  const grid = new Float64Array(n * n * 2);
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < n; i++) {
      const [lon, lat] = mercatorLonLat(z, x * TILE_SIZE + u0 + ((u1 - u0) * i) / CELLS, y * TILE_SIZE + v0 + ((v1 - v0) * j) / CELLS);
      const [mx, my] = toRaster ? toRaster.forward([lon, lat]) : [lon, lat];
      const [col, row] = cog.toPixel(mx, my);
      grid[(j * n + i) * 2] = col;
      grid[(j * n + i) * 2 + 1] = row;
    }
  }
  if (!grid.every(Number.isFinite)) return null;

  // Raster pixels per tile pixel, at the middle of the covered part; the coarsest level no coarser.
  const mid = (CELLS / 2) * n + CELLS / 2;
  const du = (u1 - u0) / CELLS;
  const dv = (v1 - v0) / CELLS;
  const across = Math.hypot(grid[(mid + 1) * 2] - grid[mid * 2], grid[(mid + 1) * 2 + 1] - grid[mid * 2 + 1]) / du;
  const down = Math.hypot(grid[(mid + n) * 2] - grid[mid * 2], grid[(mid + n) * 2 + 1] - grid[mid * 2 + 1]) / dv;
  const ratio = Math.min(across, down);
  let levelIndex = 0;
  cog.levels.forEach((l, i) => {
    if (l.scaleX <= ratio * 1.01 && l.scaleX > cog.levels[levelIndex].scaleX) levelIndex = i;
  });
  const level = cog.levels[levelIndex];

  // The window of that level the grid covers (one pixel of margin), clamped to the image.
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let k = 0; k < n * n; k++) {
    const cx = grid[k * 2] / level.scaleX;
    const cy = grid[k * 2 + 1] / level.scaleY;
    minX = Math.min(minX, cx);
    maxX = Math.max(maxX, cx);
    minY = Math.min(minY, cy);
    maxY = Math.max(maxY, cy);
  }
  const window: [number, number, number, number] = [
    Math.max(0, Math.floor(minX) - 1),
    Math.max(0, Math.floor(minY) - 1),
    Math.min(level.width, Math.ceil(maxX) + 1),
    Math.min(level.height, Math.ceil(maxY) + 1),
  ];
  if (window[2] <= window[0] || window[3] <= window[1]) return null;
  checkWork(level, window, levelIndex);

  const data = await readWindow(level, window, decoders);
  const ww = window[2] - window[0];
  const wh = window[3] - window[1];
  const channels = data.length / (ww * wh);
  if (!Number.isInteger(channels) || channels < 1 || channels > 4) throw new RasterRefused('raster_unsupported', `the decoded window has ${data.length} values for ${ww} x ${wh} pixels`);

  const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
  const noData = channels === 3 || channels === 1 ? cog.noData : null;
  let any = false;
  for (let v = v0; v < v1; v++) {
    const gy = ((v + 0.5 - v0) / (v1 - v0)) * CELLS;
    const j = Math.min(CELLS - 1, Math.floor(gy));
    const fy = gy - j;
    for (let u = u0; u < u1; u++) {
      const gx = ((u + 0.5 - u0) / (u1 - u0)) * CELLS;
      const i = Math.min(CELLS - 1, Math.floor(gx));
      const fx = gx - i;
      const a = (j * n + i) * 2;
      const b = a + 2;
      const c = a + n * 2;
      const d = c + 2;
      const col = (grid[a] * (1 - fx) + grid[b] * fx) * (1 - fy) + (grid[c] * (1 - fx) + grid[d] * fx) * fy;
      const row = (grid[a + 1] * (1 - fx) + grid[b + 1] * fx) * (1 - fy) + (grid[c + 1] * (1 - fx) + grid[d + 1] * fx) * fy;
      const sx = Math.floor(col / level.scaleX) - window[0];
      const sy = Math.floor(row / level.scaleY) - window[1];
      if (sx < 0 || sy < 0 || sx >= ww || sy >= wh) continue;
      const from = (sy * ww + sx) * channels;
      const to = (v * TILE_SIZE + u) * 4;
      if (channels >= 3) {
        rgba[to] = data[from];
        rgba[to + 1] = data[from + 1];
        rgba[to + 2] = data[from + 2];
      } else {
        rgba[to] = rgba[to + 1] = rgba[to + 2] = data[from];
      }
      const alpha = channels === 4 ? data[from + 3] : channels === 2 ? data[from + 1] : 255;
      const empty = noData !== null && data[from] === noData && (channels === 1 || (data[from + 1] === noData && data[from + 2] === noData));
      rgba[to + 3] = empty ? 0 : alpha;
      if (rgba[to + 3] > 0) any = true;
    }
  }
  return any ? { rgba, level: levelIndex, window } : null;
}

/** The window's pixels, interleaved; whatever the decoder throws on a broken file is a refusal. */
export async function readWindow(level: CogLevel, window: [number, number, number, number], decoders?: Pool): Promise<Uint8Array> {
  try {
    return (await level.image.readRGB({ window, interleave: true, enableAlpha: true, pool: decoders ?? null })) as unknown as Uint8Array;
  } catch (err) {
    if (err instanceof RasterRefused || err instanceof StorageError) throw err;
    throw new RasterRefused('raster_unreadable', `its pixels cannot be decoded: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function checkWork(level: CogLevel, [x0, y0, x1, y1]: [number, number, number, number], levelIndex: number): void {
  const blocks = (Math.floor((x1 - 1) / level.blockWidth) - Math.floor(x0 / level.blockWidth) + 1) * (Math.floor((y1 - 1) / level.blockHeight) - Math.floor(y0 / level.blockHeight) + 1);
  if (x1 - x0 > MAX_WINDOW_SIDE || y1 - y0 > MAX_WINDOW_SIDE || blocks > MAX_BLOCKS) {
    const what = levelIndex === 0 ? 'its full resolution (it has no overview coarse enough for this zoom)' : `overview ${levelIndex}`;
    throw new RasterRefused('raster_too_large', `this tile would read ${x1 - x0} x ${y1 - y0} pixels in ${blocks} blocks of ${what}; at most ${MAX_WINDOW_SIDE} pixels a side and ${MAX_BLOCKS} blocks are read per tile`);
  }
}
