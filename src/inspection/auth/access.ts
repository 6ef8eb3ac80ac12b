// Which records a request may see: with an organization header, the organization's records;
// without one, the user's own. Anything else is "not found" (never revealed).
import type { ExpressionBuilder } from 'kysely';
import type { AuthContext } from './auth.service.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function visibleTo(auth: AuthContext, alias?: string): (eb: ExpressionBuilder<any, any>) => any {
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  return (eb) => (auth.organization ? eb(column('organization_id'), '=', auth.organization.id) : eb(column('user_id'), '=', auth.userId));
}

/** The owner columns of a record created by this request. */
export function ownerOf(auth: AuthContext): { user_id: number; organization_id: number | null } {
  return { user_id: auth.userId, organization_id: auth.organization?.id ?? null };
}
