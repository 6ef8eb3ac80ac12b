// Inventory items of an inspection (spec "Inventory item"; CONTRACT section 2 for model_type), the
// one writer of `inspection.inventory_items`. Items come from the automatic antenna detection
// (`detect_antennas`, antenna-detection.ts: insertDetected, source "automatic_detection") or are
// entered by hand (issue 30 §4, source "manual"), marked on two or more photos, their position and
// orientation computed from the calibrated cameras (inventory-geometry.ts), both returned with how
// (`computation`, an extension of the spec). Every change by hand moves the inventory's review
// status (inventory-statuses.ts) in the same transaction.
// Where the item shows on the other photos, its best viewpoint and its offset from the base plate
// come with the geometry (inventory-views.ts). The file passes 350 lines by the geometry's
// bookkeeping (geometryOf); the maths is in inventory-geometry.ts and inventory-views.ts.
// `number` is the inspection's largest plus one, handed out under the inspection row's lock.
import type { Kysely, Transaction } from 'kysely';
import type { InspectionRow, InspectionTables, InventoryItemRow } from '../inspection.tables.ts';
import { CAMERA_COLUMNS } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import type { CameraCalibration, Reconstruction } from '../pipeline/reconstruction.ts';
import { cameraFromCalibrated, type PhotoCamera } from '../../shared/pointcloud/index.ts';
import { projectorFrom } from '../../shared/geo/projection.ts';
import { conflict, notFound, ValidationError } from '../../infra/http/errors.ts';
import { GeometryError, itemGeometry, round, type FaceCorners, type MarkedPhoto } from './inventory-geometry.ts';
import { InventoryStatus } from './inventory-statuses.ts';
import { itemViews, type CalibratedPhoto } from './inventory-views.ts';
import { MANUAL_SOURCE, type DetectedItemColumns } from './detected-items.ts';

export const MODEL_TYPES = ['panel_antenna', 'microwave_antenna', 'ancillary_box', 'collinear_antenna', 'yagi_antenna', 'mount'] as const;

