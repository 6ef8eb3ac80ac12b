// Rows -> the annotation record of the spec.
import type { AnnotationRow } from '../inspection.tables.ts';

export function mapAnnotation(row: AnnotationRow) {
  return {
    id: row.id,
    type: row.type,
    inspection: row.inspection_id,
    name: row.name,
    number: row.number,
    data: { coords_2d: row.data.coords_2d, links: row.data.links ?? [] },
    severity_level: row.severity_level,
    description: row.description,
    user: row.user_id,
    photo_id: row.photo_id,
    coords_3d: row.coords_3d,
    public: row.public,
    is_visible: row.is_visible,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export type AnnotationRecord = ReturnType<typeof mapAnnotation>;
