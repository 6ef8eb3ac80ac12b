// WGS 84 -> a projected system's horizontal axes, with proj4. Shared by the cloud service (which
// resolves output systems, coordinate-systems/crs.ts) and the inspection service (which projects
// an asset's position into the output system that the cloud reports with its outputs).
import proj4, { type Converter } from 'proj4';

export type Projector = (latitude: number, longitude: number) => { x: number; y: number } | null;

/** The parts of an output coordinate system a projection needs (as the cloud's outputs describe it). */
export interface ProjectionDefinition {
  /** 'arbitrary' systems have no georeference. */
  type?: string;
  /** PROJ definition of the horizontal component; empty or absent: `horizontal_wkt` is used. */
  proj4?: string | null;
  horizontal_wkt?: string | null;
  /** Directions of x and y, e.g. ["east", "north"]; a system whose first axis is north swaps x and y. */
  axis_order: string[];
}

/**
 * Projects WGS 84 positions into the system's x, y (its axis order and unit). null for an
 * arbitrary system, or when proj4 cannot use the definition (e.g. it needs a datum grid that is
 * not loaded).
 */
export function projectorFrom(definition: ProjectionDefinition): Projector | null {
  if (definition.type === 'arbitrary') return null;
  const target = definition.proj4 || definition.horizontal_wkt;
  if (!target) return null;
  let converter: Converter;
  try {
    converter = proj4('EPSG:4326', target);
    converter.forward([0, 0]);
  } catch {
    return null;
  }
  const swap = definition.axis_order[0] === 'north' || definition.axis_order[0] === 'south';
  return (latitude, longitude) => {
    try {
      const [east, north] = converter.forward([longitude, latitude]);
      if (!Number.isFinite(east) || !Number.isFinite(north)) return null;
      return swap ? { x: north, y: east } : { x: east, y: north };
    } catch {
      return null;
    }
  };
}
