// When a bearer token issued now for `ttlSeconds` expires, as a JWT `exp` (whole seconds).
//
// `exp` counts whole seconds and a token is refused once the clock reaches it, so rounding the
// issue time down (the usual `Math.floor(Date.now() / 1000) + ttl`) makes a token live anywhere
// between ttl - 1 and ttl seconds: a client that trusts `expires_in` and refreshes just in time
// meets `token_expired`, and a 1-second token may be dead before its first use. Rounding up keeps
// the promise of `expires_in`: the token lives at least ttl seconds (and less than one more).
export function tokenExpiry(ttlSeconds: number, now = Date.now()): number {
  return Math.ceil(now / 1000) + ttlSeconds;
}
