// One IAM role per key prefix (S3_ROLE_MODE=per-prefix): the limit to one project's prefix lives in
// the role's own policy, on the store, where a client cannot tamper with it.
//
// Why: Ceph RGW 16 decrypts a session token whose bytes were changed and, when the session policy
// inside no longer parses, falls back to the role's own policy (316 of 464 single-bit flips of an
// issued token wrote into another inspection's prefix with a shared bucket-wide role). With a role
// per prefix the fallback is that prefix again: 0 of 300 flips wrote outside it
// (test/storage-rgw.test.ts).
//
// Each role:
// - is named after a digest of bucket and prefix (`oi-<40 hex>`, path /open-inspection/), so every
//   process finds the same role without a table of its own, and is made on the first credential
//   asked for its prefix;
// - allows only what the session policy allows (one document, sts-policies.ts): objects under the
//   prefix, reads under the read-only prefixes, a listing of them; no bucket action, no ACL; and
//   denies the bucket's own settings by name (versioning, tagging, CORS, policy...: sts-policies.ts
//   BUCKET_SETTINGS_ACTIONS), which RGW 16 otherwise lets a role session change as the bucket's owner;
// - has a read-only sibling (`oi-ro-<40 hex>`) for the credentials that may only read the prefix
//   (IssueOptions.writable false: a cloud token with the read:cloud scope only), whose policy
//   allows no write: the fallback to the role's own policy (above) cannot make a read-only
//   credential write, as it could if both shared the writable role;
// - is trusted by the services' own user only (S3_USER_ARN), and refuses every role session
//   (`aws:userid` of a role session is "<role id>:<session name>"; a user's has no colon), so
//   credentials it issued cannot assume it or a sibling again (role chaining);
// - is deleted, with its policy, when its prefix is (the project's deletion calls deletePrefix):
//   on RGW the credentials issued for it stop at once (their next request is 403);
// - refuses, when a member who was handed its credentials leaves the organization, every session
//   issued before (`revoked-before`, aws:TokenIssueTime; membership-removal.ts), as AWS's "revoke
//   active sessions" does: at once on AWS and on RGW 16 (test/storage-rgw.test.ts).
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { IamError, type IamQueryClient } from './iam-query.ts';
import { prefixRolePolicy } from './sts-policies.ts';

export const ROLE_PATH = '/open-inspection/';
const POLICY_NAME = 'prefix';
/** Inline policy added to a prefix's roles when a member who was handed its credentials is removed. */
const REVOKED_POLICY_NAME = 'revoked-before';
/** IAM's bounds of MaxSessionDuration. */
const MIN_MAX_SESSION = 3600;
const MAX_MAX_SESSION = 43_200;

export interface PerPrefixRolesSettings {
  iam: IamQueryClient;
  /** The only principal the roles trust: the services' own user (S3_ACCESS_KEY_ID's). */
  trustedPrincipalArn: string;
  /** The credentials' lifetime, seconds: the roles' MaxSessionDuration (within IAM's 3600-43200). */
  sessionSeconds: number;
  logger: Logger;
}

export interface PrefixRole {
  arn: string;
  /** Longest session the role grants, seconds. */
  maxSessionDuration: number | undefined;
  /** Made by this call: IAM may take a few seconds before AssumeRole sees it (AWS). */
  created: boolean;
}

/**
 * `oi-` and 40 hex digits of SHA-256(bucket/prefix), `oi-ro-` for the read-only role of the
 * prefix: within IAM's 64 characters, the same in every process.
 */
export function roleNameFor(bucket: string, prefix: string, writable = true): string {
  return `oi-${writable ? '' : 'ro-'}${crypto.createHash('sha256').update(`${bucket}/${prefix}`).digest('hex').slice(0, 40)}`;
}

/** Trusted by `principalArn` only; no role session may assume it (see the head comment). */
export function prefixRoleTrustPolicy(principalArn: string): object {
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { AWS: [principalArn] }, Action: ['sts:AssumeRole'] },
      { Effect: 'Deny', Principal: { AWS: ['*'] }, Action: ['sts:AssumeRole'], Condition: { StringLike: { 'aws:userid': ['*:*'] } } },
    ],
  };
}

export class PerPrefixRoles {
  /** Roles made ready (policy written) by this process, by name: once per process and prefix. */
  private readonly ready = new Map<string, Promise<PrefixRole>>();

