// Which records a request may see: with an organization header, the organization's records;
// without one, the user's own; with a share token, its one inspection and no asset.
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function ownedBy(auth: AuthContext, column: (name: string) => string): (eb: ExpressionBuilder<any, any>) => any {
  return (eb) => (auth.organization ? eb(column('organization_id'), '=', auth.organization.id) : eb(column('user_id'), '=', auth.userId));
}

/** The owner columns of a record created by this request. */
export function ownerOf(auth: AuthContext): { user_id: number; organization_id: number | null } {
  return { user_id: auth.userId, organization_id: auth.organization?.id ?? null };
}
