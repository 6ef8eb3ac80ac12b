// The policy documents of an external S3 store's temporary credentials, in one place: the session
// policy every AssumeRole sends, the policy of a per-prefix role (the same document, plus a Deny of
// the bucket's own settings), and what the README's recipe gives a shared role (its trust policy and
// its permission policy).
//
// Object actions only. No bucket action (policy, ACL, public-access block, lifecycle...), no ACL
// on objects: a PutObject with `x-amz-acl: public-read` inside one's own prefix made the object
// anonymously readable on Ceph RGW 16 (which asks no s3:PutObjectAcl for it), so PutObject is
// denied whenever it carries an ACL header other than "private" or "bucket-owner-full-control"
// (which grants nothing the bucket owner lacks, and Pix4D's own demo client sends with every photo:
// AWS accepts it on a bucket whose ACLs are disabled) or any grant header (the grant equivalent
// to bucket-owner-full-control names the owner's canonical id, which these documents cannot know;
// the embedded store accepts it, acl-headers.ts). Conditions
// are "?*" (at least one character), not Null or StringNotEquals alone: RGW 16 puts an empty
// s3:x-amz-acl into every PutObject's context and evaluates Null wrongly (measured with
// shared/tools/ceph-rgw). RGW 16 skips these conditions on CreateMultipartUpload and CopyObject:
// there, the bucket's public access block (IgnorePublicAcls) is what keeps objects private
// (README's recipe; the start-up self-check tests it, s3-role-self-check.ts).

/** Objects under the read-write prefix: what the services' clients do with them. */
const OBJECT_ACTIONS = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'];
/** Objects under a read-only prefix (s3:GetObject covers HeadObject). */
const READ_ACTIONS = ['s3:GetObject'];
/** Request headers that set an object's ACL (condition keys of s3:PutObject). */
const ACL_GRANT_KEYS = ['s3:x-amz-grant-read', 's3:x-amz-grant-write', 's3:x-amz-grant-read-acp', 's3:x-amz-grant-write-acp', 's3:x-amz-grant-full-control'];

/**
 * Denies PutObject with an ACL header other than "private" or "bucket-owner-full-control", or any grant header, anywhere (Resource
 * "*": short, since AWS caps a session policy at 2,048 characters and six statements name it).
 */
export function aclHeaderDenials(): object[] {
  const resource = '*';
  return [
    // One value per operator: RGW 16 reads a StringNotEquals of several values as "differs from any
    // of them" (always true with two), which refused "private" too (measured); AWS reads it as "none
    // of them". Two operators of one value each, ANDed, mean the same on both.
    {
      Effect: 'Deny',
      Action: ['s3:PutObject'],
      Resource: resource,
      Condition: { StringLike: { 's3:x-amz-acl': ['?*'] }, StringNotEquals: { 's3:x-amz-acl': ['private'] }, StringNotLike: { 's3:x-amz-acl': ['bucket-owner-full-control'] } },
    },
    ...ACL_GRANT_KEYS.map((key) => ({ Effect: 'Deny', Action: ['s3:PutObject'], Resource: resource, Condition: { StringLike: { [key]: ['?*'] } } })),
  ];
}

/**
 * Objects under `prefix` (read, write, delete, multipart; only read with `writable: false`),
 * objects under the read-only prefixes (read), a listing of all of them; no ACL headers. The
 * session policy of every credential, and the permission policy of a per-prefix role (with the Deny
 * of the bucket's settings: prefixRolePolicy).
 * `aclDenials: false` for a store that refuses the ACL condition keys (MinIO knows none, and keeps
 * no object ACLs either): sts-credential-issuer.ts. A read-only policy allows no PutObject at all,
 * so it carries no ACL denials either. Its first statement is always the one of `prefix`: the
 * `storage` process's STS takes the prefix of a read-only policy from it (storage-sts.ts).
 */
export function prefixPolicy(bucket: string, prefix: string, readOnlyPrefixes: string[] = [], options: { aclDenials?: boolean; writable?: boolean } = {}): object {
  const writable = options.writable !== false;
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: writable ? OBJECT_ACTIONS : READ_ACTIONS, Resource: [`arn:aws:s3:::${bucket}/${prefix}*`] },
      ...(readOnlyPrefixes.length ? [{ Effect: 'Allow', Action: READ_ACTIONS, Resource: readOnlyPrefixes.map((p) => `arn:aws:s3:::${bucket}/${p}*`) }] : []),
      {
        Effect: 'Allow',
        Action: ['s3:ListBucket'],
        Resource: [`arn:aws:s3:::${bucket}`],
        Condition: { StringLike: { 's3:prefix': [prefix, ...readOnlyPrefixes].map((p) => `${p}*`) } },
      },
      ...(options.aclDenials === false || !writable ? [] : aclHeaderDenials()),
    ],
  };
}

