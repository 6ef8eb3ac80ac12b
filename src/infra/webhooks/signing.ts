// Standard Webhooks (https://www.standardwebhooks.com/): secrets `whsec_<base64 of 24 random
// bytes>`, headers `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`
// (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`), signed with the project's own library so
// that receivers verify with its libraries (`Webhook.verify`).
//
// A subscription's secret must stay usable to sign, so it cannot be hashed; it is stored sealed
// (AES-256-GCM) under a key kept with the service's other server-side secrets
// (infra/secrets/server-secrets.ts): a copy of the webhooks table alone does not give it away.
import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(24).toString('base64')}`;
}

export function signedHeaders(secret: string, messageId: string, at: Date, body: string): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
  };
}

/** Seals and opens subscription secrets with a 32-byte key. */
export class SecretBox {
  constructor(private readonly key: Uint8Array) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(secret: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1') throw new Error('unknown sealed secret format');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  }
}

/** When attempt `attempt` (1-based) failed: seconds until the next, or undefined when none is left. */
export function nextRetrySeconds(policy: RetryPolicy, attempt: number, secondsSinceFirst: number): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  const delay = Math.min(policy.baseSeconds * 2 ** (attempt - 1), MAX_DELAY_SECONDS);
  if (secondsSinceFirst + delay > policy.windowSeconds) return undefined;
  return delay;
}

const MAX_DELAY_SECONDS = 6 * 3600;

/**
 * Retries: `baseSeconds` doubling (capped at 6 h) while the next attempt falls within
 * `windowSeconds` of the first, at most `maxAttempts` in all. Default: 30 s, 60 s, … — 13 attempts
 * over 24 h.
 */
export interface RetryPolicy {
  baseSeconds: number;
  maxAttempts: number;
  windowSeconds: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseSeconds: 30, maxAttempts: 20, windowSeconds: 24 * 3600 };
