// Temporary S3 credentials for the embedded endpoint, with no database: everything is derived
// from one 32-byte master key, so every process that shares the key issues and accepts the
// same credentials.
//
//   access key id   "ASIA" + 16 random base32 characters (like STS temporary keys)
//   secret key      HMAC(secret-subkey, access key id), 40 base64url characters
//   session token   "v1." + base64url(JSON {k, b, p, e, r?, ro?}) + "." + base64url(HMAC(token-subkey, payload))
//
// The token binds the access key id to its bucket, its read-write prefix (read-only when `ro` is
// set: absent in tokens that may write, so the tokens issued before it existed keep writing), the
// prefixes it may only read (`r`, absent when none) and its expiry; forging or widening one needs
// the master key. The root credential (fixed "AKIA..." id, no token) is for the server
// itself (presigning) and is never handed to clients.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CredentialIssuer, IssueOptions, TemporaryCredentials } from './object-store.ts';

export interface EmbeddedCredentialIssuerOptions {
  /** 32 random bytes, loaded or created by the caller in the data folder. */
  masterKey: Buffer;
  /** Region reported to clients (any region signs fine against the embedded endpoint). */
  region?: string;
  /** Public URL of the embedded endpoint, handed to clients as their endpoint override. */
  endpoint?: string | (() => string);
  /** Longest lifetime issue() accepts, in seconds (default 7 days). */
  maxTtlSeconds?: number;
  now?: () => number;
  /** The root credential, when it is configured (the `storage` command); default: derived from the master key. */
  root?: RootCredential;
}

export interface RootCredential {
  accessKeyId: string;
  secretAccessKey: string;
}

/** `writable: false`: the prefix is only read and listed, like the read-only prefixes (IssueOptions.writable). */
export type CredentialScope = { kind: 'root' } | { kind: 'prefix'; bucket: string; prefix: string; writable: boolean; readOnlyPrefixes: string[] };

export interface ResolvedCredential {
  accessKeyId: string;
  secretAccessKey: string;
  scope: CredentialScope;
  /** Undefined for the root credential, which does not expire. */
  expiration?: Date;
}

export type CredentialFailure = 'InvalidAccessKeyId' | 'InvalidToken' | 'ExpiredToken';

export type CredentialLookup = { ok: true; credential: ResolvedCredential } | { ok: false; reason: CredentialFailure; message: string };

/** What the S3 endpoint needs: access key id + session token → secret and scope, or why not. */
export type CredentialResolver = (accessKeyId: string, sessionToken: string | undefined) => CredentialLookup;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const TEMP_KEY_ID = /^ASIA[A-Z2-7]{16}$/;

function base32(bytes: Buffer, length: number): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

interface TokenPayload {
  /** access key id */ k: string;
  /** bucket */ b: string;
  /** prefix */ p: string;
  /** expiration, Unix seconds */ e: number;
  /** prefixes readable only */ r?: string[];
  /** the prefix is read-only too */ ro?: true;
}

/** Derives the separate keys from the master key, so no key is used for two purposes. */
class DerivedKeys {
  readonly tokenMac: Buffer;
  readonly secretMac: Buffer;
  readonly root: { accessKeyId: string; secretAccessKey: string };

  constructor(masterKey: Buffer, root?: RootCredential) {
    if (!Buffer.isBuffer(masterKey) || masterKey.length !== 32) throw new Error('the storage master key must be 32 bytes');
    const derive = (label: string) => createHmac('sha256', masterKey).update(`open-inspection/s3/${label}/v1`).digest();
    this.tokenMac = derive('session-token');
    this.secretMac = derive('secret-key');
    if (root && TEMP_KEY_ID.test(root.accessKeyId)) throw new Error('the root access key id must not look like a temporary one (ASIA...)');
    const rootId = 'AKIA' + base32(derive('root-access-key-id'), 16);
    this.root = root ? { ...root } : { accessKeyId: rootId, secretAccessKey: this.secretFor(rootId) };
  }

  secretFor(accessKeyId: string): string {
    return createHmac('sha256', this.secretMac).update(accessKeyId).digest('base64url').slice(0, 40);
  }

  signToken(payload: TokenPayload): string {
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `v1.${body}.${this.mac(body).toString('base64url')}`;
  }

  openToken(token: string): TokenPayload | undefined {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== 'v1') return undefined;
    const [, body, mac] = parts;
    const expected = this.mac(body);
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as TokenPayload;
      const valid =
        typeof payload.k === 'string' &&
        typeof payload.b === 'string' &&
        typeof payload.p === 'string' &&
        Number.isFinite(payload.e) &&
        (payload.r === undefined || (Array.isArray(payload.r) && payload.r.every((p) => typeof p === 'string' && p !== ''))) &&
        (payload.ro === undefined || payload.ro === true);
      return valid ? payload : undefined;
    } catch {
      return undefined;
    }
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.tokenMac).update(`v1.${body}`).digest();
  }
}

