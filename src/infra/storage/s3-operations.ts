// The S3 operations the embedded endpoint serves. Each one gets an authenticated and authorised
// request context (see s3-endpoint.ts), does its work through the LocalDiskObjectStore and
// writes the response. Object bodies are streamed both ways. (Past 350 lines: one function per
// operation of the table in README.md, kept together so that they read alike.)
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { decodeContinuationToken, type LocalDiskObjectStore, type PutObjectOptions, type StoredObjectInfo } from './local-disk-store.ts';
import type { ByteRange } from './object-store.ts';
import { S3Error, entityTooLarge, toS3Error } from './s3-errors.ts';
import { header, openVerifiedBody, queryValue, readSmallBody, storedHttpHeaders, userMetadata, type RequestTarget } from './s3-request.ts';
import { S3_XMLNS, escapeXml, parseCompleteMultipartUpload, parseDeleteObjects, xmlDocument, type XmlNode } from './s3-xml.ts';
import { encodeKeyForPath } from './sigv4-common.ts';
import type { VerifiedRequest } from './sigv4-verifier.ts';
import type { CredentialScope } from './embedded-credentials.ts';
import { BUCKET_OWNER_ID } from './acl-headers.ts';

export interface S3Context {
  req: IncomingMessage;
  res: ServerResponse;
  target: RequestTarget;
  bucket: string;
  auth: VerifiedRequest;
  store: LocalDiskObjectStore;
  region: string;
  /** Throws AccessDenied unless the credential may write this key (`read`: may read it). */
  assertKeyAllowed(key: string, bucket?: string, read?: boolean): void;
  /** Largest PutObject / UploadPart / CopyObject size (EntityTooLarge beyond). */
  maxUploadSize: number;
  /**
   * To call once a write is in place, before answering: counts `bytes` against the credential
   * prefix's quota and checks again, uncached, that the prefix's owner still exists. If it was
   * deleted while the body streamed in, `undo` removes what was written and AccessDenied is
   * thrown, so nothing outlives the deletion (prefix-gate.ts).
   */
  committed(bytes: number, undo: () => Promise<unknown>): Promise<void>;
  /** Runs the creation of a multipart upload (returning its id) within the prefix's cap of open uploads (open-uploads-cap.ts). */
  openUpload(create: () => Promise<string>): Promise<string>;
}

export type ObjectContext = S3Context & { key: string };

const MAX_XML_BODY = 4 * 1024 * 1024;

// ---- responses --------------------------------------------------------------------------------

export function sendXml(res: ServerResponse, status: number, xml: string): void {
  const body = Buffer.from(xml, 'utf8');
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': body.length });
  res.end(body);
}

export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'Content-Length': 0 });
  res.end();
}

function isoDate(date: Date): string {
  return date.toISOString();
}

function putOptions(req: IncomingMessage): PutObjectOptions {
  return { contentType: header(req, 'content-type'), metadata: userMetadata(req), httpHeaders: storedHttpHeaders(req) };
}

function setChecksumHeaders(res: ServerResponse, checksums: Map<string, string>): void {
  for (const [algorithm, value] of checksums) res.setHeader(`x-amz-checksum-${algorithm}`, value);
}

// ---- object reads ------------------------------------------------------------------------------

/** Resolves a Range header against the object size (RFC 9110: a malformed one is ignored). */
export function resolveRange(value: string | undefined, size: number): ByteRange | undefined {
  if (!value) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(value.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  const unsatisfiable = () => new S3Error('InvalidRange', 'The requested range is not satisfiable', 416, { 'Content-Range': `bytes */${size}` });
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) throw unsatisfiable();
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? Infinity : Number(m[2]);
  if (end < start) return undefined; // "bytes=5-3" is malformed, not unsatisfiable
  if (start >= size) throw unsatisfiable();
  return { start, end: Math.min(end, size - 1) };
}

