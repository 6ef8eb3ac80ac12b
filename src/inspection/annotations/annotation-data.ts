// The rules of an annotation's `data` (spec "Rules for data") that a schema cannot say:
// 1. coords_2d: four points, each a pair of numbers between 0 and 1 (also in the schema);
// 2. the four points are the corners of a rectangle, as fractions of the photo ((0, 0) upper
//    left, (1, 1) bottom right): axis-aligned, two distinct x values and two distinct y values,
//    every corner exactly once (any order);
// 3. links: objects with an http(s) `link` and a `description`.
import { ValidationError } from '../../infra/http/errors.ts';
import type { AnnotationData } from '../inspection.tables.ts';

export function validateAnnotationData(data: { coords_2d: number[][]; links?: { link: string; description?: string }[] }): AnnotationData {
  const points = data.coords_2d;
  const fail = (message: string) => new ValidationError({ data: { coords_2d: [message] } });
  if (!Array.isArray(points) || points.length !== 4) throw fail('Exactly four points are required.');
  for (const p of points) {
    if (!Array.isArray(p) || p.length !== 2 || !p.every((v) => typeof v === 'number' && Number.isFinite(v))) throw fail('Each point is a pair of numbers [x, y].');
    if (!p.every((v) => v >= 0 && v <= 1)) throw fail('Coordinates are fractions of the photo, between 0 and 1.');
  }
  const xs = [...new Set(points.map((p) => p[0]))].sort((a, b) => a - b);
  const ys = [...new Set(points.map((p) => p[1]))].sort((a, b) => a - b);
  const corners = new Set(points.map((p) => `${p[0]},${p[1]}`));
  if (xs.length !== 2 || ys.length !== 2 || corners.size !== 4) {
    throw fail('The four points must be the four corners of a rectangle aligned with the photo (two distinct x values, two distinct y values).');
  }
  const links = (data.links ?? []).map((l, i) => {
    if (!isHttpUrl(l.link)) throw new ValidationError({ data: { links: { [String(i)]: { link: ['Enter a valid http(s) URL.'] } } } });
    return { link: l.link, description: l.description ?? '' };
  });
  return { coords_2d: points.map((p) => [p[0], p[1]] as [number, number]), links };
}

/** The rectangle of coords_2d as fractions: left, top, right, bottom. */
export function rectangleOf(coords: [number, number][]): { left: number; top: number; right: number; bottom: number } {
  const xs = coords.map((p) => p[0]);
  const ys = coords.map((p) => p[1]);
  return { left: Math.min(...xs), top: Math.min(...ys), right: Math.max(...xs), bottom: Math.max(...ys) };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
