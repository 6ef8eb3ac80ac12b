// Temporary credentials from the store itself: STS AssumeRole with an inline session policy that
// allows reads and writes under one key prefix (only reads when issued with `writable: false`), and
// reads under the read-only prefixes asked for,
// for the duration the services promise, clamped to what the role allows. Works with AWS
// (S3_ROLE_ARN names the role to assume), MinIO (which ignores the role), Ceph RGW and the embedded
// `storage` process (storage-sts.ts).
//
// Two modes (S3_ROLE_MODE):
// - shared: one role (S3_ROLE_ARN) for every prefix; the session policy is the only prefix limit.
//   Sound where session policies hold (AWS, MinIO, `storage`). Not on Ceph RGW 16, which falls back
//   to the role's own policy when a tampered token's session policy no longer parses.
// - per-prefix: a role per prefix whose own policy is the prefix limit (per-prefix-roles.ts).
// The start-up self-check (s3-role-self-check.ts) finds out which one a store needs.
//
// Lifetime: STORAGE_CREDENTIALS_TTL (12 h by default) is longer than a role's default maximum
// session (1 h on AWS and RGW), which STS refuses. The role's MaxSessionDuration is read through
// IAM GetRole when allowed; otherwise a refused duration is retried at 1 h and remembered.
//
// A failure is logged with the store's code and answered 503 with its cause in words (sts-errors.ts).
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { CredentialIssuer, IssueOptions, TemporaryCredentials } from './object-store.ts';
import type { IamQueryClient } from './iam-query.ts';
import type { PerPrefixRoles } from './per-prefix-roles.ts';
import { prefixPolicy } from './sts-policies.ts';
import { describeStsFailure, errorCode, isDurationRefusal, readBareErrorCodes } from './sts-errors.ts';
import { unavailable } from '../http/errors.ts';

export interface StsIssuerSettings {
  /** STS endpoint; undefined: AWS STS of the region. */
  stsEndpoint: string | undefined;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Shared mode's role; required by AWS and RGW; MinIO ignores it; a placeholder ARN is sent when unset. */
  roleArn: string | undefined;
  /** What clients are told to use as `endpoint_override`; undefined on AWS S3 itself. */
  publicEndpoint: string | undefined;
  /** Per-prefix mode: where the roles come from. Unset: shared mode. */
  roles?: PerPrefixRoles;
  /** Reads the shared role's MaxSessionDuration (GetRole); unset or refused: learned from STS's refusals. */
  iam?: IamQueryClient;
  logger?: Logger;
}

/** AWS accepts 900 s to the role's maximum (an hour by default); shorter requests are raised to 900. */
export const STS_MIN_DURATION_SECONDS = 900;
/** IAM's default MaxSessionDuration, on AWS and RGW: the lifetime tried when a longer one is refused. */
const DEFAULT_ROLE_MAX_SECONDS = 3600;
const PLACEHOLDER_ROLE_ARN = 'arn:aws:iam::000000000000:role/open-inspection-uploads';
/** How long a role made a moment ago may stay invisible to STS (IAM is eventually consistent on AWS). */
const NEW_ROLE_RETRY_MS = [500, 1000, 2000, 4000, 8000];

/** The session policy as AssumeRole's `Policy` parameter (compact JSON: see iam-query.ts on RGW). */
export function prefixSessionPolicy(bucket: string, prefix: string, readOnlyPrefixes: string[] = [], options: { aclDenials?: boolean; writable?: boolean } = {}): string {
  return JSON.stringify(prefixPolicy(bucket, prefix, readOnlyPrefixes, options));
}

export class StsCredentialIssuer implements CredentialIssuer {
  private readonly sts: STSClient;
  /** Longest session each role grants, seconds, once known (GetRole, or a refused duration). */
  private readonly roleMaxSeconds = new Map<string, number>();
  private sharedRoleMax: Promise<void> | undefined;
  /** False once the store refused the session policy's ACL conditions (MinIO: unknown keys); it is then sent without them. */
  private aclDenials = true;

  constructor(private readonly settings: StsIssuerSettings) {
    this.sts = stsClient(settings.stsEndpoint, settings.region, settings);
  }

  get mode(): 'shared' | 'per-prefix' {
    return this.settings.roles ? 'per-prefix' : 'shared';
  }

  /** The role a credential for `prefix` is issued from (per-prefix: made if need be; a read-only credential's role is another). */
  async roleArnFor(bucket: string, prefix: string, readOnlyPrefixes: string[] = [], writable = true): Promise<string> {
    return this.settings.roles ? (await this.settings.roles.roleFor(bucket, prefix, readOnlyPrefixes, writable)).arn : (this.settings.roleArn ?? PLACEHOLDER_ROLE_ARN);
  }

  /** Per-prefix roles only: a shared role cannot tell one prefix's sessions from another's (they last until they expire). */
  async revokeIssuedBefore(bucket: string, prefix: string, before: Date): Promise<void> {
    await this.settings.roles?.revokeIssuedBefore(bucket, prefix, before);
  }

