// A statement prepared once per database connection and executed by name, for the hottest reads
// (bench/README.md, "API"): PostgreSQL, and PGlite which is PostgreSQL, then parse and plan it once
// per connection instead of once per request. Measured on PGlite: the inspection read with its
// retries subquery took ~1.2 ms parsed and planned every time, ~0.65 ms executed prepared.
//
// On PostgreSQL the statement is a protocol-level named statement, run on the pool directly
// (database.ts gives it to useNamedStatements): pg parses it once per connection and then only
// binds and executes it, as any pg application's prepared statement, and the call skips Kysely's
// executor (~10 µs and a few promises per call in the profile of GET /v1/inspections/{id}/; a
// failed statement's connection is discarded, as pg-pool's query does). PGlite's driver has no
// named statements: there it is an
// SQL-level PREPARE, then EXECUTE per call. EXECUTE runs on whichever connection is lent; when that
// connection has not prepared the statement yet (a new connection, a restarted server) it answers
// 26000, and the call is made again on a connection held for it, preparing the statement there
// first if it lacks it too.
// Prepared statements belong to the session, not to a transaction, so a rollback does not undo
// them. Statements list their columns: a column added later by a migration does not change their
// result type (PostgreSQL refuses to run a prepared `select *` whose row type changed).
//
// Parameters are integers only (ids); for EXECUTE they are written as decimal literals after a
// check: nothing a client sends reaches the SQL text in any other form.
import { CompiledQuery, type Kysely } from 'kysely';

const UNDEFINED_PREPARED_STATEMENT = '26000';
const NAME = /^[a-z_][a-z0-9_]*$/;

/** Runs a named statement on a pool of PostgreSQL connections; resolves to its rows. */
export type NamedStatementRunner = (name: string, text: string, values: readonly unknown[]) => Promise<unknown[]>;

const names = new Map<string, string>();
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const runners = new WeakMap<Kysely<any>, NamedStatementRunner>();

/** Declares that `db` (PostgreSQL's) runs named statements with `run`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function useNamedStatements(db: Kysely<any>, run: NamedStatementRunner): void {
  runners.set(db, run);
}

export class PreparedStatement<R> {
  private readonly prepare: CompiledQuery;
  private readonly text: string;

  /**
   * @param name unique per process (letters, digits, underscores)
   * @param types the PostgreSQL type of each parameter ($1, $2, ...), e.g. 'integer'
   * @param text the statement, with $1, $2, ... for its parameters
   */
  constructor(
    readonly name: string,
    types: readonly ('integer' | 'bigint')[],
    text: string,
  ) {
    if (!NAME.test(name)) throw new Error(`invalid prepared statement name ${name}`);
    if (names.has(text) && names.get(text) !== name) throw new Error(`the statement of ${name} is already prepared as ${names.get(text)}`);
    names.set(text, name);
    this.text = text;
    this.prepare = CompiledQuery.raw(`prepare ${name} (${types.join(', ')}) as ${text}`);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async execute(db: Kysely<any>, parameters: readonly number[]): Promise<R[]> {
    for (const p of parameters) if (!Number.isSafeInteger(p)) throw new TypeError(`${this.name}: parameter ${p} is not an integer`);
    const run = runners.get(db);
    if (run) return (await run(this.name, this.text, parameters)) as R[];
    const execute = CompiledQuery.raw(parameters.length ? `execute ${this.name}(${parameters.join(', ')})` : `execute ${this.name}`);
    try {
      return (await db.executeQuery<R>(execute)).rows;
    } catch (err) {
      if ((err as { code?: string }).code !== UNDEFINED_PREPARED_STATEMENT) throw err;
    }
    return db.connection().execute(async (connection) => {
      try {
        return (await connection.executeQuery<R>(execute)).rows;
      } catch (err) {
        if ((err as { code?: string }).code !== UNDEFINED_PREPARED_STATEMENT) throw err;
      }
      await connection.executeQuery(this.prepare);
      return (await connection.executeQuery<R>(execute)).rows;
    });
  }
}
