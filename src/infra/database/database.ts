// One Kysely instance per process over either embedded PGlite (default, data in DATA_DIR/pglite)
// or a PostgreSQL server (DATABASE_URL). The same SQL runs on both.
//
// PGlite has a single connection. Kysely's PGlite driver already serialises its own use of it,
// but pg-boss talks to PGlite directly; a pg-boss statement landing in the middle of one of our
// transactions would run inside it (and pg-boss's error path issues ROLLBACK). So pg-boss gets an
// adapter that borrows the very same connection through Kysely's driver queue, one statement at a
// time: a transaction of ours and a pg-boss statement never interleave.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { fromPglite, type Db as BossDb } from 'pg-boss';
import { Kysely, PostgresDialect, type DatabaseConnection, type Driver } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';

export interface Database {
  kind: 'pglite' | 'postgres';
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>;
  /** How pg-boss reaches this database. */
  boss: { connectionString: string } | { db: BossDb };
  close(): Promise<void>;
}

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Maximum connections of the PostgreSQL pool. */
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize ?? 10) : openPglite(options.dataDir);
}

async function openPostgres(connectionString: string, max: number): Promise<Database> {
  const pool = new pg.Pool({
    connectionString,
    max,
    // Same JS types as PGlite: int8 (counts, sums) as numbers. Our int8 values stay far below 2^53.
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text'),
    },
  });
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    db,
    boss: { connectionString },
    close: () => db.destroy(),
  };
}

/**
 * PostgreSQL's shared buffers inside PGlite. PGlite keeps PostgreSQL's default, 128 MB, which its
 * WebAssembly memory touches at start: opening a database cost 292 MB of RSS with it, 182 MB with
 * 32 MB (151 MB with 16 MB), measured here. The operating system's page cache still caches the
 * files below; a deployment that outgrows this uses PostgreSQL (DATABASE_URL).
 */
export const PGLITE_SHARED_BUFFERS = '32MB';

/**
 * Creates the embedded database in a short-lived child process when the folder has none yet.
 * Creating one (initdb) grows PGlite's WebAssembly memory to ~700 MB, which the runtime never
 * gives back: the server that created its database stayed at ~800 MB of RSS until restarted,
 * against ~180 MB when it opens an existing one (bench/README.md, "Memory").
 */
async function createPgliteInChild(folder: string): Promise<void> {
  if (fs.existsSync(path.join(folder, 'PG_VERSION'))) return;
  const script = `const { PGlite } = await import(process.argv[1]); const db = await PGlite.create({ dataDir: process.argv[2] }); await db.close();`;
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, import.meta.resolve('@electric-sql/pglite'), folder], { timeout: 120_000 });
}

async function openPglite(dataDir: string): Promise<Database> {
  const lock: DataDirLock = lockDataDir(dataDir);
  try {
    const folder = path.join(dataDir, 'pglite');
    await createPgliteInChild(folder);
    const pglite = await PGlite.create({ dataDir: folder, postgresqlconf: [`shared_buffers=${PGLITE_SHARED_BUFFERS}`] });
    let driver: Driver | undefined;
    const dialect = new PGliteDialect(pglite);
    // Keep the driver Kysely creates, to share its connection queue with pg-boss.
    const createDriver = dialect.createDriver.bind(dialect);
    dialect.createDriver = () => (driver = createDriver());
    const db = new Kysely({ dialect });
    const direct = fromPglite(pglite);
    const queued: BossDb = {
      async executeSql(text, values) {
        if (!driver) throw new Error('database not initialised');
        const connection: DatabaseConnection = await driver.acquireConnection();
        try {
          return await direct.executeSql(text, values);
        } finally {
          await driver.releaseConnection(connection);
        }
      },
      listen: direct.listen,
    };
    // Kysely creates its driver lazily; force it now so pg-boss can start first.
    await db.selectNoFrom((eb) => eb.val(1).as('one')).execute();
    return {
      kind: 'pglite',
      db,
      boss: { db: queued },
      async close() {
        try {
          await db.destroy(); // closes PGlite too
        } finally {
          lock.release();
        }
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}
