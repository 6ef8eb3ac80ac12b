// CORS for the embedded S3 endpoint: the web console (served by the inspection service, another
// origin than the endpoint's) uploads photos with the AWS SDK in the browser and reads presigned
// URLs (point clouds, thumbnails) with fetch. Only configured origins get CORS headers; S3's own
// per-bucket CORS configuration (PutBucketCors) is not implemented, the list comes from the
// server's configuration (the inspection service's origin plus CONSOLE_ORIGINS).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Origins allowed to call the endpoint from a browser; asked per request (ports known late). */
export type AllowedOrigins = () => readonly string[];

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'];
// Request headers a browser S3 client sends (the AWS SDK v3 signs x-amz-*, adds amz-sdk-*).
const ALLOWED_HEADERS = new Set([
  'authorization', 'content-type', 'content-md5', 'content-encoding', 'content-disposition', 'content-language',
  'cache-control', 'expires', 'range', 'if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since',
]);
const ALLOWED_HEADER_PREFIXES = ['x-amz-', 'amz-sdk-'];
// Response headers scripts may read: the ETag is needed to complete a multipart upload.
const EXPOSED_HEADERS = 'ETag, Content-Length, Content-Range, Content-Type, Last-Modified, Accept-Ranges, x-amz-request-id, x-amz-id-2, x-amz-version-id, x-amz-checksum-crc32, x-amz-checksum-crc32c, x-amz-checksum-crc64nvme, x-amz-checksum-sha1, x-amz-checksum-sha256, x-amz-checksum-type';
const MAX_AGE_SECONDS = '3600';

function headerAllowed(name: string): boolean {
  return ALLOWED_HEADERS.has(name) || ALLOWED_HEADER_PREFIXES.some((prefix) => name.startsWith(prefix));
}

function originAllowed(origin: string, allowed: AllowedOrigins): boolean {
  return allowed().includes(origin);
}

/**
 * Applies CORS to one request. Returns true when the request was a preflight and has been
 * answered (it carries no signature: it is answered before authentication).
 */
export function handleCors(req: IncomingMessage, res: ServerResponse, allowed: AllowedOrigins | undefined): boolean {
  if (!allowed) return false;
  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
  const method = (req.method ?? 'GET').toUpperCase();
  const requestedMethod = req.headers['access-control-request-method'];
  // The answer depends on Origin: caches must not hand one origin's answer to another.
  res.setHeader('Vary', 'Origin');
  if (method === 'OPTIONS' && origin !== undefined && typeof requestedMethod === 'string') {
    if (!originAllowed(origin, allowed) || !METHODS.includes(requestedMethod.toUpperCase())) {
      res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 0 });
      res.end();
      return true;
    }
    const requestedHeaders = String(req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h && headerAllowed(h));
    res.setHeader('Vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    res.writeHead(204, {
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Methods': METHODS.join(', '),
      ...(requestedHeaders.length ? { 'Access-Control-Allow-Headers': requestedHeaders.join(', ') } : {}),
      'Access-Control-Max-Age': MAX_AGE_SECONDS,
      'Content-Length': 0,
    });
    res.end();
    return true;
  }
  if (origin !== undefined && originAllowed(origin, allowed)) {
    // Set before the operation runs, so success and error answers both carry them.
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
  }
  return false;
}

const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * An origin plus its loopback spellings: a service at http://127.0.0.1:8000 is also opened as
 * http://localhost:8000, a different origin to the browser but the same page.
 */
export function withLoopbackAliases(origin: string): string[] {
  const url = new URL(origin);
  if (!LOOPBACK.includes(url.hostname)) return [url.origin];
  return LOOPBACK.map((host) => `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}`);
}
