// The start-up self-check of an external S3 store (`serve` with S3_BUCKET): before the services
// hand out any temporary credential, they obtain one for a probe prefix and try, as a hostile client
// would, what the review of issue 27 did on Ceph RGW 16:
//   role-chaining        AssumeRole again, without a session policy (the role's full rights);
//   write-outside        PutObject beside its prefix;
//   public-acl           PutObject with `x-amz-acl: public-read` inside its prefix, then a GET of
//                        it without credentials (a store that ignores ACLs, as MinIO, passes);
//   public-acl-multipart the same through a multipart upload (RGW 16 ignores the policy's ACL
//                        conditions there: the bucket's IgnorePublicAcls must hold);
//   tampered-token       writes beside its prefix with single-bit flips of its session token (RGW 16
//                        falls back to the role's own policy when the session policy no longer parses);
//   role-bucket-rights   with the role's own rights (AssumeRole by the services, no session policy):
//                        the bucket's policy, ACL and public-access block must be out of reach;
//   role-bucket-settings ... and so must its other settings: GET ?versioning, ?cors, ?tagging, and a
//                        PutBucketVersioning, PutBucketTagging, PutBucketCors, PutBucketRequestPayment
//                        whose body the store would refuse (an unknown status, a 200-character tag
//                        key, an unknown method, an unknown payer): denied, they answer 403 and change
//                        nothing; allowed, the store answers 400 and still changes nothing (RGW 16
//                        and AWS authorise before they read the body). Ceph RGW 16 let role sessions
//                        change these as the bucket's owner until the roles denied them by name;
//   role-public-acl      ... and so must an object made public by its ACL.
// Anything that succeeds stops the start with what and how to fix it (enforceSelfCheck), unless
// S3_UNSAFE_ROLE_OK=true, which logs it as a warning. Everything written is removed afterwards
// (per-prefix roles with their prefix). About 52 requests; a second or two on a LAN.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetBucketAclCommand,
  GetBucketCorsCommand,
  GetBucketPolicyCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetPublicAccessBlockCommand,
  PutBucketCorsCommand,
  PutBucketRequestPaymentCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  UploadPartCommand,
  type BucketVersioningStatus,
  type Payer,
  type S3Client,
} from '@aws-sdk/client-s3';
import { AssumeRoleCommand } from '@aws-sdk/client-sts';
import { s3ClientFor } from './s3-object-store.ts';
import { stsClient, type StsCredentialIssuer } from './sts-credential-issuer.ts';
import { encodeKeyForPath } from './sigv4-common.ts';
import { errorCode } from './sts-errors.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';

export interface RoleSelfCheckOptions {
  issuer: StsCredentialIssuer;
  bucket: string;
  /** The store as the services reach it, with their own credentials. */
  store: { endpoint: string | undefined; region: string; forcePathStyle: boolean; accessKeyId: string; secretAccessKey: string };
  stsEndpoint: string | undefined;
  /** Removes what the check wrote, through the services' store (per-prefix roles go with their prefix). */
  deletePrefix(bucket: string, prefix: string): Promise<unknown>;
  /** Tampered session tokens tried (default 24; a store that falls back fails about 2 in 3). */
  tamperedTokens?: number;
  logger: Logger;
}

export type SelfCheckName =
  | 'issue'
  | 'write-inside'
  | 'role-chaining'
  | 'write-outside'
  | 'public-acl'
  | 'public-acl-multipart'
  | 'tampered-token'
  | 'role-bucket-rights'
  | 'role-bucket-settings'
  | 'role-public-acl';

export interface SelfCheckFinding {
  check: SelfCheckName;
  /** What succeeded that must not have (or failed that must not have). */
  problem: string;
  fix: string;
}

export interface SelfCheckReport {
  mode: 'shared' | 'per-prefix';
  findings: SelfCheckFinding[];
  /** Checks that could not be made, and why (not failures). */
  notes: string[];
  tampered: { tried: number; wroteOutside: number };
}

const RECIPE = "README, 'Deployment: storage on an S3 store'";

type Outcome = { ok: true } | { ok: false; code: string; status: number | undefined };

async function attempt(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    await call();
    return { ok: true };
  } catch (err) {
    const { code, status } = errorCode(err);
    return { ok: false, code, status };
  }
}

const said = (o: Outcome) => (o.ok ? 'succeeded' : `${o.code}${o.status ? ` (HTTP ${o.status})` : ''}`);