function etagMatches(list: string, etag: string): boolean {
  const bare = etag.replace(/"/g, '');
  return list.split(',').some((item) => {
    const candidate = item.trim().replace(/^W\//, '').replace(/"/g, '');
    return candidate === '*' || candidate === bare;
  });
}

/** Conditional GET/HEAD (If-Match, If-None-Match, If-(Un)Modified-Since) as S3 evaluates them. */
function checkPreconditions(req: IncomingMessage, info: StoredObjectInfo): void {
  const modified = Math.floor(info.lastModified.getTime() / 1000) * 1000;
  const ifMatch = header(req, 'if-match');
  const ifUnmodifiedSince = Date.parse(header(req, 'if-unmodified-since') ?? '');
  if (ifMatch !== undefined ? !etagMatches(ifMatch, info.etag) : !Number.isNaN(ifUnmodifiedSince) && modified > ifUnmodifiedSince) {
    throw new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
  }
  const ifNoneMatch = header(req, 'if-none-match');
  const ifModifiedSince = Date.parse(header(req, 'if-modified-since') ?? '');
  if (ifNoneMatch !== undefined ? etagMatches(ifNoneMatch, info.etag) : !Number.isNaN(ifModifiedSince) && modified <= ifModifiedSince) {
    throw new S3Error('NotModified', 'Not Modified', 304, { ETag: info.etag, 'Last-Modified': info.lastModified.toUTCString() });
  }
}

const RESPONSE_OVERRIDES: Record<string, string> = {
  'response-content-type': 'Content-Type',
  'response-content-language': 'Content-Language',
  'response-expires': 'Expires',
  'response-cache-control': 'Cache-Control',
  'response-content-disposition': 'Content-Disposition',
  'response-content-encoding': 'Content-Encoding',
};

// What node refuses in a header value (it would throw while writing the response).
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Stored values that cannot travel as a header as they are (non-Latin-1 metadata set through
 * the store API) are sent RFC 2047-encoded, as S3 does for non-ASCII user metadata.
 */
function headerSafe(value: string): string {
  return INVALID_HEADER_CHAR.test(value) ? `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=` : value;
}

function objectHeaders(ctx: ObjectContext, info: StoredObjectInfo, range: ByteRange | undefined): Record<string, string | number> {
  const headers: Record<string, string | number> = {
    'Content-Type': info.contentType ?? 'binary/octet-stream',
    'Content-Length': range ? range.end - range.start + 1 : info.size,
    ETag: info.etag,
    'Last-Modified': info.lastModified.toUTCString(),
    'Accept-Ranges': 'bytes',
  };
  if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${info.size}`;
  const stored = info.httpHeaders;
  const storedHeaders: Array<[string, string | undefined]> = [
    ['Cache-Control', stored.cacheControl],
    ['Content-Disposition', stored.contentDisposition],
    ['Content-Encoding', stored.contentEncoding],
    ['Content-Language', stored.contentLanguage],
    ['Expires', stored.expires],
    ...Object.entries(info.metadata).map(([name, value]): [string, string] => [`x-amz-meta-${name}`, value]),
  ];
  for (const [name, value] of storedHeaders) if (value) headers[name] = headerSafe(value);
  for (const [param, name] of Object.entries(RESPONSE_OVERRIDES)) {
    const value = queryValue(ctx.target.query, param);
    if (value === undefined) continue;
    if (INVALID_HEADER_CHAR.test(value)) throw new S3Error('InvalidArgument', `${param} is not a valid header value`);
    headers[name] = value;
  }
  // SDKs validate this against the bytes when they asked for it (x-amz-checksum-mode); it
  // describes the whole object, so never on a partial response.
  if (!range && info.checksumCrc32 && header(ctx.req, 'x-amz-checksum-mode')?.toUpperCase() === 'ENABLED') {
    headers['x-amz-checksum-crc32'] = info.checksumCrc32;
    headers['x-amz-checksum-type'] = 'FULL_OBJECT';
  }
  if (info.partsCount && queryValue(ctx.target.query, 'partNumber')) headers['x-amz-mp-parts-count'] = info.partsCount;
  return headers;
}

export async function getObject(ctx: ObjectContext, headOnly: boolean): Promise<void> {
  const { req, res } = ctx;
  const result = await ctx.store.getObjectWith(ctx.bucket, ctx.key, (info) => {
    checkPreconditions(req, info);
    return resolveRange(header(req, 'range'), info.size);
  });
  try {
    res.writeHead(result.range ? 206 : 200, objectHeaders(ctx, result.info, result.range));
  } catch (err) {
    result.body.destroy(); // closes the file
    throw err;
  }
  if (headOnly) {
    result.body.destroy();
    res.end();
    return;
  }
  try {
    await pipeline(result.body, res);
  } catch {
    // The client went away mid-download; pipeline has closed the file and the socket.
  }
}

// ---- object writes -----------------------------------------------------------------------------

export async function putObject(ctx: ObjectContext): Promise<void> {
  if (header(ctx.req, 'x-amz-copy-source') !== undefined) return copyObject(ctx);
  const body = openVerifiedBody(ctx.req, ctx.auth, { maxBytes: ctx.maxUploadSize });
  const info = await ctx.store.putObject(ctx.bucket, ctx.key, body.stream, { ...putOptions(ctx.req), verifiedCrc32: verifiedCrc32Of(body) });
  await ctx.committed(info.size, () => ctx.store.deleteObject(ctx.bucket, ctx.key));
  ctx.res.setHeader('ETag', info.etag);
  setChecksumHeaders(ctx.res, body.verifiedChecksums());
  sendEmpty(ctx.res, 200);
}

function parseCopySource(value: string): { bucket: string; key: string } {
  let source = value.split('?')[0];
  try {
    source = decodeURIComponent(source);
  } catch {
    throw new S3Error('InvalidArgument', 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey');
  }
  source = source.replace(/^\//, '');
  const slash = source.indexOf('/');
  if (slash <= 0 || slash === source.length - 1) throw new S3Error('InvalidArgument', 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey');
  return { bucket: source.slice(0, slash), key: source.slice(slash + 1) };
}

async function copyObject(ctx: ObjectContext): Promise<void> {
  const source = parseCopySource(header(ctx.req, 'x-amz-copy-source') as string);
  ctx.assertKeyAllowed(source.key, source.bucket, true); // the source is only read
  const replace = header(ctx.req, 'x-amz-metadata-directive')?.toUpperCase() === 'REPLACE';
  if (!replace && source.bucket === ctx.bucket && source.key === ctx.key) {
    throw new S3Error(
      'InvalidRequest',
      "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
    );
  }
  const src = await ctx.store.getObject(source.bucket, source.key);
  if (src.info.size > ctx.maxUploadSize) {
    src.body.destroy();
    throw entityTooLarge(ctx.maxUploadSize);
  }
  const options: PutObjectOptions = replace
    ? putOptions(ctx.req)
    : { contentType: src.info.contentType, metadata: src.info.metadata, httpHeaders: src.info.httpHeaders };
  const info = await ctx.store.putObject(ctx.bucket, ctx.key, src.body, options);
  await ctx.committed(info.size, () => ctx.store.deleteObject(ctx.bucket, ctx.key));
  sendXml(ctx.res, 200, xmlDocument('CopyObjectResult', { LastModified: isoDate(info.lastModified), ETag: info.etag }));
}

export async function deleteObject(ctx: ObjectContext): Promise<void> {
  await ctx.store.deleteObject(ctx.bucket, ctx.key);
  sendEmpty(ctx.res, 204);
}

// ---- multipart uploads -----------------------------------------------------------------------

function uploadIdOf(ctx: S3Context): string {
  return queryValue(ctx.target.query, 'uploadId') ?? '';
}

export async function createMultipartUpload(ctx: ObjectContext): Promise<void> {
  const uploadId = await ctx.openUpload(async () => (await ctx.store.createMultipartUpload(ctx.bucket, ctx.key, putOptions(ctx.req))).uploadId);
  await ctx.committed(0, () => ctx.store.abortMultipartUpload(ctx.bucket, ctx.key, uploadId));
  sendXml(ctx.res, 200, xmlDocument('InitiateMultipartUploadResult', { Bucket: ctx.bucket, Key: ctx.key, UploadId: uploadId }));
}

/**
 * Performance (bench/README.md, "Upload"): when the client sent a CRC32 (the AWS SDKs do by
 * default), the verifier has computed and checked it; the store reuses it (PutObject, UploadPart)
 * instead of hashing every byte a second time.
 */
function verifiedCrc32Of(body: ReturnType<typeof openVerifiedBody>): (() => string | undefined) | undefined {
  return body.checksumAlgorithms.includes('crc32') ? () => body.verifiedChecksums().get('crc32') : undefined;
}

export async function uploadPart(ctx: ObjectContext): Promise<void> {
  if (header(ctx.req, 'x-amz-copy-source') !== undefined) throw new S3Error('NotImplemented', 'UploadPartCopy is not supported by this endpoint.');
  const partText = queryValue(ctx.target.query, 'partNumber') ?? '';
  const partNumber = /^\d{1,5}$/.test(partText) ? Number(partText) : NaN;
  // Before the body is asked for ("100 Continue"), as S3 does.
  if (!(partNumber >= 1 && partNumber <= 10_000)) throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
  const body = openVerifiedBody(ctx.req, ctx.auth, { maxBytes: ctx.maxUploadSize });
  const uploadId = uploadIdOf(ctx);
  const part = await ctx.store.uploadPart(ctx.bucket, ctx.key, uploadId, partNumber, body.stream, { verifiedCrc32: verifiedCrc32Of(body) });
  await ctx.committed(part.size, () => ctx.store.abortMultipartUpload(ctx.bucket, ctx.key, uploadId));
  ctx.res.setHeader('ETag', part.etag);
  setChecksumHeaders(ctx.res, body.verifiedChecksums());
  sendEmpty(ctx.res, 200);
}

export async function completeMultipartUpload(ctx: ObjectContext): Promise<void> {
  const xml = (await readSmallBody(ctx.req, ctx.auth, MAX_XML_BODY)).toString('utf8');
  const parts = parseCompleteMultipartUpload(xml);
  const info = await ctx.store.completeMultipartUpload(ctx.bucket, ctx.key, uploadIdOf(ctx), parts);
  await ctx.committed(0, () => ctx.store.deleteObject(ctx.bucket, ctx.key)); // the parts were counted
  const host = header(ctx.req, 'host') ?? 'localhost';
  sendXml(
    ctx.res,
    200,
    xmlDocument('CompleteMultipartUploadResult', {
      Location: `http://${host}/${ctx.bucket}/${encodeKeyForPath(ctx.key)}`,
      Bucket: ctx.bucket,
      Key: ctx.key,
      ETag: info.etag,
    }),
  );
}

