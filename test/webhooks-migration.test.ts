// A database that applied later-numbered migrations before 0013_webhooks existed (inspection
// 0014_retention and 0015_inventory_by_hand were merged first) still gets 0013 at the next start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase } from './helpers/test-system.ts';
import { migrateSchema } from '../src/infra/database/migrate.ts';
import { inspectionMigrations } from '../src/inspection/inspection.migrations.ts';

test('0013_webhooks runs on a database already at 0015', async () => {
  const database = await openTestDatabase('oi-migrate-');
  try {
    // Without 0013 and what builds on its tables (0018's index): the database of that time.
    const without = Object.fromEntries(Object.entries(inspectionMigrations).filter(([name]) => name !== '0013_webhooks' && name !== '0018_webhook_pending_index'));
    await migrateSchema(database.db as never, 'inspection', without);
    const exists = async () => (await sql<{ t: string | null }>`select to_regclass('inspection.webhooks')::text as t`.execute(database.db)).rows[0].t;
    assert.equal(await exists(), null);
    await migrateSchema(database.db as never, 'inspection', inspectionMigrations);
    assert.equal(await exists(), 'inspection.webhooks');
    await migrateSchema(database.db as never, 'inspection', inspectionMigrations); // nothing left to run
  } finally {
    await database.close();
  }
});
