// Administration of accounts (used by the admin CLI and the first-start bootstrap, never over the
// public API): organizations, users, memberships and API keys.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { InspectionTables } from '../inspection.tables.ts';
import { generateSecret, hashPassword, sha256Hex } from '../../infra/auth/secrets.ts';

export class AccountAdmin {
  /** @param apiKeyRevoked told of every key revoked here (the auth caches forget it at once). */
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly apiKeyRevoked: (id: number) => void = () => undefined,
  ) {}

  createOrganization(name: string): Promise<{ id: number; uuid: string }> {
    return this.db.insertInto('inspection.organizations').values({ uuid: crypto.randomUUID(), name }).returning(['id', 'uuid']).executeTakeFirstOrThrow();
  }

  /** A user, and with `organizationId` its membership: both or neither (one transaction). */
  async createUser(username: string, password: string, email = '', organizationId?: number): Promise<{ id: number }> {
    const passwordHash = await hashPassword(password);
    return this.db.transaction().execute(async (trx) => {
      const user = await trx.insertInto('inspection.users').values({ username, email, password_hash: passwordHash }).returning('id').executeTakeFirstOrThrow();
      if (organizationId !== undefined) await trx.insertInto('inspection.memberships').values({ user_id: user.id, organization_id: organizationId }).execute();
      return user;
    });
  }

  async addMember(userId: number, organizationId: number): Promise<void> {
    await this.db.insertInto('inspection.memberships').values({ user_id: userId, organization_id: organizationId }).onConflict((oc) => oc.doNothing()).execute();
  }

  /**
   * A new API key; the key itself is returned once and stored as a SHA-256. With an organization,
   * the key is its applications': its members' login attempts with it are counted apart from
   * others' at the same address (infra/http/login-throttle.ts).
   */
  async createApiKey(name: string, organizationId: number | null = null): Promise<{ id: number; key: string }> {
    const key = generateSecret('oik');
    const row = await this.db.insertInto('inspection.api_keys').values({ name, key_hash: sha256Hex(key), organization_id: organizationId }).returning('id').executeTakeFirstOrThrow();
    return { id: row.id, key };
  }

  /** Whether this key is known and not revoked (the web console's key is checked at every start). */
  async isActiveApiKey(key: string): Promise<boolean> {
    const row = await this.db.selectFrom('inspection.api_keys').select('id').where('key_hash', '=', sha256Hex(key)).where('revoked_at', 'is', null).executeTakeFirst();
    return row !== undefined;
  }

  listApiKeys() {
    return this.db.selectFrom('inspection.api_keys').select(['id', 'name', 'organization_id', 'created_at', 'revoked_at']).orderBy('id').execute();
  }

  async revokeApiKey(id: number): Promise<void> {
    await this.db.updateTable('inspection.api_keys').set({ revoked_at: new Date() }).where('id', '=', id).execute();
    this.apiKeyRevoked(id);
  }

  /** The organization's own retention period in days (0: kept for ever; null: RETENTION_DAYS), retention/retention.service.ts. */
  async setRetentionDays(organizationId: number, days: number | null): Promise<void> {
    await this.db.updateTable('inspection.organizations').set({ retention_days: days }).where('id', '=', organizationId).execute();
  }

  async findOrganization(uuid: string) {
    return this.db.selectFrom('inspection.organizations').select(['id', 'uuid', 'name']).where('uuid', '=', uuid).executeTakeFirst();
  }

  async findUser(username: string) {
    return this.db.selectFrom('inspection.users').select(['id', 'username']).where('username', '=', username).executeTakeFirst();
  }

  async userCount(): Promise<number> {
    const { count } = await this.db.selectFrom('inspection.users').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
    return Number(count);
  }
}
