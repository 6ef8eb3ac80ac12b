// Webhook subscriptions, messages and delivery attempts, shared by both services: each keeps the
// three tables in its own schema (webhookTablesDdl) and says who owns a subscription (`Scope`)
// and what happens when one is disabled. Subscriptions and their events: inspection/webhooks,
// cloud/webhooks.
//
// An event is queued in the transaction of the change that makes it: one message per matching
// subscription and a durable job per message. A failed attempt (no answer, or a status other than
// 2xx) is retried by a new job delayed by the retry policy (30 s doubling, within 24 h:
// signing.ts); each attempt is a row of the delivery log. A message whose attempts all failed
// counts against its subscription; DISABLE_AFTER_FAILED_EVENTS such messages in a row (no success
// between) disable it. Its owner enables it again (setEnabled: PATCH with {"enabled": true}), which
// clears the reason and the count; events of the time it was disabled are not sent (none were
// queued for it), the events after are.
//
// Fairness between tenants (issue 40 §3): every delivery job belongs to its subscription's tenant
// (`tenantOf`: an organization, or a user without one) and at most DELIVERIES_PER_TENANT of a
// tenant's jobs run at once across all processes (pg-boss group concurrency: the others stay queued
// and the workers take other tenants' jobs), out of DELIVERY_WORKERS per process. A tenant whose
// receivers never answer thus holds two workers at most, and only its own deliveries queue behind
// them. A subscription whose receiver gives no answer several times in a row is paused for a while
// (circuit-breaker.ts) instead of holding even those. And a subscription keeps at most
// MAX_PENDING_EVENTS events waiting: when a new one would exceed it, the oldest waiting event is
// given up (its delivery log says so), so a dead receiver's backlog, and the jobs that carry it,
// stay bounded.
//
// Past 350 lines: subscriptions, queuing and delivery share this file's table names and rules; the
// address rule (outbound.ts), signing and retries (signing.ts) and the breaker live apart.
import crypto from 'node:crypto';
import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { Logger } from 'pino';
import { notFound, ValidationError } from '../http/errors.ts';
import { OutboundError, postSafely, urlProblem } from './outbound.ts';
import { CircuitBreaker } from './circuit-breaker.ts';
import { newWebhookSecret, nextRetrySeconds, signedHeaders, type RetryPolicy, type SecretBox } from './signing.ts';

/** Messages in a row whose every attempt failed before a subscription is disabled. */
export const DISABLE_AFTER_FAILED_EVENTS = 5;
/** How long an event waits for an older one's first attempt before it looks again. */
const ORDER_WAIT_SECONDS = 1;
/** disabled_reason of a subscription its owner disabled (PATCH {"enabled": false}). */
export const DISABLED_BY_OWNER = 'Disabled by its owner.';
/** Subscriptions per owner. */
export const MAX_WEBHOOKS = 20;
/** Delivery jobs running at once per process (each mostly waits for a receiver). */
export const DELIVERY_WORKERS = 16;
/** Delivery jobs of one tenant running at once, across every process (see the top of the file). */
export const DELIVERIES_PER_TENANT = 2;
/** Events waiting for one subscription at most (see the top of the file). */
export const MAX_PENDING_EVENTS = 1000;

/** DDL of a service's webhook tables; `ownerColumns`: its owner columns (SQL column definitions). */
export function webhookTablesDdl(schema: 'inspection' | 'cloud', ownerColumns: string): string {
  return `
        create table ${schema}.webhooks (
          id serial primary key,
          ${ownerColumns},
          url text not null,
          events jsonb not null,
          secret_sealed text not null,
          created_at timestamptz not null default now(),
          failed_events integer not null default 0,
          disabled_at timestamptz,
          disabled_reason text
        );
        create index webhooks_organization on ${schema}.webhooks (organization_id);
        create table ${schema}.webhook_messages (
          id bigserial primary key,
          uid text not null unique,
          webhook_id integer not null references ${schema}.webhooks(id) on delete cascade,
          event text not null,
          body text not null,
          created_at timestamptz not null default now(),
          state text not null default 'pending',
          attempts integer not null default 0
        );
        create table ${schema}.webhook_attempts (
          id bigserial primary key,
          message_id bigint not null references ${schema}.webhook_messages(id) on delete cascade,
          webhook_id integer not null references ${schema}.webhooks(id) on delete cascade,
          attempt integer not null,
          at timestamptz not null default now(),
          status_code integer,
          error text
        );
        create index webhook_attempts_webhook on ${schema}.webhook_attempts (webhook_id, id)
      `;
}

