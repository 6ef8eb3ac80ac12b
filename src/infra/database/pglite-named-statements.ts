// Named statements on PGlite (prepared-statement.ts): how PGlite's one session runs them, and why
// their rows travel as one JSON value each.
//
// Session: EXECUTE on the session the driver lends, like Kysely's queries (so never inside another
// caller's transaction), PREPARE first when the session lacks the statement (its first use:
// answered 26000).
//
// EXECUTE runs by the simple query protocol (exec: one Query message) rather than query()'s
// extended one (Parse, Bind, Describe, Execute, Sync of the EXECUTE statement); its values are
// checked integers written into the text, so nothing is bound. The calls of one turn of the event
// loop go as one Query message of several EXECUTEs (statement-batches.ts).
//
// Cost of the inspection record's read on PGlite, per call in one process (bench/README.md,
// "API"): ~170 µs as columns by the extended protocol (as Kysely's queries run), ~65 µs as one JSON
// value, ~42 µs as one JSON value by the simple protocol, ~23 µs each in a batch of 8.
//
// Rows as JSON: PGlite's JavaScript reads the wire protocol field by field, and each field costs a
// fresh ArrayBuffer (its reader's `bytes`, the hottest function of the API on PGlite: 19 % of the
// server's time) and a decode. So a statement whose columns are all of the types below runs as
// `select row_to_json(r)::text from (<statement>) r`, and the caller still gets exactly what the column statement gives: the values JSON carries as
// PGlite would parse them (numbers, booleans, strings, json/jsonb) are taken from JSON, the others
// travel as their text output (`::text`, the same output function as the wire's text format) and
// go through PGlite's own parser for their type (timestamps become Dates, numerics stay strings).
// A statement with a column of any other type, or two columns of one name, runs as columns.
// PostgreSQL's driver reads fields natively and cheaply: its statements run as written.
import type { PGlite } from '@electric-sql/pglite';
import type { Driver } from 'kysely';
import { executePreparing, PreparedStatement, type NamedStatement, type NamedStatementRunner } from './prepared-statement.ts';
import { batchSql, eventLoopBatches, runTogetherOrAlone } from './statement-batches.ts';

/** Types whose JSON value is what PGlite's parser makes of their text: bool, int2, int4, text, varchar, uuid, json, jsonb. */
const AS_JSON = new Set([16, 21, 23, 25, 1043, 2950, 114, 3802]);
/** Types sent as text and parsed as PGlite parses them: int8, float4, float8, numeric, date, timestamp, timestamptz. */
const AS_TEXT = new Set([20, 700, 701, 1700, 1082, 1114, 1184]);

type Parse = (text: string, typeId: number) => unknown;

interface JsonForm {
  /** The statement that answers one column, `row`: the row as JSON text. */
  statement: NamedStatement;
  /** Columns sent as text, with PGlite's parser of their type (none: the text as is). */
  textColumns: { name: string; typeId: number; parse?: Parse }[];
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The JSON form of `statement` from its result columns, or undefined when it must run as columns. */
function jsonFormOf(statement: NamedStatement, fields: { name: string; dataTypeID: number; parser?: Parse }[]): JsonForm | undefined {
  if (fields.length === 0) return undefined;
  if (new Set(fields.map((f) => f.name)).size !== fields.length) return undefined;
  if (!fields.every((f) => AS_JSON.has(f.dataTypeID) || AS_TEXT.has(f.dataTypeID))) return undefined;
  const columns = fields.map((f) => (AS_JSON.has(f.dataTypeID) ? `c.${quoteIdent(f.name)}` : `c.${quoteIdent(f.name)}::text as ${quoteIdent(f.name)}`));
  const text = `select row_to_json(r)::text as row from (select ${columns.join(', ')} from (${statement.text}) as c) as r`;
  return {
    statement: new PreparedStatement(`${statement.name}_json`, statement.types, text),
    textColumns: fields.filter((f) => AS_TEXT.has(f.dataTypeID)).map((f) => ({ name: f.name, typeId: f.dataTypeID, parse: f.parser })),
  };
}

function rowOf(form: JsonForm, json: string): Record<string, unknown> {
  const row = JSON.parse(json) as Record<string, unknown>;
  for (const column of form.textColumns) {
    const value = row[column.name];
    if (value !== null && column.parse) row[column.name] = column.parse(value as string, column.typeId);
  }
  return row;
}

interface Call {
  /** The statement that runs: the JSON form's, or the caller's as columns. */
  statement: NamedStatement;
  form: JsonForm | null;
  values: readonly number[];
}

export function namedStatementsOn(pglite: PGlite, driver: () => Driver): NamedStatementRunner {
  // Per statement name: its JSON form, or null to run it as columns (found once, by describing it).
  const forms = new Map<string, Promise<JsonForm | null>>();

  async function withSession<T>(fn: () => Promise<T>): Promise<T> {
    const connection = await driver().acquireConnection();
    try {
      return await fn();
    } finally {
      await driver().releaseConnection(connection);
    }
  }

  function formOf(statement: NamedStatement): Promise<JsonForm | null> {
    let form = forms.get(statement.name);
    if (!form) {
      form = withSession(async () => jsonFormOf(statement, (await pglite.describeQuery(statement.text)).resultFields) ?? null);
      forms.set(statement.name, form);
      form.catch(() => forms.delete(statement.name)); // described again by the next call
    }
    return form;
  }

  function answer(call: Call, rows: unknown[]): unknown[] {
    const form = call.form;
    return form ? (rows as { row: string }[]).map((r) => rowOf(form, r.row)) : rows;
  }

  const alone = async (call: Call) => answer(call, await executePreparing(call.statement, call.values, async (sql) => (await pglite.exec(sql))[0].rows));

  async function together(calls: Call[]): Promise<unknown[][]> {
    const results = await pglite.exec(batchSql(calls));
    return calls.map((call, i) => answer(call, results[i].rows));
  }

  const queue = eventLoopBatches<Call>((batch) => withSession(() => runTogetherOrAlone(batch, together, alone)));

  return async (statement, values) => {
    const form = await formOf(statement);
    return queue({ statement: form ? form.statement : statement, form, values });
  };
}
