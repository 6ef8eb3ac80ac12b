// Security headers on every answer of both services (helmet's: CSP, X-Frame-Options, nosniff...).
//
// Performance (bench/README.md, "API"): @fastify/helmet builds helmet's middleware anew on every
// request (helmet(options) for each one: the CSP directives parsed and validated again, a closure
// decorated on the reply), ~4 % of the CPU of GET /v1/inspections/{id}/ in its profile. With one
// configuration for the whole server and no nonces, the headers never depend on the request: they
// are computed once, by @fastify/helmet itself answering one injected request on a scratch server,
// and given to every reply at the same point (the first onRequest hook), as one object that
// Fastify writes with the rest of the head (not eleven setHeader calls on the raw response).
import Fastify, { type FastifyInstance } from 'fastify';
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';

// What the scratch server's answer carries that is not helmet's.
const NOT_HELMET = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive']);

/** The headers @fastify/helmet sets with these options, in the order it sets them. */
export async function helmetHeaders(options: FastifyHelmetOptions): Promise<[string, string][]> {
  const scratch = Fastify({ logger: false });
  try {
    await scratch.register(helmet, options);
    scratch.get('/', async () => '');
    const response = await scratch.inject('/');
    return Object.entries(response.headers)
      .filter(([name]) => !NOT_HELMET.has(name))
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]);
  } finally {
    await scratch.close();
  }
}

/** Sets helmet's headers (computed once) on every answer of `app`. */
export async function addSecurityHeaders(app: FastifyInstance, options: FastifyHelmetOptions): Promise<void> {
  const headers = Object.fromEntries(await helmetHeaders(options));
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}