export interface WebhookOptions {
  allowPrivate: boolean;
  retry: RetryPolicy;
  timeoutMs: number;
  /** Default MAX_PENDING_EVENTS (tests set fewer). */
  maxPendingEvents?: number;
}

export interface WebhookRecord {
  id: number;
  url: string;
  events: string[];
  created_at: string;
  active: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
}

export interface DeliveryRecord {
  id: number;
  at: string;
  event: string;
  message_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  succeeded: boolean;
}

export interface WebhookEvent {
  type: string;
  data: Record<string, unknown>;
}

/** A subscription row as the core reads it (owner columns included). */
export type WebhookRow = { id: number; url: string; events: string[]; created_at: Date; disabled_at: Date | null; disabled_reason: string | null; failed_events: number } & Record<string, unknown>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTrx = Transaction<any>;
/** Narrows a query of `<schema>.webhooks` to one owner's subscriptions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Scope = <Q extends SelectQueryBuilder<any, any, any>>(query: Q) => Q;

export interface WebhookCoreDeps {
  db: AnyDb;
  schema: 'inspection' | 'cloud';
  /** Queues the delivery job of a message (in `trx`), after `delaySeconds`, in its tenant's group. */
  sendJob(trx: AnyTrx, messageId: number, job: { tenant: string; delaySeconds?: number }): Promise<void>;
  /** The tenant a subscription's deliveries count against (a key of its owner columns). */
  tenantOf(webhook: Record<string, unknown>): string;
  box: SecretBox;
  options: WebhookOptions;
  logger: Logger;
  /** A subscription was just disabled (in the transaction that disables it): tell its owner. */
  disabled?(trx: AnyTrx, webhook: WebhookRow, reason: string): Promise<void>;
}

export class WebhookCore {
  private readonly t: { webhooks: string; messages: string; attempts: string };
  private readonly breaker: CircuitBreaker;

  constructor(private readonly deps: WebhookCoreDeps) {
    this.t = { webhooks: `${deps.schema}.webhooks`, messages: `${deps.schema}.webhook_messages`, attempts: `${deps.schema}.webhook_attempts` };
    this.breaker = new CircuitBreaker(deps.options.timeoutMs);
  }

  // Subscriptions

