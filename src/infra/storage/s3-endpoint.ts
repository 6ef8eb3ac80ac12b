// The embedded S3-compatible endpoint: a plain node:http request handler (path-style only) in
// front of a LocalDiskObjectStore. For every request it
//   1. authenticates the SigV4 signature (header or presigned query),
//   2. routes method + sub-resource to an operation,
//   3. authorises it against the credential's scope (temporary credentials: one bucket, one
//      key prefix to read and write, maybe prefixes only to read; the root credential: everything),
//   4. for temporary credentials, checks that they were not revoked nor, for a write, closed to
//      writes (revoked-credentials.ts), and that the prefix's owner still exists and, for a
//      write, still takes writes (prefix-gate.ts),
//   5. checks an upload's declared size against the limits (upload-limits.ts),
//   6. runs it, streaming bodies, and answers errors in S3's XML format.
// With `sts`, a form POST to `/` signed for the "sts" service is STS AssumeRole (storage-sts.ts).
// Secrets, signatures and session tokens are never logged (nor the query string that holds them).
// Past 350 lines: the six steps above share one request's state; each check itself lives in its own module.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { CredentialResolver, CredentialScope } from './embedded-credentials.ts';
import { assertValidKey } from './key-layout.ts';
import type { LocalDiskObjectStore } from './local-disk-store.ts';
import { S3Error, toS3Error } from './s3-errors.ts';
import { ACL_TAKING_OPERATIONS, refuseAclHeaders } from './acl-headers.ts';
import * as ops from './s3-operations.ts';
import { bodyStillAwaited, discardRemainingBody, header, markContinuePending, parseTarget, queryValue, type RequestTarget } from './s3-request.ts';
import { errorXml } from './s3-xml.ts';
import { verifySigV4, type VerifiedRequest } from './sigv4-verifier.ts';
import { PrefixGate, type PrefixLiveness } from './prefix-gate.ts';
import type { RevokedCredentials } from './revoked-credentials.ts';
import { UploadLimits, declaredBodySize, type Admission } from './upload-limits.ts';
import { OpenUploadsCap } from './open-uploads-cap.ts';
import { handleCors, type AllowedOrigins } from './s3-cors.ts';
import { handleAssumeRole, isStsRequest, type StsOptions } from './storage-sts.ts';

/** The part of a pino logger the endpoint uses. */
export type S3Logger = Pick<Logger, 'debug' | 'warn' | 'error'>;

export interface S3EndpointOptions {
  store: LocalDiskObjectStore;
  /** Resolves access key id + session token (EmbeddedCredentialIssuer.resolve). */
  resolveCredential: CredentialResolver;
  /** A pino logger (or a Fastify one); requests are logged at debug, failures at warn/error. */
  logger: S3Logger;
  /** Region reported by GetBucketLocation/HeadBucket (signatures for any region are accepted). */
  region?: string;
  /** Largest accepted difference between a request's x-amz-date and our clock (default 15 min). */
  maxClockSkewMs?: number;
  /** Clock, for tests. */
  now?: () => number;
  /**
   * Whether the owner of a temporary credential's prefix still exists; asked on every request
   * with temporary credentials (positive answers reused for `prefixCacheMs`, default 5 s). Without
   * it, credentials work until they expire.
   */
  isPrefixLive?: PrefixLiveness;
  prefixCacheMs?: number;
  /** Single temporary credentials revoked or closed to writes before they expire (revoked-credentials.ts); none: no check. */
  revokedCredentials?: RevokedCredentials;
  /** Largest PutObject / UploadPart body, bytes (default 5 GiB, as S3). */
  maxUploadSize?: number;
  /** Bytes allowed under one temporary credential's prefix (default: no quota). */
  prefixQuotaBytes?: number;
  /** Multipart uploads in progress allowed under one temporary credential's prefix (default: no cap). */
  maxOpenUploadsPerPrefix?: number;
  /** Web origins allowed to call the endpoint from a browser (s3-cors.ts); none: no CORS. */
  corsOrigins?: AllowedOrigins;
  /** STS AssumeRole for the root credential (storage-sts.ts); the `storage` command turns it on. */
  sts?: Omit<StsOptions, 'now' | 'maxClockSkewMs'>;
}

export interface S3Endpoint {
  /** The request handler; mount it on any node:http server. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * Handler for the server's 'checkContinue' event: the "100 Continue" is then only sent once
   * the request is authenticated, so rejected uploads are not transferred at all.
   */
  checkContinueHandler: (req: IncomingMessage, res: ServerResponse) => void;
}

