// Photo annotations (spec "Annotation (photo annotation)"): rectangles on a camera's photo, with
// a type, a severity 0..5 and links. An annotation is visible to whoever sees its inspection.
// `number` is handed out per inspection (1, 2, 3... from a counter on the inspection row, so
// numbers are never reused, even after a deletion).
import type { Kysely, Transaction } from 'kysely';
import type { AnnotationRow, InspectionRow, InspectionTables, Point3 } from '../inspection.tables.ts';
import { CAMERA_COLUMNS } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { visibleTo } from '../auth/access.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import { notFound, ValidationError } from '../../infra/http/errors.ts';
import type { WindowedSource } from '../http/lists.ts';
import { validateAnnotationData } from './annotation-data.ts';
import { mapAnnotation, type AnnotationRecord } from './annotation.mapper.ts';
import type { Coords3dLocator } from './coords-3d.ts';
import { DEFAULT_ANNOTATION_TYPES } from './annotation-types.ts';
import { DEFAULT_RECORD_CAPS, refuseBeyondCap, type RecordCaps } from '../limits/record-caps.ts';

interface AnnotationFields {
  type: string;
  inspection: number;
  name?: string | null;
  data: { coords_2d: number[][]; links?: { link: string; description?: string }[] };
  severity_level?: number;
  description?: string | null;
  coords_3d?: Point3 | null;
  public?: boolean;
  is_visible?: boolean;
}

export interface CreateAnnotationInput extends AnnotationFields {
  photo_id: number;
}

/** An annotation found by an analysis of the service (rust/rust-analysis.ts), on one camera's photo. */
export interface DetectedAnnotation {
  photoId: number;
  type: string;
  name: string;
  coords2d: [number, number][];
  severityLevel: number;
  description: string;
  coords3d: Point3 | null;
}

/** Values of the optional fields when a PUT leaves them out ("all fields overwritten"). */
const RESET = { name: null, severity_level: 0, description: null, coords_3d: null, public: false, is_visible: true };

