// Inspection rows -> records, with the retries each record shows: one query for any number of rows,
// and none when no row is in a bundle (a retry, or a main inspection that ever had one: has_retries),
// which is most reads of one inspection (inspection-read.ts, bench/README.md "API").
import type { Kysely } from 'kysely';
import type { InspectionTables } from '../inspection.tables.ts';
import { mapInspection, type InspectionRecord, type RecordRow, type RetryInfo } from './inspection.mapper.ts';

export async function toRecords(db: Kysely<InspectionTables>, rows: RecordRow[]): Promise<InspectionRecord[]> {
  const mains = [...new Set(rows.filter((r) => r.retry_of !== null || r.has_retries).map((r) => r.retry_of ?? r.id))];
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

export async function toRecord(db: Kysely<InspectionTables>, row: RecordRow): Promise<InspectionRecord> {
  return (await toRecords(db, [row]))[0];
}
