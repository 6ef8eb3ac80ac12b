// The EPSG registry, from the epsg-index package (one JSON file per code, plus an index of all
// codes loaded only when a system has to be found by name).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export type EpsgKind =
  | 'CRS-PROJCRS'
  | 'CRS-GEOGCRS'
  | 'CRS-GEOG3DCRS'
  | 'CRS-GCENCRS'
  | 'CRS-VERTCRS'
  | 'CRS-COMPOUNDCRS'
  | 'CRS-ENGCRS'
  | 'CRS-DRVDCRS';

export interface EpsgEntry {
  code: string;
  kind: EpsgKind;
  name: string;
  /** WKT1 as GDAL writes it; null for a few systems GDAL cannot express in WKT1. */
  wkt: string | null;
  /** PROJ string; null when there is none. */
  proj4: string | null;
  /** Area of use: [north, west, south, east] in degrees. */
  bbox: [number, number, number, number] | null;
  unit: string | null;
}

const byCode = new Map<string, EpsgEntry | null>();
let byName: Map<string, EpsgEntry[]> | undefined;

/** The registry entry of an EPSG code, or undefined when the code is not registered. */
export function epsgByCode(code: string | number): EpsgEntry | undefined {
  const key = String(code).trim();
  if (!/^\d{1,7}$/.test(key)) return undefined;
  if (!byCode.has(key)) {
    let entry: EpsgEntry | null;
    try {
      entry = require(`epsg-index/s/${key}.json`) as EpsgEntry;
    } catch {
      entry = null;
    }
    byCode.set(key, entry);
  }
  return byCode.get(key) ?? undefined;
}

/** Registered systems with exactly this name (case and surrounding spaces ignored). */
export function epsgByName(name: string): EpsgEntry[] {
  if (!byName) {
    byName = new Map();
    const all = require('epsg-index/all.json') as Record<string, EpsgEntry>;
    for (const entry of Object.values(all)) {
      const key = normaliseName(entry.name);
      const list = byName.get(key) ?? [];
      list.push(entry);
      byName.set(key, list);
    }
  }
  return byName.get(normaliseName(name)) ?? [];
}

function normaliseName(name: string): string {
  return name.trim().toLowerCase();
}
