// A statement prepared once per database connection and executed by name, for the hottest reads
// (bench/README.md, "API"): PostgreSQL, and PGlite which is PostgreSQL, then parse and plan it once
// per connection instead of once per request. Measured on PGlite: the inspection read with its
// retries subquery took ~1.2 ms parsed and planned every time, ~0.65 ms executed prepared.
//
// Each database runs them its own way (database.ts gives the way to useNamedStatements), outside
// Kysely's executor (~10 µs and a few promises per call in the profile of GET
// /v1/inspections/{id}/ on PostgreSQL, ~30 µs on PGlite), both by SQL-level PREPARE on a
// connection's first use and EXECUTE, and both sending the calls of one turn of the event loop as
// one Query message (statement-batches.ts):
// - PostgreSQL: on a pooled connection, one checkout per batch (postgres-named-statements.ts);
// - PGlite: on the session the driver lends (so never inside another caller's transaction), each
//   row carried as one JSON value (pglite-named-statements.ts).
// Prepared statements belong to the session, not to a transaction, so a rollback does not undo
// them. Statements list their columns: a column added later by a migration does not change their
// result type (PostgreSQL refuses to run a prepared `select *` whose row type changed).
//
// Parameters are integers only (ids); for EXECUTE they are written as decimal literals after a
// check: nothing a client sends reaches the SQL text in any other form.
import type { Kysely } from 'kysely';

const NAME = /^[a-z_][a-z0-9_]*$/;

type ParameterType = 'integer' | 'bigint';

/** What a runner gets of a statement. */
export interface NamedStatement {
  name: string;
  /** The statement, with $1, $2, ... for its parameters. */
  text: string;
  /** The PostgreSQL type of each parameter. */
  types: readonly ParameterType[];
  /** `prepare <name> (<types>) as <text>` (SQL-level). */
  prepare: string;
  /** `execute <name>(<values>)` (SQL-level) for these values, checked integers. */
  executeSql(values: readonly number[]): string;
}

/** Runs a named statement on a database; resolves to its rows. */
export type NamedStatementRunner = (statement: NamedStatement, values: readonly number[]) => Promise<unknown[]>;

/** PostgreSQL's answer to EXECUTE of a statement this session has not prepared. */
const UNDEFINED_PREPARED_STATEMENT = '26000';

/**
 * Executes `statement` on a session through `run` (one SQL text -> its rows), preparing it first
 * when the session lacks it (its first use there): the runners' one way to use a session.
 */
export async function executePreparing(statement: NamedStatement, values: readonly number[], run: (sql: string) => Promise<unknown[]>): Promise<unknown[]> {
  try {
    return await run(statement.executeSql(values));
  } catch (err) {
    if ((err as { code?: string }).code !== UNDEFINED_PREPARED_STATEMENT) throw err;
  }
  await run(statement.prepare);
  return run(statement.executeSql(values));
}

const names = new Map<string, string>();
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const runners = new WeakMap<Kysely<any>, NamedStatementRunner>();

/** Declares that `db` runs named statements with `run` (database.ts, for each kind of database). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function useNamedStatements(db: Kysely<any>, run: NamedStatementRunner): void {
  runners.set(db, run);
}

export class PreparedStatement<R> implements NamedStatement {
  readonly text: string;
  readonly prepare: string;

  /**
   * @param name unique per process (letters, digits, underscores)
   * @param types the PostgreSQL type of each parameter ($1, $2, ...), e.g. 'integer'
   * @param text the statement, with $1, $2, ... for its parameters
   */
  constructor(
    readonly name: string,
    readonly types: readonly ParameterType[],
    text: string,
  ) {
    if (!NAME.test(name)) throw new Error(`invalid prepared statement name ${name}`);
    if (names.has(text) && names.get(text) !== name) throw new Error(`the statement of ${name} is already prepared as ${names.get(text)}`);
    names.set(text, name);
    this.text = text;
    this.prepare = `prepare ${name} (${types.join(', ')}) as ${text}`;
  }

  executeSql(values: readonly number[]): string {
    return values.length ? `execute ${this.name}(${values.join(', ')})` : `execute ${this.name}`;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async execute(db: Kysely<any>, parameters: readonly number[]): Promise<R[]> {
    for (const p of parameters) if (!Number.isSafeInteger(p)) throw new TypeError(`${this.name}: parameter ${p} is not an integer`);
    const run = runners.get(db);
    if (!run) throw new Error(`${this.name}: this database runs no named statements (open it with openDatabase)`);
    return (await run(this, parameters)) as R[];
  }
}
