// Share tokens (spec: "sharing of inspections through share tokens", and the report's
// `include_sharetoken`): a read-only key to one inspection, for people without an account.
// - Made by a user who can see the inspection (POST …/{id}/share_tokens/) or by a report that asks
//   for its link; revoked with DELETE …/{id}/share_tokens/{token_id}/ (revoked is gone: 401).
// - The token is `ist_<selector>.<secret>`: 64 bits of selector (finds the row; not secret) and
//   256 bits of secret. Only the selector and the SHA-256 of the whole token are stored; the
//   token is shown once, when made. The presented token's hash is compared in constant time.
// - A link is `<public URL>/share/<token>`: the console's read-only viewer (linkFor), which sends
//   the token as `X-Share-Token`. The token is a secret in a URL: the request log blanks it out
//   (system.ts createLogger) and the viewer's page sends no Referer (console.routes.ts).
// - Sent as `X-Share-Token: <token>` or `?share_token=<token>` (an API read), without Authorization
//   (a Bearer token wins when both are sent). The request's principal then has the one scope
//   `share:read` and sees this inspection only: auth.service.ts lets it through the routes in
//   SHAREABLE_READS (GET only) and answers 403 elsewhere; access.ts limits what it sees to the
//   inspection (another inspection is a 404, as for any record one cannot see).
// - A token ends (issue 27): when revoked, when it expires (`expires_in` when made, else
//   SHARE_TOKEN_TTL_SECONDS; never later than SHARE_TOKEN_MAX_TTL_SECONDS after it was made, so
//   lowering the maximum shortens tokens already handed out), and when its creator can no longer
//   see the inspection (removed from its organization; a personal inspection: no longer its
//   owner). All of it is checked on every use, in the one query that finds the token: no cache.
//   What a holder reads carries no token (reports: report-data.ts shareHolderView), and the
//   presigned URLs a holder gets last SHARE_TOKEN_URL_TTL_SECONDS at most (downloadUrlSeconds),
//   so nothing a holder kept opens anything for long once the token has ended.
// This is the only writer of `inspection.share_tokens`.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { AuthContext } from './auth.service.ts';
import type { InspectionAccess } from './inspection-access.ts';
import { constantTimeEqual, sha256Hex } from '../../infra/auth/secrets.ts';
import { authenticationFailed, notFound, ValidationError } from '../../infra/http/errors.ts';
import { DOWNLOAD_URL_TTL_SECONDS } from '../storage/inspection-files.ts';

export const SHARE_SCOPE = 'share:read';
/** Query parameter that carries a token to an API read (the viewer sends the header instead). */
export const SHARE_QUERY_PARAMETER = 'share_token';
/** Path of the console's read-only viewer: a link is SHARE_VIEWER_PATH/<token> (linkFor). */
export const SHARE_VIEWER_PATH = '/share';

/**
 * The routes (method GET, as registered) a share token may read: the inspection, its photos
 * (cameras, previews), annotations, measurements, extras (to place coordinates), outputs (the
 * report's files among them), the orthomosaic's map tiles, and /v1/share/ (which inspection the
 * token opens, for the viewer). Nothing else: not the asset, not other inspections of its bundle,
 * not inventory, not the inputs ZIP, no write.
 */
export const SHAREABLE_READS: ReadonlySet<string> = new Set([
  '/v1/inspections/:id/',
  '/v1/inspections/:id/cameras/',
  '/v1/inspections/:id/photos/:photo_id/preview/',
  '/v1/inspections/:id/annotations/',
  '/v1/annotations/:id/',
  '/v1/inspections/:id/measurements/',
  '/v1/inspections/:id/extras/',
  '/v1/inspections/:id/outputs/',
  '/v1/inspections/:id/ortho/',
  '/v1/inspections/:id/ortho/tiles/:z/:x/:y.png',
  '/v1/share/',
]);