/**
 * Resolves credentials issued by any EmbeddedCredentialIssuer holding the same master key.
 * Stateless: usable from any process that has the key.
 */
export function createCredentialResolver(masterKey: Buffer, now: () => number = Date.now, root?: RootCredential): CredentialResolver {
  const keys = new DerivedKeys(masterKey, root);
  return (accessKeyId, sessionToken) => {
    if (accessKeyId === keys.root.accessKeyId && !sessionToken) {
      return { ok: true, credential: { ...keys.root, scope: { kind: 'root' } } };
    }
    if (!TEMP_KEY_ID.test(accessKeyId) || !sessionToken) {
      return { ok: false, reason: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
    }
    const payload = keys.openToken(sessionToken);
    if (!payload) return { ok: false, reason: 'InvalidToken', message: 'The provided token is malformed or otherwise invalid.' };
    if (payload.k !== accessKeyId) {
      return { ok: false, reason: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
    }
    const expiration = new Date(payload.e * 1000);
    if (now() >= expiration.getTime()) return { ok: false, reason: 'ExpiredToken', message: 'The provided token has expired.' };
    return {
      ok: true,
      credential: {
        accessKeyId,
        secretAccessKey: keys.secretFor(accessKeyId),
        scope: { kind: 'prefix', bucket: payload.b, prefix: payload.p, writable: payload.ro !== true, readOnlyPrefixes: payload.r ?? [] },
        expiration,
      },
    };
  };
}

export class EmbeddedCredentialIssuer implements CredentialIssuer {
  private readonly keys: DerivedKeys;
  private readonly region: string;
  private readonly endpoint?: string | (() => string);
  private readonly maxTtlSeconds: number;
  private readonly now: () => number;
  /** Resolver for the embedded endpoint (see createCredentialResolver). */
  readonly resolve: CredentialResolver;

  constructor(options: EmbeddedCredentialIssuerOptions) {
    this.keys = new DerivedKeys(options.masterKey, options.root);
    this.region = options.region ?? 'us-east-1';
    this.endpoint = options.endpoint;
    this.maxTtlSeconds = options.maxTtlSeconds ?? 7 * 24 * 3600;
    this.now = options.now ?? Date.now;
    this.resolve = createCredentialResolver(options.masterKey, this.now, options.root);
  }

  /**
   * Credentials for keys starting with `prefix` in `bucket` (only reading them with
   * `writable: false`), and for reading (GetObject, HeadObject, listing, a copy's source) keys
   * starting with one of `readOnlyPrefixes`. Prefixes
   * are matched as plain strings, as an IAM "prefix*" would be: end them with "/" to confine
   * clients to one folder.
   */
  async issue(bucket: string, prefix: string, ttlSeconds: number, options: IssueOptions = {}): Promise<TemporaryCredentials> {
    if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0 || ttlSeconds > this.maxTtlSeconds) {
      throw new RangeError(`credential lifetime must be between 1 and ${this.maxTtlSeconds} seconds`);
    }
    const readOnlyPrefixes = options.readOnlyPrefixes ?? [];
    if (readOnlyPrefixes.some((p) => typeof p !== 'string' || p === '')) throw new RangeError('a read-only prefix must be a non-empty string');
    const accessKeyId = 'ASIA' + base32(randomBytes(10), 16);
    const expiresAt = Math.floor(this.now() / 1000 + ttlSeconds);
    const writable = options.writable !== false;
    const sessionToken = this.keys.signToken({
      k: accessKeyId,
      b: bucket,
      p: prefix,
      e: expiresAt,
      ...(readOnlyPrefixes.length ? { r: readOnlyPrefixes } : {}),
      ...(writable ? {} : { ro: true as const }),
    });
    return {
      accessKeyId,
      secretAccessKey: this.keys.secretFor(accessKeyId),
      sessionToken,
      expiration: new Date(expiresAt * 1000),
      bucket,
      prefix,
      writable,
      readOnlyPrefixes,
      region: this.region,
      endpoint: typeof this.endpoint === 'function' ? this.endpoint() : this.endpoint,
    };
  }

  /** The server's own full-access credential (for presigning); never give it to clients. */
  rootCredentials(): { accessKeyId: string; secretAccessKey: string } {
    return { ...this.keys.root };
  }
}
