// API anchor on PGlite: a bare Fastify 5 route, in its own process, answering
// GET /v1/inspections/:id/ with the inspection's row read per request from one PGlite instance by
// one prepared statement (PREPARE once, EXECUTE per request: parsed and planned once, as the
// project's read is), returned as Fastify serialises a plain object. It selects the columns the
// project's record is made of (RECORD_COLUMNS), not its bundle's retries. No authentication, no
// access check, no retries, no mapping, no logging: the ceiling of a route that must read its
// answer from the embedded database per request.
//
// ANCHOR_ROW_FORM: how the row travels from PGlite (bench/README.md, "API"):
// - 'json' (the target's anchor): as one JSON text, `select row_to_json(r)::text from (...) r`,
//   executed by the simple query protocol (exec) and parsed with JSON.parse, as the project's
//   named statements read rows on PGlite (src/infra/database/pglite-named-statements.ts) — without
//   the project's conversion of timestamps to Dates: the ceiling of that way of reading;
// - 'json-batched': the same, and the reads of the requests that arrive in one turn of the event
//   loop sent together in one Query message, as the project's named statements do;
// - 'columns': as the statement's columns by query() (extended protocol), each read and parsed by
//   PGlite's protocol code, as a PGlite application reads a row (~125 µs more per request here).
//
// PGlite is one process's database (the benchmarked server holds its folder), so the anchor has
// its own, made as the project makes its own (created in a short-lived child process, opened with
// the same shared_buffers), with the project's schema (the inspection migrations, same table,
// same indexes) and the benchmarked inspection's row copied in (ANCHOR_ROW_FILE: column -> value,
// from the record the project answered; bench/api.ts). Setup only: no Kysely on the request path.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import Fastify from 'fastify';
import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { migrateSchema } from '../../src/infra/database/migrate.ts';
import { PGLITE_SHARED_BUFFERS } from '../../src/infra/database/database.ts';
import { inspectionMigrations } from '../../src/inspection/inspection.migrations.ts';
import { RECORD_COLUMNS } from '../../src/inspection/inspections/inspection.mapper.ts';
import { eventLoopBatches } from '../../src/infra/database/statement-batches.ts';

const folder = path.join(process.env.ANCHOR_PGLITE_DIR!, 'pglite');
const row = JSON.parse(fs.readFileSync(process.env.ANCHOR_ROW_FILE!, 'utf8')) as Record<string, unknown>;

// As src/infra/database/database.ts: initdb in a child, so this process keeps a server's memory.
const script = `const { PGlite } = await import(process.argv[1]); const db = await PGlite.create({ dataDir: process.argv[2] }); await db.close();`;
await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, import.meta.resolve('@electric-sql/pglite'), folder], { timeout: 120_000 });
const pglite = await PGlite.create({ dataDir: folder, postgresqlconf: [`shared_buffers=${PGLITE_SHARED_BUFFERS}`] });
await migrateSchema(new Kysely<unknown>({ dialect: new PGliteDialect(pglite) }), 'inspection', inspectionMigrations);
// The row alone: its asset, user and organization are not copied, so foreign keys are not checked.
const columns = Object.keys(row).map((c) => `"${c.replace(/"/g, '""')}"`).join(', ');
await pglite.exec('set session_replication_role = replica');
await pglite.query(`insert into inspection.inspections (${columns}) select ${columns} from json_populate_record(null::inspection.inspections, $1::json)`, [JSON.stringify(row)]);
await pglite.exec('set session_replication_role = origin');
await pglite.exec('analyze inspection.inspections');

const select = `select ${RECORD_COLUMNS.join(', ')} from inspection.inspections where id = $1 and deleted_at is null`;
const form = process.env.ANCHOR_ROW_FORM ?? 'columns';
const asJson = form !== 'columns';
await pglite.exec(`prepare inspection_by_id (integer) as ${asJson ? `select row_to_json(r)::text as row from (${select}) as r` : select}`);

type Rows = Record<string, unknown>[];
// 'json-batched': the project's batching itself (one turn of the event loop, MAX_BATCH per message),
// with a bare batch: the EXECUTEs in one message, the same error for all on failure.
const batchedRows = eventLoopBatches<number>(async (batch) => {
  const results = await pglite.exec(batch.map((call) => `execute inspection_by_id(${call.item})`).join('; '));
  batch.forEach((call, i) => call.resolve(results[i].rows));
}) as (id: number) => Promise<Rows>;

async function rowsOf(id: number): Promise<Rows> {
  // The JSON forms run by the simple protocol, as the project's (one Query message); the columns
  // form as a PGlite application's query() runs it (extended protocol).
  if (form === 'json-batched') return batchedRows(id);
  if (form === 'json') return (await pglite.exec(`execute inspection_by_id(${id})`))[0].rows as Rows;
  return (await pglite.query<Record<string, unknown>>(`execute inspection_by_id(${id})`)).rows;
}

const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/v1/inspections/:id/', async (request, reply) => {
  const id = Number(request.params.id);
  if (!Number.isSafeInteger(id)) return reply.status(404).send({ detail: 'Not found.' });
  const rows = await rowsOf(id);
  if (rows.length === 0) return reply.status(404).send({ detail: 'Not found.' });
  return asJson ? (JSON.parse(rows[0].row as string) as Record<string, unknown>) : rows[0];
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`Listening: ${address}`);
process.on('SIGTERM', () => void app.close().then(() => pglite.close()).then(() => process.exit(0)));
