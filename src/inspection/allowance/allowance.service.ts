// Allowance (spec "Allowance rules"): units per resource type, granted (ingress) and spent
// (egress) per account: an organization, or a user who works without one. Spending happens only
// inside the transaction that starts processing, under a per-account advisory lock, and a unique
// index allows one egress per inspection and type: a unit is never spent twice.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { InspectionTables } from '../inspection.tables.ts';
import { conflict, insufficientAllowance } from '../../infra/http/errors.ts';

export type AllowanceCode = 'projects' | 'tower_inventory';

/** Whose units: an organization's, or a user's own when there is no organization. */
export type AllowanceAccount = { organizationId: number } | { userId: number };

export function accountOf(owner: { organization_id: number | null; user_id: number }): AllowanceAccount {
  return owner.organization_id !== null ? { organizationId: owner.organization_id } : { userId: owner.user_id };
}

export class AllowanceService {
  constructor(private readonly db: Kysely<InspectionTables>) {}

  types() {
    return this.db.selectFrom('inspection.allowance_types').select(['id', 'code', 'name']).orderBy('id').execute();
  }

  async grant(account: AllowanceAccount, code: AllowanceCode, amount: number, reason: string): Promise<void> {
    const type = await this.typeId(code, this.db);
    await this.db
      .insertInto('inspection.allowance_transactions')
      .values({ ...columns(account), allowance_type_id: type, direction: 'ingress', amount, reason })
      .execute();
  }

  async balances(account: AllowanceAccount) {
    const rows = await this.db
      .selectFrom('inspection.allowance_types as t')
      .leftJoin('inspection.allowance_transactions as x', (join) =>
        join.onRef('x.allowance_type_id', '=', 't.id').on((eb) => accountFilter(eb, account, 'x')),
      )
      .select((eb) => [
        't.code',
        eb.fn.coalesce(eb.fn.sum<number>(sql`case when x.direction = 'ingress' then x.amount else 0 end`), sql<number>`0`).as('granted'),
        eb.fn.coalesce(eb.fn.sum<number>(sql`case when x.direction = 'egress' then x.amount else 0 end`), sql<number>`0`).as('consumed'),
      ])
      .groupBy(['t.id', 't.code'])
      .orderBy('t.id')
      .execute();
    return rows.map((r) => ({ allowance_type: r.code, granted: Number(r.granted), consumed: Number(r.consumed), balance: Number(r.granted) - Number(r.consumed) }));
  }

  async history(account: AllowanceAccount) {
    const rows = await this.db
      .selectFrom('inspection.allowance_transactions as x')
      .innerJoin('inspection.allowance_types as t', 't.id', 'x.allowance_type_id')
      .select(['x.id', 't.code', 'x.direction', 'x.amount', 'x.reason', 'x.inspection_id', 'x.created_at'])
      .where((eb) => accountFilter(eb, account, 'x'))
      .orderBy('x.id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      allowance_type: r.code,
      direction: r.direction,
      amount: r.amount,
      reason: r.reason,
      inspection: r.inspection_id,
      created_at: r.created_at.toISOString(),
    }));
  }

  /** Units of one type left in the account. */
  async balanceOf(db: Kysely<InspectionTables> | Transaction<InspectionTables>, account: AllowanceAccount, code: AllowanceCode): Promise<number> {
    const type = await this.typeId(code, db);
    const { balance } = await db
      .selectFrom('inspection.allowance_transactions as x')
      .select(sql<number>`coalesce(sum(case when direction = 'ingress' then amount else -amount end), 0)`.as('balance'))
      .where('x.allowance_type_id', '=', type)
      .where((eb) => accountFilter(eb, account, 'x'))
      .executeTakeFirstOrThrow();
    return Number(balance);
  }

  /**
   * Rule 3: an inspection asking for `detect_antennas` needs a Tower inventory unit in the account,
   * checked when the option is set (creation, update), spent when processing starts (rule 4): 403
   * insufficient_allowance without one.
   */
  async requireAvailable(db: Kysely<InspectionTables> | Transaction<InspectionTables>, account: AllowanceAccount, code: AllowanceCode): Promise<void> {
    const balance = await this.balanceOf(db, account, code);
    if (balance < 1) throw insufficientAllowance(`Not enough ${code} allowance: ${balance} left, 1 needed (processing_parameters.detect_antennas spends one when processing starts).`);
  }

  /** Resource types an inspection has spent (what a retry of it may recycle). */
  async spentTypes(db: Kysely<InspectionTables> | Transaction<InspectionTables>, inspectionId: number): Promise<AllowanceCode[]> {
    const rows = await db
      .selectFrom('inspection.allowance_transactions as x')
      .innerJoin('inspection.allowance_types as t', 't.id', 'x.allowance_type_id')
      .select('t.code')
      .where('x.inspection_id', '=', inspectionId)
      .where('x.direction', '=', 'egress')
      .execute();
    return rows.map((r) => r.code as AllowanceCode);
  }

  /**
   * Spends units for an inspection inside the caller's transaction, or throws 403
   * insufficient_allowance (and the caller's transaction rolls back). An inspection spends once:
   * rule 5, no further resource type once it has been processed, is a 409 here.
   */
  async spend(trx: Transaction<InspectionTables>, account: AllowanceAccount, inspectionId: number, spends: { code: AllowanceCode; amount: number }[]): Promise<void> {
    const key = 'organizationId' in account ? `allowance:org:${account.organizationId}` : `allowance:user:${account.userId}`;
    await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
    if ((await this.spentTypes(trx, inspectionId)).length > 0) {
      throw conflict('This inspection has already been processed: no further resource types can be spent on it.');
    }
    for (const { code, amount } of spends) {
      const type = await this.typeId(code, trx);
      const balance = await this.balanceOf(trx, account, code);
      if (balance < amount) {
        throw insufficientAllowance(`Not enough ${code} allowance: ${balance} left, ${amount} needed.`);
      }
      await trx
        .insertInto('inspection.allowance_transactions')
        .values({ ...columns(account), allowance_type_id: type, direction: 'egress', amount, reason: 'processing', inspection_id: inspectionId })
        .execute();
    }
  }

  private async typeId(code: AllowanceCode, db: Kysely<InspectionTables> | Transaction<InspectionTables>): Promise<number> {
    const row = await db.selectFrom('inspection.allowance_types').select('id').where('code', '=', code).executeTakeFirstOrThrow();
    return row.id;
  }
}

function columns(account: AllowanceAccount) {
  return 'organizationId' in account ? { organization_id: account.organizationId, user_id: null } : { organization_id: null, user_id: account.userId };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function accountFilter(eb: any, account: AllowanceAccount, alias: string) {
  return 'organizationId' in account
    ? eb(`${alias}.organization_id`, '=', account.organizationId)
    : eb.and([eb(`${alias}.user_id`, '=', account.userId), eb(`${alias}.organization_id`, 'is', null)]);
}
