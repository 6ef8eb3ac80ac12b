// Members of an organization, and their removal (issue 40 §1): a removed member loses, at once,
// everything they held in the organization. Records they made there stay the organization's
// (access.ts shows them only through a current membership). In one transaction, the removal
//   - deletes the membership: their token, with or without the organization header, no longer
//     reaches the organization's records (tokens name the user, not the organization; the
//     membership is looked up on every request, and AuthService forgets its cached answer at once);
//   - revokes the share tokens they made for the organization's inspections;
//   - deletes the webhook subscriptions they made for the organization (and their pending
//     deliveries: the messages go with the subscription);
//   - revokes the storage credentials GET s3_credentials handed them for the organization's
//     inspections (storage-grants.ts): the embedded store refuses them from their next request;
//     with per-prefix roles, those prefixes' roles refuse every session issued before.
// Used by the admin CLI (`admin remove-member`) and by an organization's admins over the API
// (DELETE /v1/organizations/{uuid}/members/{user_id}/, membership.routes.ts).
import type { Kysely } from 'kysely';
import type { InspectionTables, MemberRole } from '../inspection.tables.ts';
import type { AuthContext } from './auth.service.ts';
import { conflict, notFound, permissionDenied } from '../../infra/http/errors.ts';
import type { StorageGrants } from './storage-grants.ts';

export interface Member {
  user_id: number;
  username: string;
  role: MemberRole;
}

export interface RemovalSummary {
  user_id: number;
  organization_uuid: string;
  share_tokens_revoked: number;
  webhooks_deleted: number;
  storage_credentials_revoked: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class Memberships {
  /** @param membershipRemoved forgets cached answers that still grant the membership (AuthService.forgetMembership). */
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly grants: StorageGrants,
    private readonly membershipRemoved: (userId: number, organization: { id: number; uuid: string }) => void,
  ) {}

  /** A member's role, or undefined when `userId` is not a member. */
  async roleOf(userId: number, organizationId: number): Promise<MemberRole | undefined> {
    const row = await this.db.selectFrom('inspection.memberships').select('role').where('user_id', '=', userId).where('organization_id', '=', organizationId).executeTakeFirst();
    return row?.role;
  }

  /** Adds a member, or changes the role of one (admin CLI `add-member`). */
  async setMember(userId: number, organizationId: number, role: MemberRole): Promise<void> {
    await this.db
      .insertInto('inspection.memberships')
      .values({ user_id: userId, organization_id: organizationId, role })
      .onConflict((oc) => oc.columns(['user_id', 'organization_id']).doUpdateSet({ role }))
      .execute();
  }

  /** GET /v1/organizations/{uuid}/members/: for any member of the organization (others: 404). */
  async list(auth: AuthContext, uuid: string): Promise<Member[]> {
    const organization = await this.organizationOf(auth, uuid);
    return this.db
      .selectFrom('inspection.memberships as m')
      .innerJoin('inspection.users as u', 'u.id', 'm.user_id')
      .select(['m.user_id', 'u.username', 'm.role'])
      .where('m.organization_id', '=', organization.id)
      .orderBy('u.username')
      .execute();
  }

  /**
   * DELETE /v1/organizations/{uuid}/members/{user_id}/: an admin of the organization removes a
   * member (404 for a non-member caller or target, 403 for a member who is not an admin, 409 for
   * an admin removing themselves: another admin or the admin CLI does that, so that an
   * organization is never left without an admin by mistake).
   */
  async removeByAdmin(auth: AuthContext, uuid: string, userId: number): Promise<RemovalSummary> {
    const organization = await this.organizationOf(auth, uuid);
    if ((await this.roleOf(auth.userId, organization.id)) !== 'admin') throw permissionDenied('Only an admin of the organization removes its members.');
    if (userId === auth.userId) throw conflict('An admin cannot remove themselves; another admin or the admin CLI (admin remove-member) can.');
    const summary = await this.remove(organization, userId);
    if (!summary) throw notFound('Member');
    return summary;
  }

  /** Removes `userId` from the organization and ends what they held there (see the head comment); undefined when not a member. */
  async remove(organization: { id: number; uuid: string }, userId: number): Promise<RemovalSummary | undefined> {
    const result = await this.db.transaction().execute(async (trx) => {
      const deleted = await trx.deleteFrom('inspection.memberships').where('user_id', '=', userId).where('organization_id', '=', organization.id).executeTakeFirst();
      if (Number(deleted.numDeletedRows) === 0) return undefined;
      const now = new Date();
      const tokens = await trx
        .updateTable('inspection.share_tokens')
        .set({ revoked_at: now })
        .where('created_by', '=', userId)
        .where('revoked_at', 'is', null)
        .where('inspection_id', 'in', trx.selectFrom('inspection.inspections').select('id').where('organization_id', '=', organization.id))
        .executeTakeFirst();
      const webhooks = await trx.deleteFrom('inspection.webhooks').where('organization_id', '=', organization.id).where('user_id', '=', userId).executeTakeFirst();
      const credentials = await this.grants.revokeMember(trx, organization.id, userId, now);
      return { tokens: Number(tokens.numUpdatedRows), webhooks: Number(webhooks.numDeletedRows), credentials };
    });
    if (!result) return undefined;
    this.membershipRemoved(userId, organization);
    await this.grants.endRevoked(result.credentials);
    return {
      user_id: userId,
      organization_uuid: organization.uuid,
      share_tokens_revoked: result.tokens,
      webhooks_deleted: result.webhooks,
      storage_credentials_revoked: result.credentials.accessKeys.length,
    };
  }

  /** The organization `uuid` if the caller is a member of it, else 404 (an organization is not revealed to outsiders). */
  private async organizationOf(auth: AuthContext, uuid: string): Promise<{ id: number; uuid: string }> {
    if (auth.share) throw permissionDenied();
    const organization = UUID.test(uuid)
      ? await this.db
          .selectFrom('inspection.organizations as o')
          .innerJoin('inspection.memberships as m', 'm.organization_id', 'o.id')
          .select(['o.id', 'o.uuid'])
          .where('o.uuid', '=', uuid)
          .where('m.user_id', '=', auth.userId)
          .executeTakeFirst()
      : undefined;
    if (!organization) throw notFound('Organization');
    return organization;
  }
}
