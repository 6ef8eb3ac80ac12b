// Authentication of the inspection service (spec "Authentication", CONTRACT section 2):
// - `X-Api-Key` on every call identifies the application (keys stored as SHA-256);
// - `POST /v1/auth/token/` trades a user's username and password (scrypt) for a JWT (HS256, key in
//   the data folder) that names both the user and the API key it was issued to;
// - `Authorization: Bearer <jwt>` on every other call, with the same API key;
// - `vendor-organization-uuid` (alias `pix4d-organization-uuid`) selects an organization the user
//   belongs to; scopes: `cloud:read` for GET, `cloud:write` for the rest;
// - or, without Authorization, a share token (`X-Share-Token`, or `?share_token=` in a link;
//   share-tokens.ts): no account and no API key needed (a key sent must still be valid); the
//   principal has the scope `share:read`, which opens the GET routes of SHAREABLE_READS for the
//   one inspection of the token. One path, one principal, one scope check for both.
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { tokenExpiry } from '../../infra/auth/token-expiry.ts';
import type { Kysely } from 'kysely';
import type { InspectionTables } from '../inspection.tables.ts';
import { sha256Hex, verifyPassword } from '../../infra/auth/secrets.ts';
import { TtlCache } from '../../infra/auth/ttl-cache.ts';
import { authenticationFailed, invalidApiKey, notAuthenticated, permissionDenied, tokenExpired } from '../../infra/http/errors.ts';
import { SHARE_SCOPE, SHAREABLE_READS, type ShareTokenService } from './share-tokens.ts';
import { grantedScopes } from './token-scopes.ts';

export interface AuthContext {
  /** The user acting; for a share token, the user who made it (who cannot act through it). */
  userId: number;
  /** null: a share token sent without an API key. */
  apiKeyId: number | null;
  /** The organization named in the request's organization header, or null. */
  organization: { id: number; uuid: string } | null;
  scopes: string[];
  /** Set for a share token: the one inspection it reads (access.ts), and how long URLs handed to its holder live (downloadUrlSeconds). */
  share: { tokenId: number; inspectionId: number; urlSeconds: number; expiresAt: string } | null;
}

/** What a request asks for, for the scope check: its method and the route it matched. */
export interface AuthTarget {
  method: string;
  /** The matched route as registered (e.g. /v1/inspections/:id/), for SHAREABLE_READS. */
  route?: string;
  /** The `share_token` query parameter, if any. */
  shareToken?: unknown;
}

export interface AuthHeaders {
  'x-api-key'?: string | string[];
  authorization?: string;
  'vendor-organization-uuid'?: string | string[];
  'pix4d-organization-uuid'?: string | string[];
  'x-share-token'?: string | string[];
}

