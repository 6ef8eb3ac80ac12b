// Map layers of a processed project: each georeferenced raster an engine produced (orthophoto,
// DSM, DTM; result-types.ts MAP_LAYER_OUTPUTS) described once, when processing ends, from its own
// GeoTIFF header (geotiff.ts): its extent in WGS 84, its ground resolution and the web-map zoom
// levels that show it. Stored on the output row (`raster`) and turned into the project details'
// `outputs.map` and `min_zoom`/`max_zoom` (project.mapper.ts). docs/cloud-service.md, "Map layers".
import proj4 from 'proj4';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import type { MapBounds } from '../cloud.tables.ts';
import { epsgByCode } from '../coordinate-systems/epsg.ts';
import { readGeoTiffGeoreference, type RangeReader } from './geotiff.ts';

export interface RasterInfo {
  width: number;
  height: number;
  /** The raster's own system. */
  epsg: number;
  /** Extent of its four corners in WGS 84, [latitude, longitude] pairs. */
  bounds: MapBounds;
  /** Ground size of a pixel, metres (mean of the two directions, measured at the raster's centre). */
  resolution_m: number;
  /** Web-map zoom (256-pixel Web Mercator tiles) at which the whole raster fits in one tile. */
  min_zoom: number;
  /** The deepest zoom whose pixels are no finer than the raster's. */
  max_zoom: number;
}

/** Metres per pixel of a 256-pixel Web Mercator tile at zoom 0, at the equator. */
const EQUATOR_RESOLUTION = 156543.03392804097;
const DEEPEST_ZOOM = 24;
const EARTH_RADIUS = 6371008.8;

/** The raster's description, or null when it is no readable GeoTIFF in a registered system. */
export async function describeRaster(store: ObjectStore, bucket: string, key: string): Promise<RasterInfo | null> {
  const georef = await readGeoTiffGeoreference(rangeReader(store, bucket, key));
  const entry = georef.epsg ? epsgByCode(georef.epsg) : undefined;
  if (!georef.epsg || !entry) return null;
  let toWgs84: (xy: [number, number]) => [number, number];
  if (entry.kind === 'CRS-GEOGCRS' || entry.kind === 'CRS-GEOG3DCRS') {
    toWgs84 = ([x, y]) => [x, y]; // GeoTIFF model coordinates are longitude, latitude
  } else if (entry.proj4) {
    const converter = proj4(entry.proj4, 'EPSG:4326');
    toWgs84 = (xy) => converter.forward(xy) as [number, number];
  } else {
    return null;
  }
  const { width, height } = georef;
  // [longitude, latitude] of the corners and of the middles of the top and left edges.
  const at = (c: number, r: number) => toWgs84(georef.toModel(c, r));
  const corners = [at(0, 0), at(width, 0), at(0, height), at(width, height)];
  if (corners.some(([lon, lat]) => !Number.isFinite(lon) || !Number.isFinite(lat) || Math.abs(lat) > 90 || Math.abs(lon) > 360)) return null;
  const lats = corners.map((c) => c[1]);
  const lons = corners.map((c) => c[0]);
  const bounds: MapBounds = { sw: [Math.min(...lats), Math.min(...lons)], ne: [Math.max(...lats), Math.max(...lons)] };
  const across = distance(at(0, height / 2), at(width, height / 2)) / width;
  const down = distance(at(width / 2, 0), at(width / 2, height)) / height;
  const resolution = (across + down) / 2;
  if (!(resolution > 0)) return null;
  const latitude = (bounds.sw[0] + bounds.ne[0]) / 2;
  const extent = Math.max(across * width, down * height);
  const zooms = zoomsFor(resolution, extent, latitude);
  return { width, height, epsg: georef.epsg, bounds, resolution_m: round(resolution, 4), ...zooms };
}

/**
 * Web-map zooms of a raster of `resolution` metres per pixel spanning `extent` metres at `latitude`,
 * as gdal2tiles chooses its pyramid: the deepest zoom whose pixels are no finer than the raster's
 * (max), and the zoom at which the whole raster fits in one 256-pixel tile (min, at most max).
 */
export function zoomsFor(resolution: number, extent: number, latitude: number): { min_zoom: number; max_zoom: number } {
  const atLatitude = EQUATOR_RESOLUTION * Math.cos((latitude * Math.PI) / 180);
  const zoomFor = (pixel: number) => Math.floor(Math.log2(atLatitude / pixel) + 1e-9);
  const max = Math.max(0, Math.min(DEEPEST_ZOOM, zoomFor(resolution)));
  const min = Math.max(0, Math.min(max, zoomFor(extent / 256)));
  return { min_zoom: min, max_zoom: max };
}

/** The union of extents (null for none). */
export function unionBounds(all: MapBounds[]): MapBounds | null {
  if (all.length === 0) return null;
  return {
    sw: [Math.min(...all.map((b) => b.sw[0])), Math.min(...all.map((b) => b.sw[1]))],
    ne: [Math.max(...all.map((b) => b.ne[0])), Math.max(...all.map((b) => b.ne[1]))],
  };
}

function rangeReader(store: ObjectStore, bucket: string, key: string): RangeReader {
  let size: number | undefined;
  return async (start, end) => {
    size ??= (await store.headObject(bucket, key))?.size ?? 0;
    if (start >= size) return Buffer.alloc(0);
    const { body } = await store.getObject(bucket, key, { start, end: Math.min(end, size - 1) });
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  };
}

/** Great-circle distance between two [longitude, latitude] points, metres. */
function distance([lon1, lat1]: [number, number], [lon2, lat2]: [number, number]): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS * Math.asin(Math.min(1, Math.sqrt(a)));
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
