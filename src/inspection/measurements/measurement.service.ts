// Measurements of an inspection (spec "Measurement"): points, distances and areas drawn in the
// inspection's 3D space. Ids are UUID strings; `entity_type` is "inspection" and `entity_id`
// its id. Validation of geometries is in geometry.ts. What a measurement measures (length, area,
// perimeter, volume: quantities.ts, volume.ts over the point cloud, dsm-volume.ts over the DSM) is
// computed whenever its geometry is written and kept in `extension.computed`, the service's key of
// the free `extension` object: a client's own `computed` is replaced, its other keys are kept as given.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Geometry, InspectionRow, InspectionTables, MeasurementRow } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import type { WindowedSource } from '../http/lists.ts';
import { DEFAULT_RECORD_CAPS, refuseBeyondCap, type RecordCaps } from '../limits/record-caps.ts';
import { notFound, ValidationError, type FieldErrors } from '../../infra/http/errors.ts';
import { validateGeometry } from './geometry.ts';
import { measure, quantitiesOf, type MeasurementQuantities } from './quantities.ts';
import { volumeAbovePlane } from './volume.ts';
import { volumeOverDsm } from './dsm-volume.ts';
import { openElevationRaster } from '../ortho/elevation-raster.ts';
import { RasterRefused } from '../ortho/stored-cog.ts';
import { StorageError } from '../../infra/storage/object-store.ts';
import type { StoredPointClouds } from '../storage/point-clouds.ts';
import type { Reconstruction } from '../pipeline/reconstruction.ts';

