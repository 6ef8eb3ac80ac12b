// API anchor: a bare Fastify route, in its own process, answering GET /v1/inspections/:id/ with the
// very JSON body the inspection service answered for the benchmarked inspection (read from
// ANCHOR_BODY_FILE). No authentication, no database, no logging: the ceiling of a Fastify route.
import fs from 'node:fs';
import Fastify from 'fastify';

const body = JSON.parse(fs.readFileSync(process.env.ANCHOR_BODY_FILE!, 'utf8')) as Record<string, unknown>;
const app = Fastify({ logger: false });
app.get('/v1/inspections/:id/', async () => body);
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`Listening: ${address}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
