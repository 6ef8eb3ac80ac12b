// The token endpoint's errors as RFC 6749 section 5.2 has them, so that stock OAuth 2 clients
// (requests-oauthlib, authlib, golang.org/x/oauth2, Spring...) report what went wrong: `error`
// (invalid_request, invalid_client, invalid_grant, unauthorized_client, unsupported_grant_type,
// invalid_scope) and `error_description`, beside CONTRACT.md's `detail`/`code` (or its field
// errors for a malformed parameter). A 401 carries `WWW-Authenticate: Basic` (RFC 6749 2.3.1,
// RFC 7235 3.1). Token answers are not cached (RFC 6749 5.1). Client authentication by HTTP Basic
// (RFC 6749 2.3.1: client id and secret form-urlencoded, then base64) is read here too.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../infra/http/errors.ts';

export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope';
const OAUTH_CODES = new Set<string>(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope']);

export const WWW_AUTHENTICATE = 'Basic realm="oauth2", charset="UTF-8"';

/** An RFC 6749 error: 400, or 401 (with WWW-Authenticate) for invalid_client; `code` is `error`. */
export function oauthError(error: OAuthErrorCode, description: string): ApiError {
  return error === 'invalid_client'
    ? new ApiError(401, error, description, { 'WWW-Authenticate': WWW_AUTHENTICATE })
    : new ApiError(400, error, description);
}

/** Client id and secret of an `Authorization: Basic` header; undefined without one (other schemes are ignored). */
export function basicClientCredentials(authorization: string | undefined): { clientId: string; clientSecret: string } | undefined {
  // Trimmed first: a trailing \s* after \s+(\S*) made every split of a long run of spaces a new try
  // (quadratic in the header's length).
  const match = /^Basic(?:\s+(\S*))?$/i.exec((authorization ?? '').trim());
  if (!match) return undefined;
  const malformed = () => oauthError('invalid_client', 'Malformed HTTP Basic client authentication: expected base64 of "<client_id>:<client_secret>", each form-urlencoded.');
  const token = match[1] ?? '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(token) || token.length % 4 !== 0) throw malformed();
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw malformed();
  try {
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: unform(decoded.slice(0, colon)), clientSecret: unform(decoded.slice(colon + 1)) };
  } catch {
    throw malformed();
  }
}

/** The client id a token request names (HTTP Basic, else the parameters), for throttling. */
export function requestedClientId(authorization: string | undefined, params: { client_id?: unknown }): string | undefined {
  try {
    const basic = basicClientCredentials(authorization);
    if (basic?.clientId) return basic.clientId;
  } catch {
    // a malformed header names no client
  }
  return typeof params.client_id === 'string' && params.client_id !== '' ? params.client_id : undefined;
}

/**
 * onSend hook of the token route: no caching, and every error body given RFC 6749's fields. The
 * error handler has already built the body (CONTRACT's format); a `code` that is an OAuth code is
 * the `error`; a malformed request (field errors, unparsable body, wrong media type, too large) is
 * `invalid_request`. 429 `throttled` and 5xx keep their body: RFC 6749 has no code for them.
 */
export async function oauthErrorBodies(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  reply.header('Cache-Control', 'no-store');
  reply.header('Pragma', 'no-cache');
  const status = reply.statusCode;
  if (status < 400 || status >= 500 || status === 429 || typeof payload !== 'string') return payload;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    return payload;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body) || 'error' in body) return payload;
  const code = typeof body.code === 'string' ? body.code : undefined;
  const error = code && OAUTH_CODES.has(code) ? code : 'invalid_request';
  const description = typeof body.detail === 'string' ? body.detail : describeFieldErrors(body);
  if (status === 401 && !reply.hasHeader('WWW-Authenticate')) reply.header('WWW-Authenticate', WWW_AUTHENTICATE);
  return JSON.stringify({ error, error_description: description, ...body });
}

/** "client_secret: Must NOT have more than 1024 characters." from DRF-style field errors. */
function describeFieldErrors(fields: Record<string, unknown>, path: string[] = []): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const at = [...path, name];
    if (Array.isArray(value)) parts.push(`${at.join('.')}: ${value.join(' ')}`);
    else if (value && typeof value === 'object') parts.push(describeFieldErrors(value as Record<string, unknown>, at));
  }
  return parts.join('; ') || 'Invalid request.';
}
