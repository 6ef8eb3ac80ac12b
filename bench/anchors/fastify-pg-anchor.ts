// API anchor on PostgreSQL: a bare Fastify 5 route, in its own process, answering
// GET /v1/inspections/:id/ with the inspection's row read from the benchmarked server's own database
// (ANCHOR_DATABASE_URL: the very row the project reads) by one prepared statement (named, so each
// pool connection parses and plans it once) on a pg pool of the project's size (10), returned as
// Fastify serialises a plain object. It selects the columns the project's record is made of
// (RECORD_COLUMNS), not its bundle's retries. No authentication, no access check, no retries, no
// mapping, no logging: the ceiling of a route that must read its answer from PostgreSQL per request.
import Fastify from 'fastify';
import pg from 'pg';
import { RECORD_COLUMNS } from '../../src/inspection/inspections/inspection.mapper.ts';

const pool = new pg.Pool({ connectionString: process.env.ANCHOR_DATABASE_URL!, max: 10 });
const statement = `select ${RECORD_COLUMNS.join(', ')} from inspection.inspections where id = $1 and deleted_at is null`;
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/v1/inspections/:id/', async (request, reply) => {
  const { rows } = await pool.query({ name: 'inspection_by_id', text: statement, values: [Number(request.params.id)] });
  if (rows.length === 0) return reply.status(404).send({ detail: 'Not found.' });
  return rows[0] as Record<string, unknown>;
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`Listening: ${address}`);
process.on('SIGTERM', () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
