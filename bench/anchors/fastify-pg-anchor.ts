// API anchor on PostgreSQL: a bare Fastify 5 route, in its own process, answering
// GET /v1/inspections/:id/ with the inspection's row read from the benchmarked server's own database
// (ANCHOR_DATABASE_URL: the very row the project reads) by one prepared statement (named, so each
// pool connection parses and plans it once) on a pg pool of the project's size (10), returned as
// Fastify serialises a plain object. It selects the columns the project's record is made of
// (RECORD_COLUMNS), not its bundle's retries. No authentication, no access check, no retries, no
// mapping, no logging: the ceiling of a route that must read its answer from PostgreSQL per request.
//
// ANCHOR_BATCHED=1 (an extra column, bench/README.md "API"): the reads of the requests of one turn
// of the event loop go as one Query message of several EXECUTEs on one pooled connection, as the
// project's named statements do (src/infra/database/statement-batches.ts), the statement prepared
// SQL-level once per connection.
import Fastify from 'fastify';
import pg from 'pg';
import { RECORD_COLUMNS } from '../../src/inspection/inspections/inspection.mapper.ts';
import { eventLoopBatches } from '../../src/infra/database/statement-batches.ts';

const pool = new pg.Pool({ connectionString: process.env.ANCHOR_DATABASE_URL!, max: 10 });
const statement = `select ${RECORD_COLUMNS.join(', ')} from inspection.inspections where id = $1 and deleted_at is null`;
type Rows = Record<string, unknown>[];
const prepared = new WeakSet<pg.PoolClient>();
// The project's batching itself (one turn of the event loop, MAX_BATCH per message), with a bare
// batch: prepare once per connection, the EXECUTEs in one message, the same error for all on failure.
const batchedRows = eventLoopBatches<number>(async (batch) => {
  const client = await pool.connect();
  try {
    if (!prepared.has(client)) {
      await client.query(`prepare inspection_by_id (integer) as ${statement}`);
      prepared.add(client);
    }
    const result = (await client.query(batch.map((call) => `execute inspection_by_id(${call.item})`).join('; '))) as unknown as pg.QueryResult | pg.QueryResult[];
    const results = Array.isArray(result) ? result : [result];
    batch.forEach((call, i) => call.resolve(results[i].rows));
  } finally {
    client.release();
  }
}) as (id: number) => Promise<Rows>;
const batched = process.env.ANCHOR_BATCHED === '1';

const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/v1/inspections/:id/', async (request, reply) => {
  const id = Number(request.params.id);
  const rows = batched ? await batchedRows(id) : ((await pool.query({ name: 'inspection_by_id', text: statement, values: [id] })).rows as Rows);
  if (rows.length === 0) return reply.status(404).send({ detail: 'Not found.' });
  return rows[0];
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`Listening: ${address}`);
process.on('SIGTERM', () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
