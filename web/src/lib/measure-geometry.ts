// Lengths and areas of measurements, as the service computes them for the report
// (src/inspection/measurements/geometry.ts): coordinates are metres in the inspection's output
// coordinate system, lengths in 3D along the points, polygon areas in 3D (Newell's method).

export type Point3 = [number, number, number];

export interface MeasureGeometry {
  type: 'Point' | 'LineString' | 'Polygon' | string;
  coordinates: unknown;
}

export function pathLength(points: Point3[]): number {
  let total = 0;
  for (let i = 1; i < points.length; i++) total += Math.hypot(points[i][0] - points[i - 1][0], points[i][1] - points[i - 1][1], points[i][2] - points[i - 1][2]);
  return total;
}

/** Area of a closed ring (last point = first) in 3D, square metres. */
export function ringArea(ring: Point3[]): number {
  let nx = 0, ny = 0, nz = 0;
  for (let i = 0; i < ring.length - 1; i++) {
    const [x1, y1, z1] = ring[i];
    const [x2, y2, z2] = ring[i + 1];
    nx += (y1 - y2) * (z1 + z2);
    ny += (z1 - z2) * (x1 + x2);
    nz += (x1 - x2) * (y1 + y2);
  }
  return Math.hypot(nx, ny, nz) / 2;
}

/** A polygon's ring from picked points: closed (the first point repeated at the end). */
export function closeRing(points: Point3[]): Point3[] {
  if (points.length === 0) return [];
  const [first] = points;
  const last = points[points.length - 1];
  return first.every((v, i) => v === last[i]) ? points : [...points, first];
}

/** What a measurement measures, in words and metres: "12.34 m", "5.60 m² · perimeter 9.80 m". */
export function describe(geometry: MeasureGeometry): string {
  if (geometry.type === 'LineString') return `${pathLength(geometry.coordinates as Point3[]).toFixed(2)} m`;
  if (geometry.type === 'Polygon') {
    const [outer, ...holes] = geometry.coordinates as Point3[][];
    const area = ringArea(outer) - holes.reduce((sum, hole) => sum + ringArea(hole), 0);
    return `${area.toFixed(2)} m² · perimeter ${pathLength(outer).toFixed(2)} m`;
  }
  if (geometry.type === 'Point') {
    const [x, y, z] = geometry.coordinates as Point3;
    return `${x.toFixed(2)}, ${y.toFixed(2)}, ${z.toFixed(2)}`;
  }
  return geometry.type;
}
