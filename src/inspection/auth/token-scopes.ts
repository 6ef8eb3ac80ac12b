// The scopes a token is asked for at `POST /v1/auth/token/` (issue 40 §8; spec "Authentication" 8:
// `cloud:read` and `cloud:write`; CONTRACT §2: `cloud:read` for GET, `cloud:write` for the rest).
// A token asked for with `scope` `cloud:read` only is read-only: every other method answers 403
// permission_denied (AuthService's one scope check). Writing implies reading (every write answers
// with the record it wrote), so `cloud:write` is granted both, as no `scope` at all is, the same
// rule as the cloud's tokens (src/cloud/auth/cloud-scopes.ts), whose spellings `read:cloud` and
// `write:cloud` are taken too. An unknown value is a 400 naming `scope`, before the password is
// checked: no hashing, and it does not count as a failed login.
import { ValidationError } from '../../infra/http/errors.ts';

export const READ_SCOPE = 'cloud:read';
export const WRITE_SCOPE = 'cloud:write';

/** Every spelling a token request may use. A Map: no prototype keys. */
const SPELLINGS = new Map([
  [READ_SCOPE, READ_SCOPE],
  ['read:cloud', READ_SCOPE],
  [WRITE_SCOPE, WRITE_SCOPE],
  ['write:cloud', WRITE_SCOPE],
]);

/** The scopes granted for a token request's `scope` (space-separated; absent or blank: both). */
export function grantedScopes(requested: string | undefined): string[] {
  const asked = new Set<string>();
  const unknown: string[] = [];
  for (const value of (requested ?? '').split(/\s+/)) {
    if (value === '') continue;
    const scope = SPELLINGS.get(value);
    if (scope) asked.add(scope);
    else unknown.push(value);
  }
  if (unknown.length > 0) {
    const names = unknown.slice(0, 5).map((s) => `"${s}"`).join(', ');
    throw ValidationError.field('scope', `Unknown scope ${names}: the scopes are ${READ_SCOPE} and ${WRITE_SCOPE}, space-separated.`);
  }
  return asked.size === 1 && asked.has(READ_SCOPE) ? [READ_SCOPE] : [READ_SCOPE, WRITE_SCOPE];
}
