// The embedded store keeps no ACLs: every object is private, readable only with credentials or a
// presigned URL. It used to accept and ignore `x-amz-acl: public-read` and grant headers, which let
// a client believe an object was public (and a store swapped in later honour it). A write that asks
// for any ACL other than "private" is refused as AWS refuses it on a bucket whose ACLs are disabled
// (Object Ownership "bucket owner enforced"): 400 AccessControlListNotSupported.
import type { IncomingHttpHeaders } from 'node:http';
import { S3Error } from './s3-errors.ts';

/** The operations that take ACL headers (CopyObject is a PutObject with x-amz-copy-source). */
export const ACL_TAKING_OPERATIONS = new Set(['PutObject', 'CreateMultipartUpload']);

const GRANT_HEADERS = ['x-amz-grant-read', 'x-amz-grant-write', 'x-amz-grant-read-acp', 'x-amz-grant-write-acp', 'x-amz-grant-full-control'];

export function refuseAclHeaders(headers: IncomingHttpHeaders): void {
  const acl = headers['x-amz-acl'];
  const grant = GRANT_HEADERS.find((name) => headers[name] !== undefined);
  if ((acl !== undefined && acl !== 'private') || grant) {
    throw new S3Error('AccessControlListNotSupported', `The bucket does not allow ACLs: every object is private (${grant ?? `x-amz-acl: ${String(acl)}`} refused).`, 400);
  }
}