type Access =
  | { kind: 'service' }
  | { kind: 'bucket' }
  | { kind: 'object'; key: string }
  | { kind: 'list' }
  /** Checked per key inside the operation (DeleteObjects). */
  | { kind: 'per-key' }
  | { kind: 'root-only' };

interface Route {
  name: string;
  access: Access;
  run: (ctx: ops.S3Context) => Promise<void> | void;
}

// Bucket and object sub-resources we do not implement: answer NotImplemented rather than
// misreading them as a listing or a plain GET/PUT.
const UNSUPPORTED_SUBRESOURCES = [
  'acl', 'tagging', 'retention', 'legal-hold', 'torrent', 'restore', 'select', 'attributes', 'versioning', 'policy',
  'policyStatus', 'cors', 'lifecycle', 'encryption', 'website', 'logging', 'notification', 'replication',
  'ownershipControls', 'publicAccessBlock', 'accelerate', 'requestPayment', 'object-lock', 'analytics', 'metrics',
  'inventory', 'intelligent-tiering', 'versions', 'uploads', 'session',
];

function notImplemented(name: string): Route {
  return {
    name,
    access: { kind: 'bucket' },
    run: () => {
      throw new S3Error('NotImplemented', 'A header or query you provided requested a function that is not implemented.');
    },
  };
}

function has(target: RequestTarget, name: string): boolean {
  return target.query[name] !== undefined;
}

function route(method: string, target: RequestTarget): Route {
  const unsupported = UNSUPPORTED_SUBRESOURCES.find((name) => has(target, name));
  if (target.bucket === undefined) {
    if (method === 'GET') return { name: 'ListBuckets', access: { kind: 'service' }, run: () => {} };
    throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }
  const key = target.key;
  if (key === undefined) {
    if (method === 'HEAD') return { name: 'HeadBucket', access: { kind: 'bucket' }, run: ops.headBucket };
    if (method === 'GET' && has(target, 'location')) return { name: 'GetBucketLocation', access: { kind: 'bucket' }, run: ops.getBucketLocation };
    if (unsupported && !(method === 'POST' && has(target, 'delete'))) return notImplemented(`bucket?${unsupported}`);
    if (method === 'GET') {
      const v2 = queryValue(target.query, 'list-type') === '2';
      return { name: v2 ? 'ListObjectsV2' : 'ListObjects', access: { kind: 'list' }, run: (ctx) => ops.listObjects(ctx, v2 ? 2 : 1) };
    }
    if (method === 'POST' && has(target, 'delete')) return { name: 'DeleteObjects', access: { kind: 'per-key' }, run: ops.deleteObjects };
    // CreateBucket: for a configured bucket, what S3 answers its owner (tools that create their
    // bucket first go on); any other name is refused as not supported (it used to get NoSuchBucket).
    if (method === 'PUT') return { name: 'CreateBucket', access: { kind: 'root-only' }, run: () => {} };
    throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }

  const access: Access = { kind: 'object', key };
  const objectRoute = (name: string, run: (ctx: ops.ObjectContext) => Promise<void>): Route => ({
    name,
    access,
    run: (ctx) => run({ ...ctx, key }),
  });
  const uploadId = has(target, 'uploadId');
  if (unsupported && !(method === 'POST' && unsupported === 'uploads')) return notImplemented(`object?${unsupported}`);
  switch (method) {
    case 'GET':
      return uploadId ? objectRoute('ListParts', ops.listParts) : objectRoute('GetObject', (ctx) => ops.getObject(ctx, false));
    case 'HEAD':
      return objectRoute('HeadObject', (ctx) => ops.getObject(ctx, true));
    case 'PUT':
      return uploadId ? objectRoute('UploadPart', ops.uploadPart) : objectRoute('PutObject', ops.putObject);
    case 'POST':
      if (has(target, 'uploads')) return objectRoute('CreateMultipartUpload', ops.createMultipartUpload);
      if (uploadId) return objectRoute('CompleteMultipartUpload', ops.completeMultipartUpload);
      break;
    case 'DELETE':
      return uploadId ? objectRoute('AbortMultipartUpload', ops.abortMultipartUpload) : objectRoute('DeleteObject', ops.deleteObject);
  }
  throw new S3Error('MethodNotAllowed', 'The specified method is not allowed against this resource.');
}

const FREES_SPACE = new Set(['DeleteObject', 'DeleteObjects', 'AbortMultipartUpload']);
const CLOSES_UPLOAD = new Set(['CompleteMultipartUpload', 'AbortMultipartUpload']);