  constructor(private readonly settings: PerPrefixRolesSettings) {}

  /** S3_USER_ARN: the one principal the roles trust (named in the words of a refused AssumeRole). */
  get trustedPrincipalArn(): string {
    return this.settings.trustedPrincipalArn;
  }

  /** The role of `prefix` (its read-only one when `writable` is false), made (or its policy rewritten, once per process) as needed. */
  roleFor(bucket: string, prefix: string, readOnlyPrefixes: string[], writable = true): Promise<PrefixRole> {
    const name = roleNameFor(bucket, prefix, writable);
    let role = this.ready.get(name);
    if (!role) {
      role = this.prepare(name, bucket, prefix, readOnlyPrefixes, writable);
      this.ready.set(name, role);
      role.catch(() => this.ready.delete(name)); // asked again next time
    }
    return role;
  }

  /** Deletes the roles of `prefix`, writable and read-only (and their policies); their credentials stop. Nothing to do when there is none. */
  async remove(bucket: string, prefix: string): Promise<void> {
    for (const name of [roleNameFor(bucket, prefix), roleNameFor(bucket, prefix, false)]) {
      this.ready.delete(name);
      const { iam } = this.settings;
      // IAM deletes no role that still has inline policies.
      await iam.deleteRolePolicy(name, REVOKED_POLICY_NAME);
      const hadPolicy = await iam.deleteRolePolicy(name, POLICY_NAME);
      const hadRole = await iam.deleteRole(name);
      if (hadPolicy || hadRole) this.settings.logger.info({ role: name, bucket, prefix }, 'storage: per-prefix role deleted with its prefix');
      this.ready.delete(name); // a roleFor() that ran meanwhile made it again: forget it too
    }
  }

  /**
   * Refuses every credential of `prefix` (writable and read-only roles) issued before `before`: an
   * inline policy denying all to sessions whose `aws:TokenIssueTime` is earlier, as AWS's "revoke
   * active sessions" does (AWS and Ceph RGW 16 honour it at once; a session issued after passes).
   * The time is taken up to the next whole second (a store may keep issue times in seconds): a
   * session issued in the same second is refused too, and its client asks again. A role not made
   * yet has no credentials to refuse.
   */
  async revokeIssuedBefore(bucket: string, prefix: string, before: Date): Promise<void> {
    const cutoff = new Date(Math.ceil(before.getTime() / 1000) * 1000).toISOString();
    const deny = { Version: '2012-10-17', Statement: [{ Effect: 'Deny', Action: ['*'], Resource: ['*'], Condition: { DateLessThan: { 'aws:TokenIssueTime': cutoff } } }] };
    for (const name of [roleNameFor(bucket, prefix), roleNameFor(bucket, prefix, false)]) {
      if (await this.settings.iam.getRole(name)) await this.settings.iam.putRolePolicy(name, REVOKED_POLICY_NAME, deny);
    }
  }

  private async prepare(name: string, bucket: string, prefix: string, readOnlyPrefixes: string[], writable: boolean): Promise<PrefixRole> {
    const { iam } = this.settings;
    let created = false;
    let role = await iam.getRole(name);
    if (!role) {
      try {
        role = await iam.createRole({
          name,
          path: ROLE_PATH,
          trustPolicy: prefixRoleTrustPolicy(this.settings.trustedPrincipalArn),
          maxSessionDuration: Math.min(MAX_MAX_SESSION, Math.max(MIN_MAX_SESSION, Math.ceil(this.settings.sessionSeconds))),
          description: `open-inspection: ${writable ? '' : 'reading '}objects under ${bucket}/${prefix}`.slice(0, 1000),
        });
        created = true;
      } catch (err) {
        // Another process made it a moment ago.
        if (!(err instanceof IamError && err.code === 'EntityAlreadyExists')) throw err;
        role = await iam.getRole(name);
        if (!role) throw err;
      }
    }
    // Written every first time a process uses the role: a role made by an older version gets today's policy.
    await iam.putRolePolicy(name, POLICY_NAME, prefixRolePolicy(bucket, prefix, readOnlyPrefixes, { writable }));
    return { arn: role.arn, maxSessionDuration: role.maxSessionDuration, created };
  }
}
