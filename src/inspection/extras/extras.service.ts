// Inspection extras (spec "Inspection extras"): `coordinate_system` and `offset_3d_xyz`.
//
// The output coordinate system of an inspection is the WGS 84 / UTM zone of its photos
// (`EPSG:326NN` north, `EPSG:327NN` south), metres; `offset_3d_xyz` is [easting, northing,
// altitude] of the photos' centre rounded to whole metres, the offset that point clouds and
// local coordinates (coords_3d, base_plate_location, measurements) are written relative to, as
// photogrammetry outputs usually are. Before any photo is analysed, the asset's position decides
// the zone and the offset is [0, 0, 0]; with neither, coordinate_system is "" (not known yet).
// Once processing has produced cameras, both are fixed. When an engine reconstructed the photos
// (colmap, nodeodm), both are the cloud's: `coordinate_system` is the WKT of the system its
// outputs are in, `offset_3d_xyz` the offset it wrote them with.
// `coordinate_system` is always OGC WKT (never an "EPSG:…" name), whatever the engine: the system
// the cloud's outputs name (colmap, nodeodm, and exif, which reconstructs nothing but names its
// system all the same), else the WKT of the UTM zone + EGM96 height, which is what the cloud
// gives a georeferenced project by default (shared/geo/utm-wkt.ts).
import proj4 from 'proj4';
import { utmZone as sharedUtmZone } from '../../shared/geo/utm.ts';
import { utmWithEgm96Wkt } from '../../shared/geo/utm-wkt.ts';
import type { Kysely } from 'kysely';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import type { Reconstruction } from '../pipeline/reconstruction.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';

export interface Extras {
  coordinate_system: string;
  offset_3d_xyz: number[];
}

export class ExtrasService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly access: InspectionAccess,
  ) {}

  async get(auth: AuthContext, id: number): Promise<Extras> {
    return this.of(await this.access.requireInspection(auth, id));
  }

  async of(inspection: InspectionRow): Promise<Extras> {
    // Reconstructed by photogrammetry: the system and offset the cloud wrote its outputs in.
    const reconstruction = inspection.reconstruction as Reconstruction | null;
    if (reconstruction?.reconstructed && reconstruction.coordinate_system?.wkt) {
      return { coordinate_system: reconstruction.coordinate_system.wkt, offset_3d_xyz: reconstruction.offset_3d_xyz ?? [0, 0, 0] };
    }
    // Processed without reconstruction (exif): the system its outputs name, the photos' centre as offset.
    const namedSystem = reconstruction?.coordinate_system?.wkt;
    const centre = await this.db
      .selectFrom('inspection.cameras')
      .select((eb) => [eb.fn.avg<number>('latitude').as('lat'), eb.fn.avg<number>('longitude').as('lon'), eb.fn.avg<number>('elevation').as('alt')])
      .where('inspection_id', '=', inspection.id)
      .where('latitude', 'is not', null)
      .where('longitude', 'is not', null)
      .executeTakeFirst();
    if (centre?.lat != null && centre.lon != null) {
      const zone = utmZone(Number(centre.lat), Number(centre.lon));
      const [e, n] = proj4('EPSG:4326', zone.proj4, [Number(centre.lon), Number(centre.lat)]);
      return { coordinate_system: namedSystem ?? zone.wkt, offset_3d_xyz: [Math.round(e), Math.round(n), Math.round(Number(centre.alt ?? 0))] };
    }
    const asset = await this.db.selectFrom('inspection.assets').select(['latitude', 'longitude']).where('id', '=', inspection.asset_id).executeTakeFirst();
    if (asset?.latitude != null && asset.longitude != null) {
      return { coordinate_system: namedSystem ?? utmZone(Number(asset.latitude), Number(asset.longitude)).wkt, offset_3d_xyz: [0, 0, 0] };
    }
    return { coordinate_system: '', offset_3d_xyz: [0, 0, 0] };
  }
}

/** The zone from src/shared/geo/utm.ts (Norway and Svalbard exceptions included) as WKT (with EGM96 height) and a proj4 definition. */
function utmZone(latitude: number, longitude: number): { wkt: string; proj4: string } {
  const { zone, hemisphere, epsg } = sharedUtmZone(latitude, longitude);
  return { wkt: utmWithEgm96Wkt(epsg), proj4: `+proj=utm +zone=${zone}${hemisphere === 'S' ? ' +south' : ''} +datum=WGS84 +units=m +no_defs` };
}