/** CreateBucket (root credential only): the buckets are the configured ones, none is made here. */
function createBucket(store: LocalDiskObjectStore, bucket: string): never {
  if (store.hasBucket(bucket)) throw new S3Error('BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded and you already own it.');
  throw new S3Error('NotImplemented', `Creating buckets is not supported: this endpoint serves the buckets it is configured with (${store.bucketNames().join(', ')}); set STORAGE_BUCKET to choose it.`);
}

function accessDenied(): S3Error {
  return new S3Error('AccessDenied', 'Access Denied');
}

/** Operations on one object that only read it: allowed under a read-only prefix too. */
const READS = new Set(['GetObject', 'HeadObject']);
/** Operations that change what is under a prefix: refused once its owner closed it (prefix-gate.ts). */
const WRITES = new Set(['PutObject', 'UploadPart', 'CreateMultipartUpload', 'CompleteMultipartUpload', 'DeleteObject', 'DeleteObjects']);

/**
 * Whether the credential may touch `key` of `bucket`: write anywhere under its prefix (unless the
 * credential is read-only: then it reads there too), or just read under its read-only prefixes.
 */
function keyAllowed(scope: CredentialScope, bucket: string, key: string, read = false): boolean {
  if (scope.kind === 'root') return true;
  if (scope.bucket !== bucket) return false;
  if (key.startsWith(scope.prefix)) return read || scope.writable;
  return read && scope.readOnlyPrefixes.some((p) => key.startsWith(p));
}

function authorize(scope: CredentialScope, access: Access, target: RequestTarget, operation: string): void {
  if (scope.kind === 'root') return;
  if (access.kind === 'root-only') throw accessDenied();
  if (access.kind === 'service') return; // ListBuckets shows only the credential's own bucket
  // Checked before the bucket exists: other buckets are not revealed.
  if (target.bucket !== scope.bucket) throw accessDenied();
  if (access.kind === 'object' && !keyAllowed(scope, scope.bucket, access.key, READS.has(operation))) throw accessDenied();
  if (access.kind === 'list' && !keyAllowed(scope, scope.bucket, queryValue(target.query, 'prefix') ?? '', true)) throw accessDenied();
}

