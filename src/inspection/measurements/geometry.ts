// Measurement geometries (CONTRACT section 2): GeoJSON-like `Point` (a position), `LineString`
// (a distance, 2 or more points) or `Polygon` (an area or a volume base: rings of 4 or more
// points, each closed: its last point equals its first). Every point is three finite numbers
// [x, y, z] in the inspection's output coordinate system. `bbox` is computed here,
// [min x, min y, min z, max x, max y, max z]; a bbox sent by the client is ignored.
import type { FieldErrors } from '../../infra/http/errors.ts';
import type { Geometry } from '../inspection.tables.ts';

export const GEOMETRY_TYPES = ['Point', 'LineString', 'Polygon'] as const;
/** Upper bound on points per geometry: a measurement is drawn by hand. */
export const MAX_POINTS = 10_000;

type Point = [number, number, number];

/** The normalised geometry with its bbox, or the field errors of `geometry`. */
export function validateGeometry(input: { type: string; coordinates: unknown }): { geometry: Geometry } | { errors: FieldErrors } {
  const problems = (field: string, message: string) => ({ errors: { [field]: [message] } });
  const points: Point[] = [];
  const point = (value: unknown): Point | undefined => {
    if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === 'number' && Number.isFinite(v))) return undefined;
    points.push(value as Point);
    return [value[0], value[1], value[2]];
  };
  let coordinates: unknown;
  switch (input.type) {
    case 'Point': {
      const p = point(input.coordinates);
      if (!p) return problems('coordinates', 'A Point is one position: three numbers [x, y, z].');
      coordinates = p;
      break;
    }
    case 'LineString': {
      const list = Array.isArray(input.coordinates) ? input.coordinates.map(point) : [];
      if (!Array.isArray(input.coordinates) || list.length < 2 || list.some((p) => !p)) {
        return problems('coordinates', 'A LineString is an array of at least 2 positions of three numbers [x, y, z].');
      }
      coordinates = list;
      break;
    }
    case 'Polygon': {
      if (!Array.isArray(input.coordinates) || input.coordinates.length === 0) {
        return problems('coordinates', 'A Polygon is an array of linear rings (the outer ring first).');
      }
      const rings: Point[][] = [];
      for (const [i, ring] of input.coordinates.entries()) {
        const list = Array.isArray(ring) ? ring.map(point) : [];
        if (!Array.isArray(ring) || list.length < 4 || list.some((p) => !p)) {
          return problems('coordinates', `Ring ${i} must be an array of at least 4 positions of three numbers [x, y, z].`);
        }
        const first = list[0]!;
        const last = list[list.length - 1]!;
        if (first[0] !== last[0] || first[1] !== last[1] || first[2] !== last[2]) {
          return problems('coordinates', `Ring ${i} is not closed: its last position must equal its first.`);
        }
        rings.push(list as Point[]);
      }
      coordinates = rings;
      break;
    }
    default:
      return problems('type', `"${input.type}" is not a valid choice; one of ${GEOMETRY_TYPES.join(', ')}.`);
  }
  if (points.length > MAX_POINTS) return problems('coordinates', `At most ${MAX_POINTS} positions per geometry.`);
  return { geometry: { type: input.type as Geometry['type'], coordinates, bbox: bboxOf(points) } };
}

function bboxOf(points: Point[]): number[] {
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  for (const p of points) {
    for (let i = 0; i < 3; i++) {
      min[i] = Math.min(min[i], p[i]);
      max[i] = Math.max(max[i], p[i]);
    }
  }
  return [...min, ...max];
}
