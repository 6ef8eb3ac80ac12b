// STS AssumeRole on the embedded endpoint, as MinIO answers it: a form POST to `/` with
// `Action=AssumeRole`, `Version=2011-06-15`, `Policy` and `DurationSeconds`, signed (SigV4,
// service "sts") with the root credential. The session policy must confine the credentials to one
// bucket, one key prefix to read and write (or only to read: a read-only credential), and any
// number of prefixes only to read, which is what the embedded store's temporary credentials can
// express; the answer is those credentials. This
// lets the S3 store of the services (s3-object-store.ts and sts-credential-issuer.ts) use a
// `storage` process exactly as it would use MinIO.
//
// A policy the embedded credentials cannot express exactly (no read-write prefix or several, a
// prefix written but not read, another bucket) is refused rather than widened.
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmbeddedCredentialIssuer } from './embedded-credentials.ts';
import { escapeXml } from './s3-xml.ts';
import { verifySigV4 } from './sigv4-verifier.ts';
import type { QueryMap } from './sigv4-verifier.ts';

export interface StsOptions {
  issuer: EmbeddedCredentialIssuer;
  /** Shortest DurationSeconds accepted (MinIO and AWS: 900; tests: less). */
  minDurationSeconds: number;
  /** Longest DurationSeconds accepted (MinIO: 43200, 12 hours). */
  maxDurationSeconds: number;
  now: () => number;
  maxClockSkewMs: number;
}

const STS_XMLNS = 'https://sts.amazonaws.com/doc/2011-06-15/';
const MAX_BODY = 64 * 1024;
/** The actions of a read-write session policy; the embedded credentials grant exactly these. */
const READ_WRITE = ['s3:GetObject', 's3:PutObject'];
/** Actions that write; a prefix granted none of them is read-only. */
const WRITES = ['s3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload', 's3:*', 's3:*Object'];

export class StsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** Whether a request is for STS: a form POST to the root, signed for the "sts" service. */
export function isStsRequest(method: string, url: string, req: IncomingMessage): boolean {
  if (method !== 'POST' || (url !== '/' && !url.startsWith('/?'))) return false;
  const auth = req.headers.authorization ?? '';
  return /\/sts\/aws4_request/.test(auth);
}