  /** A new subscription with `owner`'s columns; the secret is in this answer only. */
  async create(scope: Scope, owner: Record<string, unknown>, url: string, events: string[]): Promise<WebhookRecord & { secret: string }> {
    const problem = urlProblem(url, this.deps.options.allowPrivate);
    if (problem) throw ValidationError.field('url', problem);
    const { count } = await scope(this.deps.db.selectFrom(this.t.webhooks))
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    if (Number(count) >= MAX_WEBHOOKS) throw ValidationError.field('non_field_errors', `At most ${MAX_WEBHOOKS} webhooks per account; delete one first.`);
    const secret = newWebhookSecret();
    const row = await this.deps.db
      .insertInto(this.t.webhooks)
      .values({ ...owner, url, events: JSON.stringify([...new Set(events)]), secret_sealed: this.deps.box.seal(secret) })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...toRecord(row as WebhookRow), secret };
  }

  async list(scope: Scope): Promise<WebhookRecord[]> {
    const rows = await scope(this.deps.db.selectFrom(this.t.webhooks)).selectAll().orderBy('id').execute();
    return rows.map((r) => toRecord(r as WebhookRow));
  }

  async get(scope: Scope, id: number): Promise<WebhookRecord> {
    return toRecord(await this.find(scope, id));
  }

  /**
   * Enables a subscription again (clears disabled_at, disabled_reason and the count of failed
   * events), or disables it by hand. Setting the state it already has changes nothing.
   */
  async setEnabled(scope: Scope, id: number, enabled: boolean): Promise<WebhookRecord> {
    const row = await this.find(scope, id);
    if (enabled === (row.disabled_at === null)) return toRecord(row);
    const values = enabled ? { disabled_at: null, disabled_reason: null, failed_events: 0 } : { disabled_at: new Date(), disabled_reason: DISABLED_BY_OWNER };
    const updated = await this.deps.db.updateTable(this.t.webhooks).set(values).where('id', '=', row.id).returningAll().executeTakeFirst();
    if (!updated) throw notFound('Webhook'); // deleted meanwhile
    if (enabled) this.breaker.forget(row.id); // its owner says the receiver is back: try at once
    return toRecord(updated as WebhookRow);
  }

  async remove(scope: Scope, id: number): Promise<void> {
    const row = await this.find(scope, id);
    const result = await this.deps.db.deleteFrom(this.t.webhooks).where('id', '=', row.id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound('Webhook');
    this.breaker.forget(row.id);
  }

  /** The delivery log, newest first (at most `limit` attempts). */
  async deliveries(scope: Scope, id: number, limit = 1000): Promise<DeliveryRecord[]> {
    const row = await this.find(scope, id);
    const attempts = await this.deps.db
      .selectFrom(`${this.t.attempts} as a`)
      .innerJoin(`${this.t.messages} as m`, 'm.id', 'a.message_id')
      .select(['a.id', 'a.at', 'a.attempt', 'a.status_code', 'a.error', 'm.event', 'm.uid'])
      .where('a.webhook_id', '=', row.id)
      .orderBy('a.id', 'desc')
      .limit(limit)
      .execute();
    return attempts.map((a) => ({
      id: Number(a.id),
      at: new Date(a.at).toISOString(),
      event: a.event,
      message_id: a.uid,
      attempt: a.attempt,
      status_code: a.status_code,
      error: a.error,
      succeeded: a.status_code !== null && a.status_code >= 200 && a.status_code < 300,
    }));
  }

  private async find(scope: Scope, id: number): Promise<WebhookRow> {
    const row = await scope(this.deps.db.selectFrom(this.t.webhooks)).selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('Webhook');
    return row as WebhookRow;
  }

  // Events

  /** Queues `events` for the active subscriptions of `scope` that asked for them, in `trx`. */
  async emit(trx: AnyTrx, scope: Scope, events: WebhookEvent[]): Promise<void> {
    if (events.length === 0) return;
    const subscriptions = (await scope(trx.selectFrom(this.t.webhooks)).selectAll().where('disabled_at', 'is', null).execute()) as WebhookRow[];
    for (const event of events) {
      for (const subscription of subscriptions) {
        if (!subscription.events.includes(event.type)) continue;
        const uid = `msg_${crypto.randomUUID().replaceAll('-', '')}`;
        const body = JSON.stringify({ type: event.type, timestamp: new Date().toISOString(), data: event.data });
        const { id } = await trx.insertInto(this.t.messages).values({ uid, webhook_id: subscription.id, event: event.type, body }).returning('id').executeTakeFirstOrThrow();
        await this.deps.sendJob(trx, Number(id), { tenant: this.deps.tenantOf(subscription) });
        await this.dropOverflow(trx, subscription.id);
      }
    }
  }

  /** Gives up the oldest waiting events of a subscription beyond its bound (their jobs find them no longer pending). */
  private async dropOverflow(trx: AnyTrx, webhookId: number): Promise<void> {
    const bound = this.deps.options.maxPendingEvents ?? MAX_PENDING_EVENTS;
    const pending = () => trx.selectFrom(this.t.messages).where('webhook_id', '=', webhookId).where('state', '=', 'pending');
    const edge = await pending().select('id').orderBy('id', 'desc').offset(bound).limit(1).executeTakeFirst();
    if (!edge) return;
    const dropped = await trx
      .updateTable(this.t.messages)
      .set({ state: 'failed' })
      .where('webhook_id', '=', webhookId)
      .where('state', '=', 'pending')
      .where('id', '<=', edge.id)
      .returning(['id', 'attempts'])
      .execute();
    const error = `Given up: more than ${bound} events were waiting for this receiver, and this was the oldest.`;
    for (const m of dropped) await trx.insertInto(this.t.attempts).values({ message_id: m.id, webhook_id: webhookId, attempt: m.attempts + 1, status_code: null, error }).execute();
    this.deps.logger.info({ webhookId, dropped: dropped.length }, 'webhook backlog full; oldest events given up');
  }

  // Delivery (the delivery job; idempotent: a message no longer pending is left alone)

  async deliver(messageId: number): Promise<void> {
    const { db, options } = this.deps;
    const found = await db
      .selectFrom(`${this.t.messages} as m`)
      .innerJoin(`${this.t.webhooks} as w`, 'w.id', 'm.webhook_id')
      .selectAll('w')
      .select(['m.id as message_id', 'm.uid', 'm.body', 'm.state', 'm.attempts', 'm.created_at as message_created_at'])
      .where('m.id', '=', messageId)
      .executeTakeFirst();
    if (!found || found.state !== 'pending') return;
    const webhook = found as unknown as WebhookRow;
    const message = { id: found.message_id, uid: found.uid, body: found.body, attempts: found.attempts, created_at: found.message_created_at, webhook_id: webhook.id };
    if (webhook.disabled_at) {
      await db.updateTable(this.t.messages).set({ state: 'failed' }).where('id', '=', messageId).execute();
      return;
    }
    const later = (delaySeconds: number) => this.deps.sendJob(db as AnyTrx, Number(message.id), { tenant: this.deps.tenantOf(webhook), delaySeconds });
    // A paused subscription (its receiver did not answer several times): wait for the pause's end.
    const paused = this.breaker.waitSeconds(webhook.id);
    if (paused > 0) return later(paused);
    // First attempts go out in the order of the events: while an older event of the subscription
    // has not had its first attempt (its job waits or runs right now), this one waits a second.
    // Retries do not hold newer events back.
    if (message.attempts === 0) {
      const older = await db
        .selectFrom(this.t.messages)
        .select('id')
        .where('webhook_id', '=', message.webhook_id)
        .where('id', '<', message.id)
        .where('state', '=', 'pending')
        .where('attempts', '=', 0)
        .limit(1)
        .executeTakeFirst();
      if (older) return later(ORDER_WAIT_SECONDS);
    }
    // After a pause, one delivery probes the receiver; the others wait for its outcome.
    if (!this.breaker.admit(webhook.id)) return later(Math.max(1, this.breaker.waitSeconds(webhook.id)));
    const attempt = message.attempts + 1;
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const secret = this.deps.box.open(webhook.secret_sealed as string);
      const headers = { ...signedHeaders(secret, message.uid, new Date(), message.body), 'user-agent': 'open-inspection-webhooks/1' };
      statusCode = (await postSafely(webhook.url, message.body, headers, { allowPrivate: options.allowPrivate, timeoutMs: options.timeoutMs })).status;
      this.breaker.answered(webhook.id);
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      error = err.message;
      if (this.breaker.unanswered(webhook.id)) this.deps.logger.info({ webhookId: webhook.id }, 'webhook receiver does not answer; its deliveries pause');
    }
    const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
    const retryIn = ok ? undefined : nextRetrySeconds(options.retry, attempt, (Date.now() - new Date(message.created_at).getTime()) / 1000);
    await db.transaction().execute(async (trx) => {
      await trx.insertInto(this.t.attempts).values({ message_id: message.id, webhook_id: message.webhook_id, attempt, status_code: statusCode, error }).execute();
      const state = ok ? 'delivered' : retryIn === undefined ? 'failed' : 'pending';
      await trx.updateTable(this.t.messages).set({ attempts: attempt, state }).where('id', '=', message.id).execute();
      if (ok) {
        await trx.updateTable(this.t.webhooks).set({ failed_events: 0 }).where('id', '=', message.webhook_id).execute();
      } else if (retryIn !== undefined) {
        await this.deps.sendJob(trx, Number(message.id), { tenant: this.deps.tenantOf(webhook), delaySeconds: retryIn });
      } else {
        await this.eventFailed(trx, message.webhook_id);
      }
    });
    if (!ok) this.deps.logger.info({ webhookId: message.webhook_id, messageId: message.uid, attempt, statusCode, error, retryIn }, 'webhook delivery failed');
  }

  /** Every attempt of one message failed: counts towards disabling the subscription. */
  private async eventFailed(trx: AnyTrx, webhookId: number): Promise<void> {
    const row = (await trx
      .updateTable(this.t.webhooks)
      .set((eb) => ({ failed_events: eb('failed_events', '+', 1) }))
      .where('id', '=', webhookId)
      .returningAll()
      .executeTakeFirstOrThrow()) as WebhookRow;
    if (row.disabled_at || row.failed_events < DISABLE_AFTER_FAILED_EVENTS) return;
    const reason = `The last ${row.failed_events} events could not be delivered (every attempt failed).`;
    await trx.updateTable(this.t.webhooks).set({ disabled_at: new Date(), disabled_reason: reason }).where('id', '=', webhookId).execute();
    await this.deps.disabled?.(trx, row, reason);
  }
}

function toRecord(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    created_at: new Date(row.created_at).toISOString(),
    active: row.disabled_at === null,
    disabled_at: row.disabled_at ? new Date(row.disabled_at).toISOString() : null,
    disabled_reason: row.disabled_reason,
  };
}
