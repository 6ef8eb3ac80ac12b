// Named statements on PostgreSQL (prepared-statement.ts): the reads of one turn of the event loop
// go as one Query message of several EXECUTEs on one pooled connection (statement-batches.ts):
// one checkout, one write and one read for all of them instead of one each. A statement is
// prepared SQL-level (PREPARE) on each connection the first time it runs there (answered 26000),
// and lasts as long as the connection. Rows are decoded by the pool's type parsers, as any query's.
//
// A connection on which a statement failed because the database was lost is destroyed when it is
// given back, not returned idle (as database.ts does for Kysely's connections).
import type pg from 'pg';
import { isDatabaseUnavailable } from './connection-errors.ts';
import { executePreparing, type NamedStatement, type NamedStatementRunner } from './prepared-statement.ts';
import { batchSql, eventLoopBatches, runTogetherOrAlone } from './statement-batches.ts';

interface Call {
  statement: NamedStatement;
  values: readonly number[];
}

export function namedStatementsOnPool(pool: pg.Pool): NamedStatementRunner {
  const queue = eventLoopBatches<Call>(async (batch) => {
    const client = await pool.connect();
    let lost: Error | undefined;
    const query = (sql: string) =>
      client.query(sql).catch((err: unknown) => {
        if (isDatabaseUnavailable(err)) lost = err as Error;
        throw err;
      });
    const alone = async ({ statement, values }: Call) => executePreparing(statement, values, async (sql) => (await query(sql)).rows);
    const together = async (calls: Call[]): Promise<unknown[][]> => {
      // Several statements in one message: pg answers one result each, as an array.
      const results = (await query(batchSql(calls))) as unknown as pg.QueryResult[];
      return results.map((result) => result.rows);
    };
    try {
      await runTogetherOrAlone(batch, together, alone);
    } finally {
      client.release(lost);
    }
  });
  return (statement, values) => queue({ statement, values });
}
