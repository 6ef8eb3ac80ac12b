// Inventory items of an inspection (spec "Inventory item"; CONTRACT section 2 for model_type).
// Items come from automatic detection and review, which do not exist yet: until then every
// inspection lists none. The table, record shape and list are in place for them.
import type { Kysely } from 'kysely';
import type { InspectionRow, InspectionTables, InventoryItemRow } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import type { InspectionAccess } from '../auth/inspection-access.ts';

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
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export type InventoryItemRecord = ReturnType<typeof mapInventoryItem>;

export class InventoryService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly access: InspectionAccess,
  ) {}

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
