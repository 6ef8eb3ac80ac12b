// Local East-North-Up metres <-> WGS 84 latitude/longitude/altitude for the tower-flight generator
// (issue 36), and the UTM coordinates the reference cloud is written in.
//
// The conversion is exact through Earth-centred Earth-fixed (ECEF) coordinates on the WGS 84
// ellipsoid: the local frame is the tangent frame at the tower's base point (x = east, y = true
// north there, z = along the ellipsoid normal), so a point 100 m "north" is 100 m along the tangent
// plane, not along the curved surface (at 100 m the two differ by 0.8 mm of height).
//
// Heights: the scene's altitudes are EGM96 heights (what a drone writes). The geoid is taken as
// parallel to the ellipsoid over the site: the base's EGM96 altitude is used as if it were its
// ellipsoidal height, every conversion goes through the ellipsoid with it, and the altitude that
// comes back is again read as EGM96. Over a site of a few hundred metres the geoid undulation changes
// by well under a millimetre (its slope is at most ~1e-4, and its curvature far smaller), so
// altitude = base.altitude + up (+ the tangent plane's rise d²/2R) to a millimetre, as the truth needs.
import { projectorFrom, type Projector } from '../../src/shared/geo/projection.ts';
import { utmZone, type UtmZone } from '../../src/shared/geo/utm.ts';
import type { Vec3 } from './scene-types.ts';

export interface GeoPoint {
  /** WGS 84 degrees, south and west negative. */
  latitude: number;
  longitude: number;
  /** EGM96 height, metres (see the head comment for the flat-geoid assumption). */
  altitude: number;
}

const A = 6378137; // WGS 84 semi-major axis (m)
const F = 1 / 298.257223563; // flattening
const E2 = F * (2 - F); // first eccentricity squared
const B = A * (1 - F); // semi-minor axis
const EP2 = (A * A - B * B) / (B * B); // second eccentricity squared
const DEG = Math.PI / 180;

/** Geodetic (degrees, metres above the ellipsoid) to ECEF metres. */
export function geodeticToEcef(latitude: number, longitude: number, height: number): Vec3 {
  const phi = latitude * DEG;
  const lambda = longitude * DEG;
  const sinPhi = Math.sin(phi);
  const n = A / Math.sqrt(1 - E2 * sinPhi * sinPhi);
  const r = (n + height) * Math.cos(phi);
  return [r * Math.cos(lambda), r * Math.sin(lambda), (n * (1 - E2) + height) * sinPhi];
}

/**
 * ECEF metres to geodetic degrees and ellipsoidal height: Bowring's formula for the start, then
 * fixed-point refinement of the latitude (two rounds reach 1e-12 rad near the surface), and the
 * height along the normal (well conditioned at every latitude).
 */
export function ecefToGeodetic(x: number, y: number, z: number): GeoPoint {
  const p = Math.hypot(x, y);
  if (p < 1e-9) return { latitude: z >= 0 ? 90 : -90, longitude: 0, altitude: Math.abs(z) - B }; // on the polar axis
  const theta = Math.atan2(z * A, p * B);
  const st = Math.sin(theta);
  const ct = Math.cos(theta);
  let phi = Math.atan2(z + EP2 * B * st * st * st, p - E2 * A * ct * ct * ct);
  for (let i = 0; i < 2; i++) {
    const sinPhi = Math.sin(phi);
    const n = A / Math.sqrt(1 - E2 * sinPhi * sinPhi);
    const height = p / Math.cos(phi) - n;
    phi = Math.atan2(z, p * (1 - (E2 * n) / (n + height)));
  }
  const sinPhi = Math.sin(phi);
  const height = p * Math.cos(phi) + z * sinPhi - A * Math.sqrt(1 - E2 * sinPhi * sinPhi);
  return { latitude: phi / DEG, longitude: Math.atan2(y, x) / DEG, altitude: height };
}

