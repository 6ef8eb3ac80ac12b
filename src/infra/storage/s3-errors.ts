// S3 error codes and their HTTP statuses, as AWS SDKs and aws-cli expect to parse them.
import { StorageError } from './object-store.ts';

const STATUS: Record<string, number> = {
  AccessDenied: 403,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  BadDigest: 400,
  BucketAlreadyOwnedByYou: 409,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  // S3 answers 400 for an expired session token; SDKs read the code, not the status.
  ExpiredToken: 400,
  IncompleteBody: 400,
  InternalError: 500,
  InvalidAccessKeyId: 403,
  InvalidArgument: 400,
  InvalidBucketName: 400,
  InvalidDigest: 400,
  InvalidPart: 400,
  InvalidPartOrder: 400,
  InvalidRange: 416,
  InvalidRequest: 400,
  InvalidToken: 400,
  InvalidURI: 400,
  KeyTooLongError: 400,
  MalformedXML: 400,
  MaxMessageLengthExceeded: 400,
  MethodNotAllowed: 405,
  MissingContentLength: 411,
  MissingSecurityHeader: 400,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  NoSuchUpload: 404,
  NotImplemented: 501,
  NotModified: 304,
  PreconditionFailed: 412,
  // Not an AWS code (S3 has no per-prefix quota); 403 like S3's other policy refusals.
  QuotaExceeded: 403,
  RequestTimeTooSkewed: 403,
  ServiceUnavailable: 503,
  SignatureDoesNotMatch: 403,
  XAmzContentSHA256Mismatch: 400,
};

export class S3Error extends Error {
  readonly status: number;
  constructor(
    readonly code: string,
    message: string,
    status?: number,
    /** Extra response headers (e.g. Content-Range on 416, ETag on 304). */
    readonly headers: Record<string, string> = {},
    /** What went wrong underneath (logged, never sent). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'S3Error';
    this.status = status ?? STATUS[code] ?? 400;
  }
}

export function entityTooLarge(max: number): S3Error {
  return new S3Error('EntityTooLarge', `Your proposed upload exceeds the maximum allowed size (${max} bytes).`);
}

/** Maps anything thrown while serving a request to the S3 error the client should see. */
export function toS3Error(err: unknown): S3Error {
  if (err instanceof S3Error) return err;
  if (err instanceof StorageError) return new S3Error(err.code, err.message);
  return new S3Error('InternalError', 'We encountered an internal error. Please try again.');
}
