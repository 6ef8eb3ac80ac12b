// A project's share link (issue 30 §5): the real API's clients read a project shared with them
// with `?shareToken=` on its reads (GET project, GET outputs, GET s3_credentials: read-only
// storage credentials, project.service.ts credentials()). Here the project's organization
// mints the token (POST …/share_link/, which replaces any earlier one), sees whether one is
// active (GET) and revokes it (DELETE). The token opens only the reads of its own project, never a
// write, never another project, and only while the project lives; it is stored as its SHA-256
// (a random 256-bit value needs no slow hash: infra/auth/secrets.ts) and shown once, when minted;
// the request log blanks it out of URLs (system.ts createLogger). The inspection service's share
// tokens (inspection/auth/share-tokens.ts) are its own API's; this one follows the cloud API's
// clients. docs/cloud-service.md, "Share links".
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { CloudTables } from '../cloud.tables.ts';
import type { CloudPrincipal, OAuthService } from '../auth/oauth.service.ts';
import { ApiError, notFound } from '../../infra/http/errors.ts';
import { generateSecret, sha256Hex } from '../../infra/auth/secrets.ts';
import type { ProjectRepository } from './project.repository.ts';

/** What a valid share token lets a request read: one project of one organization. */
export interface ShareGrant {
  shareProjectId: number;
  organizationId: number;
}

/** Who reads a project: a client with its bearer token, or the holder of the project's share token. */
export type ProjectReader = CloudPrincipal | ShareGrant;

/** Whether the project is read with its share token rather than by a client of its organization. */
export function isShareGrant(reader: ProjectReader): reader is ShareGrant {
  return 'shareProjectId' in reader;
}

/** The routes (GET, HEAD) that `?shareToken=` opens. */
export const SHARE_READABLE_ROUTES = new Set([
  '/project/api/v3/projects/:id/',
  '/project/api/v3/projects/:id/outputs/',
  // Read-only credentials: the holder downloads the outputs with an S3 client, as the owner does.
  '/project/api/v3/projects/:id/s3_credentials/',
]);

const MAX_TOKEN_LENGTH = 256;

/**
 * The life of the presigned URLs (outputs, thumbnail, inputs bundle) handed to a share-link
 * holder, as the inspection service's share holders get (SHARE_TOKEN_URL_TTL_SECONDS' default):
 * revoking or replacing the link cannot recall a URL already handed out, so it runs out soon
 * after. The project's own clients keep STORAGE_CREDENTIALS_TTL.
 */
export const SHARE_URL_TTL_SECONDS = 600;

export interface ShareLinkState {
  enabled: boolean;
  created_at: string | null;
}

export class ShareLinkService {
  private readonly db: Kysely<CloudTables>;

  constructor(
    private readonly projects: ProjectRepository,
    private readonly publicUrl: () => string,
  ) {
    this.db = projects.db;
  }

  /** A new token for the project (an earlier one stops working); the only time it is shown. */
  async mint(principal: CloudPrincipal, id: number): Promise<{ share_token: string; share_url: string; created_at: string }> {
    await this.requireProject(principal, id);
    const token = generateSecret('cst');
    const values = { token_hash: sha256Hex(token), client_id: principal.clientRowId, created_at: new Date() };
    const row = await this.db
      .insertInto('cloud.project_share_links')
      .values({ project_id: id, ...values })
      .onConflict((oc) => oc.column('project_id').doUpdateSet(values))
      .returning('created_at')
      .executeTakeFirstOrThrow();
    return {
      share_token: token,
      share_url: `${this.publicUrl()}/project/api/v3/projects/${id}/?shareToken=${token}`,
      created_at: new Date(row.created_at).toISOString(),
    };
  }

  async state(principal: CloudPrincipal, id: number): Promise<ShareLinkState> {
    await this.requireProject(principal, id);
    const row = await this.db.selectFrom('cloud.project_share_links').select('created_at').where('project_id', '=', id).executeTakeFirst();
    return { enabled: row !== undefined, created_at: row ? new Date(row.created_at).toISOString() : null };
  }

  /** Revokes the token at once; 404 when the project has none. */
  async revoke(principal: CloudPrincipal, id: number): Promise<void> {
    await this.requireProject(principal, id);
    const result = await this.db.deleteFrom('cloud.project_share_links').where('project_id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound('Share link');
  }

  /** The grant `token` gives to read project `projectId` (a live project whose current token it is), else undefined. */
  async grantFor(token: string, projectId: number): Promise<ShareGrant | undefined> {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined;
    const row = await this.db
      .selectFrom('cloud.project_share_links as l')
      .innerJoin('cloud.projects as p', 'p.id', 'l.project_id')
      .select(['p.id', 'p.organization_id'])
      .where('l.token_hash', '=', sha256Hex(token))
      .where('p.id', '=', projectId)
      .where('p.deleted_at', 'is', null)
      .executeTakeFirst();
    return row ? { shareProjectId: row.id, organizationId: row.organization_id } : undefined;
  }

  private async requireProject(principal: CloudPrincipal, id: number): Promise<void> {
    if (!(await this.projects.find(id, principal.organizationId))) throw notFound('Project');
  }
}

/**
 * The share grant of a request to a share-readable route carrying `?shareToken=` (checked before
 * any bearer token, which such a request does not need). A token that does not open this project
 * (unknown, revoked, another project's) leaves a request with a bearer token to be answered as any
 * other, so that the project's own clients keep reading it; without one, the project is not found.
 */
export async function admitShareToken(request: FastifyRequest, links: ShareLinkService): Promise<ShareGrant | undefined> {
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
  if (!SHARE_READABLE_ROUTES.has(request.routeOptions.url ?? '')) return undefined;
  const token = (request.query as Record<string, unknown> | undefined)?.shareToken;
  if (token === undefined) return undefined;
  const id = canonicalId((request.params as Record<string, unknown> | undefined)?.id);
  const grant = typeof token === 'string' && id !== undefined ? await links.grantFor(token, id) : undefined;
  if (grant) return grant;
  if (request.headers.authorization) return undefined;
  throw notFound('Project');
}

/**
 * The client of a request that carries a share token and also a bearer token of the project's
 * own organization: that request is answered as the client's (its storage credentials write when
 * its scope does), the share token serving everyone else. Undefined without a bearer token, with
 * one of another organization, or with one that does not authenticate (ignored, as the share
 * token alone opens the read).
 */
export async function ownOrganizationPrincipal(request: FastifyRequest, grant: ShareGrant, oauth: OAuthService): Promise<CloudPrincipal | undefined> {
  if (!request.headers.authorization) return undefined;
  let principal: CloudPrincipal;
  try {
    principal = await oauth.authenticate(request.headers.authorization);
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 401) return undefined;
    throw err;
  }
  return principal.organizationId === grant.organizationId ? principal : undefined;
}

function canonicalId(value: unknown): number | undefined {
  return typeof value === 'string' && /^[1-9]\d{0,9}$/.test(value) && Number(value) <= 2147483647 ? Number(value) : undefined;
}
