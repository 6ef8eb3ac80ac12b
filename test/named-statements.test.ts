// Named statements (infra/database/prepared-statement.ts) answer exactly what the same statement
// answers as a plain query, value for value and type for type, on this run's database. On PGlite
// their rows travel as one JSON value each (pglite-named-statements.ts): every column type that
// form carries is checked here at its edges (nulls, microseconds, trailing zeros, int8 beyond
// 2^53, NaN, quotes and non-ASCII text, nested JSON), and a statement with a column of another
// type, or two columns of one name, runs as columns. Concurrent calls, which PGlite's runner sends
// together in one Query message, each get their own rows, or their own error.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { openTestDatabase } from './helpers/test-system.ts';
import type { Database } from '../src/infra/database/database.ts';
import { PreparedStatement } from '../src/infra/database/prepared-statement.ts';

describe('named statements', () => {
  let database: Database;
  const db = () => database.db as Kysely<unknown>;

  before(async () => {
    database = await openTestDatabase('named-statements');
    await sql`create table typed (
      id integer primary key, flag boolean, small smallint, big bigint, ratio real, exact double precision,
      amount numeric(12, 3), label text, code varchar(8), ref uuid, doc json, tags jsonb,
      day date, local_at timestamp, at timestamptz
    )`.execute(db());
    await sql`insert into typed values
      (1, true, -3, 9007199254740993, 1.5, 'NaN', 0.000, 'quote " backslash \\ tab	 é ✓ 🛰', 'ab', '78d144fb-a113-4995-b045-4486c141234f',
       '{"b": 1, "a": [1, {"x": null}], "big": 12345678901234567890}', '{"rust": null, "inventory": {"n": 2}}',
       '2026-11-26', '2026-11-26 14:33:03.999999', '2026-11-26 14:33:03.568123+00'),
      (2, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
      (3, false, 32767, -42, '-Infinity', 1e-300, 1234567.891, '', 'x', '00000000-0000-4000-8000-000000000001',
       '"a string"', '[]', '0001-01-01', '1999-12-31 23:59:59.5', '1970-01-01 00:00:00.0005+02')`.execute(db());
  });
  after(() => database?.close());

  async function sameAsQuery(statement: PreparedStatement<Record<string, unknown>>, values: number[]) {
    const prepared = await statement.execute(db(), values);
    const text = statement.text.replace(/\$(\d+)/g, (_, n: string) => String(values[Number(n) - 1]));
    const { rows } = await sql.raw<Record<string, unknown>>(text).execute(db());
    assert.deepStrictEqual(prepared, rows);
    assert.ok(rows.length > 0);
    return rows;
  }

  async function preparedNames(): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(db());
    return rows.map((r) => r.name);
  }

  it('answers every column type as the plain query does', async () => {
    const statement = new PreparedStatement<Record<string, unknown>>('test_typed_row', ['integer'], 'select * from typed where id >= $1 order by id');
    const rows = await sameAsQuery(statement, [1]);
    assert.equal(rows.length, 3);
    // The JS types the callers rely on.
    assert.ok(rows[0].at instanceof Date);
    assert.equal(rows[0].amount, '0.000');
    assert.equal(typeof rows[0].flag, 'boolean');
    assert.deepEqual(rows[0].tags, { rust: null, inventory: { n: 2 } });
    // Again, executed (prepared on the first call).
    await sameAsQuery(statement, [2]);
    if (database.kind === 'pglite') assert.ok((await preparedNames()).includes('test_typed_row_json'), 'the PGlite row did not travel as JSON');
  });

  it('runs a statement with a column JSON does not carry, or a repeated name, as columns', async () => {
    const other = new PreparedStatement<Record<string, unknown>>('test_array_column', ['integer'], `select id, array[small, 7] as pair, 'x'::bytea as raw from typed where id = $1`);
    await sameAsQuery(other, [1]);
    const repeated = new PreparedStatement<Record<string, unknown>>('test_repeated_name', ['integer'], 'select id, label as id from typed where id = $1');
    await sameAsQuery(repeated, [3]);
    if (database.kind === 'pglite') {
      const names = await preparedNames();
      assert.ok(names.includes('test_array_column') && names.includes('test_repeated_name'));
      assert.ok(!names.includes('test_array_column_json') && !names.includes('test_repeated_name_json'));
    }
  });

  it('answers no rows as the plain query does', async () => {
    const statement = new PreparedStatement<Record<string, unknown>>('test_no_rows', ['integer'], 'select id, at from typed where id = $1');
    assert.deepEqual(await statement.execute(db(), [99]), []);
  });

  it('answers concurrent calls each with its own rows, or its own error', async () => {
    const byId = new PreparedStatement<Record<string, unknown>>('test_concurrent_by_id', ['integer'], 'select id, label, at from typed where id = $1');
    const divide = new PreparedStatement<{ x: number }>('test_concurrent_divide', ['integer'], 'select 10 / ($1 - 3) as x');
    // The first round also prepares both statements on the way; the last two send no failing
    // call, so their batches are answered by one message each.
    for (const withFailures of [true, true, false, false]) {
      const ids = Array.from({ length: 40 }, (_, i) => (i % 5) + 1).filter((id) => withFailures || id !== 3); // 4 and 5 have no row
      const calls = ids.map((id) => (id === 3 ? divide.execute(db(), [id]) : id % 2 === 0 ? byId.execute(db(), [id]) : divide.execute(db(), [id])));
      const settled = await Promise.allSettled(calls);
      settled.forEach((result, i) => {
        const id = ids[i];
        if (id === 3) {
          assert.equal(result.status, 'rejected', 'division by zero must fail its own call');
          assert.equal((result as PromiseRejectedResult).reason.code, '22012');
        } else if (id % 2 === 0) {
          assert.equal(result.status, 'fulfilled');
          const rows = (result as PromiseFulfilledResult<Record<string, unknown>[]>).value;
          assert.deepEqual(rows.map((r) => r.id), id === 2 ? [2] : []);
        } else {
          assert.deepEqual((result as PromiseFulfilledResult<unknown>).value, [{ x: 10 / (id - 3) }].map((r) => ({ x: Math.trunc(r.x) })));
        }
      });
    }
  });
});
