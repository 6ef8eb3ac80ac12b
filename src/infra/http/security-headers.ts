// Security headers on every answer of both services: helmet's (CSP, X-Frame-Options, nosniff...) on
// pages (the web console, the docs), a shorter set on the API's JSON answers.
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

/**
 * What answers of the API (JSON, never shown as a page) carry instead: OWASP's headers for REST
 * services (REST Security Cheat Sheet, "Security headers"), with a CSP that forbids everything (a
 * JSON answer opened in a browser runs nothing and is never framed) and helmet's Cross-Origin-
 * Resource-Policy. Helmet's other headers only matter for documents. Why not helmet's all
 * (bench/README.md, "API"): its 11 headers, the console's CSP naming the storage origin, were 878
 * bytes of head before a 623-byte inspection (now 384), written and parsed on every call.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cross-origin-resource-policy': 'same-origin',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/**
 * Sets helmet's headers (computed once) on every answer of `app`, except answers under one of
 * `apiPrefixes` (the API's routes and their 404s), which get API_SECURITY_HEADERS.
 */
export async function addSecurityHeaders(app: FastifyInstance, options: FastifyHelmetOptions, apiPrefixes: readonly string[] = []): Promise<void> {
  const documentHeaders = Object.fromEntries(await helmetHeaders(options));
  const isApi = (url: string) => apiPrefixes.some((prefix) => url.startsWith(prefix));
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(isApi(request.url) ? API_SECURITY_HEADERS : documentHeaders);
    done();
  });
}