export async function abortMultipartUpload(ctx: ObjectContext): Promise<void> {
  await ctx.store.abortMultipartUpload(ctx.bucket, ctx.key, uploadIdOf(ctx));
  sendEmpty(ctx.res, 204);
}

export async function listParts(ctx: ObjectContext): Promise<void> {
  const uploadId = uploadIdOf(ctx);
  const marker = Number(queryValue(ctx.target.query, 'part-number-marker') ?? 0) || 0;
  const maxParts = Math.min(1000, Math.max(0, Number(queryValue(ctx.target.query, 'max-parts') ?? 1000) || 1000));
  const all = (await ctx.store.listParts(ctx.bucket, ctx.key, uploadId)).filter((p) => p.partNumber > marker);
  const page = all.slice(0, maxParts);
  const truncated = all.length > page.length;
  sendXml(
    ctx.res,
    200,
    xmlDocument('ListPartsResult', {
      Bucket: ctx.bucket,
      Key: ctx.key,
      UploadId: uploadId,
      PartNumberMarker: marker,
      NextPartNumberMarker: page.length ? page[page.length - 1].partNumber : marker,
      MaxParts: maxParts,
      IsTruncated: truncated,
      StorageClass: 'STANDARD',
      Part: page.map((p) => ({ PartNumber: p.partNumber, LastModified: isoDate(p.lastModified), ETag: p.etag, Size: p.size })),
    }),
  );
}

