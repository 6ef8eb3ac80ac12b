// Read-only storage credentials (IssueOptions.writable false, for a read-only cloud token) on an
// external store: the STS session policy allows no write at all, the `storage` process's STS
// reads such a policy back as read-only credentials of the same prefix, and a per-prefix role of a
// read-only credential is another role than the writable one, with a policy of its own. The
// embedded endpoint's side is tested over HTTP in cloud-read-only-token.test.ts and
// storage-process.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { prefixPolicy, prefixRolePolicy } from '../src/infra/storage/sts-policies.ts';
import { scopeOfPolicy } from '../src/infra/storage/storage-sts.ts';
import { PerPrefixRoles, roleNameFor } from '../src/infra/storage/per-prefix-roles.ts';
import type { IamQueryClient, IamRole } from '../src/infra/storage/iam-query.ts';

interface Statement {
  Effect: string;
  Action: string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string[]>>;
}
const statementsOf = (policy: object) => (policy as { Statement: Statement[] }).Statement;
const actionsOf = (policy: object) => new Set(statementsOf(policy).filter((s) => s.Effect === 'Allow').flatMap((s) => s.Action));

describe('read-only storage credentials on an external store', () => {
  test('the session policy of a read-only credential allows reading and listing its prefixes, and nothing else', () => {
    const policy = prefixPolicy('bkt', 'uploads/project-7/', ['results/abc/'], { writable: false });
    assert.deepEqual([...actionsOf(policy)].sort(), ['s3:GetObject', 's3:ListBucket']);
    const [own, results, listing, ...rest] = statementsOf(policy);
    assert.deepEqual(own, { Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::bkt/uploads/project-7/*'] }, 'the own prefix comes first');
    assert.deepEqual(results.Resource, ['arn:aws:s3:::bkt/results/abc/*']);
    assert.deepEqual(listing.Condition, { StringLike: { 's3:prefix': ['uploads/project-7/*', 'results/abc/*'] } });
    assert.deepEqual(rest, [], 'no ACL denials: nothing may be put');

    // The writable one (unchanged) writes its prefix and denies ACL headers.
    const writable = prefixPolicy('bkt', 'uploads/project-7/', ['results/abc/']);
    assert.ok(actionsOf(writable).has('s3:PutObject') && actionsOf(writable).has('s3:DeleteObject'));
    assert.ok(statementsOf(writable).some((s) => s.Effect === 'Deny'));
    assert.deepEqual(prefixPolicy('bkt', 'p/', [], { writable: true }), prefixPolicy('bkt', 'p/'));
  });

  test("the storage process's STS reads a read-only policy back as read-only credentials of the same prefix", () => {
    assert.deepEqual(scopeOfPolicy(JSON.stringify(prefixPolicy('bkt', 'uploads/project-7/', ['results/abc/'], { writable: false }))), {
      bucket: 'bkt',
      prefix: 'uploads/project-7/',
      writable: false,
      readOnlyPrefixes: ['results/abc/'],
    });
    assert.deepEqual(scopeOfPolicy(JSON.stringify(prefixPolicy('bkt', 'uploads/project-7/', ['results/abc/']))), {
      bucket: 'bkt',
      prefix: 'uploads/project-7/',
      writable: true,
      readOnlyPrefixes: ['results/abc/'],
    });
    // Still refused: a prefix written but not read, two written ones.
    const writeOnly = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: ['arn:aws:s3:::bkt/p/*'] }] };
    assert.throws(() => scopeOfPolicy(JSON.stringify(writeOnly)), /Unsupported grant/);
    const two = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: ['arn:aws:s3:::bkt/a/*', 'arn:aws:s3:::bkt/b/*'] }] };
    assert.throws(() => scopeOfPolicy(JSON.stringify(two)), /one at most/);
  });

  test('a read-only per-prefix role is named apart from the writable one of the same prefix', () => {
    const writable = roleNameFor('bkt', 'uploads/project-7/');
    const readOnly = roleNameFor('bkt', 'uploads/project-7/', false);
    assert.match(writable, /^oi-[0-9a-f]{40}$/);
    assert.match(readOnly, /^oi-ro-[0-9a-f]{40}$/);
    assert.notEqual(readOnly, writable);
    assert.ok(readOnly.length <= 64, "within IAM's 64 characters");
    assert.equal(roleNameFor('bkt', 'uploads/project-7/', true), writable, 'the writable name is the one roles were made under before');
  });

  test('per-prefix roles: the read-only role gets the read-only policy, the writable one its own; deleting the prefix deletes both', async () => {
    const iam = new FakeIam();
    const roles = new PerPrefixRoles({ iam: iam as unknown as IamQueryClient, trustedPrincipalArn: 'arn:aws:iam::1:user/services', sessionSeconds: 3600, logger: pino({ level: 'silent' }) });
    const readOnly = await roles.roleFor('bkt', 'uploads/project-7/', ['results/abc/'], false);
    const writable = await roles.roleFor('bkt', 'uploads/project-7/', ['results/abc/']);
    assert.notEqual(readOnly.arn, writable.arn);
    const readOnlyName = roleNameFor('bkt', 'uploads/project-7/', false);
    const writableName = roleNameFor('bkt', 'uploads/project-7/');
    assert.deepEqual(iam.policies.get(readOnlyName), prefixRolePolicy('bkt', 'uploads/project-7/', ['results/abc/'], { writable: false }));
    assert.ok(!actionsOf(iam.policies.get(readOnlyName)!).has('s3:PutObject'), 'the read-only role writes nothing, whatever its session policy');
    assert.ok(actionsOf(iam.policies.get(writableName)!).has('s3:PutObject'));
    // Asked again: the same roles, not made twice.
    assert.equal((await roles.roleFor('bkt', 'uploads/project-7/', ['results/abc/'], false)).arn, readOnly.arn);
    assert.equal(iam.created.length, 2);

    await roles.remove('bkt', 'uploads/project-7/');
    assert.deepEqual([...iam.roles.keys()], [], 'both roles deleted with the prefix');
    assert.deepEqual([...iam.policies.keys()], []);
  });
});

/** The five IAM calls PerPrefixRoles makes, in memory. */
class FakeIam {
  readonly roles = new Map<string, IamRole>();
  readonly policies = new Map<string, object>();
  readonly created: string[] = [];

  async getRole(name: string): Promise<IamRole | undefined> {
    return this.roles.get(name);
  }
  async createRole(input: { name: string; maxSessionDuration: number }): Promise<IamRole> {
    const role = { name: input.name, arn: `arn:aws:iam::1:role/open-inspection/${input.name}`, maxSessionDuration: input.maxSessionDuration };
    this.roles.set(input.name, role);
    this.created.push(input.name);
    return role;
  }
  async putRolePolicy(roleName: string, _policyName: string, policy: object): Promise<void> {
    this.policies.set(roleName, policy);
  }
  async deleteRolePolicy(roleName: string): Promise<boolean> {
    return this.policies.delete(roleName);
  }
  async deleteRole(roleName: string): Promise<boolean> {
    return this.roles.delete(roleName);
  }
}
