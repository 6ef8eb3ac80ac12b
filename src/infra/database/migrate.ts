// Versioned migrations, one set per service, each in the service's own schema with its own
// bookkeeping table, so that the two services can be deployed (and migrated) separately.
import { Migrator, sql, type Kysely, type Migration } from 'kysely';

export type MigrationSet = Record<string, Migration>;

export async function migrateSchema(db: Kysely<unknown>, schema: string, migrations: MigrationSet): Promise<void> {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  const migrator = new Migrator({
    db,
    migrationTableSchema: schema,
    provider: { getMigrations: async () => migrations },
    // Numbers are handed out to work done in parallel, so one may land after a later number was
    // applied (inspection 0013_webhooks after 0014 and 0015): it still runs, once. Migrations of a
    // set never depend on one with a later number.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`Migrating schema ${schema} failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`);
  }
}

/**
 * Runs a block of DDL statement by statement: PGlite's extended protocol (which Kysely uses)
 * takes one statement per query. Statements are split at semicolons that end a line, so keep
 * semicolons out of string literals in migrations.
 */
export async function runStatements(db: Kysely<unknown>, block: string): Promise<void> {
  for (const statement of block.split(/;\s*\n/).map((s) => s.trim()).filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
}
