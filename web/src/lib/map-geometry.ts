// The map tab's arithmetic (issue 29 §4): how far the asset stands from the photos (the walk placed
// an asset 1 km away without a word), distances and coordinates in words, and which camera
// markers overlap on screen so they are drawn as one marker with a count. Framework-free (screen
// positions come in as plain x/y pixels), unit-tested in test/web-annotation-list.test.ts.

export interface LatLon {
  lat: number;
  lon: number;
}

/** Beyond this the asset is not where the photos were taken: the map says so. */
export const ASSET_FAR_METRES = 500;

const EARTH_RADIUS_M = 6_371_008.8;
const rad = (deg: number) => (deg * Math.PI) / 180;

/** Great-circle distance in metres (haversine: exact enough at a tower's scale and at 1000 km). */
export function distanceMetres(a: LatLon, b: LatLon): number {
  const dLat = rad(b.lat - a.lat);
  const dLon = rad(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The cameras' centre (mean latitude and longitude: a survey spans metres, not degrees); undefined without cameras. */
export function centreOf(points: readonly LatLon[]): LatLon | undefined {
  if (points.length === 0) return undefined;
  return { lat: points.reduce((s, p) => s + p.lat, 0) / points.length, lon: points.reduce((s, p) => s + p.lon, 0) / points.length };
}

/** "850 m", "1.2 km", "35 km" (a precision the eye can use; no trailing zeros). */
export function formatDistance(metres: number): string {
  if (metres < 1000) return `${Math.round(metres)} m`;
  const km = metres / 1000;
  return `${km < 10 ? Number(km.toFixed(1)) : Math.round(km)} km`;
}

/** A latitude or longitude at 6 decimals (~0.1 m) without trailing zeros: 46.5 not 46.500000. */
export function formatCoordinate(degrees: number): string {
  return String(Number(degrees.toFixed(6)));
}

/** A latitude and longitude as the API sends them (strings with 8 decimals) in words: "46.5183, 6.5619". */
export function formatLatLon(lat: string | number, lon: string | number): string {
  return `${formatCoordinate(Number(lat))}, ${formatCoordinate(Number(lon))}`;
}

/** A position in metres at centimetres without trailing zeros: "12.5, -3, 40.25 m". */
export function formatPosition(x: number, y: number, z: number): string {
  return `${[x, y, z].map((v) => String(Number(v.toFixed(2)) || 0)).join(', ')} m`;
}

/** The warning's words when the asset stands farther than ASSET_FAR_METRES from the cameras' centre; undefined otherwise. */
export function assetDistanceWarning(cameras: readonly LatLon[], asset: LatLon | undefined): string | undefined {
  const centre = centreOf(cameras);
  if (!centre || !asset) return undefined;
  const metres = distanceMetres(centre, asset);
  if (metres <= ASSET_FAR_METRES) return undefined;
  return `The asset is ${formatDistance(metres)} from the centre of the photos' cameras: its position is probably wrong (or the photos are of another place). Check its latitude and longitude.`;
}

export interface ScreenPoint {
  id: number;
  x: number;
  y: number;
}

/**
 * Markers closer than `radius` pixels on screen, as groups (greedy: each point joins the first group
 * whose first point is within reach, else starts one). Order kept; a lone point is a group of one.
 * Greedy rather than optimal clustering: hundreds of cameras, regrouped at every zoom.
 */
export function groupOverlapping(points: readonly ScreenPoint[], radius: number): ScreenPoint[][] {
  const groups: ScreenPoint[][] = [];
  for (const point of points) {
    const home = groups.find((g) => Math.hypot(g[0].x - point.x, g[0].y - point.y) < radius);
    if (home) home.push(point);
    else groups.push([point]);
  }
  return groups;
}
