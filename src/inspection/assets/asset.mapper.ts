// Rows -> the asset record of the spec.
import type { AssetView } from './asset.service.ts';

export function mapAsset(row: AssetView, inspections: number[]) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    latitude: row.latitude === null ? null : trimDecimal(row.latitude),
    longitude: row.longitude === null ? null : trimDecimal(row.longitude),
    user: row.user_id,
    organization_uuid: row.organization_uuid,
    description: row.description,
    inspections,
    project_group_id: row.project_group_id,
    project_group_uuid: row.project_group_uuid,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** numeric(11,8) comes back as "12.50000000"; keep 8 decimals as a string, the way DRF renders DecimalField. */
function trimDecimal(value: string): string {
  return Number(value).toFixed(8);
}