const ISSUER = 'inspection-service';
// Performance (bench/README.md, "API"): every authenticated request used to spend three database
// lookups and a JWT verification (~0.12 ms of CPU) before its own work. Found API keys and
// memberships are now remembered for a few seconds, and a verified token's claims for as long as
// the token is valid (a token cannot change; its expiry is still checked on every request). A key
// revoked in this process (AccountAdmin.revokeApiKey) is forgotten at once (forgetApiKey): its
// next request and every token issued to it are refused; revoked by another process (the admin
// CLI beside a server on PostgreSQL), within LOOKUP_CACHE_MS. A membership removed in this
// process (membership-removal.ts) is forgotten at once (forgetMembership); by another process,
// it stops working within LOOKUP_CACHE_MS.
// Then (issue 14) the whole outcome, for requests that repeat the same API key, token and
// organization header (what a client does): `cached` answers them without a hash, a regex or
// three lookups, synchronously, until the first of the lookups it was made of would have been
// made again (so a revoked key or a removed membership still stops working within
// LOOKUP_CACHE_MS) and never past the token's expiry; the scope check still runs on every
// request, and forgetApiKey forgets these too.
const LOOKUP_CACHE_MS = 5_000;
const TOKEN_CACHE_MS = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class AuthService {
  private readonly apiKeys = new TtlCache<string, number>(LOOKUP_CACHE_MS);
  private readonly tokens = new TtlCache<string, { userId: number; tokenKeyId: number; scopes: string[]; exp: number }>(TOKEN_CACHE_MS);
  private readonly memberships = new TtlCache<string, { id: number; uuid: string }>(LOOKUP_CACHE_MS);
  private readonly contexts = new TtlCache<string, { auth: AuthContext; exp: number }>(LOOKUP_CACHE_MS);

  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly signingKey: Uint8Array,
    private readonly tokenTtlSeconds: number,
    private readonly shareTokens: ShareTokenService,
  ) {}

  /** Resolves `X-Api-Key` to the key's id, or throws 401 invalid_api_key. */
  async requireApiKey(headers: AuthHeaders): Promise<number> {
    const value = single(headers['x-api-key']);
    if (!value) throw invalidApiKey('The X-Api-Key header is required on every call.');
    // Looked up by the hash itself (unique index): equality on a SHA-256 of a 256-bit secret leaks nothing useful.
    const hash = sha256Hex(value);
    const cached = this.apiKeys.get(hash);
    if (cached !== undefined) return cached;
    const key = await this.db
      .selectFrom('inspection.api_keys')
      .select('id')
      .where('key_hash', '=', hash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!key) throw invalidApiKey('Invalid API key.');
    this.apiKeys.set(hash, key.id);
    return key.id;
  }

  /** Forgets a revoked key at once (and with it every token issued to it: their key is checked first). */
  forgetApiKey(id: number): void {
    this.apiKeys.deleteWhere((cached) => cached === id);
    this.contexts.deleteWhere((cached) => cached.auth.apiKeyId === id);
  }

  /**
   * Forgets a removed membership at once (membership-removal.ts): the next request with the
   * organization's header looks it up again and is refused.
   */
  forgetMembership(userId: number, organization: { id: number; uuid: string }): void {
    // Keyed by the header as sent (any letter case): matched by the user and the organization found.
    this.memberships.deleteWhere((cached, key) => cached.id === organization.id && key.startsWith(`${userId}:`));
    this.contexts.deleteWhere((cached) => cached.auth.userId === userId && cached.auth.organization?.id === organization.id);
  }

  /**
   * What `authenticate` answered a moment ago for the same API key, token and organization
   * headers, if it accepted them and the token has not expired since; the scope check runs
   * again (it depends on the route). Undefined: go through `authenticate`.
   */
  cached(headers: AuthHeaders, target: AuthTarget): AuthContext | undefined {
    const key = contextKey(headers, target);
    const entry = key === undefined ? undefined : this.contexts.get(key);
    if (!entry || entry.exp * 1000 <= Date.now()) return undefined;
    return this.allow(target, entry.auth);
  }

  /**
   * For the login throttle (infra/http/login-throttle.ts): `api-key:<id>` when the request's API
   * key belongs to an organization `username` is a member of (admin create-api-key --org), else
   * undefined. Such an attempt is counted apart from its address's others (never merged with
   * other addresses': every member holds the key, and so may an attacker).
   */
  async loginVoucher(headers: AuthHeaders, username: string): Promise<string | undefined> {
    const value = single(headers['x-api-key']);
    if (!value) return undefined;
    const key = await this.db
      .selectFrom('inspection.api_keys as k')
      .innerJoin('inspection.memberships as m', 'm.organization_id', 'k.organization_id')
      .innerJoin('inspection.users as u', 'u.id', 'm.user_id')
      .select('k.id')
      .where('k.key_hash', '=', sha256Hex(value))
      .where('k.revoked_at', 'is', null)
      .where('u.username', '=', username)
      .executeTakeFirst();
    return key ? `api-key:${key.id}` : undefined;
  }

  /** `scope`: what the token is asked for (token-scopes.ts; absent: cloud:read and cloud:write). */
  async issueToken(headers: AuthHeaders, username: string, password: string, scope?: string): Promise<{ api_token: string; expires_in: number; scope: string }> {
    const scopes = grantedScopes(scope).join(' ');
    const apiKeyId = await this.requireApiKey(headers);
    const user = await this.db.selectFrom('inspection.users').select(['id', 'password_hash']).where('username', '=', username).executeTakeFirst();
    // Verify against a dummy hash for unknown users, so response time does not reveal which usernames exist.
    const ok = await verifyPassword(password, user?.password_hash ?? DUMMY_HASH);
    if (!user || !ok) throw authenticationFailed('Unable to log in with the provided credentials.');
    const api_token = await new SignJWT({ akid: apiKeyId, scope: scopes })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(user.id))
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(tokenExpiry(this.tokenTtlSeconds))
      .sign(this.signingKey);
    return { api_token, expires_in: this.tokenTtlSeconds, scope: scopes };
  }

  async authenticate(headers: AuthHeaders, target: AuthTarget): Promise<AuthContext> {
    const shareToken = single(headers['x-share-token']) ?? (typeof target.shareToken === 'string' ? single(target.shareToken) : undefined);
    if (shareToken && !headers.authorization) {
      const apiKeyId = headers['x-api-key'] === undefined ? null : await this.requireApiKey(headers);
      const grant = await this.shareTokens.resolve(shareToken);
      return this.allow(target, { userId: grant.createdBy, apiKeyId, organization: null, scopes: [SHARE_SCOPE], share: { tokenId: grant.tokenId, inspectionId: grant.inspectionId, urlSeconds: grant.urlSeconds, expiresAt: grant.expiresAt } });
    }
    const apiKeyId = await this.requireApiKey(headers);
    const match = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '');
    if (!match) throw notAuthenticated('Authorization: Bearer <token> is required; get a token from POST /v1/auth/token/.');
    let userId: number;
    let tokenKeyId: number;
    let scopes: string[];
    let exp: number | undefined;
    const verified = this.tokens.get(match[1]);
    if (verified) {
      if (verified.exp * 1000 <= Date.now()) throw tokenExpired();
      ({ userId, tokenKeyId, scopes, exp } = verified);
    } else {
      try {
        const { payload } = await jwtVerify(match[1], this.signingKey, { issuer: ISSUER, algorithms: ['HS256'] });
        userId = Number(payload.sub);
        tokenKeyId = Number(payload.akid);
        scopes = String(payload.scope ?? '').split(' ').filter(Boolean);
        exp = payload.exp;
        if (exp !== undefined) this.tokens.set(match[1], { userId, tokenKeyId, scopes, exp });
      } catch (err) {
        if (err instanceof joseErrors.JWTExpired) throw tokenExpired();
        throw authenticationFailed('Invalid token.');
      }
    }
    if (tokenKeyId !== apiKeyId) throw authenticationFailed('The token was issued to another API key.');
    this.allow(target, { userId, apiKeyId, organization: null, scopes, share: null });
    const organization = await this.organizationFromHeaders(headers, userId);
    // Shared by the requests `cached` answers: frozen, so that none can change another's.
    const auth: AuthContext = Object.freeze({ userId, apiKeyId, organization: organization && Object.freeze({ ...organization }), scopes: Object.freeze([...scopes]) as string[], share: null });
    const key = contextKey(headers, target);
    if (key !== undefined && exp !== undefined) {
      // No longer than the API key and the membership it was made of are remembered.
      const uuid = single(headers['vendor-organization-uuid']) ?? single(headers['pix4d-organization-uuid']);
      const membership = organization ? this.memberships.expiry(`${userId}:${uuid}`) : Infinity;
      this.contexts.set(key, { auth, exp }, Math.min(this.apiKeys.expiry(sha256Hex(single(headers['x-api-key'])!)) ?? 0, membership ?? 0));
    }
    return auth;
  }

  /** The scope check: `cloud:read` for GET, `cloud:write` for the rest, `share:read` for the GET routes of SHAREABLE_READS; else 403. */
  private allow(target: AuthTarget, auth: AuthContext): AuthContext {
    const read = target.method === 'GET' || target.method === 'HEAD';
    const needed = read ? 'cloud:read' : 'cloud:write';
    if (auth.scopes.includes(needed)) return auth;
    if (read && auth.scopes.includes(SHARE_SCOPE) && target.route !== undefined && SHAREABLE_READS.has(target.route)) return auth;
    if (auth.share) throw permissionDenied('A share token only reads its inspection (its record, photos, annotations, measurements, extras and outputs); it cannot change anything.');
    throw permissionDenied(`The token lacks the ${needed} scope.`);
  }

  /** Who the token acts for and the organizations they may act for (GET /v1/me/, the console's sign-in). */
  async profile(auth: AuthContext): Promise<{ id: number; username: string; email: string; organization_uuid: string | null; organizations: { uuid: string; name: string }[] }> {
    const user = await this.db.selectFrom('inspection.users').select(['id', 'username', 'email']).where('id', '=', auth.userId).executeTakeFirstOrThrow();
    const organizations = await this.db
      .selectFrom('inspection.organizations')
      .innerJoin('inspection.memberships', 'inspection.memberships.organization_id', 'inspection.organizations.id')
      .select(['inspection.organizations.uuid', 'inspection.organizations.name'])
      .where('inspection.memberships.user_id', '=', auth.userId)
      .orderBy('inspection.organizations.name')
      .execute();
    return { ...user, organization_uuid: auth.organization?.uuid ?? null, organizations };
  }

  private async organizationFromHeaders(headers: AuthHeaders, userId: number): Promise<AuthContext['organization']> {
    const uuid = single(headers['vendor-organization-uuid']) ?? single(headers['pix4d-organization-uuid']);
    if (!uuid) return null;
    if (!UUID.test(uuid)) throw permissionDenied('The organization header is not a UUID.');
    const cacheKey = `${userId}:${uuid}`;
    const cached = this.memberships.get(cacheKey);
    if (cached) return cached;
    const membership = await this.db
      .selectFrom('inspection.organizations')
      .innerJoin('inspection.memberships', 'inspection.memberships.organization_id', 'inspection.organizations.id')
      .select(['inspection.organizations.id', 'inspection.organizations.uuid'])
      .where('inspection.organizations.uuid', '=', uuid)
      .where('inspection.memberships.user_id', '=', userId)
      .executeTakeFirst();
    if (!membership) throw permissionDenied('You are not a member of this organization.');
    this.memberships.set(cacheKey, membership);
    return membership;
  }
}

/**
 * The key of a request's credentials in `contexts`: the raw API key, Authorization and both
 * organization headers, or undefined when the request is not of the kind cached (a share token,
 * a repeated header).
 */
function contextKey(headers: AuthHeaders, target: AuthTarget): string | undefined {
  if (headers['x-share-token'] !== undefined || target.shareToken !== undefined) return undefined;
  const { 'x-api-key': apiKey, authorization, 'vendor-organization-uuid': vendor, 'pix4d-organization-uuid': pix4d } = headers;
  if (typeof apiKey !== 'string' || typeof authorization !== 'string' || Array.isArray(vendor) || Array.isArray(pix4d)) return undefined;
  return `${apiKey}\n${authorization}\n${vendor ?? ''}\n${pix4d ?? ''}`;
}

function single(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v && v.trim() !== '' ? v.trim() : undefined;
}

// scrypt hash of a random password nobody knows; used only to spend the same time on unknown users.
const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