export function createS3Endpoint(options: S3EndpointOptions): S3Endpoint {
  const { store, logger } = options;
  const region = options.region ?? 'us-east-1';
  const maxClockSkewMs = options.maxClockSkewMs ?? 15 * 60 * 1000;
  const now = options.now ?? Date.now;
  const startedAt = new Date(now());
  const gate = new PrefixGate({ isPrefixLive: options.isPrefixLive, cacheMs: options.prefixCacheMs, now });
  const limits = new UploadLimits({ maxUploadSize: options.maxUploadSize, prefixQuotaBytes: options.prefixQuotaBytes, now });
  const openUploads = new OpenUploadsCap({ maxPerPrefix: options.maxOpenUploadsPerPrefix, now });
  // Credentials of a prefix deleted through this store stop at once, not after the cache delay.
  store.onPrefixDeleted((bucket, prefix) => {
    gate.forget(bucket, prefix);
    openUploads.forget(bucket, prefix);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    res.setHeader('x-amz-request-id', requestId);
    res.setHeader('x-amz-id-2', randomBytes(24).toString('base64'));
    res.setHeader('Server', 'OpenInspectionS3');
    if (handleCors(req, res, options.corsOrigins)) return; // a preflight: unsigned, answered here
    const method = (req.method ?? 'GET').toUpperCase();
    let operation = 'Unknown';
    let resource = '/';
    let auth: VerifiedRequest | undefined;
    let admission: Admission | undefined;
    let errorCode: string | undefined;
    try {
      if (options.sts && isStsRequest(method, req.url ?? '/', req)) {
        operation = 'AssumeRole';
        await handleAssumeRole(req, res, { ...options.sts, now, maxClockSkewMs });
        return;
      }
      const target = parseTarget(req.url ?? '/');
      resource = '/' + [target.bucket, target.key].filter((p) => p !== undefined).join('/');
      auth = await verifySigV4(
        { method, rawPath: target.rawPath, query: target.query, headers: req.headers, rawHeaders: req.rawHeaders },
        { resolveCredential: options.resolveCredential, now: now(), maxClockSkewMs },
      );
      const chosen = route(method, target);
      operation = chosen.name;
      const scope = auth.credential.scope;
      authorize(scope, chosen.access, target, chosen.name);
      if (ACL_TAKING_OPERATIONS.has(operation)) refuseAclHeaders(req.headers); // every object is private (acl-headers.ts)
      if (chosen.access.kind === 'service') {
        ops.listBuckets(res, store, scope, startedAt);
        return;
      }
      const bucket = target.bucket as string;
      if (operation === 'CreateBucket') createBucket(store, bucket);
      if (!store.hasBucket(bucket)) throw new S3Error('NoSuchBucket', 'The specified bucket does not exist');
      if (chosen.access.kind === 'object') assertValidKey(chosen.access.key);
      if (scope.kind === 'prefix') {
        const write = WRITES.has(operation);
        await options.revokedCredentials?.assertAllowed(auth.credential.accessKeyId, write);
        await gate.assertLive(scope.bucket, scope.prefix, false, write);
      }
      const upload = operation === 'PutObject' || operation === 'UploadPart';
      const isCopy = header(req, 'x-amz-copy-source') !== undefined;
      const quotaPrefix = scope.kind === 'prefix' ? scope.prefix : undefined;
      admission = upload ? await limits.admit(store, bucket, quotaPrefix, isCopy ? undefined : declaredBodySize(req), isCopy) : undefined;
      const written = admission;
      await chosen.run({
        req,
        res,
        target,
        bucket,
        auth,
        store,
        region,
        assertKeyAllowed(key: string, otherBucket?: string, read?: boolean) {
          if (!keyAllowed(scope, otherBucket ?? bucket, key, read)) throw accessDenied();
        },
        maxUploadSize: limits.maxUploadSize,
        async committed(bytes, undo) {
          written?.wrote(bytes);
          if (scope.kind !== 'prefix') return;
          try {
            await gate.assertLive(scope.bucket, scope.prefix, true);
          } catch (err) {
            await undo().catch((undoErr) => logger.error({ err: undoErr, operation }, 's3: could not remove a write whose owner was deleted'));
            throw err;
          }
        },
        openUpload: (create) => (quotaPrefix !== undefined ? openUploads.open(store, bucket, quotaPrefix, create) : create()),
      });
      if (quotaPrefix !== undefined && FREES_SPACE.has(operation)) limits.forget(bucket, quotaPrefix);
      if (quotaPrefix !== undefined && CLOSES_UPLOAD.has(operation)) openUploads.closed(bucket, quotaPrefix, queryValue(target.query, 'uploadId') ?? '');
    } catch (caught) {
      // A client that hangs up mid-upload is not a server fault.
      const clientGone = req.destroyed && !req.complete;
      const err = clientGone ? new S3Error('IncompleteBody', 'The request body terminated unexpectedly') : caught;
      sendError(req, res, method, err, resource, requestId);
      // A 501 is the client asking for what this endpoint does not do: the warn line below says
      // so; no stack trace at error level.
      const { status, code } = toS3Error(err);
      errorCode = code;
      if (status >= 500 && status !== 501) logger.error({ err, requestId, operation }, 's3 request failed');
    } finally {
      admission?.release();
      if (!req.complete) discardRemainingBody(req);
      const log = {
        requestId,
        operation,
        method,
        resource,
        status: res.statusCode,
        code: errorCode,
        accessKeyId: auth?.credential.accessKeyId,
        ms: Math.round(performance.now() - started),
      };
      if (res.statusCode >= 500) logger.warn(log, 's3 request');
      else logger.debug(log, 's3 request');
    }
  }

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err) => {
      logger.error({ err }, 's3 handler crashed');
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  };
  const checkContinueHandler = (req: IncomingMessage, res: ServerResponse): void => {
    markContinuePending(req, () => res.writeContinue());
    handler(req, res);
  };
  return { handler, checkContinueHandler };
}

function sendError(req: IncomingMessage, res: ServerResponse, method: string, err: unknown, resource: string, requestId: string): void {
  const error = toS3Error(err);
  if (res.headersSent) {
    // Too late for an error document (a download failed half-way): cut the connection so the
    // client sees a short body rather than a silently truncated object.
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  // The client waits for "100 Continue" and will not send its body: the connection cannot be
  // reused. (A body already in flight is drained instead; see discardRemainingBody.)
  if (!req.complete && bodyStillAwaited(req)) res.setHeader('Connection', 'close');
  if (method === 'HEAD' || error.status === 304) {
    res.writeHead(error.status, { 'Content-Length': 0 });
    res.end();
    return;
  }
  const body = Buffer.from(errorXml(error.code, error.message, resource, requestId), 'utf8');
  res.writeHead(error.status, { 'Content-Type': 'application/xml', 'Content-Length': body.length });
  res.end(body);
}
