// An external S3 store (S3_BUCKET set), wired: the ObjectStore over it, the STS issuer of the
// clients' temporary credentials (shared role or a role per prefix, S3_ROLE_MODE), and, for `serve`
// (the process that issues credentials), the start-up self-check of those credentials.
// Loaded by system.ts with a dynamic import: the AWS SDK's S3 and STS clients hold ~40 MB that the
// embedded store never uses.
import type { Logger } from 'pino';
import type { S3Config } from '../../config.ts';
import { S3ObjectStore } from './s3-object-store.ts';
import { StsCredentialIssuer } from './sts-credential-issuer.ts';
import { IamQueryClient } from './iam-query.ts';
import { PerPrefixRoles } from './per-prefix-roles.ts';
import { checkIssuedCredentials, enforceSelfCheck } from './s3-role-self-check.ts';

export interface ExternalStore {
  store: S3ObjectStore;
  issuer: StsCredentialIssuer;
}

export async function openExternalStore(s3: S3Config, options: { credentialsTtlSeconds: number; selfCheck: boolean; logger: Logger }): Promise<ExternalStore> {
  const logger = options.logger.child({ service: 'storage' });
  const credentials = { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey };
  const store = new S3ObjectStore({ endpoint: s3.endpoint, region: s3.region, ...credentials, forcePathStyle: s3.forcePathStyle, publicEndpoint: s3.publicEndpoint });
  // AWS's IAM is global and signed for us-east-1; a store's own IAM (Ceph RGW) for its region.
  const iam = new IamQueryClient({ endpoint: s3.iamEndpoint, region: s3.iamEndpoint === 'https://iam.amazonaws.com' ? 'us-east-1' : s3.region, ...credentials });
  const roles =
    s3.roleMode === 'per-prefix' ? new PerPrefixRoles({ iam, trustedPrincipalArn: s3.userArn!, sessionSeconds: options.credentialsTtlSeconds, logger }) : undefined;
  if (roles) {
    // A project's deletion deletes its prefix: its role goes first, so its credentials stop before
    // its objects are removed. A failure is logged and the objects still go; the credentials then
    // last until they expire.
    store.onPrefixDeleted((bucket, prefix) =>
      roles.remove(bucket, prefix).catch((err) => logger.error({ err, bucket, prefix }, 'storage: the per-prefix role could not be deleted; its credentials last until they expire')),
    );
  }
  const issuer = new StsCredentialIssuer({ stsEndpoint: s3.stsEndpoint, region: s3.region, ...credentials, roleArn: s3.roleArn, publicEndpoint: s3.publicEndpoint, roles, iam, logger });
  if (options.selfCheck) {
    const report = await checkIssuedCredentials({
      issuer,
      bucket: s3.bucket,
      store: { endpoint: s3.endpoint, region: s3.region, forcePathStyle: s3.forcePathStyle, ...credentials },
      stsEndpoint: s3.stsEndpoint,
      deletePrefix: (bucket, prefix) => store.deletePrefix(bucket, prefix),
      logger,
    });
    enforceSelfCheck(report, { unsafeRoleOk: s3.unsafeRoleOk, logger });
  }
  return { store, issuer };
}
