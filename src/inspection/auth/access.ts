// Which records a request may see: with an organization header, the organization's records;
// without one, the user's own (personal, or made in an organization they still belong to); with a share token, its one inspection and no asset.
// Anything else is "not found" (never revealed).
import { sql, type ExpressionBuilder } from 'kysely';
import type { AuthContext } from './auth.service.ts';

/** The inspections (`alias`: the inspections table's alias in the query) a request may see. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function visibleTo(auth: AuthContext, alias?: string): (eb: ExpressionBuilder<any, any>) => any {
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  if (auth.share) {
    const inspectionId = auth.share.inspectionId;
    return (eb) => eb(column('id'), '=', inspectionId);
  }
  return ownedBy(auth, column);
}

/** The assets (`alias`: the assets table's alias) a request may see; a share token sees none. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function assetsVisibleTo(auth: AuthContext, alias?: string): (eb: ExpressionBuilder<any, any>) => any {
  if (auth.share) return () => sql<boolean>`false`;
  return ownedBy(auth, (name) => (alias ? `${alias}.${name}` : name));
}

/**
 * With an organization header, the organization's records (AuthService checked the membership).
 * Without one, the user's personal records, and those they created in an organization they are
 * a member of now: a record made in an organization is the organization's, so once the
 * membership is gone (membership-removal.ts) its creator no longer reaches it by leaving the
 * header out (issue 40 §1; before, `user_id` alone decided).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function ownedBy(auth: AuthContext, column: (name: string) => string): (eb: ExpressionBuilder<any, any>) => any {
  if (auth.organization) {
    const organizationId = auth.organization.id;
    return (eb) => eb(column('organization_id'), '=', organizationId);
  }
  const userId = auth.userId;
  return (eb) =>
    eb.and([
      eb(column('user_id'), '=', userId),
      eb.or([
        eb(column('organization_id'), 'is', null),
        eb(column('organization_id'), 'in', eb.selectFrom('inspection.memberships').select('organization_id').where('user_id', '=', userId)),
      ]),
    ]);
}

/** The owner columns of a record created by this request. */
export function ownerOf(auth: AuthContext): { user_id: number; organization_id: number | null } {
  return { user_id: auth.userId, organization_id: auth.organization?.id ?? null };
}
