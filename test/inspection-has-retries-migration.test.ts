// Migration 0009 (inspection.migrations.ts): main inspections that already have retries are flagged
// has_retries, so the record read (inspections/inspection-read.ts) still finds their retries; a main
// without any, and the retries themselves, are not.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { openTestDatabase } from './helpers/test-system.ts';
import type { Database } from '../src/infra/database/database.ts';
import { migrateSchema } from '../src/infra/database/migrate.ts';
import { inspectionMigrations } from '../src/inspection/inspection.migrations.ts';

describe('migration 0009_inspection_has_retries', () => {
  let database: Database;
  before(async () => {
    database = await openTestDatabase('has-retries');
  });
  after(() => database.close());

  it('flags the main inspections that have retries', async () => {
    const db = database.db as Kysely<unknown>;
    const before = Object.fromEntries(Object.entries(inspectionMigrations).filter(([name]) => name < '0009'));
    await migrateSchema(db, 'inspection', before);
    // Rows alone (no assets, users or projects): foreign keys are not checked in this session.
    await db.connection().execute(async (connection) => {
      await sql`set session_replication_role = replica`.execute(connection);
      for (const [id, retryOf] of [
        [1, null],
        [2, 1],
        [3, 1],
        [4, null],
      ] as const) {
        await sql`insert into inspection.inspections (id, project_id, asset_id, user_id, retry_of, processing_parameters) values (${id}, ${id}, 1, 1, ${retryOf}, '{}')`.execute(connection);
      }
      await sql`set session_replication_role = origin`.execute(connection);
    });
    await migrateSchema(db, 'inspection', inspectionMigrations);
    const { rows } = await sql<{ id: number; has_retries: boolean }>`select id, has_retries from inspection.inspections order by id`.execute(db);
    assert.deepEqual(rows, [
      { id: 1, has_retries: true },
      { id: 2, has_retries: false },
      { id: 3, has_retries: false },
      { id: 4, has_retries: false },
    ]);
  });
});