export interface MeasurementInput {
  properties?: Record<string, unknown>;
  tags?: string[];
  geometry?: { type: string; coordinates: unknown };
  extension?: Record<string, unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function mapMeasurement(row: MeasurementRow) {
  return {
    id: row.id,
    properties: row.properties,
    tags: row.tags,
    geometry: row.geometry,
    extension: { ...row.extension, computed: quantitiesOf(row) },
    entity_type: 'inspection',
    entity_id: row.inspection_id,
    created: row.created_at.toISOString(),
    modified: row.updated_at.toISOString(),
  };
}

export type MeasurementRecord = ReturnType<typeof mapMeasurement>;

export class MeasurementService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly access: InspectionAccess,
    private readonly clouds: StoredPointClouds,
    private readonly inspections: InspectionRepository,
    private readonly caps: Pick<RecordCaps, 'measurementsPerInspection'> = DEFAULT_RECORD_CAPS,
  ) {}

  /** The measurements of an inspection in creation order, counted and read by windows (lists.ts pages them). */
  async list(auth: AuthContext, inspectionId: number): Promise<WindowedSource<MeasurementRecord>> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    const base = () => this.db.selectFrom('inspection.measurements').where('inspection_id', '=', inspection.id);
    return {
      count: () => this.countOf(inspection.id),
      fetch: async (window) =>
        (
          await base()
            .selectAll()
            .orderBy('seq')
            .$if(window !== undefined, (q) => q.limit(window!.limit).offset(window!.offset))
            .execute()
        ).map(mapMeasurement),
    };
  }

  /**
   * All or nothing: one invalid measurement refuses the whole body, errors keyed by its index; a
   * body that would take the inspection past its cap (record-caps.ts) is refused whole too.
   */
  async create(auth: AuthContext, inspectionId: number, inputs: MeasurementInput[]): Promise<{ annotations: MeasurementRecord[] }> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    const errors: FieldErrors = {};
    const geometries = inputs.map((input, i) => {
      const checked = validateGeometry(input.geometry!);
      if ('errors' in checked) errors[String(i)] = { geometry: checked.errors };
      return 'geometry' in checked ? checked.geometry : undefined;
    });
    if (Object.keys(errors).length > 0) throw new ValidationError({ annotations: errors });
    // Early, before volumes are computed; checked again under the lock below.
    this.refuseBeyondCap(inspection.id, await this.countOf(inspection.id), inputs.length);
    const quantities = await this.measureAll(inspection, geometries as Geometry[]);
    const rows = inputs.map((input, i) => ({
      id: crypto.randomUUID(),
      inspection_id: inspection.id,
      user_id: auth.userId,
      properties: JSON.stringify(input.properties ?? {}),
      tags: JSON.stringify(input.tags ?? []),
      geometry: JSON.stringify(geometries[i]),
      extension: JSON.stringify(withComputed(input.extension ?? {}, quantities[i])),
    }));
    const created = await this.db.transaction().execute(async (trx) => {
      // The inspection's row lock orders concurrent creations: each counts what the others stored.
      const locked = await this.inspections.lock(trx, inspection.id);
      if (locked.deleted_at) throw notFound('Inspection');
      this.refuseBeyondCap(inspection.id, await this.countOf(inspection.id, trx), rows.length);
      return trx.insertInto('inspection.measurements').values(rows).returningAll().execute();
    });
    return { annotations: created.sort((a, b) => a.seq - b.seq).map(mapMeasurement) };
  }

  /** PUT (properties, tags and geometry required by the schema) and PATCH (any subset). */
  async update(auth: AuthContext, inspectionId: number, id: string, input: MeasurementInput): Promise<MeasurementRecord> {
    const { inspection, row: current } = await this.require(auth, inspectionId, id);
    const changes: Record<string, unknown> = { updated_at: new Date() };
    let computed = quantitiesOf(current);
    if (input.geometry !== undefined) {
      const checked = validateGeometry(input.geometry);
      if ('errors' in checked) throw new ValidationError({ geometry: checked.errors });
      changes.geometry = JSON.stringify(checked.geometry);
      [computed] = await this.measureAll(inspection, [checked.geometry]);
    }
    if (input.properties !== undefined) changes.properties = JSON.stringify(input.properties);
    if (input.tags !== undefined) changes.tags = JSON.stringify(input.tags);
    if (input.extension !== undefined || input.geometry !== undefined) changes.extension = JSON.stringify(withComputed(input.extension ?? current.extension, computed));
    const row = await this.db.updateTable('inspection.measurements').set(changes).where('id', '=', current.id).returningAll().executeTakeFirst();
    if (!row) throw notFound('Measurement');
    return mapMeasurement(row);
  }

  /** One statement, its row count checked: of concurrent deletions of one measurement, one deletes, the others get 404. */
  async remove(auth: AuthContext, inspectionId: number, id: string): Promise<void> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    if (!UUID.test(id)) throw notFound('Measurement');
    const result = await this.db.deleteFrom('inspection.measurements').where('id', '=', id).where('inspection_id', '=', inspection.id).executeTakeFirst();
    if (Number(result.numDeletedRows) !== 1) throw notFound('Measurement');
  }

  private async countOf(inspectionId: number, db: Kysely<InspectionTables> = this.db): Promise<number> {
    const { count } = await db
      .selectFrom('inspection.measurements')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('inspection_id', '=', inspectionId)
      .executeTakeFirstOrThrow();
    return Number(count);
  }

  private refuseBeyondCap(inspectionId: number, held: number, adding: number): void {
    refuseBeyondCap({ field: 'annotations', what: 'measurements', inspectionId, held, adding, cap: this.caps.measurementsPerInspection, setting: 'INSPECTION_MAX_MEASUREMENTS' });
  }

  allOf(inspection: InspectionRow): Promise<MeasurementRow[]> {
    return this.db.selectFrom('inspection.measurements').selectAll().where('inspection_id', '=', inspection.id).orderBy('seq').execute();
  }

  /**
   * The quantities of each geometry. A Polygon's volume is measured over the cloud's DSM when the
   * reconstruction has one that covers it (dsm-volume.ts: a few blocks read per polygon), else over
   * the point cloud (volume.ts), read once and only when a polygon needs it; a DSM the reader
   * refuses (not a Float32 elevation raster in the output system, broken) is left for the cloud, so
   * that a bad file costs precision, not the measurement. A cloud volume is one pass over the cloud
   * (~50 ms per million points): the event loop is given back between polygons, so a body of many
   * polygons does not hold other requests.
   */
  private async measureAll(inspection: InspectionRow, geometries: Geometry[]): Promise<MeasurementQuantities[]> {
    const reconstruction = inspection.reconstruction as Reconstruction | null;
    const unitFactor = reconstruction?.coordinate_system?.unit_factor ?? 1;
    const polygons = geometries.some((g) => g.type === 'Polygon');
    const dsmLayer = polygons ? reconstruction?.rasters?.dsm : null;
    const dsm = dsmLayer ? await openElevationRaster(this.clouds.files.store, dsmLayer, reconstruction!.coordinate_system).catch(refusedAsNull) : null;
    let stored: ReturnType<StoredPointClouds['of']> | undefined;
    const quantities: MeasurementQuantities[] = [];
    for (const g of geometries) {
      if (g.type !== 'Polygon') {
        quantities.push(measure(g, unitFactor));
        continue;
      }
      const rings = g.coordinates as [number, number, number][][];
      let volume = dsm ? await volumeOverDsm(dsm, rings, unitFactor).catch(refusedAsNull) : null;
      if (!volume) {
        stored ??= this.clouds.of(inspection);
        const cloud = await stored;
        volume = cloud ? volumeAbovePlane(cloud.cloud, rings, cloud.unitFactor) : null;
      }
      quantities.push(measure(g, unitFactor, volume));
      await new Promise((resolve) => setImmediate(resolve));
    }
    return quantities;
  }

  private async require(auth: AuthContext, inspectionId: number, id: string): Promise<{ inspection: InspectionRow; row: MeasurementRow }> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    if (!UUID.test(id)) throw notFound('Measurement');
    const row = await this.db.selectFrom('inspection.measurements').selectAll().where('id', '=', id).where('inspection_id', '=', inspection.id).executeTakeFirst();
    if (!row) throw notFound('Measurement');
    return { inspection, row };
  }
}

/** null for what the elevation reader refuses or a file gone from the store; anything else is thrown on. */
function refusedAsNull(err: unknown): null {
  if (err instanceof RasterRefused || err instanceof StorageError) return null;
  throw err;
}

/** The client's extension with the service's `computed` in place of any sent. */
function withComputed(extension: Record<string, unknown>, computed: MeasurementQuantities): Record<string, unknown> {
  return { ...extension, computed };
}
