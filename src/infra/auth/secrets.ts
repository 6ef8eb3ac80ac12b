// Secrets at rest. Passwords are low-entropy, so they get a slow, salted KDF (scrypt). API keys,
// client secrets and the like are generated here with 256 bits of randomness, so a SHA-256 of them
// cannot be brute-forced and keeps per-request authentication cheap; comparisons are constant-time.
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>;
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** A new high-entropy secret, e.g. `generateSecret('oik')` -> "oik_3q2...". */
export function generateSecret(prefix: string, bytes = 32): string {
  return `${prefix}_${crypto.randomBytes(bytes).toString('base64url')}`;
}

export function sha256Hex(value: string): string {
  // One-shot (no Hash object): it runs for the API key of every request (bench/README.md, "API").
  return crypto.hash('sha256', value, 'hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

/** "scrypt$N$r$p$salt$hash", all parameters kept so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password, salt, 32, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return crypto.timingSafeEqual(actual, expected);
}
