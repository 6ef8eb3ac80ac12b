// Measurements of an inspection (spec "Measurement"): points, distances and areas drawn in the
// inspection's 3D space. Ids are UUID strings; `entity_type` is "inspection" and `entity_id`
// its id. Validation of geometries is in geometry.ts.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { InspectionRow, InspectionTables, MeasurementRow } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import { notFound, ValidationError, type FieldErrors } from '../../infra/http/errors.ts';
import { validateGeometry } from './geometry.ts';

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
    extension: row.extension,
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
  ) {}

  async list(auth: AuthContext, inspectionId: number): Promise<{ results: MeasurementRecord[] }> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    return { results: (await this.allOf(inspection)).map(mapMeasurement) };
  }

  /** All or nothing: one invalid measurement refuses the whole body, errors keyed by its index. */
  async create(auth: AuthContext, inspectionId: number, inputs: MeasurementInput[]): Promise<{ annotations: MeasurementRecord[] }> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    const errors: FieldErrors = {};
    const rows = inputs.map((input, i) => {
      const checked = validateGeometry(input.geometry!);
      if ('errors' in checked) {
        errors[String(i)] = { geometry: checked.errors };
        return undefined;
      }
      return {
        id: crypto.randomUUID(),
        inspection_id: inspection.id,
        user_id: auth.userId,
        properties: JSON.stringify(input.properties ?? {}),
        tags: JSON.stringify(input.tags ?? []),
        geometry: JSON.stringify(checked.geometry),
        extension: JSON.stringify(input.extension ?? {}),
      };
    });
    if (Object.keys(errors).length > 0) throw new ValidationError({ annotations: errors });
    const created = await this.db
      .insertInto('inspection.measurements')
      .values(rows.map((r) => r!))
      .returningAll()
      .execute();
    return { annotations: created.sort((a, b) => a.seq - b.seq).map(mapMeasurement) };
  }

  /** PUT (properties, tags and geometry required by the schema) and PATCH (any subset). */
  async update(auth: AuthContext, inspectionId: number, id: string, input: MeasurementInput): Promise<MeasurementRecord> {
    const current = await this.require(auth, inspectionId, id);
    const changes: Record<string, unknown> = { updated_at: new Date() };
    if (input.geometry !== undefined) {
      const checked = validateGeometry(input.geometry);
      if ('errors' in checked) throw new ValidationError({ geometry: checked.errors });
      changes.geometry = JSON.stringify(checked.geometry);
    }
    if (input.properties !== undefined) changes.properties = JSON.stringify(input.properties);
    if (input.tags !== undefined) changes.tags = JSON.stringify(input.tags);
    if (input.extension !== undefined) changes.extension = JSON.stringify(input.extension);
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

  allOf(inspection: InspectionRow): Promise<MeasurementRow[]> {
    return this.db.selectFrom('inspection.measurements').selectAll().where('inspection_id', '=', inspection.id).orderBy('seq').execute();
  }

  private async require(auth: AuthContext, inspectionId: number, id: string): Promise<MeasurementRow> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    if (!UUID.test(id)) throw notFound('Measurement');
    const row = await this.db.selectFrom('inspection.measurements').selectAll().where('id', '=', id).where('inspection_id', '=', inspection.id).executeTakeFirst();
    if (!row) throw notFound('Measurement');
    return row;
  }
}
