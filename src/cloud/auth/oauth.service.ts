// OAuth2 client credentials for the cloud service: RS256 JWTs carrying `sub` (the client id),
// `iat`, `exp`, `iss`, `scope` and `<issuer domain>/org` (the organization uuid). The public key is
// published as a JWKS and as PEM so clients can verify tokens on their own.
import crypto from 'node:crypto';
import { SignJWT, jwtVerify, exportJWK, calculateJwkThumbprint, errors as joseErrors, type JWK } from 'jose';
import { tokenExpiry } from '../../infra/auth/token-expiry.ts';
import type { Kysely } from 'kysely';
import type { CloudTables } from '../cloud.tables.ts';
import { constantTimeEqual, generateSecret, sha256Hex } from '../../infra/auth/secrets.ts';
import { authenticationFailed, notAuthenticated, tokenExpired } from '../../infra/http/errors.ts';
import { oauthError } from './oauth-errors.ts';

export const CLOUD_SCOPE = 'read:cloud write:cloud';
const CLOUD_SCOPES = CLOUD_SCOPE.split(' ');

export interface CloudPrincipal {
  clientId: string;
  clientRowId: number;
  organizationId: number;
  organizationUuid: string;
}

export interface OAuthServiceOptions {
  issuer: string;
  tokenTtlSeconds: number;
  privateKey: crypto.KeyObject;
}

export class OAuthService {
  readonly orgClaim: string;
  private readonly publicKey: crypto.KeyObject;
  private jwk: Promise<JWK>;

  constructor(
    private readonly db: Kysely<CloudTables>,
    private readonly options: OAuthServiceOptions,
  ) {
    this.orgClaim = `${new URL(options.issuer).host}/org`;
    const publicKey = crypto.createPublicKey(options.privateKey);
    this.publicKey = publicKey;
    this.jwk = (async () => {
      const jwk = await exportJWK(publicKey);
      return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: 'RS256', use: 'sig' };
    })();
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: [await this.jwk] };
  }

  publicKeyPem(): string {
    return this.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }

  /** Creates client credentials; the secret is returned once and stored hashed. */
  async createClient(organizationId: number, name: string): Promise<{ clientId: string; clientSecret: string }> {
    const clientId = generateSecret('cid', 12);
    const clientSecret = generateSecret('cs');
    await this.db
      .insertInto('cloud.clients')
      .values({ client_id: clientId, secret_hash: sha256Hex(clientSecret), organization_id: organizationId, name })
      .execute();
    return { clientId, clientSecret };
  }

  /** Disables credentials, as the spec says: by deleting them. */
  async deleteClient(clientId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('cloud.clients').where('client_id', '=', clientId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * A token for the client credentials grant (RFC 6749 4.4). The client authenticates with
   * `client_id`/`client_secret` parameters or HTTP Basic (`basic`), not both. Errors are RFC 6749's
   * (oauth-errors.ts): a parameter missing or repeated, or two authentication methods:
   * invalid_request; a grant other than client_credentials: unsupported_grant_type; no, unknown or
   * wrong credentials: invalid_client (401); a scope beyond read:cloud write:cloud: invalid_scope.
   * invalid_grant and unauthorized_client never arise: this grant carries nothing but the client's
   * credentials, and every client may use it.
   */
  async issueToken(request: {
    grantType?: string;
    clientId?: string;
    clientSecret?: string;
    scope?: string;
    basic?: { clientId: string; clientSecret: string };
  }) {
    // RFC 6749 3.2: a parameter sent without a value is treated as omitted.
    const given = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
    const grantType = given(request.grantType);
    if (!grantType) throw oauthError('invalid_request', 'The grant_type parameter is required (client_credentials).');
    if (grantType !== 'client_credentials') throw oauthError('unsupported_grant_type', `Unsupported grant_type "${grantType}": this server issues tokens for client_credentials only.`);
    let clientId = given(request.clientId);
    let clientSecret = given(request.clientSecret);
    if (request.basic) {
      if (clientSecret) throw oauthError('invalid_request', 'The client authenticated twice (HTTP Basic and client_secret): use one method.');
      if (clientId && clientId !== request.basic.clientId) throw oauthError('invalid_request', 'client_id differs from the client authenticated by HTTP Basic.');
      ({ clientId, clientSecret } = request.basic);
    }
    if (!clientId || !clientSecret) throw oauthError('invalid_client', 'Client authentication is required: client_id and client_secret, or HTTP Basic.');
    const client = await this.db
      .selectFrom('cloud.clients')
      .innerJoin('cloud.organizations', 'cloud.organizations.id', 'cloud.clients.organization_id')
      .select(['cloud.clients.secret_hash', 'cloud.organizations.uuid as organization_uuid'])
      .where('cloud.clients.client_id', '=', clientId)
      .executeTakeFirst();
    if (!client || !constantTimeEqual(client.secret_hash, sha256Hex(clientSecret))) {
      throw oauthError('invalid_client', 'Invalid client credentials.');
    }
    const scope = given(request.scope);
    const unknown = scope?.split(' ').filter((s) => s !== '' && !CLOUD_SCOPES.includes(s)) ?? [];
    if (unknown.length > 0) throw oauthError('invalid_scope', `Unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}: the scopes are ${CLOUD_SCOPE}.`);
    const access_token = await new SignJWT({ scope: CLOUD_SCOPE, [this.orgClaim]: client.organization_uuid })
      .setProtectedHeader({ alg: 'RS256', kid: (await this.jwk).kid, typ: 'JWT' })
      .setSubject(clientId)
      .setIssuer(this.options.issuer)
      .setIssuedAt()
      .setExpirationTime(tokenExpiry(this.options.tokenTtlSeconds))
      .sign(this.options.privateKey);
    return { access_token, token_type: 'Bearer' as const, expires_in: this.options.tokenTtlSeconds, scope: CLOUD_SCOPE };
  }

  /** Verifies an `Authorization: Bearer` header value and loads the client it names. */
  async authenticate(authorization: string | undefined): Promise<CloudPrincipal> {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!match) throw notAuthenticated();
    let subject: string;
    try {
      const { payload } = await jwtVerify(match[1], this.publicKey, { issuer: this.options.issuer, algorithms: ['RS256'] });
      subject = String(payload.sub);
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw tokenExpired();
      throw authenticationFailed('Invalid token.');
    }
    const client = await this.db
      .selectFrom('cloud.clients')
      .innerJoin('cloud.organizations', 'cloud.organizations.id', 'cloud.clients.organization_id')
      .select(['cloud.clients.id', 'cloud.clients.organization_id', 'cloud.organizations.uuid'])
      .where('cloud.clients.client_id', '=', subject)
      .executeTakeFirst();
    if (!client) throw authenticationFailed('The client of this token no longer exists.');
    return { clientId: subject, clientRowId: client.id, organizationId: client.organization_id, organizationUuid: client.uuid };
  }
}
