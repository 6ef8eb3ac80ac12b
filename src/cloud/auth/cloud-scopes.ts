// The scopes of the cloud service's tokens (issue 30 §5): `read:cloud` reads (GET, HEAD, OPTIONS),
// `write:cloud` may also change things. A token asked for with `scope=read:cloud` only is a
// read-only token: every other method answers 403 permission_denied (one check for every
// protected route, cloud.routes.ts), and the storage credentials it is given read the project's
// prefixes but cannot write them (project.service.ts, IssueOptions.writable).
//
// Writing implies reading: every write answers with the record it wrote, so `write:cloud` alone
// is granted both, as no `scope` at all is (RFC 6749 3.3 lets the server grant another scope than
// asked for; the response's `scope` says which).
import { permissionDenied } from '../../infra/http/errors.ts';
import { oauthError } from './oauth-errors.ts';

export const READ_SCOPE = 'read:cloud';
export const WRITE_SCOPE = 'write:cloud';
/** What a token carries unless it was asked for read:cloud only. */
export const CLOUD_SCOPE = `${READ_SCOPE} ${WRITE_SCOPE}`;

/** Every spelling a token request may use: the inspection service's `cloud:read`/`cloud:write` too. A Map: no prototype keys. */
const SPELLINGS = new Map([
  [READ_SCOPE, READ_SCOPE],
  ['cloud:read', READ_SCOPE],
  [WRITE_SCOPE, WRITE_SCOPE],
  ['cloud:write', WRITE_SCOPE],
]);

/** Methods a read-only token may call: they change nothing. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The scope granted for a token request's `scope` (space-separated; absent or empty: both). Unknown values: invalid_scope. */
export function grantedScope(requested: string | undefined): string {
  const asked = new Set<string>();
  const unknown: string[] = [];
  for (const value of (requested ?? '').split(' ')) {
    if (value === '') continue;
    const scope = SPELLINGS.get(value);
    if (scope) asked.add(scope);
    else unknown.push(value);
  }
  if (unknown.length > 0) {
    throw oauthError('invalid_scope', `Unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}: the scopes are ${READ_SCOPE} and ${WRITE_SCOPE} (also spelled cloud:read and cloud:write).`);
  }
  return asked.size === 1 && asked.has(READ_SCOPE) ? READ_SCOPE : CLOUD_SCOPE;
}

/** The known scopes of a verified token's `scope` claim. A token without one has none: it writes nothing. */
export function scopesOfClaim(claim: unknown): string[] {
  if (typeof claim !== 'string') return [];
  return [READ_SCOPE, WRITE_SCOPE].filter((scope) => claim.split(' ').includes(scope));
}

/** Whether a principal's token may change things (and be given writable storage credentials). */
export function mayWrite(principal: { scopes: readonly string[] }): boolean {
  return principal.scopes.includes(WRITE_SCOPE);
}

/** The one scope check of the protected routes: a read-only token calls GET, HEAD and OPTIONS only; else 403 permission_denied. */
export function requireScopeFor(method: string, principal: { scopes: readonly string[] }): void {
  if (READ_METHODS.has(method.toUpperCase()) || mayWrite(principal)) return;
  throw permissionDenied(`This token has the ${READ_SCOPE} scope only; writing needs ${WRITE_SCOPE} (ask for a token without scope, or with scope=${WRITE_SCOPE}).`);
}