export async function checkIssuedCredentials(options: RoleSelfCheckOptions): Promise<SelfCheckReport> {
  const { issuer, bucket, store, logger } = options;
  const base = `self-check/${crypto.randomUUID()}`;
  const prefix = `${base}/`;
  const outside = `${base}-outside/`;
  const sibling = `${base}-sibling/`;
  const report: SelfCheckReport = { mode: issuer.mode, findings: [], notes: [], tampered: { tried: 0, wroteOutside: 0 } };
  const found = (check: SelfCheckName, problem: string, fix: string) => report.findings.push({ check, problem, fix });
  const s3 = (c: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): S3Client => s3ClientFor({ ...store, ...c });
  try {
    let credentials;
    try {
      credentials = await issuer.issue(bucket, prefix, 900);
    } catch (err) {
      found('issue', `no credential could be issued: ${(err as Error).message}`, 'see the cause above; the store must answer STS AssumeRole for S3_ACCESS_KEY_ID');
      return report;
    }
    const client = s3(credentials);
    const put = (c: S3Client, key: string, acl?: 'public-read') => attempt(() => c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'open-inspection self-check', ACL: acl })));

    const inside = await put(client, `${prefix}probe`);
    if (!inside.ok) found('write-inside', `the credential cannot write under its own prefix (${said(inside)})`, "the role's policy must allow s3:PutObject on the bucket's objects");

    // Role chaining: the same role (and, per prefix, a sibling's) without a session policy.
    const chainTargets = [await issuer.roleArnFor(bucket, prefix)];
    if (issuer.mode === 'per-prefix') chainTargets.push(await issuer.roleArnFor(bucket, sibling));
    const chainer = stsClient(options.stsEndpoint, store.region, credentials);
    for (const roleArn of chainTargets) {
      const chained = await attempt(() => chainer.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: 'oi-self-check-chain', DurationSeconds: 900 })));
      if (chained.ok) {
        found(
          'role-chaining',
          `the issued credential could assume ${roleArn} again without a session policy (role chaining: the role's full rights, renewable forever)`,
          issuer.mode === 'per-prefix'
            ? 'the store does not apply the per-prefix roles\' trust policy (a Deny of sts:AssumeRole to principals whose aws:userid contains ":")'
            : `add to the role's trust policy a Deny of sts:AssumeRole to the role itself and to every role session (aws:userid like "*:*"), as in the ${RECIPE}; a Deny in its permission policy is not enough on Ceph RGW`,
        );
      }
    }

    const beside = await put(client, `${outside}probe`);
    if (beside.ok) found('write-outside', `the issued credential wrote outside its prefix (${outside}probe)`, 'the store does not apply the session policy: use S3_ROLE_MODE=per-prefix');

    const publicPut = await put(client, `${prefix}public`, 'public-read');
    if (publicPut.ok && (await anonymouslyReadable(options, `${prefix}public`))) {
      found('public-acl', 'the issued credential stored an object with the ACL public-read, readable by anyone', `deny ACL headers in the role's policy (${RECIPE}) and block public ACLs on the bucket`);
    } else if (publicPut.ok) {
      report.notes.push('the store accepted x-amz-acl: public-read from the issued credential, but the object is not readable without credentials (ACLs ignored)');
    }
    await checkMultipartAcl(client, options, `${prefix}public-multipart`, found);

    report.tampered = await tamperedWrites(credentials, `${outside}tampered-`, options);
    if (report.tampered.wroteOutside > 0) {
      found(
        'tampered-token',
        `${report.tampered.wroteOutside} of ${report.tampered.tried} tampered session tokens (one bit flipped) wrote outside their prefix: the store falls back to the role's own policy when a session policy is damaged (Ceph RGW 16)`,
        issuer.mode === 'per-prefix' ? "the per-prefix roles' own policy is not applied" : 'set S3_ROLE_MODE=per-prefix (a role per prefix, whose own policy is the limit) and S3_USER_ARN',
      );
    }

    await checkRoleRights(chainTargets[0], prefix, options, report, found);
  } finally {
    for (const p of [prefix, outside, sibling]) {
      await options.deletePrefix(bucket, p).catch((err) => logger.warn({ err, prefix: p }, 'storage self-check: could not remove what it wrote'));
    }
  }
  return report;
}

/** A multipart upload with a public ACL, completed: its object must not be readable without credentials. */
async function checkMultipartAcl(client: S3Client, options: RoleSelfCheckOptions, key: string, found: (check: SelfCheckName, problem: string, fix: string) => void): Promise<void> {
  const { bucket } = options;
  const wrote = await attempt(async () => {
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ACL: 'public-read' }));
    const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 1, Body: 'open-inspection self-check' }));
    await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
  });
  if (wrote.ok && (await anonymouslyReadable(options, key))) {
    found(
      'public-acl-multipart',
      'an object uploaded in parts with the ACL public-read is readable by anyone',
      "block public ACLs on the bucket: public access block IgnorePublicAcls=true (Ceph RGW 16 does not apply the policy's ACL conditions to multipart uploads and copies)",
    );
  }
}