/** The tangent frame at a base point: its ECEF origin and the ECEF directions of east, north, up. */
interface TangentFrame {
  origin: Vec3;
  east: Vec3;
  north: Vec3;
  up: Vec3;
}

function tangentFrame(base: GeoPoint): TangentFrame {
  const phi = base.latitude * DEG;
  const lambda = base.longitude * DEG;
  const sp = Math.sin(phi), cp = Math.cos(phi), sl = Math.sin(lambda), cl = Math.cos(lambda);
  return {
    origin: geodeticToEcef(base.latitude, base.longitude, base.altitude),
    east: [-sl, cl, 0],
    north: [-sp * cl, -sp * sl, cp],
    up: [cp * cl, cp * sl, sp],
  };
}

/** A converter from local ENU metres at `base` to geodetic coordinates, for many points. */
export function localToGeodeticConverter(base: GeoPoint): (p: Vec3) => GeoPoint {
  const f = tangentFrame(base);
  return (p) => {
    const x = f.origin[0] + f.east[0] * p[0] + f.north[0] * p[1] + f.up[0] * p[2];
    const y = f.origin[1] + f.east[1] * p[0] + f.north[1] * p[1] + f.up[1] * p[2];
    const z = f.origin[2] + f.east[2] * p[0] + f.north[2] * p[1] + f.up[2] * p[2];
    return ecefToGeodetic(x, y, z);
  };
}

/** A local ENU point (metres, origin at `base`, y = true north) as latitude, longitude and EGM96 altitude. */
export function localToGeodetic(base: GeoPoint, p: Vec3): GeoPoint {
  return localToGeodeticConverter(base)(p);
}

/** The inverse of `localToGeodetic`: a geodetic position as local ENU metres at `base`. */
export function geodeticToLocal(base: GeoPoint, g: GeoPoint): Vec3 {
  const f = tangentFrame(base);
  const e = geodeticToEcef(g.latitude, g.longitude, g.altitude);
  const d: Vec3 = [e[0] - f.origin[0], e[1] - f.origin[1], e[2] - f.origin[2]];
  const dot = (a: Vec3) => a[0] * d[0] + a[1] * d[1] + a[2] * d[2];
  return [dot(f.east), dot(f.north), dot(f.up)];
}

export interface UtmPosition extends UtmZone {
  easting: number;
  northing: number;
}

const utmProjectors = new Map<number, Projector>();

/**
 * UTM projector of a given zone (so that every point of a cloud is in its base's zone, even one
 * that lies across a zone boundary): (latitude, longitude) -> [easting, northing]. Through the
 * platform's own proj4 wrapper (src/shared/geo/projection.ts); cached per zone.
 */
export function utmProjector(zone: UtmZone): (latitude: number, longitude: number) => [number, number] {
  let projector = utmProjectors.get(zone.epsg);
  if (!projector) {
    const south = zone.hemisphere === 'S' ? ' +south' : '';
    projector = projectorFrom({ proj4: `+proj=utm +zone=${zone.zone}${south} +datum=WGS84 +units=m +no_defs`, axis_order: ['east', 'north'] }) ?? undefined;
    if (!projector) throw new Error(`proj4 cannot project to EPSG:${zone.epsg}`);
    utmProjectors.set(zone.epsg, projector);
  }
  const project = projector;
  return (latitude, longitude) => {
    const xy = project(latitude, longitude);
    if (!xy) throw new RangeError(`cannot project ${latitude}, ${longitude} to EPSG:${zone.epsg}`);
    return [xy.x, xy.y];
  };
}

/** The UTM zone (src/shared/geo/utm.ts, with the Norway/Svalbard exceptions) and coordinates of a position. */
export function utmOf(latitude: number, longitude: number): UtmPosition {
  const zone = utmZone(latitude, longitude);
  const [easting, northing] = utmProjector(zone)(latitude, longitude);
  return { ...zone, easting, northing };
}
