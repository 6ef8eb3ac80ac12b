// Universal Transverse Mercator zones on WGS 84: the zone of a position (with the Norway and
// Svalbard exceptions of the UTM grid) and the EPSG code of "WGS 84 / UTM zone <n><N|S>".

export interface UtmZone {
  /** 1..60. */
  zone: number;
  hemisphere: 'N' | 'S';
  /** 326zz in the northern hemisphere, 327zz in the southern. */
  epsg: number;
}

/** The UTM zone of a WGS 84 position (degrees; latitude -80..84, longitude any, wrapped to -180..180). */
export function utmZone(latitude: number, longitude: number): UtmZone {
  if (!Number.isFinite(latitude) || !Number.isFinite(longitude) || latitude < -90 || latitude > 90) {
    throw new RangeError(`invalid position ${latitude}, ${longitude}`);
  }
  const lon = ((((longitude + 180) % 360) + 360) % 360) - 180; // -180 <= lon < 180
  let zone = Math.floor((lon + 180) / 6) + 1;
  // South-west Norway: zone 32 is widened to cover 3°E..12°E between 56°N and 64°N.
  if (latitude >= 56 && latitude < 64 && lon >= 3 && lon < 12) zone = 32;
  // Svalbard: zones 31, 33, 35 and 37 are widened (32, 34 and 36 are not used) between 72°N and 84°N.
  if (latitude >= 72 && latitude <= 84) {
    if (lon >= 0 && lon < 9) zone = 31;
    else if (lon >= 9 && lon < 21) zone = 33;
    else if (lon >= 21 && lon < 33) zone = 35;
    else if (lon >= 33 && lon < 42) zone = 37;
  }
  zone = Math.min(60, Math.max(1, zone));
  const hemisphere = latitude >= 0 ? 'N' : 'S';
  return { zone, hemisphere, epsg: (hemisphere === 'N' ? 32600 : 32700) + zone };
}

/** The UTM zone of a set of positions: the zone of their centre (mean latitude, circular mean longitude). */
export function utmZoneOfPositions(positions: readonly { latitude: number; longitude: number }[]): UtmZone {
  if (positions.length === 0) throw new RangeError('no positions');
  let lat = 0;
  let x = 0;
  let y = 0;
  for (const p of positions) {
    lat += p.latitude;
    x += Math.cos((p.longitude * Math.PI) / 180);
    y += Math.sin((p.longitude * Math.PI) / 180);
  }
  return utmZone(lat / positions.length, (Math.atan2(y, x) * 180) / Math.PI);
}

/** The UTM zone of an EPSG code of "WGS 84 / UTM zone <n><N|S>" (326zz, 327zz); null for any other code. */
export function utmZoneOfEpsg(epsg: number | null | undefined): UtmZone | null {
  if (typeof epsg !== 'number' || !Number.isInteger(epsg)) return null;
  const zone = epsg % 100;
  const base = epsg - zone;
  if ((base !== 32600 && base !== 32700) || zone < 1 || zone > 60) return null;
  return { zone, hemisphere: base === 32600 ? 'N' : 'S', epsg };
}

/**
 * Grid (meridian) convergence of a UTM zone at a WGS 84 position, degrees: the angle from true
 * north to grid north, positive when grid north lies east of true north (east of the zone's
 * central meridian in the northern hemisphere; west of it in the southern). A direction with grid
 * bearing b has the true bearing b + γ. γ = atan(tan(λ − λ0) · sin φ), λ0 the zone's central
 * meridian (6·zone − 183°): the sphere's exact value, within 0.01° of the ellipsoid's across a zone
 * (test/inventory-detection-parts.test.ts checks it against proj4).
 */
export function gridConvergenceDeg(latitude: number, longitude: number, zone: UtmZone | number): number {
  const n = typeof zone === 'number' ? zone : zone.zone;
  if (!Number.isInteger(n) || n < 1 || n > 60) throw new RangeError(`invalid UTM zone ${n}`);
  const centralMeridian = 6 * n - 183;
  const dLon = (((((longitude - centralMeridian) % 360) + 540) % 360) - 180) * (Math.PI / 180); // wrapped to -180..180
  return (Math.atan(Math.tan(dLon) * Math.sin((latitude * Math.PI) / 180)) * 180) / Math.PI;
}