/** Writes beside the prefix with single-bit flips spread over the session token; how many got through. */
async function tamperedWrites(credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string }, keyPrefix: string, options: RoleSelfCheckOptions) {
  const variants = tamperedTokens(credentials.sessionToken, options.tamperedTokens ?? 24);
  const wrote = await mapConcurrently(variants, 6, async (sessionToken, i) => {
    const client = s3ClientFor({ ...options.store, accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey, sessionToken });
    const outcome = await attempt(() => client.send(new PutObjectCommand({ Bucket: options.bucket, Key: `${keyPrefix}${i}`, Body: 'tampered' })));
    client.destroy();
    return outcome.ok;
  });
  return { tried: variants.length, wroteOutside: wrote.filter(Boolean).length };
}

/**
 * `count` variants of a session token, each with one bit flipped, at positions spread evenly over
 * it: in the decoded bytes when the token is plain base64 (AWS, Ceph RGW), else one character
 * changed for the next of its alphabet (MinIO's JWT, the `storage` command's signed tokens).
 */
export function tamperedTokens(token: string, count: number): string[] {
  const bytes = Buffer.from(token, 'base64');
  const isBase64 = bytes.length > 0 && bytes.toString('base64') === token;
  const length = isBase64 ? bytes.length : token.length;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const position = Math.min(length - 1, Math.floor(((i + 0.5) * length) / count));
    if (isBase64) {
      const copy = Buffer.from(bytes);
      copy[position] ^= 1 << i % 8;
      out.push(copy.toString('base64'));
    } else {
      const replacement = alphabet[(alphabet.indexOf(token[position]) + 1) % alphabet.length]; // not in it: 'A'
      out.push(token.slice(0, position) + replacement + token.slice(position + 1));
    }
  }
  return out;
}

/** The role's own rights, which a chained or fallen-back credential would have: objects only. */
async function checkRoleRights(
  roleArn: string,
  prefix: string,
  options: RoleSelfCheckOptions,
  report: SelfCheckReport,
  found: (check: SelfCheckName, problem: string, fix: string) => void,
): Promise<void> {
  const { bucket, store } = options;
  const services = stsClient(options.stsEndpoint, store.region, store);
  let role: { AccessKeyId?: string; SecretAccessKey?: string; SessionToken?: string } | undefined;
  try {
    role = (await services.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: 'oi-self-check-role', DurationSeconds: 900 }))).Credentials;
  } catch (err) {
    // The `storage` command, for one, issues no credential without a session policy: nothing to probe.
    report.notes.push(`the role's own rights were not probed: AssumeRole without a session policy answered ${errorCode(err).code}`);
    return;
  }
  if (!role?.AccessKeyId || !role.SecretAccessKey || !role.SessionToken) return;
  const client = s3ClientFor({ ...store, accessKeyId: role.AccessKeyId, secretAccessKey: role.SecretAccessKey, sessionToken: role.SessionToken });
  const granted = await grantedProbes([
    ['GetBucketPolicy', () => client.send(new GetBucketPolicyCommand({ Bucket: bucket }))],
    ['GetBucketAcl', () => client.send(new GetBucketAclCommand({ Bucket: bucket }))],
    ['GetPublicAccessBlock', () => client.send(new GetPublicAccessBlockCommand({ Bucket: bucket }))],
  ]);
  if (granted.length) {
    found('role-bucket-rights', `the role itself has rights on the bucket beyond its objects (${granted.join(', ')}): a credential that escapes its session policy could make the bucket public`, `give the role object actions only (${RECIPE})`);
  }
  const settings = await grantedProbes(bucketSettingsProbes(client, bucket));
  if (settings.length) {
    found(
      'role-bucket-settings',
      `the role itself reaches the bucket's own settings (${settings.join(', ')}): a credential that escapes its session policy could switch versioning on (a deleted prefix then leaves its objects behind as old versions), or change tags, CORS or who pays`,
      options.issuer.mode === 'per-prefix'
        ? "the store does not apply the per-prefix roles' Deny of the bucket's settings (sts-policies.ts BUCKET_SETTINGS_ACTIONS)"
        : `add to the role's policy the Deny of the bucket's settings, each action named (a NotAction Deny is ignored by Ceph RGW 16), as in the ${RECIPE}`,
    );
  }
  const publicPut = await attempt(() => client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}role-public`, Body: 'open-inspection self-check', ACL: 'public-read' })));
  if (publicPut.ok && (await anonymouslyReadable(options, `${prefix}role-public`))) {
    found('role-public-acl', 'the role itself may store objects with the ACL public-read, readable by anyone', `deny ACL headers in the role's policy (${RECIPE}) and block public ACLs on the bucket`);
  }
  client.destroy();
}

