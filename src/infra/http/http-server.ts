// The Fastify setup shared by both services: TypeBox type provider, paths served with and without
// their trailing slash, OpenAPI document and docs page, request logging, and the one error handler
// that turns every failure into CONTRACT.md's format (never a 500 for anything a client sent).
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { addFieldError, ApiError, type FieldErrors } from './errors.ts';
import { capUnfinishedBodies, serverTimeouts, type HttpEdgeOptions } from './http-edge.ts';
import { limitConnections, trustedProxies } from './connection-limits.ts';
import { trackRouteMethods } from './method-not-allowed.ts';
import { throttleLogins, type LoginRoute } from './login-throttle.ts';
import { registerInputGuards } from './input-guards.ts';
import { addSecurityHeaders } from './security-headers.ts';
import { lazyRequestLogger } from './request-logger.ts';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../database/connection-errors.ts';

export type HttpServer = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface HttpServerOptions {
  logger: Logger;
  title: string;
  description: string;
  version: string;
  /** Where the OpenAPI JSON is served, e.g. /v1/openapi.json. */
  openapiPath: string;
  /** Maximum JSON body, bytes. */
  bodyLimit?: number;
  /** Timeouts, body cap, proxy trust, public URL, token throttling (http-edge.ts); defaults when absent. */
  edge?: HttpEdgeOptions;
  /** CSP directives added to helmet's defaults (the web console's page needs the storage origin). */
  contentSecurityPolicy?: Record<string, string[]>;
  /** URL prefixes of the API's routes (JSON answers): they get the API's security headers (security-headers.ts). */
  apiPrefixes?: string[];
  /** The service's token call, throttled per address and per account (login-throttle.ts). */
  loginRoute?: LoginRoute;
}

export async function createHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const edge = options.edge ?? {};
  const app = Fastify({
    ...serverTimeouts(edge),
    loggerInstance: options.logger as FastifyBaseLogger,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    bodyLimit: options.bodyLimit ?? 10 * 1024 * 1024,
    ajv: { customOptions: { removeAdditional: true, coerceTypes: 'array', useDefaults: true, allErrors: true, allowUnionTypes: true } },
    genReqId: () => crypto.randomUUID(),
    childLoggerFactory: lazyRequestLogger, // request.log made on its first line (request-logger.ts)
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Connections beyond the caps, in all and from one address, are closed at once: a crowd of idle
  // ones cannot take the process's descriptors, nor one address every slot (connection-limits.ts).
  // A proxy TRUST_PROXY trusts carries every client's connections: not capped per address.
  if (edge.maxConnections || edge.maxConnectionsPerAddress) {
    const caps = { max: edge.maxConnections ?? 0, perAddress: edge.maxConnectionsPerAddress, exempt: trustedProxies(edge.trustProxy) };
    limitConnections(app.server, caps, options.logger, options.title);
  }
  registerInputGuards(app); // canonical path ids (else 404), no NUL/lone surrogates (400)
  if (edge.publicUrl) app.decorate('publicUrl', edge.publicUrl);
  const allowedMethods = trackRouteMethods(app);
  // Security headers on every answer: helmet's on pages, the docs page included (its scripts and
  // styles are served from here by @fastify/swagger-ui, so helmet's default CSP lets it work; no
  // upgrade-insecure-requests: a deployment on plain HTTP would lose the page's assets), the API's
  // own set on the API's JSON answers. Computed once (security-headers.ts).
  await addSecurityHeaders(
    app,
    {
      contentSecurityPolicy: { directives: { ...options.contentSecurityPolicy, 'frame-ancestors': ["'none'"], 'upgrade-insecure-requests': null } },
      frameguard: { action: 'deny' },
    },
    options.apiPrefixes,
  );
  capUnfinishedBodies(app, edge.maxUnfinishedBodies ?? 32);
  if (options.loginRoute && edge.loginRateLimit) await throttleLogins(app, options.loginRoute, edge.loginRateLimit);
  await app.register(formbody);
  // An empty body with a JSON content type means "no body", as DRF treats it.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError(400, 'parse_error', 'JSON parse error: the body is not valid JSON.'), undefined);
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: options.title, description: options.description, version: options.version },
    },
  });
  // The docs page keeps helmet's inline styles (Swagger UI draws its logo with a <style>; the page
  // shows no user content), within a scope of its own so that the console's page does not.
  await app.register(async (docs) => {
    await docs.register(swaggerUi, { routePrefix: '/docs', transformStaticCSP: (csp) => csp.replace(/style-src [^;]*/, "style-src 'self' 'unsafe-inline'") });
  });
  app.get(options.openapiPath, { schema: { hide: true } }, async () => app.swagger());

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    // Error bodies are built here; they must not go through a route's response schema.
    reply.serializer((payload) => JSON.stringify(payload));
    if (error instanceof ApiError) {
      if (error.statusCode >= 500) request.log.error({ err: error }, error.detail);
      return reply.status(error.statusCode).headers(error.headers).send(error.body());
    }
    if ((error as FastifyError).validation) {
      return reply.status(400).send(validationBody(error as FastifyError));
    }
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      const code = status === 413 ? 'too_large' : status === 415 ? 'unsupported_media_type' : status === 405 ? 'method_not_allowed' : status === 429 ? 'throttled' : 'invalid';
      return reply.status(status).send({ detail: error.message, code });
    }
    if (isDatabaseUnavailable(error)) {
      // A lost or refused database connection: the pool has dropped it, a retry gets a new one.
      request.log.warn({ err: error }, 'database unavailable');
      return reply.status(503).header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS)).send({ detail: 'The database is unavailable; try again shortly.', code: 'unavailable' });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send({ detail: 'Internal server error.', code: 'server_error' });
  });
  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethods(request.url.split('?')[0]);
    if (allowed.length > 0) {
      const list = allowed.join(', ');
      return reply.status(405).header('Allow', list).send({ detail: `Method "${request.method}" not allowed; allowed: ${list}.`, code: 'method_not_allowed' });
    }
    reply.status(404).send({ detail: `No route for ${request.method} ${request.url.split('?')[0]}.`, code: 'not_found' });
  });
  return app;
}

/** Ajv errors -> {"field": ["message"]}, nested fields as nested objects. */
function validationBody(error: FastifyError): FieldErrors {
  const body: FieldErrors = {};
  for (const issue of error.validation ?? []) {
    const segments = issue.instancePath.split('/').filter(Boolean);
    const params = issue.params as Record<string, unknown>;
    if (issue.keyword === 'required' && typeof params.missingProperty === 'string') segments.push(params.missingProperty);
    if (issue.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') segments.push(params.additionalProperty);
    const message = issue.keyword === 'required' ? 'This field is required.' : capitalise(issue.message ?? 'Invalid value.');
    const context = error.validationContext && error.validationContext !== 'body' ? [error.validationContext] : [];
    addFieldError(body, [...context, ...segments], message);
  }
  if (Object.keys(body).length === 0) body.non_field_errors = [error.message];
  return body;
}

function capitalise(text: string): string {
  const t = text.charAt(0).toUpperCase() + text.slice(1);
  return t.endsWith('.') ? t : `${t}.`;
}
