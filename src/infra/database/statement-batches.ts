// The named-statement reads of one turn of the event loop, sent to the database together
// (bench/README.md, "API"): with many clients, the requests whose sockets were read in one turn
// each ask for their row; instead of one round trip each (PGlite: one pass through its protocol
// code; PostgreSQL: one pool checkout, one write, one read), they go as one Query message of
// several EXECUTEs, one result each. Both databases' runners (postgres-named-statements.ts,
// pglite-named-statements.ts) queue their calls here and say how a batch runs.
//
// Why the wait until setImmediate: PGlite runs a statement synchronously inside the request that
// asks, so without it no second call would ever be waiting; the check phase comes after the poll
// phase has read every socket that was ready. One request alone waits for nothing more than that.

import type { NamedStatement } from './prepared-statement.ts';

/** Most EXECUTEs in one Query message. */
export const MAX_BATCH = 16;

export interface QueuedCall<T> {
  item: T;
  resolve(rows: unknown[]): void;
  reject(err: unknown): void;
}

/**
 * Queues calls until this turn of the event loop has read its sockets, then hands them to `run`
 * in batches of at most MAX_BATCH (all at once: `run` waits for its connection as it must). `run`
 * answers every call of its batch; if it throws, the calls it left unanswered get its error.
 */
export function eventLoopBatches<T>(run: (batch: QueuedCall<T>[]) => Promise<void>): (item: T) => Promise<unknown[]> {
  let waiting: QueuedCall<T>[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const calls = waiting;
    waiting = [];
    for (let start = 0; start < calls.length; start += MAX_BATCH) {
      const batch = calls.slice(start, start + MAX_BATCH);
      run(batch).catch((err: unknown) => {
        for (const call of batch) call.reject(err); // no effect on the calls already answered
      });
    }
  };
  return (item) =>
    new Promise<unknown[]>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush);
    });
}

/**
 * Runs a batch as one message (`together`: the rows of each item, in order); when that fails (a
 * statement the session has not prepared yet, a value one of them refuses), none of its results
 * count and each item runs `alone`, with its own rows or error. Answers every call.
 */
export async function runTogetherOrAlone<T>(
  batch: QueuedCall<T>[],
  together: (items: T[]) => Promise<unknown[][]>,
  alone: (item: T) => Promise<unknown[]>,
): Promise<void> {
  if (batch.length > 1) {
    let results: unknown[][] | undefined;
    try {
      results = await together(batch.map((call) => call.item));
    } catch {
      // each runs alone below
    }
    if (results) {
      batch.forEach((call, i) => call.resolve(results[i]));
      return;
    }
  }
  for (const call of batch) {
    try {
      call.resolve(await alone(call.item));
    } catch (err) {
      call.reject(err);
    }
  }
}

/** One Query message's text for these calls: their EXECUTEs, in order. */
export function batchSql(calls: readonly { statement: NamedStatement; values: readonly number[] }[]): string {
  return calls.map((call) => call.statement.executeSql(call.values)).join('; ');
}