// ---- bucket operations ------------------------------------------------------------------------

function listInput(ctx: S3Context): { prefix: string; delimiter?: string; maxKeys: number; encode: (s: string) => string; encodingType?: string } {
  const q = ctx.target.query;
  const maxKeysText = queryValue(q, 'max-keys');
  const maxKeys = maxKeysText === undefined ? 1000 : Number(maxKeysText);
  if (!Number.isInteger(maxKeys) || maxKeys < 0) throw new S3Error('InvalidArgument', 'Provided max-keys not an integer or within integer range');
  const encodingType = queryValue(q, 'encoding-type');
  if (encodingType !== undefined && encodingType !== 'url') throw new S3Error('InvalidArgument', 'Invalid Encoding Method specified in Request');
  return {
    prefix: queryValue(q, 'prefix') ?? '',
    delimiter: queryValue(q, 'delimiter') || undefined,
    maxKeys: Math.min(maxKeys, 1000),
    // With encoding-type=url, keys are percent-encoded (botocore decodes them with unquote_plus,
    // so "+" must be encoded too, which this does).
    encode: encodingType === 'url' ? encodeKeyForPath : (s) => s,
    encodingType,
  };
}

export async function listObjects(ctx: S3Context, version: 1 | 2): Promise<void> {
  const input = listInput(ctx);
  const q = ctx.target.query;
  const token = version === 2 ? queryValue(q, 'continuation-token') : undefined;
  const startAfter = version === 2 ? queryValue(q, 'start-after') : queryValue(q, 'marker');
  const result = await ctx.store.listObjects(ctx.bucket, {
    prefix: input.prefix,
    delimiter: input.delimiter,
    maxKeys: input.maxKeys,
    continuationToken: token || undefined,
    startAfter: startAfter || undefined,
  });
  const enc = input.encode;
  const body: XmlNode = {
    Name: ctx.bucket,
    Prefix: enc(input.prefix),
    Delimiter: input.delimiter === undefined ? undefined : enc(input.delimiter),
    MaxKeys: input.maxKeys,
    EncodingType: input.encodingType,
    IsTruncated: result.isTruncated,
  };
  if (version === 2) {
    body.KeyCount = result.objects.length + result.commonPrefixes.length;
    body.ContinuationToken = token || undefined;
    body.NextContinuationToken = result.nextContinuationToken;
    body.StartAfter = startAfter ? enc(startAfter) : undefined;
  } else {
    body.Marker = enc(startAfter ?? '');
    body.NextMarker = result.nextContinuationToken ? enc(decodeContinuationToken(result.nextContinuationToken)) : undefined;
  }
  body.Contents = result.objects.map((o) => ({ Key: enc(o.key), LastModified: isoDate(o.lastModified), ETag: o.etag, Size: o.size, StorageClass: 'STANDARD' }));
  body.CommonPrefixes = result.commonPrefixes.map((p) => ({ Prefix: enc(p) }));
  sendXml(ctx.res, 200, xmlDocument('ListBucketResult', body));
}

