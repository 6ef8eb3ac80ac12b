// Reading an incoming S3 request: where it points (path-style bucket and key), its query, and
// its body as a verified stream (aws-chunked decoded, hashes and checksums checked on the way).
import type { IncomingMessage } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { AwsChunkedDecoder } from './aws-chunked.ts';
import { BodyVerifier, type ExpectedChecksum } from './body-verifier.ts';
import { CHECKSUM_ALGORITHMS, isChecksumAlgorithm } from './checksums.ts';
import { S3Error } from './s3-errors.ts';
import type { StoredHttpHeaders } from './local-disk-store.ts';
import { UNSIGNED_PAYLOAD, type QueryMap, type VerifiedRequest } from './sigv4-verifier.ts';

export interface RequestTarget {
  rawPath: string;
  query: QueryMap;
  /** Undefined for service-level requests ("/"). */
  bucket?: string;
  /** Undefined for bucket-level requests ("/bucket" or "/bucket/"). */
  key?: string;
}

function decodeComponent(value: string, plusIsSpace: boolean): string {
  try {
    return decodeURIComponent(plusIsSpace ? value.replace(/\+/g, ' ') : value);
  } catch {
    throw new S3Error('InvalidURI', "Couldn't parse the specified URI.");
  }
}

/** Splits req.url into the raw path (as signed) and the decoded query, bucket and key. */
export function parseTarget(url: string): RequestTarget {
  let target = url;
  // Absolute-form request targets (sent through proxies): keep only path and query.
  if (/^https?:\/\//i.test(target)) target = target.replace(/^https?:\/\/[^/?#]*/i, '') || '/';
  const hash = target.indexOf('#');
  if (hash >= 0) target = target.slice(0, hash);
  const qmark = target.indexOf('?');
  const rawPath = qmark >= 0 ? target.slice(0, qmark) : target;
  const rawQuery = qmark >= 0 ? target.slice(qmark + 1) : '';
  if (!rawPath.startsWith('/')) throw new S3Error('InvalidURI', "Couldn't parse the specified URI.");

  const query: QueryMap = {};
  for (const pair of rawQuery.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    // Query strings follow form encoding ("+" is a space), as S3 and MinIO read them.
    const name = decodeComponent(eq >= 0 ? pair.slice(0, eq) : pair, true);
    const value = eq >= 0 ? decodeComponent(pair.slice(eq + 1), true) : '';
    const existing = query[name];
    if (existing === undefined) query[name] = value;
    else query[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }

  const path = rawPath.slice(1);
  if (path === '') return { rawPath, query };
  const slash = path.indexOf('/');
  const bucket = decodeComponent(slash >= 0 ? path.slice(0, slash) : path, false);
  const rawKey = slash >= 0 ? path.slice(slash + 1) : '';
  return { rawPath, query, bucket, key: rawKey === '' ? undefined : decodeComponent(rawKey, false) };
}

export function queryValue(query: QueryMap, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? value[0] : value;
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** x-amz-meta-* headers, without the prefix, as S3 stores user metadata. */
export function userMetadata(req: IncomingMessage): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith('x-amz-meta-') && value !== undefined) metadata[name.slice(11)] = Array.isArray(value) ? value.join(',') : value;
  }
  return metadata;
}

export function storedHttpHeaders(req: IncomingMessage): StoredHttpHeaders {
  // "aws-chunked" describes the transfer, not the object: S3 drops it from Content-Encoding.
  const encoding = header(req, 'content-encoding')
    ?.split(',')
    .map((e) => e.trim())
    .filter((e) => e && e.toLowerCase() !== 'aws-chunked')
    .join(', ');
  return {
    cacheControl: header(req, 'cache-control'),
    contentDisposition: header(req, 'content-disposition'),
    contentEncoding: encoding || undefined,
    contentLanguage: header(req, 'content-language'),
    expires: header(req, 'expires'),
  };
}

const STREAMING_MODES: Record<string, { signed: boolean; trailers: boolean }> = {
  'STREAMING-UNSIGNED-PAYLOAD-TRAILER': { signed: false, trailers: true },
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD': { signed: true, trailers: false },
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER': { signed: true, trailers: true },
};

export interface VerifiedBody {
  stream: Readable;
  /** Checksums checked against the client's declaration (algorithm → base64), after the end. */
  verifiedChecksums: () => Map<string, string>;
  /** The checksum algorithms the client declared (header or trailer), known up front. */
  checksumAlgorithms: string[];
}

/**
 * The request body as a stream that errors (with the S3 error to answer) if it does not match
 * what the client signed or declared. Errors from earlier stages are forwarded downstream, and
 * the request itself is never destroyed here, so an error response can still be sent.
 */