export function mapInventoryItem(row: InventoryItemRow) {
  return {
    id: row.id,
    number: row.number,
    name: row.name,
    model_name: row.model_name,
    weight: row.weight,
    urls: row.urls,
    photo_id: row.photo_id,
    point_of_view: row.point_of_view,
    coords_2d: row.coords_2d,
    photo_projection: row.photo_projection,
    coords_3d: row.coords_3d,
    public: row.public,
    visible: row.visible,
    device_status: row.device_status,
    source: row.source,
    model_type: row.model_type,
    offset_xyz: row.offset_xyz,
    plumb: row.plumb,
    azimuth: row.azimuth,
    downtilt: row.downtilt,
    height: row.height,
    width: row.width,
    depth: row.depth,
    custom_fields: row.custom_fields,
    template: row.template,
    inspection: row.inspection_id,
    computation: (row.computation ?? null) as InventoryComputation | null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export type InventoryItemRecord = ReturnType<typeof mapInventoryItem>;

/** The `computation` of an item (inventory.schemas.ts Computation). */
export interface InventoryComputation {
  /** triangulation: from marks by hand; entered: values given by hand; detection: the automatic antenna detection (detected-items.ts). */
  method: 'triangulation' | 'entered' | 'detection';
  photos: number;
  residual_m: number | null;
  planarity_m: number | null;
  ray_angle_deg: number | null;
  corners_3d: { x: number; y: number; z: number }[];
  normal: number[] | null;
  vertical_size_m: number | null;
  height_reference: 'base_plate_location' | 'ground_reference_altitude' | 'detected_tower_base' | null;
  height_reference_z: number | null;
  azimuth_reference: string;
  /** Grid bearing of true north at the asset, degrees (azimuth = grid azimuth − this); null: grid north used. */
  north_convergence_deg?: number | null;
  /** Detection only: the detector's confidence (0..1), the points of the item, and the box's eight corners. */
  confidence?: number;
  points?: number;
  box_corners_3d?: { x: number; y: number; z: number }[];
}

export const AZIMUTH_REFERENCE = 'grid north of the output coordinate system (extras.coordinate_system): no georeferenced reconstruction or no asset position to find true north';
/** The fields the marks decide; given in a body beside marks they are refused. */
const COMPUTED = ['azimuth', 'downtilt', 'plumb', 'height', 'width'] as const;

export interface InventoryItemInput {
  model_type?: (typeof MODEL_TYPES)[number];
  name?: string;
  model_name?: string;
  weight?: string;
  urls?: Record<string, unknown>;
  device_status?: string;
  coords_2d?: Record<string, [number, number][]>;
  public?: boolean;
  visible?: boolean;
  custom_fields?: unknown[];
  template?: number | null;
  depth?: number | null;
  azimuth?: number | null;
  downtilt?: number | null;
  plumb?: number | null;
  height?: number | null;
  width?: number | null;
}

export class InventoryService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly access: InspectionAccess,
    private readonly inspections: InspectionRepository,
  ) {}

  async create(auth: AuthContext, id: number, input: InventoryItemInput & { model_type: (typeof MODEL_TYPES)[number] }): Promise<InventoryItemRecord> {
    const inspection = await this.access.requireInspection(auth, id);
    const geometry = await this.geometryOf(inspection, input, null);
    const row = await this.db.transaction().execute(async (trx) => {
      await trx.selectFrom('inspection.inspections').select('id').where('id', '=', inspection.id).forUpdate().executeTakeFirstOrThrow();
      const { max } = await trx
        .selectFrom('inspection.inventory_items')
        .select((eb) => eb.fn.max<number | null>('number').as('max'))
        .where('inspection_id', '=', inspection.id)
        .executeTakeFirstOrThrow();
      const created = await trx
        .insertInto('inspection.inventory_items')
        .values({
          inspection_id: inspection.id,
          number: Number(max ?? 0) + 1,
          model_type: input.model_type,
          name: input.name ?? '',
          model_name: input.model_name ?? '',
          weight: input.weight ?? '',
          urls: JSON.stringify(input.urls ?? {}),
          device_status: input.device_status ?? '',
          source: MANUAL_SOURCE,
          public: input.public ?? false,
          visible: input.visible ?? true,
          custom_fields: JSON.stringify(input.custom_fields ?? []),
          template: input.template ?? null,
          depth: input.depth ?? null,
          point_of_view: '[]',
          photo_projection: '{}',
          offset_xyz: '{}',
          ...geometry,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.inspections.inventoryTransition(inspection.id, InventoryStatus.ReviewOngoing, trx);
      return created;
    });
    return mapInventoryItem(row);
  }

  async update(auth: AuthContext, id: number, itemId: number, input: InventoryItemInput): Promise<InventoryItemRecord> {
    const inspection = await this.access.requireInspection(auth, id);
    const current = await this.requireItem(inspection, itemId);
    const geometry = await this.geometryOf(inspection, input, current);
    const row = await this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('inspection.inventory_items')
        .set({
          ...(input.model_type !== undefined ? { model_type: input.model_type } : {}),
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.model_name !== undefined ? { model_name: input.model_name } : {}),
          ...(input.weight !== undefined ? { weight: input.weight } : {}),
          ...(input.urls !== undefined ? { urls: JSON.stringify(input.urls) } : {}),
          ...(input.device_status !== undefined ? { device_status: input.device_status } : {}),
          ...(input.public !== undefined ? { public: input.public } : {}),
          ...(input.visible !== undefined ? { visible: input.visible } : {}),
          ...(input.custom_fields !== undefined ? { custom_fields: JSON.stringify(input.custom_fields) } : {}),
          ...(input.template !== undefined ? { template: input.template } : {}),
          ...(input.depth !== undefined ? { depth: input.depth } : {}),
          ...geometry,
          updated_at: new Date(),
        })
        .where('id', '=', current.id)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw notFound('Inventory item');
      await this.inspections.inventoryTransition(inspection.id, InventoryStatus.ReviewOngoing, trx);
      return updated;
    });
    return mapInventoryItem(row);
  }

  async remove(auth: AuthContext, id: number, itemId: number): Promise<void> {
    const inspection = await this.access.requireInspection(auth, id);
    const current = await this.requireItem(inspection, itemId);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('inspection.inventory_items').where('id', '=', current.id).execute();
      await this.inspections.inventoryTransition(inspection.id, InventoryStatus.ReviewOngoing, trx);
    });
  }

  /**
   * The items of an automatic detection (antenna-detection.ts), in the caller's transaction (the
   * one that moves the inventory status), numbered after the inspection's other items under its
   * row lock, in the order given.
   */
  async insertDetected(trx: Transaction<InspectionTables>, inspectionId: number, items: readonly DetectedItemColumns[]): Promise<number> {
    if (items.length === 0) return 0;
    await trx.selectFrom('inspection.inspections').select('id').where('id', '=', inspectionId).forUpdate().executeTakeFirstOrThrow();
    const { max } = await trx
      .selectFrom('inspection.inventory_items')
      .select((eb) => eb.fn.max<number | null>('number').as('max'))
      .where('inspection_id', '=', inspectionId)
      .executeTakeFirstOrThrow();
    const first = Number(max ?? 0) + 1;
    await trx
      .insertInto('inspection.inventory_items')
      .values(
        items.map((item, i) => ({
          ...item,
          inspection_id: inspectionId,
          number: first + i,
          model_name: '',
          weight: '',
          urls: '{}',
          device_status: '',
          public: false,
          visible: true,
          custom_fields: '[]',
          template: null,
        })),
      )
      .execute();
    return items.length;
  }

  /**
   * The reviewer is done: 5 with at least one item, 6 ("completed without compatible inventory")
   * with none. 409 when the status does not allow it (already completed: a change reopens it).
   */
  async reviewDone(auth: AuthContext, id: number): Promise<{ inventory: number }> {
    const inspection = await this.access.requireInspection(auth, id);
    return this.db.transaction().execute(async (trx) => {
      await trx.selectFrom('inspection.inspections').select('id').where('id', '=', inspection.id).forUpdate().executeTakeFirstOrThrow();
      const { count } = await trx
        .selectFrom('inspection.inventory_items')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('inspection_id', '=', inspection.id)
        .executeTakeFirstOrThrow();
      const to = Number(count) > 0 ? InventoryStatus.ReviewCompleted : InventoryStatus.ReviewCompletedEmpty;
      if (!(await this.inspections.inventoryTransition(inspection.id, to, trx))) {
        const now = await trx.selectFrom('inspection.inspections').select('additional_statuses').where('id', '=', inspection.id).executeTakeFirstOrThrow();
        throw conflict(`The inventory review cannot be completed from inventory status ${now.additional_statuses.inventory} (review done needs none, 3, 4 or 9; change an item to reopen a completed review).`);
      }
      return { inventory: to };
    });
  }

  /**
   * True north in the output system: the grid bearing of the meridian at the asset (the meridian
   * convergence, e.g. -1.8° at Lausanne in UTM zone 32), from the reconstruction's coordinate
   * system and the asset's position; azimuths are turned by it. Grid north (convergence 0) when
   * either is unknown, said in `azimuth_reference`.
   */
  private async northOf(inspection: InspectionRow): Promise<{ convergence: number; reference: string }> {
    const crs = (inspection.reconstruction as Reconstruction | null)?.coordinate_system;
    const asset = await this.db.selectFrom('inspection.assets').select(['latitude', 'longitude']).where('id', '=', inspection.asset_id).executeTakeFirst();
    const project = crs ? projectorFrom(crs) : null;
    if (project && asset?.latitude != null && asset.longitude != null) {
      const [lat, lon] = [Number(asset.latitude), Number(asset.longitude)];
      const here = project(lat, lon);
      const up = project(Math.min(lat + 0.001, 89.999), lon);
      if (here && up && lat + 0.001 < 90) {
        const convergence = (Math.atan2(up.x - here.x, up.y - here.y) * 180) / Math.PI;
        return { convergence, reference: `true north (the output system's grid north turned by the meridian convergence at the asset, ${convergence.toFixed(3)}°)` };
      }
    }
    return { convergence: 0, reference: AZIMUTH_REFERENCE };
  }

  private async requireItem(inspection: InspectionRow, itemId: number): Promise<InventoryItemRow> {
    const row = await this.db.selectFrom('inspection.inventory_items').selectAll().where('id', '=', itemId).where('inspection_id', '=', inspection.id).executeTakeFirst();
    if (!row) throw notFound('Inventory item');
    return row;
  }

  /**
   * The columns the body's marks decide (coords_2d, photo_id, coords_3d, the angles, width, height,
   * computation), or the values entered by hand when the item has no marks. Empty when the body
   * changes none of them.
   */
  private async geometryOf(inspection: InspectionRow, input: InventoryItemInput, current: InventoryItemRow | null) {
    const marks = input.coords_2d ?? (current ? (current.coords_2d as Record<string, [number, number][]>) : {});
    const photoIds = Object.keys(marks).map(Number);
    const entered = COMPUTED.filter((k) => input[k] !== undefined && input[k] !== null);
    if (photoIds.length > 0 && entered.length > 0) {
      throw new ValidationError(Object.fromEntries(entered.map((k) => [k, [`Computed from the marks in coords_2d: leave ${k} out (or clear coords_2d to enter it by hand).`]])));
    }
    if (photoIds.length === 1) throw ValidationError.field('coords_2d', 'Mark the item on at least two photos (or on none, to enter its geometry by hand).');
    if (photoIds.length === 0) {
      if (input.coords_2d === undefined && !COMPUTED.some((k) => input[k] !== undefined)) return {};
      // A detected item corrected by hand: the values given replace the detector's, its position,
      // photo and computation stay (sending coords_2d, even `{}`, replaces the whole geometry).
      if (input.coords_2d === undefined && (current?.computation as InventoryComputation | null)?.method === 'detection') {
        return Object.fromEntries(COMPUTED.filter((k) => input[k] !== undefined).map((k) => [k, input[k] ?? null])) as Partial<Record<(typeof COMPUTED)[number], number | null>>;
      }
      // Values computed from marks now cleared are dropped with them; values entered before stay.
      const wasEntered = current !== null && (current.computation as InventoryComputation | null)?.method !== 'triangulation';
      const pick = (k: (typeof COMPUTED)[number]) => (input[k] !== undefined ? input[k] : wasEntered ? current[k] : null) ?? null;
      const computation: InventoryComputation = {
        method: 'entered',
        photos: 0,
        residual_m: null,
        planarity_m: null,
        ray_angle_deg: null,
        corners_3d: [],
        normal: null,
        vertical_size_m: null,
        height_reference: null,
        height_reference_z: null,
        azimuth_reference: AZIMUTH_REFERENCE,
      };
      return {
        coords_2d: '{}',
        photo_id: null,
        coords_3d: '[]',
        photo_projection: '{}',
        point_of_view: '[]',
        offset_xyz: '{}',
        azimuth: pick('azimuth'),
        downtilt: pick('downtilt'),
        plumb: pick('plumb'),
        height: pick('height'),
        width: pick('width'),
        computation: JSON.stringify(computation),
      };
    }
    if (input.coords_2d === undefined) return {}; // marks unchanged: the geometry stands
    const cameras = await this.db.selectFrom('inspection.cameras').select(CAMERA_COLUMNS).where('inspection_id', '=', inspection.id).execute();
    // Every calibrated camera, read once: the marked photos triangulate, all of them show the item (photo_projection).
    const calibrated = new Map<number, PhotoCamera | null>(cameras.map((c) => [c.id, cameraFromCalibrated((c.calibration as CameraCalibration | null) ?? { width: 0, height: 0 })]));
    const marked: MarkedPhoto[] = photoIds.map((photoId) => {
      if (!calibrated.has(photoId)) throw new ValidationError({ coords_2d: { [String(photoId)]: [`${photoId} is not the photo_id of a camera of inspection ${inspection.id}.`] } });
      const camera = calibrated.get(photoId);
      if (!camera) throw new ValidationError({ coords_2d: { [String(photoId)]: [`Photo ${photoId} has no calibrated camera (the inspection's reconstruction did not place it): mark the item on calibrated photos.`] } });
      return { photoId, camera, corners: marks[String(photoId)] as FaceCorners };
    });
    let g;
    try {
      g = itemGeometry(marked);
    } catch (err) {
      if (err instanceof GeometryError) throw ValidationError.field('coords_2d', `${err.message[0].toUpperCase()}${err.message.slice(1)}.`);
      throw err;
    }
    // The asset's base when the inspection has one; else the ground at the asset when the
    // reconstruction found it (ground_reference_altitude is "0.000", not a height, before that):
    // else no height rather than one above an unknown zero.
    const base = inspection.base_plate_location as { x: number; y: number; z: number } | null;
    const groundFound = Boolean((inspection.reconstruction as Reconstruction | null)?.ground_reference);
    const reference =
      base && Number.isFinite(base.z)
        ? { name: 'base_plate_location' as const, z: base.z }
        : groundFound
          ? { name: 'ground_reference_altitude' as const, z: Number(inspection.ground_reference_altitude) }
          : null;
    const north = await this.northOf(inspection);
    const xyz = (p: readonly number[]) => ({ x: round(p[0], 3), y: round(p[1], 3), z: round(p[2], 3) });
    const computation: InventoryComputation = {
      method: 'triangulation',
      photos: marked.length,
      residual_m: round(g.residual, 3),
      planarity_m: round(g.planarity, 3),
      ray_angle_deg: round(g.rayAngle, 1),
      corners_3d: g.corners.map(xyz),
      normal: g.normal.map((v) => round(v, 4)),
      vertical_size_m: round(g.verticalSize, 3),
      height_reference: reference?.name ?? null,
      height_reference_z: reference?.z ?? null,
      azimuth_reference: north.reference,
      north_convergence_deg: north.reference === AZIMUTH_REFERENCE ? null : round(north.convergence, 4),
    };
    const seeing = [...calibrated].flatMap(([photoId, camera]): CalibratedPhoto[] => (camera ? [{ photoId, camera }] : []));
    const views = itemViews({ centre: g.centre, corners: g.corners, normal: g.normal }, seeing, base);
    return {
      coords_2d: JSON.stringify(marks),
      photo_id: photoIds[0],
      photo_projection: JSON.stringify(views.photo_projection),
      point_of_view: JSON.stringify(views.point_of_view),
      offset_xyz: JSON.stringify(views.offset_xyz),
      coords_3d: JSON.stringify([round(g.centre[0], 3), round(g.centre[1], 3), round(g.centre[2], 3)]),
      azimuth: round((((g.azimuth - north.convergence) % 360) + 360) % 360, 2),
      downtilt: round(g.downtilt, 2),
      plumb: round(g.plumb, 2),
      height: reference ? round(g.centre[2] - reference.z, 3) : null,
      width: round(g.width, 3),
      computation: JSON.stringify(computation),
    };
  }

  async list(auth: AuthContext, id: number): Promise<InventoryItemRecord[]> {
    const inspection = await this.access.requireInspection(auth, id);
    return (await this.allOf(inspection, false)).map(mapInventoryItem);
  }

  allOf(inspection: InspectionRow, onlyVisible: boolean): Promise<InventoryItemRow[]> {
    return this.db
      .selectFrom('inspection.inventory_items')
      .selectAll()
      .where('inspection_id', '=', inspection.id)
      .$if(onlyVisible, (q) => q.where('visible', '=', true))
      .orderBy('number')
      .execute();
  }
}
