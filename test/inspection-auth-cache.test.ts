// What the per-request shortcuts of GET /v1/inspections/{id}/ must not change (bench/README.md,
// "API"): an API key revoked in the process is refused at once, with every token issued to it,
// although found keys are cached; a removed membership within the cache's 5 s; and the prepared statement of the read (prepared-statement.ts)
// is prepared again on a connection that lost it, and takes integers only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { startTestSystem, type TestAccount, type TestSystem } from './helpers/test-system.ts';
import { assertNoServerErrors } from './helpers/inspection-fixtures.ts';
import { sha256Hex } from '../src/infra/auth/secrets.ts';
import { PreparedStatement } from '../src/infra/database/prepared-statement.ts';

describe('inspection service: cached authentication, prepared reads', () => {
  let system: TestSystem;
  let account: TestAccount;
  let inspection: number;
  const db = () => system.database.db as Kysely<unknown>;

  async function getInspection(who: TestAccount, id = inspection) {
    const response = await fetch(`${system.urls.inspection}/v1/inspections/${id}/`, {
      headers: { 'x-api-key': who.apiKey, authorization: `Bearer ${who.client.token}`, ...(who.organizationUuid ? { 'vendor-organization-uuid': who.organizationUuid } : {}) },
    });
    return { status: response.status, body: (await response.json()) as { id?: number; code?: string } };
  }

  before(async () => {
    system = await startTestSystem();
    account = await system.newAccount();
    const asset = await account.client.createAsset({ name: 'Tower', type: 1, latitude: '55.70000000', longitude: '13.19000000' });
    inspection = (await account.client.createInspection({ asset: asset.id, name: 'Cached' })).id;
  });
  after(async () => {
    await system?.stop();
  });

  it('refuses a key revoked in this process at once, and every token issued to it, though the key was cached', async () => {
    const revoked = await system.newAccount();
    const asset = await revoked.client.createAsset({ name: 'Tower', type: 1, latitude: '55.70000000', longitude: '13.19000000' });
    const own = (await revoked.client.createInspection({ asset: asset.id, name: 'Soon refused' })).id;
    for (let i = 0; i < 3; i++) assert.equal((await getInspection(revoked, own)).status, 200); // key, token and membership now cached
    const { rows } = await sql<{ id: number }>`select id from inspection.api_keys where key_hash = ${sha256Hex(revoked.apiKey)}`.execute(db());
    await system.inspection.accounts.revokeApiKey(rows[0].id);
    const refused = await getInspection(revoked, own);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'invalid_api_key');
    const login = await fetch(`${system.urls.inspection}/v1/auth/token/`, {
      method: 'POST',
      headers: { 'x-api-key': revoked.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ username: revoked.username, password: revoked.password }),
    });
    assert.equal(login.status, 401);
    // Other keys are untouched.
    assert.equal((await getInspection(account)).status, 200);
  });

  it('stops answering for a removed membership within the lookup cache time (5 s), though the whole context was cached', async () => {
    const member = await system.newAccount();
    const asset = await member.client.createAsset({ name: 'Tower', type: 1, latitude: '55.70000000', longitude: '13.19000000' });
    const own = (await member.client.createInspection({ asset: asset.id, name: 'Organization record' })).id;
    for (let i = 0; i < 3; i++) assert.equal((await getInspection(member, own)).status, 200);
    await sql`delete from inspection.memberships where user_id = ${member.userId}`.execute(db());
    const deadline = Date.now() + 5_500;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      status = (await getInspection(member, own)).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(status, 403, 'refused: not a member of this organization');
  });

  it('prepares the read on every connection that has not prepared it', async () => {
    assert.equal((await getInspection(account)).body.id, inspection);
    if (system.database.kind === 'pglite') {
      // As a restarted database would be: nothing prepared (the statement is an SQL-level PREPARE).
      await db().connection().execute(async (c) => c.executeQuery(sql`deallocate all`.compile(c)));
    }
    // On PostgreSQL, concurrent reads spread over the pool's connections, each preparing it once.
    const answers = await Promise.all(Array.from({ length: 30 }, () => getInspection(account)));
    assert.deepEqual(new Set(answers.map((a) => a.body.id)), new Set([inspection]));
  });

  it('takes integers only as parameters', async () => {
    const statement = new PreparedStatement<{ one: number }>('test_integers_only', ['integer'], 'select $1::int as one');
    assert.deepEqual(await statement.execute(db(), [1]), [{ one: 1 }]);
    for (const bad of [1.5, Number.NaN, 2 ** 60]) await assert.rejects(statement.execute(db(), [bad]), TypeError);
    assert.throws(() => new PreparedStatement('x; drop table y', [], 'select 1'));
  });

  it('answered no request with a 5xx', () => assertNoServerErrors(system));
});
