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
import { grantedScope, scopesOfClaim } from './cloud-scopes.ts';

export interface CloudPrincipal {
  clientId: string;
  clientRowId: number;
  /** The organization whose records the request sees: the client's own, or the one a service client acts for. */
  organizationId: number;
  organizationUuid: string;
  /** The client's own organization (differs from organizationId while a service client acts for another). */
  homeOrganizationId: number;
  /** A service client (the inspection service's): may act for any organization (issue 30). */
  actsForOrganizations: boolean;
  /** The token's scopes: read:cloud, and write:cloud unless it is a read-only token (cloud-scopes.ts). */
  scopes: readonly string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

  /**
   * Creates client credentials; the secret is returned once and stored hashed. A service client
   * (`actsForOrganizations`) may name, in its token requests, an organization to act for: made by
   * the services' own setup only (admin/bootstrap.ts), never through the API.
   */
  async createClient(organizationId: number, name: string, options: { actsForOrganizations?: boolean; email?: string | null } = {}): Promise<{ clientId: string; clientSecret: string }> {
    const clientId = generateSecret('cid', 12);
    const clientSecret = generateSecret('cs');
    await this.db
      .insertInto('cloud.clients')
      .values({ client_id: clientId, secret_hash: sha256Hex(clientSecret), organization_id: organizationId, name, acts_for_organizations: options.actsForOrganizations ?? false, email: options.email ?? null })
      .execute();
    return { clientId, clientSecret };
  }

  /** Makes existing credentials a service client (those the inspection service was given before issue 30). */
  async markServiceClient(clientId: string): Promise<void> {
    await this.db.updateTable('cloud.clients').set({ acts_for_organizations: true }).where('client_id', '=', clientId).execute();
  }

  /** The client's notification address (notifications/cloud-mail.ts), null for none; false: no such client. */
  async setClientEmail(clientId: string, email: string | null): Promise<boolean> {
    const result = await this.db.updateTable('cloud.clients').set({ email }).where('client_id', '=', clientId).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
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
   * wrong credentials: invalid_client (401); a scope beyond read:cloud write:cloud (or their
   * spellings cloud:read cloud:write): invalid_scope; `read:cloud` alone: a read-only token;
   * `organization_uuid` from a client that is not a service client: unauthorized_client.
   * invalid_grant never arises: this grant carries nothing but the client's credentials.
   */
  async issueToken(request: {
    grantType?: string;
    clientId?: string;
    clientSecret?: string;
    scope?: string;
    /** Extension for service clients: the organization to act for (docs/cloud-service.md "Service clients"). */
    organizationUuid?: string;
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
      .select(['cloud.clients.secret_hash', 'cloud.clients.acts_for_organizations', 'cloud.organizations.uuid as organization_uuid'])
      .where('cloud.clients.client_id', '=', clientId)
      .executeTakeFirst();
    if (!client || !constantTimeEqual(client.secret_hash, sha256Hex(clientSecret))) {
      throw oauthError('invalid_client', 'Invalid client credentials.');
    }
    const scope = grantedScope(given(request.scope));
    let organizationUuid = client.organization_uuid;
    const actingFor = given(request.organizationUuid);
    if (actingFor !== undefined) {
      if (!client.acts_for_organizations) throw oauthError('unauthorized_client', 'This client may not act for another organization: organization_uuid is for service clients only.');
      if (!UUID.test(actingFor)) throw oauthError('invalid_request', 'organization_uuid must be a UUID.');
      organizationUuid = (await this.ensureOrganization(actingFor.toLowerCase())).uuid;
    }
    const access_token = await new SignJWT({ scope, [this.orgClaim]: organizationUuid })
      .setProtectedHeader({ alg: 'RS256', kid: (await this.jwk).kid, typ: 'JWT' })
      .setSubject(clientId)
      .setIssuer(this.options.issuer)
      .setIssuedAt()
      .setExpirationTime(tokenExpiry(this.options.tokenTtlSeconds))
      .sign(this.options.privateKey);
    return { access_token, token_type: 'Bearer' as const, expires_in: this.options.tokenTtlSeconds, scope };
  }

  /** Verifies an `Authorization: Bearer` header value and loads the client it names. */
  async authenticate(authorization: string | undefined): Promise<CloudPrincipal> {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!match) throw notAuthenticated();
    let subject: string;
    let claimedOrganization: unknown;
    let scopes: string[];
    try {
      const { payload } = await jwtVerify(match[1], this.publicKey, { issuer: this.options.issuer, algorithms: ['RS256'] });
      subject = String(payload.sub);
      claimedOrganization = payload[this.orgClaim];
      scopes = scopesOfClaim(payload.scope);
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw tokenExpired();
      throw authenticationFailed('Invalid token.');
    }
    const client = await this.db
      .selectFrom('cloud.clients')
      .innerJoin('cloud.organizations', 'cloud.organizations.id', 'cloud.clients.organization_id')
      .select(['cloud.clients.id', 'cloud.clients.organization_id', 'cloud.clients.acts_for_organizations', 'cloud.organizations.uuid'])
      .where('cloud.clients.client_id', '=', subject)
      .executeTakeFirst();
    if (!client) throw authenticationFailed('The client of this token no longer exists.');
    const principal: CloudPrincipal = {
      clientId: subject,
      clientRowId: client.id,
      organizationId: client.organization_id,
      organizationUuid: client.uuid,
      homeOrganizationId: client.organization_id,
      actsForOrganizations: client.acts_for_organizations,
      scopes,
    };
    // A token names the organization it was issued for; only a service client's may name another
    // than the client's own (and a client whose service status was withdrawn loses it at once).
    if (typeof claimedOrganization !== 'string' || claimedOrganization === client.uuid) return principal;
    if (!client.acts_for_organizations) throw authenticationFailed('Invalid token.');
    const organization = await this.db.selectFrom('cloud.organizations').select(['id', 'uuid']).where('uuid', '=', claimedOrganization).executeTakeFirst();
    if (!organization) throw authenticationFailed('Invalid token.');
    return { ...principal, organizationId: organization.id, organizationUuid: organization.uuid };
  }

  /** The organization of this uuid, made when unknown (a service client acting for it first). Safe when two race. */
  async ensureOrganization(uuid: string, name = `Organization ${uuid}`): Promise<{ id: number; uuid: string }> {
    await this.db.insertInto('cloud.organizations').values({ uuid, name }).onConflict((oc) => oc.column('uuid').doNothing()).execute();
    return this.db.selectFrom('cloud.organizations').select(['id', 'uuid']).where('uuid', '=', uuid).executeTakeFirstOrThrow();
  }
}
