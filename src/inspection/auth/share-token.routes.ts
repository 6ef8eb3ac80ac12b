// Share tokens of an inspection (share-tokens.ts; not in the spec, which names sharing without
// its operations): POST and GET /v1/inspections/{id}/share_tokens/, DELETE …/share_tokens/{token_id}/,
// and GET /v1/share/, where the console's viewer (a link holds the token, not the inspection's
// id) learns which inspection the token it holds opens.
import { Type } from 'typebox';
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { emptyBodyAsObject } from '../http/empty-body.ts';
import { notFound } from '../../infra/http/errors.ts';
import { ListOf, respondList } from '../http/lists.ts';
import { Id } from '../../shared/schemas/limits.ts';
import * as S from '../inspection.schemas.ts';

const tags = ['sharing'];

const ShareToken = Type.Object({
  id: Type.Integer(),
  inspection: Type.Integer(),
  label: Type.String(),
  created_by: Type.Integer({ description: 'The user who made it (a report asking for its link makes one for the user who asked)' }),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  expires_at: Type.String({ format: 'date-time', description: 'When the token stops opening the inspection (it also stops when revoked, or when its creator no longer sees the inspection)' }),
});
const NewShareToken = Type.Object({
  ...ShareToken.properties,
  token: Type.String({ description: 'The token: shown this once, never again (only its SHA-256 is stored)' }),
  url: Type.String({ description: 'Link opening the inspection, read-only, in the web console without an account: `{public URL}/share/{token}`' }),
});
const CreateBody = Type.Object({
  label: Type.Optional(Type.String({ maxLength: 255, description: 'What the token is for, e.g. who it was sent to' })),
  expires_in: Type.Optional(
    Type.Integer({ minimum: 60, maximum: 10 * 365 * 24 * 3600, description: 'Seconds the token lives (default SHARE_TOKEN_TTL_SECONDS, 30 days; at most SHARE_TOKEN_MAX_TTL_SECONDS, 90 days, else a 400)' }),
  ),
});
const TokenParams = Type.Object({ id: Id(), token_id: Id() });
const SharedInspection = Type.Object({
  inspection: Type.Integer({ description: 'The inspection the token opens' }),
  expires_at: Type.String({ format: 'date-time', description: 'When the token stops opening it (unless revoked before)' }),
});

export function registerShareTokenRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.post(
    '/v1/inspections/:id/share_tokens/',
    {
      preValidation: emptyBodyAsObject,
      schema: {
        tags,
        summary: 'Make a read-only share token of the inspection (not in the spec)',
        description:
          'Anyone holding the token reads, without an account or API key, this inspection only: its record, cameras and photo previews, annotations, measurements, extras and outputs (report files included, without share tokens or e-mail addresses), with the header `X-Share-Token: <token>` or the query parameter `share_token=<token>`; `url` opens it in the read-only viewer of the web console. Every other call with it is a 403 (a write, another route) or a 404 (another inspection). The presigned URLs a holder gets last SHARE_TOKEN_URL_TTL_SECONDS (10 minutes). The token ends when revoked, at `expires_at`, or when its creator no longer sees the inspection (401 from then on). The token is in this answer only.',
        headers: S.AuthHeaders,
        params: S.IdParams,
        body: CreateBody,
        response: { 201: NewShareToken, ...S.errorResponses },
      },
    },
    async (request, reply) => {
      const created = await deps.shareTokens.create(request.auth, request.params.id, request.body.label ?? '', request.body.expires_in);
      reply.status(201);
      return created;
    },
  );
  r.get(
    '/v1/inspections/:id/share_tokens/',
    {
      schema: {
        tags,
        summary: 'Share tokens of the inspection, revoked ones included (never the tokens themselves)',
        description: 'A list as every other: `page`/`page_size` page it (reports make a token each time they ask for their link, so the list grows).',
        headers: S.AuthHeaders,
        params: S.IdParams,
        querystring: S.PageQuery,
        response: { 200: ListOf(ShareToken), ...S.errorResponses },
      },
    },
    async (request) => respondList(request, request.query, await deps.shareTokens.list(request.auth, request.params.id)),
  );
  r.delete(
    '/v1/inspections/:id/share_tokens/:token_id/',
    { schema: { tags, summary: 'Revoke a share token: at once, the next request with it is a 401', headers: S.AuthHeaders, params: TokenParams, response: { 204: S.NoContent, ...S.errorResponses } } },
    async (request, reply) => {
      await deps.shareTokens.revoke(request.auth, request.params.id, request.params.token_id);
      return reply.status(204).send(null);
    },
  );
  r.get(
    '/v1/share/',
    {
      schema: {
        tags,
        summary: 'The inspection a share token opens (send the token as X-Share-Token; not in the spec)',
        description: 'For the web console\'s viewer, whose link (`/share/{token}`) holds the token only. 401 for an invalid, expired or revoked token; 404 without a share token.',
        headers: S.AuthHeaders,
        response: { 200: SharedInspection, ...S.errorResponses },
      },
    },
    async (request) => {
      const share = request.auth.share;
      if (!share) throw notFound('Share token');
      return { inspection: share.inspectionId, expires_at: share.expiresAt };
    },
  );
}
