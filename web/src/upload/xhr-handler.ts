// An HTTP handler for the AWS SDK v3 in the browser built on XMLHttpRequest, for one reason: upload
// progress. The SDK's default handler uses fetch, which reports nothing until a request is done,
// so a 10 MB photo would jump from 0 to 100 %. @aws-sdk/xhr-http-handler does the same job, but is
// not released in step with @aws-sdk/client-s3 (3.1141.0 against our 3.1169.0) and would bring a
// second copy of the @smithy packages into the bundle; this file is the part of it we need.
//
// Progress is reported per request body: `trackProgress(body, callback)` before sending it.

interface SdkHttpRequest {
  method: string;
  protocol: string;
  hostname: string;
  port?: number;
  path: string;
  query?: Record<string, string | string[] | null>;
  headers: Record<string, string>;
  body?: unknown;
}

// Headers a page may not set (the browser sets them itself; XHR logs an error when asked to).
const FORBIDDEN = new Set(['host', 'content-length', 'connection', 'expect', 'user-agent', 'accept-encoding', 'keep-alive', 'transfer-encoding', 'date', 'origin', 'referer']);

const listeners = new WeakMap<object, (loaded: number, total: number) => void>();

/** Calls `onProgress(bytesSent, total)` as the request carrying `body` is uploaded. */
export function trackProgress(body: object, onProgress: (loaded: number, total: number) => void): void {
  listeners.set(body, onProgress);
}

// RFC 3986 escaping, as the SDK's own query builder (the signature covers the query).
function escape(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function queryString(query: SdkHttpRequest['query']): string {
  const parts: string[] = [];
  for (const key of Object.keys(query ?? {}).sort()) {
    const value = query![key];
    const k = escape(key);
    if (Array.isArray(value)) for (const v of value) parts.push(`${k}=${escape(v)}`);
    else parts.push(value === null || value === undefined ? k : `${k}=${escape(value)}`);
  }
  return parts.join('&');
}

function parseHeaders(raw: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of raw.trim().split(/[\r\n]+/)) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return headers;
}

function abortError(): Error {
  const err = new Error('Request aborted');
  err.name = 'AbortError';
  return err;
}

export class XhrHttpHandler {
  readonly metadata = { handlerProtocol: 'http/1.1' };

  handle(request: SdkHttpRequest, options: { abortSignal?: AbortSignal } = {}): Promise<{ response: { statusCode: number; reason: string; headers: Record<string, string>; body: Blob } }> {
    const signal = options.abortSignal;
    if (signal?.aborted) return Promise.reject(abortError());
    const query = queryString(request.query);
    const url = `${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ''}${request.path}${query ? `?${query}` : ''}`;
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(request.method, url, true);
      xhr.responseType = 'blob';
      for (const [name, value] of Object.entries(request.headers)) {
        if (!FORBIDDEN.has(name.toLowerCase())) xhr.setRequestHeader(name, value);
      }
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body;
      const listener = body && typeof body === 'object' ? listeners.get(body) : undefined;
      if (listener) xhr.upload.onprogress = (e) => listener(e.loaded, e.total);
      const onAbort = () => xhr.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      xhr.onload = () => {
        done();
        resolve({ response: { statusCode: xhr.status, reason: xhr.statusText, headers: parseHeaders(xhr.getAllResponseHeaders()), body: xhr.response as Blob } });
      };
      // No answer at all (connection refused or cut, CORS refused): a network error, retried.
      xhr.onerror = () => {
        done();
        const err = new Error('Network error: the storage endpoint could not be reached');
        err.name = 'NetworkError';
        reject(err);
      };
      xhr.ontimeout = () => {
        done();
        const err = new Error('The request timed out');
        err.name = 'TimeoutError';
        reject(err);
      };
      xhr.onabort = () => {
        done();
        reject(abortError());
      };
      xhr.send(body as XMLHttpRequestBodyInit | undefined);
    });
  }

  updateHttpClientConfig(): void {}

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {}
}
