// A project's share link (issue 30 §5, `?shareToken=`): POST/GET/DELETE
// /project/api/v3/projects/{id}/share_link/ mint, show and revoke its token (share-links.ts;
// docs/cloud-service.md "Share links"). The reads the token opens are the project routes'.
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import * as S from '../cloud.schemas.ts';
import type { ShareLinkService } from './share-links.ts';

const errors = S.ProjectRouteErrors;

export const ShareLink = Type.Object({
  share_token: Type.String({ description: 'Shown this once: only its hash is kept.' }),
  share_url: Type.String({ description: 'The project\'s GET URL with ?shareToken=.' }),
  created_at: Type.String({ format: 'date-time' }),
});
export const ShareLinkState = Type.Object({ enabled: Type.Boolean(), created_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function registerShareLinkRoutes(scope: FastifyInstance<any, any, any, any, TypeBoxTypeProvider>, links: ShareLinkService): void {
  const shareLinkPath = '/project/api/v3/projects/:id/share_link/';
  scope.post(
    shareLinkPath,
    {
      schema: {
        tags: ['projects'],
        summary: 'Mint the project\'s share token',
        description:
          'Its holder reads GET …/{id}/, …/{id}/outputs/ and …/{id}/s3_credentials/ (read-only credentials, at most 900 s; its presigned URLs last 600 s) with `?shareToken=` and no bearer token; nothing else, no other project. ' +
          'Revoking or replacing the token stops new ones at once; those already handed out run out within those lifetimes. ' +
          'A new token replaces the earlier one, which stops working. 201; the token is shown this once (stored hashed).',
        params: S.IdParams,
        response: { 201: ShareLink, ...errors },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return links.mint(request.cloudPrincipal, request.params.id);
    },
  );
  scope.get(
    shareLinkPath,
    { schema: { tags: ['projects'], summary: 'Whether the project has a share token', params: S.IdParams, response: { 200: ShareLinkState, ...errors } } },
    async (request) => links.state(request.cloudPrincipal, request.params.id),
  );
  scope.delete(
    shareLinkPath,
    { schema: { tags: ['projects'], summary: 'Revoke the project\'s share token (at once; 404 without one)', params: S.IdParams, response: { 204: Type.Null(), ...errors } } },
    async (request, reply) => {
      await links.revoke(request.cloudPrincipal, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
