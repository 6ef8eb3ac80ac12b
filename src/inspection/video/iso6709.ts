// A video's recorded place as its container states it: the ISO 6709 string phones and cameras
// write to MP4/MOV (`location`, `com.apple.quicktime.location.ISO6709`, as ffprobe shows them),
// e.g. "+55.6982+013.1953+037.000/". Latitude and longitude in decimal degrees, or in the
// DDMM[.mm] / DDMMSS[.ss] forms ISO 6709 allows; an optional altitude in metres.
import type { Position } from './srt-telemetry.ts';

const ISO6709 = /^\s*([+-]\d+(?:\.\d+)?)([+-]\d+(?:\.\d+)?)([+-]\d+(?:\.\d+)?)?(?:CRS[^/]*)?\/?\s*$/;

export function parseIso6709(text: string): Position | null {
  const m = ISO6709.exec(text);
  if (!m) return null;
  const latitude = degrees(m[1], 2);
  const longitude = degrees(m[2], 3);
  if (latitude === null || longitude === null || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
  if (latitude === 0 && longitude === 0) return null;
  return { latitude, longitude, altitude: m[3] === undefined ? null : Number(m[3]) };
}

/** `±D…[.f]` whose integer part has `width` (degrees), width+2 (DDMM) or width+4 (DDMMSS) digits. */
function degrees(raw: string, width: number): number | null {
  const sign = raw[0] === '-' ? -1 : 1;
  const [whole, fraction = ''] = raw.slice(1).split('.');
  const frac = fraction ? Number(`0.${fraction}`) : 0;
  let value: number;
  if (whole.length === width) value = Number(whole) + frac;
  else if (whole.length === width + 2) value = Number(whole.slice(0, width)) + (Number(whole.slice(width)) + frac) / 60;
  else if (whole.length === width + 4) value = Number(whole.slice(0, width)) + Number(whole.slice(width, width + 2)) / 60 + (Number(whole.slice(width + 2)) + frac) / 3600;
  else return null;
  return sign * value;
}
