// Members of an organization (not in the spec; issue 40 §1): GET /v1/organizations/{uuid}/members/
// for its members, DELETE /v1/organizations/{uuid}/members/{user_id}/ for its admins, which ends
// everything the member held there (membership-removal.ts).
import { Type } from 'typebox';
import type { HttpServer } from '../../infra/http/http-server.ts';
import type { InspectionRouteDeps } from '../inspection.routes.ts';
import { ListOf, respondList } from '../http/lists.ts';
import { Id } from '../../shared/schemas/limits.ts';
import * as S from '../inspection.schemas.ts';

const tags = ['organizations'];

const OrganizationParams = Type.Object({ uuid: Type.String({ maxLength: 36 }) });
const MemberParams = Type.Object({ uuid: Type.String({ maxLength: 36 }), user_id: Id() });
const Member = Type.Object({
  user_id: Type.Integer(),
  username: Type.String(),
  role: Type.Union([Type.Literal('member'), Type.Literal('admin')], { description: '`admin`: removes members (set with `admin add-member --role admin`)' }),
});
const Removal = Type.Object({
  user_id: Type.Integer(),
  organization_uuid: Type.String(),
  share_tokens_revoked: Type.Integer({ description: "Share tokens the member made for the organization's inspections, revoked" }),
  webhooks_deleted: Type.Integer({ description: 'Webhook subscriptions the member made for the organization, deleted with their pending deliveries' }),
  storage_credentials_revoked: Type.Integer({ description: 'Storage credentials handed to the member and not yet expired, revoked' }),
});

export function registerMembershipRoutes(r: HttpServer, deps: InspectionRouteDeps): void {
  r.get(
    '/v1/organizations/:uuid/members/',
    {
      schema: {
        tags,
        summary: "The organization's members and their roles (for its members; 404 for anyone else)",
        headers: S.AuthHeaders,
        params: OrganizationParams,
        querystring: S.PageQuery,
        response: { 200: ListOf(Member), ...S.errorResponses },
      },
    },
    async (request) => respondList(request, request.query, await deps.memberships.list(request.auth, request.params.uuid)),
  );
  r.delete(
    '/v1/organizations/:uuid/members/:user_id/',
    {
      schema: {
        tags,
        summary: 'Remove a member (admins of the organization only)',
        description:
          "At once and in one transaction: the membership (the member's token no longer reaches the organization's records, with or without the organization header), the share tokens they made for its inspections, the webhooks they subscribed for it, and the storage credentials handed to them (refused by the embedded store from their next request). The records they made stay the organization's. 403 for a member who is not an admin, 409 for an admin removing themselves, 404 for a non-member.",
        headers: S.AuthHeaders,
        params: MemberParams,
        response: { 200: Removal, ...S.errorResponses },
      },
    },
    async (request) => deps.memberships.removeByAdmin(request.auth, request.params.uuid, request.params.user_id),
  );
}
