// Verifies AWS Signature Version 4 on incoming S3 requests, both forms:
//   - the Authorization header ("AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...")
//   - presigned query strings (X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, X-Amz-Expires,
//     X-Amz-SignedHeaders, X-Amz-Signature, X-Amz-Security-Token).
// The expected signature is recomputed with @smithy/signature-v4 (the AWS SDK's own signer and
// canonicalisation helpers) from the request as received: the raw path (S3 does not re-encode
// it), the decoded query (re-encoded canonically) and exactly the headers the client says it
// signed. Comparison is constant-time. The result also carries what aws-chunked bodies need to check chunk signatures.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SignatureV4, getCanonicalHeaders, getCanonicalQuery } from '@smithy/signature-v4';
import type { CredentialResolver, ResolvedCredential } from './embedded-credentials.ts';
import { S3Error } from './s3-errors.ts';
import { Sha256, parseAmzDate, sha256Hex, type SignableRequest } from './sigv4-common.ts';

export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const ALGORITHM = 'AWS4-HMAC-SHA256';
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;

export type QueryMap = Record<string, string | string[]>;

export interface IncomingSignedRequest {
  method: string;
  /** Path exactly as received, still percent-encoded. */
  rawPath: string;
  /** Query parameters, percent-decoded. */
  query: QueryMap;
  headers: IncomingHttpHeaders;
  /** node's req.rawHeaders: [name, value, name, value, ...], to join repeated headers exactly. */
  rawHeaders: string[];
}

/** What chunk and trailer signatures of an aws-chunked body are chained from. */
export interface ChunkSigningContext {
  signingKey: Buffer;
  amzDate: string;
  scope: string;
  seedSignature: string;
}

export interface VerifiedRequest {
  credential: ResolvedCredential;
  presigned: boolean;
  /** x-amz-content-sha256 as sent (UNSIGNED-PAYLOAD for presigned URLs). */
  payloadHash: string;
  chunkSigning: ChunkSigningContext;
}

export interface VerifyOptions {
  resolveCredential: CredentialResolver;
  now: number;
  maxClockSkewMs: number;
  /** The service in the credential scope: 's3' (default), or 'sts' for AssumeRole (storage-sts.ts). */
  service?: 's3' | 'sts';
  /** SHA-256 of a body already read, for requests that do not send x-amz-content-sha256 (STS). */
  bodySha256?: string;
}

