// The embedded store keeps no ACLs: every object is private, readable only with credentials or a
// presigned URL, and owned by the bucket's owner. It used to accept and ignore `x-amz-acl:
// public-read` and grant headers, which let a client believe an object was public (and a store
// swapped in later honour it). It answers ACL headers as AWS does on a bucket whose ACLs are
// disabled (Object Ownership "bucket owner enforced"): the ACLs that change nothing there are
// accepted — `private`, `bucket-owner-full-control` (Pix4D's own demo client uploads every photo
// with it, docs/shared reference real-clients.md) and its equivalent grant, `x-amz-grant-full-control`
// naming the bucket owner's canonical id — and every other ACL or grant header is refused:
// 400 AccessControlListNotSupported.
import type { IncomingHttpHeaders } from 'node:http';
import { S3Error } from './s3-errors.ts';

/** The operations that take ACL headers (CopyObject is a PutObject with x-amz-copy-source). */
export const ACL_TAKING_OPERATIONS = new Set(['PutObject', 'CreateMultipartUpload']);

/** The canonical user id of the bucket owner (every bucket's, and every object's, owner): ListBuckets' Owner ID. */
export const BUCKET_OWNER_ID = 'embedded';

/** Canned ACLs that grant nothing beyond what the bucket owner has anyway. */
const HARMLESS_CANNED_ACLS = new Set(['private', 'bucket-owner-full-control']);

const GRANT_HEADERS = ['x-amz-grant-read', 'x-amz-grant-write', 'x-amz-grant-read-acp', 'x-amz-grant-write-acp', 'x-amz-grant-full-control'];

/**
 * Whether a grant header's value names only the bucket owner by canonical id (`id="<owner>"`,
 * quotes optional, one or more comma-separated): the grant AWS accepts with ACLs disabled.
 */
function grantsOwnerOnly(value: string): boolean {
  const grantees = value.split(',').map((g) => g.trim());
  return grantees.length > 0 && grantees.every((grantee) => /^id\s*=\s*("?)([^"]*)\1$/i.exec(grantee)?.[2] === BUCKET_OWNER_ID);
}

export function refuseAclHeaders(headers: IncomingHttpHeaders): void {
  const acl = headers['x-amz-acl'];
  const grant = GRANT_HEADERS.find((name) => {
    const value = headers[name];
    if (value === undefined) return false;
    return name !== 'x-amz-grant-full-control' || !grantsOwnerOnly(String(value));
  });
  if ((acl !== undefined && !HARMLESS_CANNED_ACLS.has(String(acl))) || grant) {
    throw new S3Error(
      'AccessControlListNotSupported',
      `The bucket does not allow ACLs: every object is private and the bucket owner's (${grant ?? `x-amz-acl: ${String(acl)}`} refused; only "private", "bucket-owner-full-control" or a full-control grant to the bucket owner id="${BUCKET_OWNER_ID}" are accepted).`,
      400,
    );
  }
}
