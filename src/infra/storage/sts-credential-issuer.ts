// Temporary credentials from the store itself: STS AssumeRole with an inline session policy that
// allows reads and writes under one key prefix (and reads under the read-only prefixes asked for),
// for the duration the services promise. Works
// with AWS (S3_ROLE_ARN names the role to assume), MinIO (which ignores the role), Ceph RGW (a
// role with S3 rights on the bucket) and the embedded `storage` process (storage-sts.ts).
//
// On Ceph RGW 16 a damaged session policy fails open to the role's own policy
// (shared/tools/ceph-rgw/README.md): give the role no more than the bucket the services use.
import crypto from 'node:crypto';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { CredentialIssuer, IssueOptions, TemporaryCredentials } from './object-store.ts';

export interface StsIssuerSettings {
  /** STS endpoint; undefined: AWS STS of the region. */
  stsEndpoint: string | undefined;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Required by AWS; MinIO ignores it; a placeholder ARN is sent when unset. */
  roleArn: string | undefined;
  /** What clients are told to use as `endpoint_override`; undefined on AWS S3 itself. */
  publicEndpoint: string | undefined;
}

/** AWS accepts 900 s to the role's maximum (an hour by default); shorter requests are raised to 900. */
export const STS_MIN_DURATION_SECONDS = 900;

/**
 * The session policy: objects under the prefix (read, write, delete, multipart), objects under the
 * read-only prefixes (read), and a listing of all of them.
 */
export function prefixSessionPolicy(bucket: string, prefix: string, readOnlyPrefixes: string[] = []): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        Resource: [`arn:aws:s3:::${bucket}/${prefix}*`],
      },
      ...(readOnlyPrefixes.length ? [{ Effect: 'Allow', Action: ['s3:GetObject'], Resource: readOnlyPrefixes.map((p) => `arn:aws:s3:::${bucket}/${p}*`) }] : []),
      {
        Effect: 'Allow',
        Action: ['s3:ListBucket'],
        Resource: [`arn:aws:s3:::${bucket}`],
        Condition: { StringLike: { 's3:prefix': [prefix, ...readOnlyPrefixes].map((p) => `${p}*`) } },
      },
    ],
  });
}

export class StsCredentialIssuer implements CredentialIssuer {
  private readonly sts: STSClient;

  constructor(private readonly settings: StsIssuerSettings) {
    this.sts = new STSClient({
      endpoint: settings.stsEndpoint,
      region: settings.region,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    });
  }

  async issue(bucket: string, prefix: string, ttlSeconds: number, options: IssueOptions = {}): Promise<TemporaryCredentials> {
    const readOnlyPrefixes = options.readOnlyPrefixes ?? [];
    const out = await this.sts.send(
      new AssumeRoleCommand({
        RoleArn: this.settings.roleArn ?? 'arn:aws:iam::000000000000:role/open-inspection-uploads',
        // At most 64 characters of [\w+=,.@-]: a digest of the prefix says which credential it was in logs.
        RoleSessionName: `oi-${crypto.createHash('sha256').update(`${bucket}/${prefix}`).digest('hex').slice(0, 32)}`,
        Policy: prefixSessionPolicy(bucket, prefix, readOnlyPrefixes),
        DurationSeconds: Math.max(STS_MIN_DURATION_SECONDS, Math.round(ttlSeconds)),
      }),
    );
    const c = out.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) throw new Error('STS AssumeRole answered without credentials');
    return {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      sessionToken: c.SessionToken,
      expiration: c.Expiration,
      bucket,
      prefix,
      readOnlyPrefixes,
      region: this.settings.region,
      endpoint: this.settings.publicEndpoint,
    };
  }
}