interface ParsedAuth {
  accessKeyId: string;
  shortDate: string;
  region: string;
  scope: string;
  signedHeaders: string[];
  signature: string;
  amzDate: string;
  date: Date;
  sessionToken?: string;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function parseCredential(value: string, malformed: (msg: string) => S3Error, expectedService: string): Omit<ParsedAuth, 'signedHeaders' | 'signature' | 'amzDate' | 'date'> {
  const parts = value.split('/');
  if (parts.length !== 5 || !parts[0]) throw malformed('the Credential is malformed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".');
  const [accessKeyId, shortDate, region, service, terminator] = parts;
  if (!/^\d{8}$/.test(shortDate)) throw malformed(`Invalid credential date "${shortDate}".`);
  if (service !== expectedService) throw malformed(`Incorrect service "${service}". This endpoint is "${expectedService}".`);
  if (terminator !== 'aws4_request') throw malformed('Incorrect terminal "' + terminator + '". This endpoint uses "aws4_request".');
  return { accessKeyId, shortDate, region, scope: `${shortDate}/${region}/${service}/aws4_request` };
}

function parseAuthorizationHeader(header: string, headers: IncomingHttpHeaders, service: string): ParsedAuth {
  const malformed = (msg: string) => new S3Error('AuthorizationHeaderMalformed', `The authorization header is malformed; ${msg}`);
  if (!header.startsWith(ALGORITHM + ' ')) {
    if (header.startsWith('AWS ')) throw new S3Error('InvalidRequest', 'Signature Version 2 is not supported; please use AWS4-HMAC-SHA256.');
    throw malformed('the authorization mechanism is not supported; use AWS4-HMAC-SHA256.');
  }
  const fields = new Map<string, string>();
  for (const part of header.slice(ALGORITHM.length + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (!credential || !signedHeaders || !signature) throw malformed('it must contain Credential, SignedHeaders and Signature.');
  const amzDate = first(headers['x-amz-date']);
  const date = parseAmzDate(amzDate);
  if (!amzDate || !date) throw new S3Error('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
  const token = first(headers['x-amz-security-token']);
  return {
    ...parseCredential(credential, malformed, service),
    signedHeaders: signedHeaders.split(';'),
    signature,
    amzDate,
    date,
    sessionToken: token || undefined,
  };
}

function parsePresignedQuery(query: QueryMap): ParsedAuth & { expiresSeconds: number } {
  const malformed = (msg: string) => new S3Error('AuthorizationQueryParametersError', `Error parsing the X-Amz-Credential parameter; ${msg}`);
  const get = (name: string) => first(query[name]);
  if (get('X-Amz-Algorithm') !== ALGORITHM) {
    throw new S3Error('AuthorizationQueryParametersError', 'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
  }
  const credential = get('X-Amz-Credential');
  const amzDate = get('X-Amz-Date');
  const expires = get('X-Amz-Expires');
  const signedHeaders = get('X-Amz-SignedHeaders');
  const signature = get('X-Amz-Signature');
  if (!credential || !amzDate || !expires || !signedHeaders || !signature) {
    throw new S3Error(
      'AuthorizationQueryParametersError',
      'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
    );
  }
  const date = parseAmzDate(amzDate);
  if (!date) throw new S3Error('AuthorizationQueryParametersError', 'X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd\'T\'HHmmss\'Z\'"');
  const expiresSeconds = Number(expires);
  if (!/^\d+$/.test(expires) || expiresSeconds < 1 || expiresSeconds > MAX_PRESIGNED_SECONDS) {
    throw new S3Error('AuthorizationQueryParametersError', 'X-Amz-Expires must be between 1 and 604800 seconds');
  }
  return {
    ...parseCredential(credential, malformed, 's3'),
    signedHeaders: signedHeaders.split(';'),
    signature,
    amzDate,
    date,
    expiresSeconds,
    sessionToken: get('X-Amz-Security-Token') || undefined,
  };
}

/** The values of the signed headers, repeated headers joined with "," as SigV4 specifies. */
function signedHeaderValues(rawHeaders: string[], names: Set<string>): Record<string, string> {
  const values: Record<string, string> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (!names.has(name)) continue;
    const value = rawHeaders[i + 1].trim();
    values[name] = name in values ? `${values[name]},${value}` : value;
  }
  return values;
}

function deriveSigningKey(secretAccessKey: string, shortDate: string, region: string, service: string): Buffer {
  let key: Buffer = createHmac('sha256', 'AWS4' + secretAccessKey).update(shortDate).digest();
  for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return key;
}

function sameSignature(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given.toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function signatureMismatch(): S3Error {
  return new S3Error('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
}

/** Verifies the request's SigV4 signature; throws an S3Error saying why when it does not hold. */
export async function verifySigV4(request: IncomingSignedRequest, options: VerifyOptions): Promise<VerifiedRequest> {
  const authorization = first(request.headers.authorization);
  const presigned = !authorization && first(request.query['X-Amz-Algorithm']) !== undefined;
  if (!authorization && !presigned) throw new S3Error('AccessDenied', 'Anonymous access is not allowed; sign your requests (AWS Signature Version 4).');
  if (authorization && first(request.query['X-Amz-Algorithm']) !== undefined) {
    throw new S3Error('InvalidArgument', 'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified');
  }
  const service = options.service ?? 's3';
  if (presigned && service !== 's3') throw new S3Error('AccessDenied', 'Presigned requests are for S3 operations only.');
  const auth = presigned ? parsePresignedQuery(request.query) : parseAuthorizationHeader(authorization as string, request.headers, service);
  if (auth.amzDate.slice(0, 8) !== auth.shortDate) {
    throw new S3Error(presigned ? 'AuthorizationQueryParametersError' : 'AuthorizationHeaderMalformed', `Invalid credential date "${auth.shortDate}". This date is not the same as X-Amz-Date: "${auth.amzDate.slice(0, 8)}".`);
  }

  // Time checks come before anything costly.
  const skew = auth.date.getTime() - options.now;
  if (presigned) {
    const expiresSeconds = (auth as ReturnType<typeof parsePresignedQuery>).expiresSeconds;
    if (skew > options.maxClockSkewMs) throw new S3Error('AccessDenied', 'Request is not valid yet');
    if (options.now > auth.date.getTime() + expiresSeconds * 1000) throw new S3Error('AccessDenied', 'Request has expired');
  } else if (Math.abs(skew) > options.maxClockSkewMs) {
    throw new S3Error('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  }

  const lookup = options.resolveCredential(auth.accessKeyId, auth.sessionToken);
  if (!lookup.ok) throw new S3Error(lookup.reason, lookup.message);
  const credential = lookup.credential;

  const signedNames = new Set(auth.signedHeaders.map((h) => h.toLowerCase()));
  if (!signedNames.has('host')) {
    throw new S3Error(presigned ? 'AuthorizationQueryParametersError' : 'AuthorizationHeaderMalformed', 'The host header must be signed.');
  }
  // The payload line of the canonical request: x-amz-content-sha256 as sent (whether or not
  // the header itself is signed); presigned URLs always sign UNSIGNED-PAYLOAD.
  const payloadHash = presigned ? UNSIGNED_PAYLOAD : (first(request.headers['x-amz-content-sha256']) ?? options.bodySha256);
  if (payloadHash === undefined) throw new S3Error('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');

  // Canonical request, assembled from @smithy/signature-v4's own canonicalisation helpers. We
  // do not call signer.sign()/presign() on a rebuilt request because those add and drop
  // headers of their own (they strip "date", inject the token, hoist x-amz-* headers), while a
  // verifier must sign exactly what the client listed.
  const signable: SignableRequest = {
    method: request.method,
    protocol: 'http:',
    hostname: '',
    path: request.rawPath,
    query: request.query,
    headers: signedHeaderValues(request.rawHeaders, signedNames),
  };
  const canonicalHeaders = getCanonicalHeaders(signable, undefined, signedNames);
  const names = [...signedNames].sort();
  const canonicalRequest = [
    request.method,
    request.rawPath,
    getCanonicalQuery(signable), // leaves out X-Amz-Signature itself
    ...names.map((name) => `${name}:${canonicalHeaders[name] ?? ''}`),
    '',
    names.join(';'),
    payloadHash,
  ].join('\n');
  const stringToSign = [ALGORITHM, auth.amzDate, auth.scope, sha256Hex(canonicalRequest)].join('\n');
  const signer = new SignatureV4({
    service,
    region: auth.region,
    credentials: { accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey },
    sha256: Sha256,
  });
  const expected = await signer.sign(stringToSign, { signingDate: auth.date, signingRegion: auth.region, signingService: service });
  if (!expected || !sameSignature(expected, auth.signature)) throw signatureMismatch();

  return {
    credential,
    presigned,
    payloadHash,
    chunkSigning: {
      signingKey: deriveSigningKey(credential.secretAccessKey, auth.shortDate, auth.region, service),
      amzDate: auth.amzDate,
      scope: auth.scope,
      seedSignature: expected,
    },
  };
}
