// Inspection rows -> records, with the retries each record shows (one query for any number of rows;
// for one record read by id, `bundleRetriesColumn` brings them in the same statement).
import { sql, type Kysely } from 'kysely';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import { mapInspection, type InspectionRecord, type RetryInfo } from './inspection.mapper.ts';

export async function toRecords(db: Kysely<InspectionTables>, rows: InspectionRow[]): Promise<InspectionRecord[]> {
  const mains = [...new Set(rows.map((r) => r.retry_of ?? r.id))];
  const byMain = new Map<number, RetryInfo[]>();
  if (mains.length > 0) {
    const retries = await db
      .selectFrom('inspection.inspections')
      .select(['id', 'status', 'created_at', 'retry_of'])
      .where('retry_of', 'in', mains)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute();
    for (const r of retries) {
      const list = byMain.get(r.retry_of!) ?? [];
      list.push({ id: r.id, status: r.status, created_at: r.created_at });
      byMain.set(r.retry_of!, list);
    }
  }
  return rows.map((row) => {
    const bundleRetries = byMain.get(row.retry_of ?? row.id) ?? [];
    return mapInspection(row, { retries: row.retry_of === null ? bundleRetries : [], bundleRetries });
  });
}

export async function toRecord(db: Kysely<InspectionTables>, row: InspectionRow): Promise<InspectionRecord> {
  return (await toRecords(db, [row]))[0];
}

/**
 * Selected beside the columns of `"inspection"."inspections"` (not aliased): the retries of the row's
 * bundle, as toRecords reads them (live retries of its main inspection, by id), as one JSON text.
 * Performance (bench/README.md, "API"): GET /v1/inspections/{id}/ reads the inspection and its
 * retries in one statement instead of two.
 */
export const bundleRetriesColumn = sql<string>`(
  select coalesce(json_agg(json_build_object('id', r.id, 'status', r.status, 'created_at', r.created_at) order by r.id), '[]')::text
  from inspection.inspections as r
  where r.retry_of = coalesce("inspection"."inspections"."retry_of", "inspection"."inspections"."id") and r.deleted_at is null
)`.as('bundle_retries');

/** The record of a row selected with `bundleRetriesColumn`: the same record toRecord makes. */
export function toRecordWithRetries(row: InspectionRow & { bundle_retries: string }): InspectionRecord {
  // created_at arrives as ISO 8601 with microseconds and offset; Date keeps the milliseconds
  // (truncated), as both database drivers do with a timestamptz column.
  const bundleRetries: RetryInfo[] = (JSON.parse(row.bundle_retries) as { id: number; status: number; created_at: string }[]).map((r) => ({
    id: r.id,
    status: r.status,
    created_at: new Date(r.created_at),
  }));
  return mapInspection(row, { retries: row.retry_of === null ? bundleRetries : [], bundleRetries });
}
