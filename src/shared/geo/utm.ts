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