export class AnnotationService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
    private readonly access: InspectionAccess,
    private readonly locator: Coords3dLocator,
    private readonly caps: Pick<RecordCaps, 'annotationsPerInspection'> = DEFAULT_RECORD_CAPS,
  ) {}

  async create(auth: AuthContext, input: CreateAnnotationInput, options: { coords3d: boolean }): Promise<AnnotationRecord> {
    const inspection = await this.access.requireInspection(auth, input.inspection, { field: 'inspection' });
    const camera = await this.db.selectFrom('inspection.cameras').select(CAMERA_COLUMNS).where('id', '=', input.photo_id).where('inspection_id', '=', inspection.id).executeTakeFirst();
    if (!camera) throw ValidationError.field('photo_id', `${input.photo_id} is not the photo_id of a camera of inspection ${inspection.id}.`);
    const data = validateAnnotationData(input.data);
    const coords3d = options.coords3d ? await this.locator.locate(inspection, camera, data.coords_2d) : (input.coords_3d ?? null);
    const row = await this.db.transaction().execute(async (trx) => {
      // Numbering updates the inspection's row: its lock orders concurrent creations, so each
      // counts what the others stored (record-caps.ts); a refusal rolls the number back too.
      const number = await this.inspections.nextAnnotationNumber(trx, inspection.id);
      const { count } = await trx
        .selectFrom('inspection.annotations')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('inspection_id', '=', inspection.id)
        .executeTakeFirstOrThrow();
      refuseBeyondCap({
        field: 'inspection',
        what: 'annotations',
        inspectionId: inspection.id,
        held: Number(count),
        adding: 1,
        cap: this.caps.annotationsPerInspection,
        setting: 'INSPECTION_MAX_ANNOTATIONS',
      });
      return trx
        .insertInto('inspection.annotations')
        .values({
          inspection_id: inspection.id,
          user_id: auth.userId,
          number,
          type: input.type,
          name: input.name ?? null,
          data: JSON.stringify(data),
          severity_level: input.severity_level ?? 0,
          description: input.description ?? null,
          photo_id: camera.id,
          coords_3d: JSON.stringify(coords3d),
          public: input.public ?? false,
          is_visible: input.is_visible ?? true,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return mapAnnotation(row);
  }

  /**
   * Annotations found by the service itself, in the caller's transaction (with the status move that
   * reports them): numbered after the inspection's others, owned by the inspection's user, visible.
   */
  async insertDetected(trx: Transaction<InspectionTables>, inspection: InspectionRow, found: DetectedAnnotation[]): Promise<void> {
    for (const a of found) {
      const data = validateAnnotationData({ coords_2d: a.coords2d });
      const number = await this.inspections.nextAnnotationNumber(trx, inspection.id);
      await trx
        .insertInto('inspection.annotations')
        .values({
          inspection_id: inspection.id,
          user_id: inspection.user_id,
          number,
          type: a.type,
          name: a.name,
          data: JSON.stringify(data),
          severity_level: a.severityLevel,
          description: a.description,
          photo_id: a.photoId,
          coords_3d: JSON.stringify(a.coords3d),
          public: false,
          is_visible: true,
        })
        .execute();
    }
  }

  async get(auth: AuthContext, id: number): Promise<AnnotationRecord> {
    return mapAnnotation(await this.require(auth, id));
  }

  /** PUT (`partial` false: missing optional fields are reset) and PATCH (only the fields given). */
  async update(auth: AuthContext, id: number, input: Partial<AnnotationFields>, partial: boolean): Promise<AnnotationRecord> {
    const current = await this.require(auth, id);
    if (input.inspection !== undefined && input.inspection !== current.inspection_id) {
      throw ValidationError.field('inspection', 'An annotation cannot move to another inspection: its photo belongs to this one.');
    }
    const changes: Record<string, unknown> = { updated_at: new Date() };
    const source = partial ? input : { ...RESET, ...input };
    if (source.type !== undefined) changes.type = source.type;
    if (source.data !== undefined) changes.data = JSON.stringify(validateAnnotationData(source.data));
    if (source.name !== undefined) changes.name = source.name;
    if (source.severity_level !== undefined) changes.severity_level = source.severity_level;
    if (source.description !== undefined) changes.description = source.description;
    if (source.coords_3d !== undefined) changes.coords_3d = JSON.stringify(source.coords_3d);
    if (source.public !== undefined) changes.public = source.public;
    if (source.is_visible !== undefined) changes.is_visible = source.is_visible;
    const row = await this.db.updateTable('inspection.annotations').set(changes).where('id', '=', current.id).returningAll().executeTakeFirst();
    if (!row) throw notFound('Annotation');
    return mapAnnotation(row);
  }

  /** One statement, its row count checked: of concurrent deletions of one annotation, one deletes, the others get 404. */
  async remove(auth: AuthContext, id: number): Promise<void> {
    const result = await this.db
      .deleteFrom('inspection.annotations')
      .where('id', '=', id)
      .where('inspection_id', 'in', this.inspections.visible(auth).clearSelect().select('id'))
      .executeTakeFirst();
    if (Number(result.numDeletedRows) !== 1) throw notFound('Annotation');
  }

  /** The annotations of an inspection, by number. */
  async listOfInspection(auth: AuthContext, inspectionId: number): Promise<WindowedSource<AnnotationRecord>> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    const base = () => this.db.selectFrom('inspection.annotations').where('inspection_id', '=', inspection.id);
    return {
      count: async () => Number((await base().select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count),
      fetch: async (window) =>
        (
          await base()
            .selectAll()
            .orderBy('number')
            .$if(window !== undefined, (q) => q.limit(window!.limit).offset(window!.offset))
            .execute()
        ).map(mapAnnotation),
    };
  }

  /** Every annotation of an inspection (reports), optionally only the visible ones. */
  async allOf(inspection: InspectionRow, onlyVisible: boolean): Promise<AnnotationRow[]> {
    return this.db
      .selectFrom('inspection.annotations')
      .selectAll()
      .where('inspection_id', '=', inspection.id)
      .$if(onlyVisible, (q) => q.where('is_visible', '=', true))
      .orderBy('number')
      .execute();
  }

  /** The distinct types of the annotations the request can see, plus the default types, sorted. */
  async types(auth: AuthContext): Promise<{ type: string }[]> {
    const rows = await this.db
      .selectFrom('inspection.annotations as n')
      .innerJoin('inspection.inspections as i', 'i.id', 'n.inspection_id')
      .select('n.type')
      .distinct()
      .where('i.deleted_at', 'is', null)
      .where(visibleTo(auth, 'i'))
      .execute();
    const types = new Set<string>([...DEFAULT_ANNOTATION_TYPES, ...rows.map((r) => r.type)]);
    return [...types].sort((a, b) => a.localeCompare(b)).map((type) => ({ type }));
  }

  private async require(auth: AuthContext, id: number): Promise<AnnotationRow> {
    const row = await this.db
      .selectFrom('inspection.annotations as n')
      .innerJoin('inspection.inspections as i', 'i.id', 'n.inspection_id')
      .selectAll('n')
      .where('n.id', '=', id)
      .where('i.deleted_at', 'is', null)
      .where(visibleTo(auth, 'i'))
      .executeTakeFirst();
    if (!row) throw notFound('Annotation');
    return row;
  }
}