/** The probes whose outcome got past authorisation, as "<name> <outcome>". */
async function grantedProbes(probes: [string, () => Promise<unknown>][]): Promise<string[]> {
  const granted: string[] = [];
  for (const [name, call] of probes) {
    const outcome = await attempt(call);
    // 403: refused; 405/501: the store has no such operation. Anything else (200, NoSuchBucketPolicy, MalformedXML...) got past authorisation.
    if (outcome.ok || (outcome.status !== undefined && ![403, 405, 501].includes(outcome.status) && outcome.status < 500)) granted.push(`${name} ${said(outcome)}`);
  }
  return granted;
}

/**
 * Reads of the bucket's settings, and writes of them with a body the store refuses (see the head
 * comment): denied they answer 403; allowed, 400, and nothing changed either way.
 */
export function bucketSettingsProbes(client: S3Client, bucket: string): [string, () => Promise<unknown>][] {
  return [
    ['GetBucketVersioning', () => client.send(new GetBucketVersioningCommand({ Bucket: bucket }))],
    ['GetBucketCors', () => client.send(new GetBucketCorsCommand({ Bucket: bucket }))],
    ['GetBucketTagging', () => client.send(new GetBucketTaggingCommand({ Bucket: bucket }))],
    ['PutBucketVersioning', () => client.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'open-inspection-self-check' as BucketVersioningStatus } }))],
    ['PutBucketTagging', () => client.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: [{ Key: 'k'.repeat(200), Value: 'open-inspection self-check' }] } }))],
    ['PutBucketCors', () => client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: [{ AllowedMethods: ['SELFCHECK'], AllowedOrigins: ['https://self-check.invalid'] }] } }))],
    ['PutBucketRequestPayment', () => client.send(new PutBucketRequestPaymentCommand({ Bucket: bucket, RequestPaymentConfiguration: { Payer: 'open-inspection-self-check' as Payer } }))],
  ];
}

/** Whether a GET without credentials reads the object: path-style on the store's endpoint, else AWS's virtual host. */
async function anonymouslyReadable({ store, bucket }: RoleSelfCheckOptions, key: string): Promise<boolean> {
  let url = `https://${bucket}.s3.${store.region}.amazonaws.com/${encodeKeyForPath(key)}`;
  if (store.endpoint) {
    const endpoint = new URL(store.endpoint);
    const base = endpoint.pathname.replace(/\/$/, '');
    url = store.forcePathStyle ? `${endpoint.origin}${base}/${bucket}/${encodeKeyForPath(key)}` : `${endpoint.protocol}//${bucket}.${endpoint.host}${base}/${encodeKeyForPath(key)}`;
  }
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
  await response?.body?.cancel();
  return response?.status === 200;
}

/** The start refused: what the self-check found, and how to fix it. */
export class UnsafeStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeStoreError';
  }
}

/** Stops the start on any finding, or logs them as a warning when `unsafeRoleOk` (S3_UNSAFE_ROLE_OK=true). */
export function enforceSelfCheck(report: SelfCheckReport, options: { unsafeRoleOk: boolean; logger: Logger }): void {
  const context = { mode: report.mode, tampered: report.tampered, notes: report.notes };
  if (report.findings.length === 0) {
    options.logger.info(context, 'storage self-check: the issued credentials stay within their prefix');
    return;
  }
  const lines = report.findings.map((f) => `  - ${f.check}: ${f.problem}. Fix: ${f.fix}.`).join('\n');
  if (options.unsafeRoleOk) {
    options.logger.warn({ ...context, findings: report.findings }, `storage self-check failed; starting anyway because S3_UNSAFE_ROLE_OK=true:\n${lines}`);
    return;
  }
  throw new UnsafeStoreError(
    `The S3 store's temporary credentials are not safe to hand to clients (start-up self-check, S3_ROLE_MODE=${report.mode}):\n${lines}\n` +
      `Fix the store as the ${RECIPE} describes, or set S3_UNSAFE_ROLE_OK=true to start anyway (logged as a warning).`,
  );
}