export async function deleteObjects(ctx: S3Context): Promise<void> {
  const xml = (await readSmallBody(ctx.req, ctx.auth, MAX_XML_BODY)).toString('utf8');
  const { quiet, keys } = parseDeleteObjects(xml);
  const deleted: XmlNode[] = [];
  const errors: XmlNode[] = [];
  for (const key of keys) {
    try {
      ctx.assertKeyAllowed(key);
      await ctx.store.deleteObject(ctx.bucket, key);
      if (!quiet) deleted.push({ Key: key });
    } catch (err) {
      const e = toS3Error(err);
      errors.push({ Key: key, Code: e.code, Message: e.message });
    }
  }
  sendXml(ctx.res, 200, xmlDocument('DeleteResult', { Deleted: deleted, Error: errors }));
}

export function headBucket(ctx: S3Context): void {
  ctx.res.setHeader('x-amz-bucket-region', ctx.region);
  sendEmpty(ctx.res, 200);
}

export function getBucketLocation(ctx: S3Context): void {
  // us-east-1 is reported as an empty LocationConstraint, as S3 does.
  const location = ctx.region === 'us-east-1' ? '' : escapeXml(ctx.region);
  sendXml(ctx.res, 200, `<?xml version="1.0" encoding="UTF-8"?>\n<LocationConstraint xmlns="${S3_XMLNS}">${location}</LocationConstraint>`);
}

export function listBuckets(res: ServerResponse, store: LocalDiskObjectStore, scope: CredentialScope, created: Date): void {
  const names = scope.kind === 'root' ? store.bucketNames() : store.bucketNames().filter((b) => b === scope.bucket);
  sendXml(
    res,
    200,
    xmlDocument('ListAllMyBucketsResult', {
      Owner: { ID: BUCKET_OWNER_ID, DisplayName: BUCKET_OWNER_ID },
      Buckets: { Bucket: names.map((name) => ({ Name: name, CreationDate: isoDate(created) })) },
    }),
  );
}
