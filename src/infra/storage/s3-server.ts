// The http.Server in front of the S3 endpoint, and what it does to connections before and between
// requests (issue 27, finding 2: 19,950 idle connections, no byte sent, held for ~74 s each, took
// the process to its open-file limit and with it the inspection and cloud APIs):
//   - connection caps, global and per client address (connection-limits.ts): one more is closed
//     at once;
//   - a connection that sends nothing, or not its whole request head, is answered 408 and closed
//     after `headersTimeoutMs` (10 s), checked every quarter of that;
//   - between requests, a kept-alive connection is closed after `keepAliveTimeoutMs` (5 s);
//   - a request whose body stops arriving for `bodyIdleTimeoutMs` (60 s) is cut. There is no limit
//     on a whole request (a 5 GiB part on a slow link takes long), only on silence.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkingIntervalMs, limitConnections, type ConnectionCaps, type ConnectionLogger } from '../http/connection-limits.ts';
import type { S3Endpoint } from './s3-endpoint.ts';
import { bodyStillAwaited } from './s3-request.ts';

export interface S3ServerOptions {
  /** Where to listen (defaults 127.0.0.1 and a free port). */
  host?: string;
  port?: number;
  /** Connections held at once, in all and per client address (default: no cap). */
  connections?: ConnectionCaps;
  /** Time to receive a request's line and headers, from the connection's start or the previous request (default 10 s). */
  headersTimeoutMs?: number;
  /** An idle kept-alive connection is closed after this long (default 5 s). */
  keepAliveTimeoutMs?: number;
  /** A request whose body stops arriving for this long is cut (default 60 s; 0: never). */
  bodyIdleTimeoutMs?: number;
  /** Where refused connections are reported (at most once a minute). */
  logger?: ConnectionLogger;
}

export const S3_DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

export interface RunningS3Server {
  server: http.Server;
  /** Base URL, e.g. "http://127.0.0.1:43567". */
  url: string;
  close(): Promise<void>;
}

/** Starts an http.Server for the endpoint (port 0 picks a free port). */
export async function startS3Server(endpoint: S3Endpoint, options: S3ServerOptions = {}): Promise<RunningS3Server> {
  const headersTimeout = options.headersTimeoutMs ?? S3_DEFAULT_HEADERS_TIMEOUT_MS;
  const bodyIdle = options.bodyIdleTimeoutMs ?? 60_000;
  const watched =
    (handler: (req: IncomingMessage, res: ServerResponse) => void) =>
    (req: IncomingMessage, res: ServerResponse): void => {
      cutWhenBodyStalls(req, bodyIdle);
      handler(req, res);
    };
  const server = http.createServer(
    {
      // Node's default 5-minute limit per request would cut large uploads on slow links.
      requestTimeout: 0,
      headersTimeout,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 5_000,
      // Node checks the headers timeout only this often (default every 30 s: ~74 s in all).
      connectionsCheckingInterval: checkingIntervalMs(headersTimeout),
    },
    watched(endpoint.handler),
  );
  server.on('checkContinue', watched(endpoint.checkContinueHandler));
  limitConnections(server, options.connections ?? { max: 0 }, options.logger ?? { warn: () => {} }, 'S3 endpoint');
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${urlHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * Destroys the connection when no byte of the request's body arrived for `idleMs` while the
 * endpoint was ready for it. Not counted as silence: waiting for our "100 Continue", and a body
 * held back by us (paused, or buffered and not yet read: a slow disk or an authentication under
 * way). Looked at every `idleMs`, so a stall is cut after one to two periods.
 */
function cutWhenBodyStalls(req: IncomingMessage, idleMs: number): void {
  if (!idleMs || req.complete) return;
  const socket = req.socket;
  let seen = socket.bytesRead;
  const timer = setInterval(() => {
    if (req.complete || req.destroyed) return clearInterval(timer);
    const read = socket.bytesRead;
    const heldByUs = bodyStillAwaited(req) || req.readableFlowing === false || req.readableLength > 0;
    if (read === seen && !heldByUs) {
      clearInterval(timer);
      socket.destroy();
    }
    seen = read;
  }, idleMs);
  timer.unref();
  req.once('close', () => clearInterval(timer));
  req.once('end', () => clearInterval(timer));
}
