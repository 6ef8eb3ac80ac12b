// OAuth2 client credentials for the cloud service: RS256 JWTs carrying `sub` (the client id),
// `iat`, `exp`, `iss`, `scope` and `<issuer domain>/org` (the organization uuid). The public key is
// published as a JWKS and as PEM so clients can verify tokens on their own.
import crypto from 'node:crypto';
import { SignJWT, jwtVerify, exportJWK, calculateJwkThumbprint, errors as joseErrors, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { CloudTables } from '../cloud.tables.ts';
import { constantTimeEqual, generateSecret, sha256Hex } from '../../infra/auth/secrets.ts';
import { ApiError, authenticationFailed, notAuthenticated, tokenExpired } from '../../infra/http/errors.ts';

export const CLOUD_SCOPE = 'read:cloud write:cloud';

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

  async issueToken(grantType: string | undefined, clientId: string | undefined, clientSecret: string | undefined) {
    if (grantType !== 'client_credentials') {
      throw new ApiError(400, 'unsupported_grant_type', 'grant_type must be client_credentials.');
    }
    if (!clientId || !clientSecret) throw new ApiError(401, 'invalid_client', 'client_id and client_secret are required.');
    const client = await this.db
      .selectFrom('cloud.clients')
      .innerJoin('cloud.organizations', 'cloud.organizations.id', 'cloud.clients.organization_id')
      .select(['cloud.clients.secret_hash', 'cloud.organizations.uuid as organization_uuid'])
      .where('cloud.clients.client_id', '=', clientId)
      .executeTakeFirst();
    if (!client || !constantTimeEqual(client.secret_hash, sha256Hex(clientSecret))) {
      throw new ApiError(401, 'invalid_client', 'Invalid client credentials.');
    }
    const access_token = await new SignJWT({ scope: CLOUD_SCOPE, [this.orgClaim]: client.organization_uuid })
      .setProtectedHeader({ alg: 'RS256', kid: (await this.jwk).kid, typ: 'JWT' })
      .setSubject(clientId)
      .setIssuer(this.options.issuer)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + this.options.tokenTtlSeconds)
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
