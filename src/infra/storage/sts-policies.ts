// The policy documents of an external S3 store's temporary credentials, in one place: the session
// policy every AssumeRole sends, the policy of a per-prefix role (the same document), and what the
// README's recipe gives a shared role (its trust policy and its permission policy).
//
// Object actions only. No bucket action (policy, ACL, public-access block, lifecycle...), no ACL
// on objects: a PutObject with `x-amz-acl: public-read` inside one's own prefix made the object
// anonymously readable on Ceph RGW 16 (which asks no s3:PutObjectAcl for it), so PutObject is
// denied whenever it carries an ACL header other than "private" or any grant header. Conditions
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
 * Denies PutObject with an ACL header other than "private", or any grant header, anywhere (Resource
 * "*": short, since AWS caps a session policy at 2,048 characters and six statements name it).
 */
export function aclHeaderDenials(): object[] {
  const resource = '*';
  return [
    { Effect: 'Deny', Action: ['s3:PutObject'], Resource: resource, Condition: { StringLike: { 's3:x-amz-acl': ['?*'] }, StringNotEquals: { 's3:x-amz-acl': ['private'] } } },
    ...ACL_GRANT_KEYS.map((key) => ({ Effect: 'Deny', Action: ['s3:PutObject'], Resource: resource, Condition: { StringLike: { [key]: ['?*'] } } })),
  ];
}

/**
 * Objects under `prefix` (read, write, delete, multipart; only read with `writable: false`),
 * objects under the read-only prefixes (read), a listing of all of them; no ACL headers. The
 * session policy of every credential, and the permission policy of a per-prefix role.
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

/** The README's shared role, permission side: objects of the bucket and its listing, no ACL headers; nothing else. */
export function sharedRolePolicy(bucket: string): object {
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: OBJECT_ACTIONS, Resource: [`arn:aws:s3:::${bucket}/*`] },
      { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: [`arn:aws:s3:::${bucket}`] },
      ...aclHeaderDenials(),
    ],
  };
}