export function openVerifiedBody(req: IncomingMessage, auth: VerifiedRequest, options: { maxBytes?: number } = {}): VerifiedBody {
  const payloadHash = auth.payloadHash;
  const stages: Transform[] = [];
  let decoder: AwsChunkedDecoder | undefined;

  if (payloadHash.startsWith('STREAMING-')) {
    const mode = STREAMING_MODES[payloadHash];
    if (!mode) throw new S3Error('NotImplemented', `x-amz-content-sha256 "${payloadHash}" is not supported by this endpoint.`);
    const decodedHeader = header(req, 'x-amz-decoded-content-length');
    const decodedLength = decodedHeader === undefined ? undefined : Number(decodedHeader);
    if (decodedLength !== undefined && !(Number.isSafeInteger(decodedLength) && decodedLength >= 0)) {
      throw new S3Error('InvalidArgument', 'x-amz-decoded-content-length is not a valid length');
    }
    decoder = new AwsChunkedDecoder({ signing: mode.signed ? auth.chunkSigning : undefined, trailers: mode.trailers, decodedLength });
    stages.push(decoder);
  } else if (payloadHash !== UNSIGNED_PAYLOAD && !/^[0-9a-fA-F]{64}$/.test(payloadHash)) {
    throw new S3Error('InvalidArgument', 'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-... or a hex SHA-256 of the body');
  }

  const checksums: ExpectedChecksum[] = [];
  const trailerNames = (header(req, 'x-amz-trailer') ?? '')
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  for (const name of trailerNames) {
    const algorithm = name.replace(/^x-amz-checksum-/, '');
    if (name.startsWith('x-amz-checksum-') && isChecksumAlgorithm(algorithm)) {
      if (!decoder) throw new S3Error('InvalidRequest', 'x-amz-trailer requires an aws-chunked body with trailers');
      const trailers = decoder.trailers;
      checksums.push({ algorithm, expected: () => trailers.get(name) });
    }
  }
  for (const algorithm of CHECKSUM_ALGORITHMS) {
    const value = header(req, `x-amz-checksum-${algorithm}`);
    if (value !== undefined && !trailerNames.includes(`x-amz-checksum-${algorithm}`)) checksums.push({ algorithm, expected: () => value.trim() });
  }
  const contentMd5 = header(req, 'content-md5');
  if (contentMd5 !== undefined && Buffer.from(contentMd5, 'base64').length !== 16) {
    throw new S3Error('InvalidDigest', 'The Content-MD5 you specified was invalid.');
  }
  const verifier = new BodyVerifier({
    sha256Hex: /^[0-9a-fA-F]{64}$/.test(payloadHash) ? payloadHash : undefined,
    contentMd5Base64: contentMd5,
    checksums,
    // A declared length above the limit was refused up front (upload-limits.ts); this catches
    // bodies of undeclared length (Transfer-Encoding: chunked).
    maxBytes: options.maxBytes,
  });
  stages.push(verifier);

  // The client may wait for "100 Continue" before sending the body: ask for it only now that
  // the request is authenticated and authorised.
  continueIfExpected(req);
  let source: Readable = req;
  for (const stage of stages) {
    source.pipe(stage);
    source.once('error', (err) => stage.destroy(err));
    source = stage;
  }
  // A small body can be fully read, and fail verification, before the consumer has attached
  // its pipeline; the consumer still sees the error (the stream stays errored), this listener
  // only keeps it from being an uncaught 'error' event meanwhile.
  source.on('error', () => {});
  return { stream: source, verifiedChecksums: () => verifier.verified, checksumAlgorithms: checksums.map((c) => c.algorithm) };
}

const CONTINUE_PENDING = Symbol('s3.continuePending');
type ContinueCapable = IncomingMessage & { [CONTINUE_PENDING]?: () => void };

/** Marks a request that came through 'checkContinue': the body is only sent once we ask. */
export function markContinuePending(req: IncomingMessage, writeContinue: () => void): void {
  (req as ContinueCapable)[CONTINUE_PENDING] = writeContinue;
}

/** True while the client still waits for "100 Continue" (its body was never asked for). */
export function bodyStillAwaited(req: IncomingMessage): boolean {
  return (req as ContinueCapable)[CONTINUE_PENDING] !== undefined;
}

function continueIfExpected(req: IncomingMessage): void {
  const pending = (req as ContinueCapable)[CONTINUE_PENDING];
  if (pending) {
    (req as ContinueCapable)[CONTINUE_PENDING] = undefined;
    pending();
  }
}

/** Small control bodies (XML), verified like any body and capped in size. */
export async function readSmallBody(req: IncomingMessage, auth: VerifiedRequest, limit: number): Promise<Buffer> {
  const { stream } = openVerifiedBody(req, auth);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      stream.destroy();
      throw new S3Error('MaxMessageLengthExceeded', 'Your request was too big.', 400);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * After an early answer, stop feeding the pipeline and let the client finish sending (up to a
 * cap) so that it reads our answer instead of a reset connection and the connection stays
 * usable; beyond the cap the connection is dropped. A body never asked for ("100 Continue" not
 * sent) is not coming: that connection is closed after the answer instead.
 */
export function discardRemainingBody(req: IncomingMessage, maxBytes = 64 * 1024 * 1024): void {
  req.unpipe();
  if (req.complete || req.destroyed || bodyStillAwaited(req)) return;
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > maxBytes) req.destroy();
  });
  req.on('error', () => {});
  req.resume();
}
