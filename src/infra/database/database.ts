// One Kysely instance per process over either embedded PGlite (default, data in DATA_DIR/pglite)
// or a PostgreSQL server (DATABASE_URL). The same SQL runs on both.
//
// PGlite has a single connection. Kysely's PGlite driver already serialises its own use of it,
// but pg-boss talks to PGlite directly; a pg-boss statement landing in the middle of one of our
// transactions would run inside it (and pg-boss's error path issues ROLLBACK). So pg-boss gets an
// adapter that borrows the very same connection through Kysely's driver queue, one statement at a
// time: a transaction of ours and a pg-boss statement never interleave.
//
// A lost PostgreSQL connection (server restarted, backend terminated, network cut) must not end the
// process: node-postgres reports it as an 'error' event, on the pool for an idle connection and on
// the client for one checked out, and an 'error' event nobody listens to throws. Both get a listener
// here; the pool then drops the dead connection and the next query opens a new one. The query that
// was running fails, and connection-errors.ts tells the callers it was the database (503, job retry).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { fromPglite, type Db as BossDb } from 'pg-boss';
import { Kysely, PostgresDialect, type DatabaseConnection, type Driver, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import type { Logger } from 'pino';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { makePrivate, PGLITE_FOLDER } from '../data-dir.ts';
import { isDatabaseUnavailable } from './connection-errors.ts';
import { useNamedStatements } from './prepared-statement.ts';
import { namedStatementsOn } from './pglite-named-statements.ts';
import { namedStatementsOnPool } from './postgres-named-statements.ts';

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
  /** Where lost connections are reported (a warning each). */
  logger?: Logger;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize ?? 10, options.logger) : openPglite(options.dataDir);
}

async function openPostgres(connectionString: string, max: number, logger?: Logger): Promise<Database> {
  const pool = new pg.Pool({
    connectionString,
    max,
    // Same JS types as PGlite: int8 (counts, sums) as numbers. Our int8 values stay far below 2^53.
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text'),
    },
  });
  // An idle connection that dies: pg-pool removes it and emits this.
  pool.on('error', (err) => logger?.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'database connection lost; the pool drops it'));
  // A checked-out one (a transaction between statements): pg-pool takes its own listener off while
  // the client is lent out. The statement that uses it next fails, and the pool discards a client
  // that is no longer queryable when it comes back.
  pool.on('connect', (client) => client.on('error', (err) => logger?.debug({ err: { message: err.message } }, 'database connection lost while in use')));
  const db = new Kysely({ dialect: new PostgresDialect({ pool: discardingLostConnections(pool) }) });
  useNamedStatements(db, namedStatementsOnPool(pool));
  return {
    kind: 'postgres',
    db,
    boss: { connectionString },
    close: () => db.destroy(),
  };
}

/**
 * The pool as Kysely sees it, except that a connection whose statement failed because it was lost
 * is destroyed when Kysely gives it back. Without this it went back idle: a terminated backend's
 * FATAL message fails the statement a moment before the socket closes, and the very next statement
 * (pg-pool lends the most recently returned connection first) failed on the same dead connection.
 */
function discardingLostConnections(pool: pg.Pool): PostgresPool {
  const lost = new WeakSet<pg.PoolClient>();
  const lent = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const lend = (client: pg.PoolClient): PostgresPoolClient => ({
    query: ((...args: Parameters<pg.PoolClient['query']>) => {
      const result = (client.query as (...a: unknown[]) => unknown)(...args);
      if (result instanceof Promise) result.catch((err: unknown) => isDatabaseUnavailable(err) && lost.add(client));
      return result;
    }) as PostgresPoolClient['query'],
    release: () => client.release(lost.has(client) ? new Error('connection lost') : undefined),
  });
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = lent.get(client);
      if (!wrapper) lent.set(client, (wrapper = lend(client)));
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/**
 * PostgreSQL's shared buffers inside PGlite. PGlite keeps PostgreSQL's default, 128 MB, which its
 * WebAssembly memory touches at start: opening a database cost 292 MB of RSS with it, 182 MB with
 * 32 MB, 151 MB with 16 MB, measured here (issue 14's idle target on PGlite is 250 MB for the whole
 * server). 8 MB since session 15: the whole server idle and at the peak of a 1 GiB multipart upload
 * ~8 MB lower (3 runs each: peaks 237-239 MB against 245-255), with no change beyond the noise in
 * listing 100,000 cameras (810 against 876 ms) or registering them (28.8 against 26.0 s), which read
 * and write far more than either size holds. The operating system's page cache still caches the
 * files below, so a page missing from these buffers costs a read system call, not a disk access; a
 * deployment that outgrows this uses PostgreSQL (DATABASE_URL).
 */
export const PGLITE_SHARED_BUFFERS = '8MB';

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
    const folder = path.join(dataDir, PGLITE_FOLDER);
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
    useNamedStatements(db, namedStatementsOn(pglite, () => driver!));
    return {
      kind: 'pglite',
      db,
      boss: { db: queued },
      async close() {
        try {
          await db.destroy(); // closes PGlite too
          makePrivate(folder); // PGlite sets its files' modes itself (data-dir.ts)
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