export async function handleAssumeRole(req: IncomingMessage, res: ServerResponse, options: StsOptions): Promise<void> {
  const requestId = randomBytes(16).toString('hex');
  try {
    const body = await readBody(req);
    const form = new URLSearchParams(body.toString('utf8'));
    const query: QueryMap = {};
    for (const [name, value] of new URL(req.url ?? '/', 'http://x').searchParams) query[name] = value;
    const verified = await verifySigV4(
      { method: 'POST', rawPath: '/', query, headers: req.headers, rawHeaders: req.rawHeaders },
      { resolveCredential: options.issuer.resolve, now: options.now(), maxClockSkewMs: options.maxClockSkewMs, service: 'sts', bodySha256: createHash('sha256').update(body).digest('hex') },
    ).catch((err: Error & { code?: string }) => {
      throw new StsError(err.code === 'SignatureDoesNotMatch' ? 'SignatureDoesNotMatch' : 'AccessDenied', err.message, 403);
    });
    if (verified.credential.scope.kind !== 'root') throw new StsError('AccessDenied', 'Only the root credential may call AssumeRole.', 403);
    if (form.get('Action') !== 'AssumeRole') throw new StsError('InvalidAction', `Could not find operation ${form.get('Action') ?? '(none)'} for version ${form.get('Version') ?? '(none)'}; this endpoint answers AssumeRole.`);
    const duration = form.get('DurationSeconds') === null ? 3600 : Number(form.get('DurationSeconds'));
    if (!Number.isInteger(duration) || duration < options.minDurationSeconds || duration > options.maxDurationSeconds) {
      throw new StsError('InvalidParameterValue', `DurationSeconds must be a whole number between ${options.minDurationSeconds} and ${options.maxDurationSeconds}.`);
    }
    const { bucket, prefix, writable, readOnlyPrefixes } = scopeOfPolicy(form.get('Policy'));
    const credentials = await options.issuer.issue(bucket, prefix, duration, { readOnlyPrefixes, writable });
    const sessionName = (form.get('RoleSessionName') ?? 'session').slice(0, 64);
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?><AssumeRoleResponse xmlns="${STS_XMLNS}"><AssumeRoleResult>` +
      `<AssumedRoleUser><Arn>arn:aws:sts::000000000000:assumed-role/open-inspection/${escapeXml(sessionName)}</Arn><AssumedRoleId>${credentials.accessKeyId}:${escapeXml(sessionName)}</AssumedRoleId></AssumedRoleUser>` +
      `<Credentials><AccessKeyId>${credentials.accessKeyId}</AccessKeyId><SecretAccessKey>${credentials.secretAccessKey}</SecretAccessKey>` +
      `<SessionToken>${escapeXml(credentials.sessionToken)}</SessionToken><Expiration>${credentials.expiration.toISOString()}</Expiration></Credentials>` +
      `</AssumeRoleResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></AssumeRoleResponse>`;
    res.writeHead(200, { 'Content-Type': 'text/xml', 'Content-Length': Buffer.byteLength(xml) });
    res.end(xml);
  } catch (caught) {
    const err = caught instanceof StsError ? caught : new StsError('InternalError', 'The request could not be processed.', 500);
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?><ErrorResponse xmlns="${STS_XMLNS}"><Error><Type>${err.status >= 500 ? 'Receiver' : 'Sender'}</Type>` +
      `<Code>${escapeXml(err.code)}</Code><Message>${escapeXml(err.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
    if (!res.headersSent) res.writeHead(err.status, { 'Content-Type': 'text/xml', 'Content-Length': Buffer.byteLength(xml) });
    res.end(xml);
    if (err.status >= 500) throw caught;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new StsError('InvalidParameterValue', `The request body is larger than ${MAX_BODY} bytes.`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

interface Statement {
  Effect?: string;
  Action?: string | string[];
  Resource?: string | string[];
  Condition?: unknown;
}

const list = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * A Deny of s3:PutObject whose every condition is on an ACL header (s3:x-amz-acl, s3:x-amz-grant-*),
 * as the services' session policy has (sts-policies.ts): what it denies this endpoint refuses
 * anyway, so it is accepted and needs no enforcing. Any other Deny would narrow the credentials in
 * ways they cannot express, and is refused.
 */
function deniesOnlyAclHeaders(statement: Statement): boolean {
  const conditions = statement.Condition;
  if (!conditions || typeof conditions !== 'object') return false;
  const keys = Object.values(conditions as Record<string, unknown>).flatMap((block) => (block && typeof block === 'object' ? Object.keys(block) : ['?']));
  const actions = list(statement.Action);
  return actions.length > 0 && actions.every((a) => a === 's3:PutObject') && keys.length > 0 && keys.every((k) => k === 's3:x-amz-acl' || k.startsWith('s3:x-amz-grant-'));
}

/**
 * The one bucket and prefix a session policy allows reading and writing under, and the prefixes it
 * allows only reading: its object statements' resources `arn:aws:s3:::<bucket>/<prefix>*` name one
 * bucket; at most one prefix is allowed at least GetObject and PutObject (s3:* or s3:*Object
 * count); every other is allowed GetObject and no write. A policy that allows no prefix to be
 * written is a read-only credential's (sts-policies.ts, `writable: false`): its own prefix is the
 * first one it names, the one whose owner the prefix gate asks about. Listing statements (the
 * bucket with an s3:prefix condition) are accepted as they are: the credentials list only their
 * prefixes.
 */
export function scopeOfPolicy(raw: string | null): { bucket: string; prefix: string; writable: boolean; readOnlyPrefixes: string[] } {
  if (!raw) throw new StsError('MalformedPolicyDocument', 'A Policy confining the credentials to one bucket and key prefix is required.');
  let policy: { Statement?: Statement | Statement[] };
  try {
    policy = JSON.parse(raw);
  } catch {
    throw new StsError('MalformedPolicyDocument', 'The Policy is not valid JSON.');
  }
  const statements = Array.isArray(policy.Statement) ? policy.Statement : policy.Statement ? [policy.Statement] : [];
  // `bucket/prefix` -> the actions allowed on its objects.
  const scopes = new Map<string, Set<string>>();
  const buckets = new Set<string>();
  for (const statement of statements) {
    if (statement.Effect === 'Deny' && deniesOnlyAclHeaders(statement)) continue; // the endpoint refuses ACL headers itself (acl-headers.ts)
    if (statement.Effect !== 'Allow') throw new StsError('MalformedPolicyDocument', 'Only Allow statements, and Deny statements of PutObject with ACL headers, are supported by this store.');
    for (const resource of list(statement.Resource)) {
      const m = /^arn:aws:s3:::([^/*]+)(?:\/(.*))?$/.exec(resource);
      if (!m) throw new StsError('MalformedPolicyDocument', `Unsupported resource "${resource}": use arn:aws:s3:::<bucket>/<prefix>*.`);
      if (m[2] === undefined) continue; // the bucket itself: listing, scoped by the credentials' prefixes
      if (!m[2].endsWith('*') || m[2].slice(0, -1).includes('*')) throw new StsError('MalformedPolicyDocument', `Unsupported resource "${resource}": a key prefix ending in * is needed.`);
      buckets.add(m[1]);
      const scope = `${m[1]}/${m[2].slice(0, -1)}`;
      const actions = scopes.get(scope) ?? new Set<string>();
      for (const action of list(statement.Action)) actions.add(action);
      scopes.set(scope, actions);
    }
  }
  if (buckets.size !== 1) throw new StsError('MalformedPolicyDocument', `The Policy must allow objects of exactly one bucket (it names ${buckets.size}).`);
  const grants = (actions: Set<string>, needed: string) => actions.has(needed) || actions.has('s3:*') || actions.has('s3:*Object');
  const readWrite = [...scopes].filter(([, actions]) => READ_WRITE.every((a) => grants(actions, a)));
  if (readWrite.length > 1) {
    throw new StsError('MalformedPolicyDocument', `This store issues read-and-write credentials for one prefix; the Policy must allow s3:GetObject and s3:PutObject on one at most (it does on ${readWrite.length}).`);
  }
  // Read-write: that prefix; read-only: the first named (Map keeps the order of the statements).
  const own = readWrite.length === 1 ? readWrite[0][0] : [...scopes.keys()][0];
  const readOnlyPrefixes: string[] = [];
  for (const [scope, actions] of scopes) {
    if (readWrite.length === 1 && scope === own) continue;
    if (!grants(actions, 's3:GetObject') || WRITES.some((a) => actions.has(a))) {
      throw new StsError('MalformedPolicyDocument', `Unsupported grant on "${scope}*": besides the read-and-write prefix, this store issues read-only prefixes (s3:GetObject, no write).`);
    }
    if (scope !== own) readOnlyPrefixes.push(scope.slice(scope.indexOf('/') + 1));
  }
  const slash = own.indexOf('/');
  return { bucket: own.slice(0, slash), prefix: own.slice(slash + 1), writable: readWrite.length === 1, readOnlyPrefixes };
}