const TOKEN = /^ist_([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;

export interface ShareTokenRecord {
  id: number;
  inspection: number;
  label: string;
  created_by: number;
  created_at: string;
  revoked_at: string | null;
  expires_at: string;
}

/** A new token, the only time it is seen, with the link that opens the inspection with it. */
export interface NewShareToken extends ShareTokenRecord {
  token: string;
  url: string;
}

/** Who a valid share token lets in. */
export interface ShareGrant {
  tokenId: number;
  inspectionId: number;
  createdBy: number;
  /** Lifetime of the presigned URLs handed to the holder: SHARE_TOKEN_URL_TTL_SECONDS, never past the token's end. */
  urlSeconds: number;
  /** When the token stops opening the inspection (ISO 8601), for the viewer to say. */
  expiresAt: string;
}

/** How long tokens and the URLs handed to their holders live (configuration: SHARE_TOKEN_*). */
export interface ShareTokenLifetimes {
  /** A token made without `expires_in` (a report's too), seconds. */
  ttlSeconds: number;
  /** The most any token lives, counted from its making, seconds. */
  maxTtlSeconds: number;
  /** Presigned URLs handed to a holder, seconds. */
  urlSeconds: number;
}

export const DEFAULT_SHARE_TOKEN_LIFETIMES: ShareTokenLifetimes = { ttlSeconds: 30 * 24 * 3600, maxTtlSeconds: 90 * 24 * 3600, urlSeconds: 600 };

/** Lifetime of a presigned download URL for this request: short for a share holder (see ShareGrant.urlSeconds). */
export function downloadUrlSeconds(auth: AuthContext): number {
  return auth.share?.urlSeconds ?? DOWNLOAD_URL_TTL_SECONDS;
}

export class ShareTokenService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly access: InspectionAccess,
    /** The service's public base URL (INSPECTION_PUBLIC_URL, or where it listens); undefined: links are paths. */
    private readonly publicUrl: () => string | undefined,
    private readonly lifetimes: ShareTokenLifetimes = DEFAULT_SHARE_TOKEN_LIFETIMES,
  ) {}

  /** `expiresIn`: seconds the token lives (default SHARE_TOKEN_TTL_SECONDS, at most SHARE_TOKEN_MAX_TTL_SECONDS; else a 400). */
  async create(auth: AuthContext, inspectionId: number, label = '', expiresIn?: number): Promise<NewShareToken> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    if (expiresIn !== undefined && expiresIn > this.lifetimes.maxTtlSeconds) {
      throw ValidationError.field('expires_in', `Ensure this value is less than or equal to ${this.lifetimes.maxTtlSeconds} (SHARE_TOKEN_MAX_TTL_SECONDS).`);
    }
    return this.mint(inspection, auth.userId, label, expiresIn);
  }

  async list(auth: AuthContext, inspectionId: number): Promise<ShareTokenRecord[]> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    const rows = await this.db.selectFrom('inspection.share_tokens').selectAll().where('inspection_id', '=', inspection.id).orderBy('id').execute();
    return rows.map((row) => record(row, this.lifetimes.maxTtlSeconds));
  }

  /** Revokes at once (no cache: the next request with it is a 401). Revoking a revoked token changes nothing. */
  async revoke(auth: AuthContext, inspectionId: number, tokenId: number): Promise<void> {
    const inspection = await this.access.requireInspection(auth, inspectionId);
    const row = await this.db.selectFrom('inspection.share_tokens').select('id').where('id', '=', tokenId).where('inspection_id', '=', inspection.id).executeTakeFirst();
    if (!row) throw notFound('Share token');
    await this.revokeById(row.id);
  }

  /** A new token of `inspection` for `userId` (whose access the caller checked: a route, or the report the user asked for). */
  async mint(inspection: Pick<InspectionRow, 'id'>, userId: number, label: string, expiresIn = this.lifetimes.ttlSeconds): Promise<NewShareToken> {
    const selector = crypto.randomBytes(8).toString('hex');
    const token = `ist_${selector}.${crypto.randomBytes(32).toString('base64url')}`;
    const expiresAt = new Date(Date.now() + Math.min(expiresIn, this.lifetimes.maxTtlSeconds) * 1000);
    const row = await this.db
      .insertInto('inspection.share_tokens')
      .values({ inspection_id: inspection.id, selector, token_hash: sha256Hex(token), label, created_by: userId, expires_at: expiresAt })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...record(row, this.lifetimes.maxTtlSeconds), token, url: this.linkFor(token) };
  }

  async revokeById(id: number): Promise<void> {
    await this.db.updateTable('inspection.share_tokens').set({ revoked_at: new Date() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  }

  /**
   * The grant of a presented token; 401 when it is malformed, unknown, revoked, expired, or its
   * creator no longer sees the inspection (one answer for all: a holder learns nothing of the
   * creator's account).
   */
  async resolve(token: string): Promise<ShareGrant> {
    const parts = TOKEN.exec(token);
    const row = parts
      ? await this.db
          .selectFrom('inspection.share_tokens as t')
          .innerJoin('inspection.inspections as i', 'i.id', 't.inspection_id')
          .select(['t.id', 't.inspection_id', 't.token_hash', 't.created_by', 't.created_at', 't.revoked_at', 't.expires_at'])
          // Whether the creator sees the inspection now, as access.ts would let them: a member of
          // its organization, or, for a personal inspection, its owner. (A user is never deleted
          // while a token of theirs exists: the foreign key keeps them.)
          .select((eb) =>
            eb
              .or([
                eb.and([eb('i.organization_id', 'is', null), eb('i.user_id', '=', eb.ref('t.created_by'))]),
                eb.exists(eb.selectFrom('inspection.memberships as m').select('m.user_id').whereRef('m.user_id', '=', 't.created_by').whereRef('m.organization_id', '=', 'i.organization_id')),
              ])
              .as('creator_sees'),
          )
          .where('t.selector', '=', parts[1])
          .executeTakeFirst()
      : undefined;
    // The hash is compared even for an unknown selector, so that both take the same time.
    const matches = constantTimeEqual(sha256Hex(token), row?.token_hash ?? '0'.repeat(64));
    const now = Date.now();
    const ends = row ? endOf(row, this.lifetimes.maxTtlSeconds) : 0;
    if (!row || !matches || row.revoked_at !== null || ends <= now || !row.creator_sees) throw authenticationFailed('Invalid, expired or revoked share token.');
    const urlSeconds = Math.max(1, Math.min(this.lifetimes.urlSeconds, Math.floor((ends - now) / 1000)));
    return { tokenId: row.id, inspectionId: row.inspection_id, createdBy: row.created_by, urlSeconds, expiresAt: new Date(ends).toISOString() };
  }

  /**
   * The link that opens the inspection with `token`: the console's read-only viewer
   * (console.routes.ts serves its page at SHARE_VIEWER_PATH/<token>; the viewer asks GET /v1/share/
   * which inspection the token opens, so the link does not need the inspection's id).
   */
  linkFor(token: string): string {
    const base = (this.publicUrl() ?? '').replace(/\/+$/, '');
    return `${base}${SHARE_VIEWER_PATH}/${encodeURIComponent(token)}`;
  }
}

/** When a token stops opening its inspection: its own expiry, or the maximum lifetime from its making if sooner. */
function endOf(row: { created_at: Date; expires_at: Date }, maxTtlSeconds: number): number {
  return Math.min(row.expires_at.getTime(), row.created_at.getTime() + maxTtlSeconds * 1000);
}

function record(row: { id: number; inspection_id: number; label: string; created_by: number; created_at: Date; revoked_at: Date | null; expires_at: Date }, maxTtlSeconds: number): ShareTokenRecord {
  return {
    id: row.id,
    inspection: row.inspection_id,
    label: row.label,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
    expires_at: new Date(endOf(row, maxTtlSeconds)).toISOString(),
  };
}
