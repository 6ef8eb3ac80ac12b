// What both services' HTTP servers do at the edge, before a route runs (issue 10): how long a
// client may take to send a request, how many bodies may be arriving at once, whose forwarded
// address to believe, and which public URL links are built from. Values come from the
// configuration (README, "Configuration"); createHttpServer applies them.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions, RequestPayload } from 'fastify';
import type { Config } from '../../config.ts';
import { ApiError } from './errors.ts';
import type { LoginRateLimit } from './login-throttle.ts';
import { checkingIntervalMs, defaultConnectionCaps } from './connection-limits.ts';

export interface HttpEdgeOptions {
  /** The service's public base URL (pagination links), read per request: it is known after listen. */
  publicUrl?: () => string;
  trustProxy?: boolean | number | string[];
  /** Time to receive the request line and headers, seconds. */
  headersTimeoutSeconds?: number;
  /** Time to receive the whole request, body included, seconds (0: no limit). */
  requestTimeoutSeconds?: number;
  /** An idle kept-alive connection is closed after this long, seconds. */
  keepAliveTimeoutSeconds?: number;
  /** Requests whose bodies are still arriving; one more answers 503 (0: no cap). */
  maxUnfinishedBodies?: number;
  /** Connections held at once; one more is closed at once (connection-limits.ts; 0 or unset: no cap). */
  maxConnections?: number;
  /** Connections held at once from one client address, trusted proxies excepted (0 or unset: no cap). */
  maxConnectionsPerAddress?: number;
  /** Throttling of the service's token call (login-throttle.ts). */
  loginRateLimit?: LoginRateLimit;
}

export function edgeOptionsFrom(config: Config): Omit<HttpEdgeOptions, 'publicUrl'> {
  const defaults = defaultConnectionCaps();
  return {
    trustProxy: config.trustProxy,
    headersTimeoutSeconds: config.httpHeadersTimeoutSeconds,
    requestTimeoutSeconds: config.httpRequestTimeoutSeconds,
    keepAliveTimeoutSeconds: config.httpKeepAliveTimeoutSeconds,
    maxUnfinishedBodies: config.httpMaxUnfinishedBodies,
    maxConnections: config.httpMaxConnections ?? defaults.api,
    maxConnectionsPerAddress: config.httpMaxConnectionsPerAddress ?? defaults.apiPerAddress,
    loginRateLimit: {
      perAddress: config.authRateLimitPerAddress,
      perAccount: config.authRateLimitPerAccount,
      windowSeconds: config.authRateLimitWindowSeconds,
      slowdownMaxMs: config.authSlowdownMaxMs,
    },
  };
}

/** Fastify/Node server options: a client that trickles its headers or body is cut off. */
export function serverTimeouts(edge: HttpEdgeOptions): Pick<FastifyServerOptions, 'requestTimeout' | 'keepAliveTimeout' | 'connectionTimeout' | 'trustProxy'> & {
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  const request = (edge.requestTimeoutSeconds ?? 120) * 1000;
  // Node wants headersTimeout <= requestTimeout. The headers timeout also closes a connection that
  // sends nothing at all (it runs from the connection's start): 10 s, as on the S3 endpoint (issue
  // 40 §4: at 30 s, a crowd of such connections held its slots three times as long).
  const headers = Math.min((edge.headersTimeoutSeconds ?? 10) * 1000, request || Infinity);
  return {
    requestTimeout: request,
    keepAliveTimeout: (edge.keepAliveTimeoutSeconds ?? 5) * 1000,
    // No idle-socket timeout: a slow handler (a report, a cloud call) must not be cut.
    connectionTimeout: 0,
    // A number of hops is accepted by Fastify at run time, though its types leave it out.
    trustProxy: (edge.trustProxy ?? false) as boolean | string[],
    // Node checks both timeouts only every connectionsCheckingInterval (default 30 s): check
    // often enough that a limit of a few seconds is kept to within a second or so.
    http: { headersTimeout: headers, connectionsCheckingInterval: checkingIntervalMs(headers, request) },
  };
}

/**
 * Caps the requests whose bodies are still arriving: each holds a buffer of up to bodyLimit, so
 * many slow uploads of large JSON would add up. One more answers 503 (Retry-After) and closes.
 */
export function capUnfinishedBodies(app: FastifyInstance, max: number): void {
  if (!max) return;
  let unfinished = 0;
  // A callback hook, answering at once for a request without a body (every GET): no promise per
  // request (bench/README.md, "API").
  app.addHook('preParsing', (request, reply, payload, done) => {
    const length = Number(request.headers['content-length'] ?? 0);
    if ((!(length > 0) && request.headers['transfer-encoding'] === undefined) || request.raw.complete) return done(null, payload);
    capBody(request, reply, payload).then((p) => done(null, p), done);
  });
  const capBody = async (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload): Promise<RequestPayload> => {
    // A body already received in full (the usual small JSON) holds nothing up: not counted, so a
    // burst of ordinary concurrent requests is never refused. (Hooks run before Node has parsed
    // the rest of the packet that brought the headers: at the cap, look again one turn later.)
    if (request.raw.complete) return payload;
    if (unfinished >= max) await new Promise((resolve) => setImmediate(resolve));
    if (request.raw.complete) return payload;
    if (unfinished >= max) {
      reply.header('Connection', 'close');
      throw new ApiError(503, 'unavailable', 'Too many requests are sending their bodies at once; try again shortly.', { 'Retry-After': '1' });
    }
    unfinished++;
    let counted = true;
    const release = () => {
      if (counted) unfinished--;
      counted = false;
    };
    // Whichever comes first: the body fully read, or the exchange over (answered early, or cut).
    payload.once('end', release);
    reply.raw.once('close', release);
    return payload;
  };
}

/**
 * The request's absolute URL on its service's configured public URL (pagination links): never on
 * the Host header a client sent, unless no public URL is configured.
 */
export function requestPublicUrl(request: FastifyRequest): string {
  const base = request.server.publicUrl?.() ?? `${request.protocol}://${request.host}`;
  // (?<!\/): a run of slashes is tried from its first only (from each of them: quadratic on a Host header of slashes).
  return base.replace(/(?<!\/)\/+$/, '') + request.url;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's public base URL, when configured (HttpEdgeOptions.publicUrl). */
    publicUrl?: () => string;
  }
}