  async issue(bucket: string, prefix: string, ttlSeconds: number, options: IssueOptions = {}): Promise<TemporaryCredentials> {
    const readOnlyPrefixes = options.readOnlyPrefixes ?? [];
    const writable = options.writable !== false;
    let roleArn = this.settings.roleArn;
    let fresh = false;
    let duration = Math.max(STS_MIN_DURATION_SECONDS, Math.round(ttlSeconds));
    try {
      if (this.settings.roles) {
        const role = await this.settings.roles.roleFor(bucket, prefix, readOnlyPrefixes, writable);
        roleArn = role.arn;
        fresh = role.created;
        if (role.maxSessionDuration) this.roleMaxSeconds.set(role.arn, role.maxSessionDuration);
      } else {
        await (this.sharedRoleMax ??= this.readSharedRoleMax());
      }
      duration = this.clamp(roleArn, duration);
      const policy = (aclDenials: boolean) => prefixSessionPolicy(bucket, prefix, readOnlyPrefixes, { aclDenials, writable });
      const c = await this.assume(roleArn, policy, duration, `${bucket}/${prefix}${writable ? '' : ' read-only'}`, fresh);
      return {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        sessionToken: c.SessionToken,
        expiration: c.Expiration,
        bucket,
        prefix,
        writable,
        readOnlyPrefixes,
        region: this.settings.region,
        endpoint: this.settings.publicEndpoint,
      };
    } catch (err) {
      const failure = describeStsFailure(err, { roleArn, durationSeconds: duration, endpoint: this.settings.stsEndpoint, trustedPrincipalArn: this.settings.roles?.trustedPrincipalArn });
      this.settings.logger?.error({ code: failure.code, status: failure.status, roleArn, bucket, prefix, writable, durationSeconds: duration, mode: this.mode }, `storage credentials: ${failure.words}`);
      throw unavailable(`Storage credentials could not be issued: ${failure.words}.`);
    }
  }

  /**
   * AssumeRole; a refused duration is retried at IAM's default maximum, a refused policy without its
   * ACL conditions, a role made a moment ago until IAM shows it.
   */
  private async assume(roleArn: string | undefined, policy: (aclDenials: boolean) => string, duration: number, scope: string, freshRole: boolean) {
    for (let attempt = 0; ; attempt++) {
      try {
        const out = await this.sts.send(
          new AssumeRoleCommand({
            RoleArn: roleArn ?? PLACEHOLDER_ROLE_ARN,
            // At most 64 characters of [\w+=,.@-]: a digest of the prefix says which credential it was in logs.
            RoleSessionName: `oi-${crypto.createHash('sha256').update(scope).digest('hex').slice(0, 32)}`,
            Policy: policy(this.aclDenials),
            DurationSeconds: duration,
          }),
        );
        const c = out.Credentials;
        if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) throw new Error('STS AssumeRole answered without credentials');
        return { AccessKeyId: c.AccessKeyId, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken, Expiration: c.Expiration };
      } catch (err) {
        if (duration > DEFAULT_ROLE_MAX_SECONDS && isDurationRefusal(err)) {
          this.settings.logger?.warn(
            { roleArn, refusedSeconds: duration, usedSeconds: DEFAULT_ROLE_MAX_SECONDS },
            'storage credentials: the role refuses sessions as long as STORAGE_CREDENTIALS_TTL; issuing them for 1 hour (raise the role\'s MaxSessionDuration, or lower STORAGE_CREDENTIALS_TTL)',
          );
          if (roleArn) this.roleMaxSeconds.set(roleArn, DEFAULT_ROLE_MAX_SECONDS);
          duration = DEFAULT_ROLE_MAX_SECONDS;
          continue;
        }
        const { code } = errorCode(err);
        if (this.aclDenials && /^MalformedPolicyDocument/.test(code)) {
          // MinIO knows no s3:x-amz-acl / s3:x-amz-grant-* keys (and keeps no object ACLs). Whether
          // public ACLs then take effect is what the start-up self-check tries.
          this.aclDenials = false;
          this.settings.logger?.warn({ code }, 'storage credentials: the store refuses the session policy\'s ACL conditions; sending it without them');
          continue;
        }
        if (freshRole && attempt < NEW_ROLE_RETRY_MS.length && (code === 'AccessDenied' || code === 'NoSuchEntity')) {
          await new Promise((resolve) => setTimeout(resolve, NEW_ROLE_RETRY_MS[attempt]));
          continue;
        }
        throw err;
      }
    }
  }

  private clamp(roleArn: string | undefined, duration: number): number {
    const max = roleArn ? this.roleMaxSeconds.get(roleArn) : undefined;
    return max ? Math.max(STS_MIN_DURATION_SECONDS, Math.min(duration, max)) : duration;
  }

  /** The shared role's MaxSessionDuration through IAM GetRole, once; a refusal (no IAM rights, MinIO) leaves it to STS. */
  private async readSharedRoleMax(): Promise<void> {
    const arn = this.settings.roleArn;
    if (!arn || !this.settings.iam) return;
    const name = arn.slice(arn.lastIndexOf('/') + 1);
    try {
      const role = await this.settings.iam.getRole(name);
      if (role?.maxSessionDuration) this.roleMaxSeconds.set(arn, role.maxSessionDuration);
    } catch (err) {
      this.settings.logger?.debug({ err, roleArn: arn }, 'storage credentials: the role\'s MaxSessionDuration could not be read (IAM GetRole); a refused lifetime is retried at 1 hour');
    }
  }
}

/** An STS client that reads Ceph RGW's bare error documents (sts-errors.ts). */
export function stsClient(endpoint: string | undefined, region: string, credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): STSClient {
  const client = new STSClient({
    endpoint,
    region,
    credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey, sessionToken: credentials.sessionToken },
    // A refusal is an answer, not a fault: the SDK's retries (3 attempts with backoff) would only delay it.
    maxAttempts: 2,
  });
  readBareErrorCodes(client);
  return client;
}
