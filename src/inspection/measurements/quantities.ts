// What a measurement measures, computed by the service (issue 12): a LineString's length, a
// Polygon's perimeter and area and, over the inspection's DSM or point cloud, the volume above the
// polygon's plane (dsm-volume.ts, volume.ts). The one implementation of these: the API stores them in the
// measurement's `extension.computed` (measurement.service.ts) and the report prints them from
// there (reports/report-data.ts). Everything in metres (the output system's unit times its
// `unit_factor`), rounded to the millimetre.
import type { Geometry, MeasurementRow } from '../inspection.tables.ts';
import type { VolumeAbovePlane } from './volume.ts';

type Point = [number, number, number];

/** The service's numbers of one measurement; null where they do not apply (or, for the volume, cannot be computed). */
export interface MeasurementQuantities {
  /** LineString: its 3D length. */
  length_m: number | null;
  /** Polygon: the 3D length of its outer ring. */
  perimeter_m: number | null;
  /** Polygon: its 3D area, holes subtracted. */
  area_m2: number | null;
  /** Polygon over the DSM or point cloud: the volume between the polygon's plane and the surface above it. */
  volume_m3: number | null;
  /** How the volume was found; null with the volume. */
  volume: Omit<VolumeAbovePlane, 'above_m3'> | null;
}

/** Length of a path (sum of its 3D segments), in the coordinates' unit. */
export function pathLength(points: Point[]): number {
  let total = 0;
  for (let i = 1; i < points.length; i++) total += Math.hypot(points[i][0] - points[i - 1][0], points[i][1] - points[i - 1][1], points[i][2] - points[i - 1][2]);
  return total;
}

/** Area of a closed 3D ring (Newell's method), in the coordinates' unit squared. */
export function ringArea(ring: Point[]): number {
  const [nx, ny, nz] = newellNormal(ring);
  return Math.hypot(nx, ny, nz) / 2;
}

/** Newell's normal of a closed ring: twice its vector area (its direction follows the ring's winding). */
export function newellNormal(ring: Point[]): Point {
  let nx = 0;
  let ny = 0;
  let nz = 0;
  for (let i = 0; i < ring.length - 1; i++) {
    const [x1, y1, z1] = ring[i];
    const [x2, y2, z2] = ring[i + 1];
    nx += (y1 - y2) * (z1 + z2);
    ny += (z1 - z2) * (x1 + x2);
    nz += (x1 - x2) * (y1 + y2);
  }
  return [nx, ny, nz];
}

/** A Polygon's area: its outer ring's, minus its holes' (never below 0). */
export function polygonArea(rings: Point[][]): number {
  return Math.max(0, ringArea(rings[0]) - rings.slice(1).reduce((sum, r) => sum + ringArea(r), 0));
}

/**
 * The quantities of a validated geometry (geometry.ts). `unitFactor`: metres per unit of the output
 * system; `volume`: dsm-volume.ts's or volume.ts's result for a Polygon, or null.
 */
export function measure(geometry: Geometry, unitFactor = 1, volume: VolumeAbovePlane | null = null): MeasurementQuantities {
  const quantities: MeasurementQuantities = { length_m: null, perimeter_m: null, area_m2: null, volume_m3: null, volume: null };
  if (geometry.type === 'LineString') {
    quantities.length_m = mm(pathLength(geometry.coordinates as Point[]) * unitFactor);
  } else if (geometry.type === 'Polygon') {
    const rings = geometry.coordinates as Point[][];
    quantities.perimeter_m = mm(pathLength(rings[0]) * unitFactor);
    quantities.area_m2 = mm(polygonArea(rings) * unitFactor * unitFactor);
    if (volume) {
      const { above_m3, ...basis } = volume;
      quantities.volume_m3 = above_m3;
      quantities.volume = basis;
    }
  }
  return quantities;
}

/**
 * The quantities a measurement row carries (`extension.computed`, written with the row); a row
 * stored before the service computed them gets its length, perimeter and area from its geometry
 * (no volume: that needs the point cloud, and is computed when the geometry is next written).
 */
export function quantitiesOf(row: Pick<MeasurementRow, 'geometry' | 'extension'>): MeasurementQuantities {
  const stored = row.extension.computed as MeasurementQuantities | undefined;
  return stored && typeof stored === 'object' && 'area_m2' in stored ? stored : measure(row.geometry);
}

/** Rounded to the millimetre (or mm², mm³ scale: 3 decimals). */
export function mm(value: number): number {
  return Math.round(value * 1000) / 1000;
}