/**
 * The bucket's own settings, named one by one (issue 40 §7). On Ceph RGW 16 a role session whose
 * session policy no longer parses (a tampered token), and the role's own rights, were treated as
 * the bucket's owner for these: PutBucketVersioning, PutBucketTagging, Put/DeleteBucketCors and
 * PutBucketRequestPayment succeeded although no statement allowed them, and with versioning on, a
 * deleted prefix left old versions behind. An explicit Deny on the bucket ARN stops them; a
 * `NotAction` Deny does not (RGW 16 ignores it), hence the list. Reads of the settings, listings of
 * versions and of others' multipart uploads are denied too: nobody's business but the operator's.
 * Only names both AWS and RGW 16 know: RGW 16's IAM refuses a policy naming one it does not
 * (measured: s3:DeleteBucketCORS, s3:DeleteBucketTagging, s3:PutEncryptionConfiguration,
 * s3:PutBucketEncryption, s3:PutBucketOwnershipControls, s3:PutMetricsConfiguration...). The
 * deletions of CORS and tags are s3:PutBucketCORS and s3:PutBucketTagging on both. Never in a
 * session policy (AWS caps it at 2,048 characters; the `storage` command's STS takes none): in
 * the roles' own policies only.
 */
export const BUCKET_SETTINGS_ACTIONS = [
  's3:CreateBucket',
  's3:DeleteBucket',
  's3:PutBucketVersioning',
  's3:GetBucketVersioning',
  's3:ListBucketVersions',
  's3:ListBucketMultipartUploads',
  's3:PutBucketTagging',
  's3:GetBucketTagging',
  's3:PutBucketCORS',
  's3:GetBucketCORS',
  's3:PutBucketRequestPayment',
  's3:GetBucketRequestPayment',
  's3:PutBucketPolicy',
  's3:DeleteBucketPolicy',
  's3:GetBucketPolicy',
  's3:GetBucketPolicyStatus',
  's3:PutBucketAcl',
  's3:GetBucketAcl',
  's3:PutLifecycleConfiguration',
  's3:GetLifecycleConfiguration',
  's3:PutBucketNotification',
  's3:GetBucketNotification',
  's3:PutBucketWebsite',
  's3:DeleteBucketWebsite',
  's3:GetBucketWebsite',
  's3:PutBucketLogging',
  's3:GetBucketLogging',
  's3:PutReplicationConfiguration',
  's3:GetReplicationConfiguration',
  's3:PutBucketObjectLockConfiguration',
  's3:GetBucketObjectLockConfiguration',
  's3:PutBucketPublicAccessBlock',
  's3:DeleteBucketPublicAccessBlock',
  's3:GetBucketPublicAccessBlock',
  's3:PutAccelerateConfiguration',
];

/** The Deny of the bucket's own settings (above), on the bucket ARN. */
export function bucketSettingsDenial(bucket: string): object {
  return { Effect: 'Deny', Action: BUCKET_SETTINGS_ACTIONS, Resource: [`arn:aws:s3:::${bucket}`] };
}

/** A per-prefix role's own policy: its session policy's document, and the Deny of the bucket's settings. */
export function prefixRolePolicy(bucket: string, prefix: string, readOnlyPrefixes: string[] = [], options: { writable?: boolean } = {}): object {
  const policy = prefixPolicy(bucket, prefix, readOnlyPrefixes, options) as { Statement: object[] };
  return { ...policy, Statement: [...policy.Statement, bucketSettingsDenial(bucket)] };
}

/**
 * The README's shared role (S3_ROLE_MODE=shared), trust side: the services' user may assume it; no
 * role session may (`aws:userid` of a role session is "<role id>:<session>"), and not the role
 * itself either (what a Deny in the permission policy does not achieve on RGW 16).
 */
export function sharedRoleTrustPolicy(userArn: string, roleArn: string): object {
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { AWS: [userArn] }, Action: ['sts:AssumeRole'] },
      { Effect: 'Deny', Principal: { AWS: [roleArn] }, Action: ['sts:AssumeRole'] },
      { Effect: 'Deny', Principal: { AWS: ['*'] }, Action: ['sts:AssumeRole'], Condition: { StringLike: { 'aws:userid': ['*:*'] } } },
    ],
  };
}

/** The README's shared role, permission side: objects of the bucket and its listing, no ACL headers, the bucket's settings denied; nothing else. */
export function sharedRolePolicy(bucket: string): object {
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: OBJECT_ACTIONS, Resource: [`arn:aws:s3:::${bucket}/*`] },
      { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: [`arn:aws:s3:::${bucket}`] },
      ...aclHeaderDenials(),
      bucketSettingsDenial(bucket),
    ],
  };
}
