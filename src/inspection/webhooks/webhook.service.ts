// Webhook subscriptions of an account (an organization, or a user without one) and the delivery
// of their events (Standard Webhooks: infra/webhooks/signing.ts) by a durable job.
//
// An event is queued with the change that makes it (InspectionRepository's change listener runs
// in the change's transaction): one message per matching subscription and a job per message.
// A failed attempt (no answer, or a status other than 2xx) is retried by a new job delayed by the
// retry policy (30 s doubling, up to 24 h: signing.ts); each attempt is a row of the delivery log.
// A message whose attempts all failed counts against its subscription; DISABLE_AFTER_FAILED_EVENTS
// such messages in a row (no success between) disable it, and its creator is told by e-mail.
import crypto from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { ownerOf } from '../auth/access.ts';
import { notFound, permissionDenied, ValidationError } from '../../infra/http/errors.ts';
import { OutboundError, postSafely, urlProblem } from '../../infra/webhooks/outbound.ts';
import { newWebhookSecret, nextRetrySeconds, signedHeaders, type RetryPolicy, type SecretBox } from '../../infra/webhooks/signing.ts';
import { eventsOfChange, type EventOf } from './webhook-events.ts';

/** Messages in a row whose every attempt failed before a subscription is disabled. */
export const DISABLE_AFTER_FAILED_EVENTS = 5;
/** Subscriptions per account. */
export const MAX_WEBHOOKS = 20;

export interface WebhookOptions {
  allowPrivate: boolean;
  retry: RetryPolicy;
  timeoutMs: number;
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

export class WebhookService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly jobs: JobQueue,
    private readonly box: SecretBox,
    private readonly options: WebhookOptions,
    private readonly logger: Logger,
  ) {}

  // Subscriptions

  async create(auth: AuthContext, url: string, events: string[]): Promise<WebhookRecord & { secret: string }> {
    if (auth.share) throw permissionDenied();
    const problem = urlProblem(url, this.options.allowPrivate);
    if (problem) throw ValidationError.field('url', problem);
    const owner = ownerOf(auth);
    const { count } = await this.owned(auth)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    if (Number(count) >= MAX_WEBHOOKS) throw ValidationError.field('non_field_errors', `At most ${MAX_WEBHOOKS} webhooks per account; delete one first.`);
    const secret = newWebhookSecret();
    const row = await this.db
      .insertInto('inspection.webhooks')
      .values({ organization_id: owner.organization_id, user_id: owner.user_id, url, events: JSON.stringify([...new Set(events)]), secret_sealed: this.box.seal(secret) })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...toRecord(row), secret };
  }

  async list(auth: AuthContext): Promise<WebhookRecord[]> {
    const rows = await this.owned(auth).selectAll().orderBy('id').execute();
    return rows.map(toRecord);
  }

  async get(auth: AuthContext, id: number): Promise<WebhookRecord> {
    return toRecord(await this.find(auth, id));
  }

  async remove(auth: AuthContext, id: number): Promise<void> {
    const row = await this.find(auth, id);
    const result = await this.db.deleteFrom('inspection.webhooks').where('id', '=', row.id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound('Webhook');
  }

  /** The delivery log, newest first (at most `limit` attempts). */
  async deliveries(auth: AuthContext, id: number, limit = 1000): Promise<DeliveryRecord[]> {
    const row = await this.find(auth, id);
    const attempts = await this.db
      .selectFrom('inspection.webhook_attempts as a')
      .innerJoin('inspection.webhook_messages as m', 'm.id', 'a.message_id')
      .select(['a.id', 'a.at', 'a.attempt', 'a.status_code', 'a.error', 'm.event', 'm.uid'])
      .where('a.webhook_id', '=', row.id)
      .orderBy('a.id', 'desc')
      .limit(limit)
      .execute();
    return attempts.map((a) => ({
      id: a.id,
      at: new Date(a.at).toISOString(),
      event: a.event,
      message_id: a.uid,
      attempt: a.attempt,
      status_code: a.status_code,
      error: a.error,
      succeeded: a.status_code !== null && a.status_code >= 200 && a.status_code < 300,
    }));
  }

  private owned(auth: AuthContext) {
    if (auth.share) throw permissionDenied();
    const q = this.db.selectFrom('inspection.webhooks');
    return auth.organization ? q.where('organization_id', '=', auth.organization.id) : q.where('organization_id', 'is', null).where('user_id', '=', auth.userId);
  }

  private async find(auth: AuthContext, id: number) {
    const row = await this.owned(auth).selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('Webhook');
    return row;
  }

  // Events

  /** InspectionRepository's change listener: queues the change's events in its transaction. */
  readonly inspectionChanged = async (trx: Transaction<InspectionTables>, before: InspectionRow, after: InspectionRow): Promise<void> => {
    const events = eventsOfChange(before, after);
    if (events.length === 0) return;
    const q = trx.selectFrom('inspection.webhooks').select(['id', 'events']).where('disabled_at', 'is', null);
    const subscriptions = await (after.organization_id !== null
      ? q.where('organization_id', '=', after.organization_id)
      : q.where('organization_id', 'is', null).where('user_id', '=', after.user_id)
    ).execute();
    if (subscriptions.length === 0) return;
    for (const event of events) {
      for (const subscription of subscriptions) {
        if (subscription.events.includes(event.type)) await this.queue(trx, subscription.id, event);
      }
    }
  };

  private async queue(trx: Transaction<InspectionTables>, webhookId: number, event: EventOf): Promise<void> {
    const uid = `msg_${crypto.randomUUID().replaceAll('-', '')}`;
    const body = JSON.stringify({ type: event.type, timestamp: new Date().toISOString(), data: event.data });
    const { id } = await trx.insertInto('inspection.webhook_messages').values({ uid, webhook_id: webhookId, event: event.type, body }).returning('id').executeTakeFirstOrThrow();
    await this.jobs.send<InspectionJobs, 'inspection.deliver-webhook'>('inspection.deliver-webhook', { messageId: id }, { trx });
  }

  // Delivery (job inspection.deliver-webhook; idempotent: a message no longer pending is left alone)

  async deliver(messageId: number): Promise<void> {
    const message = await this.db
      .selectFrom('inspection.webhook_messages as m')
      .innerJoin('inspection.webhooks as w', 'w.id', 'm.webhook_id')
      .select(['m.id', 'm.uid', 'm.body', 'm.event', 'm.state', 'm.attempts', 'm.created_at', 'w.id as webhook_id', 'w.url', 'w.secret_sealed', 'w.disabled_at'])
      .where('m.id', '=', messageId)
      .executeTakeFirst();
    if (!message || message.state !== 'pending') return;
    if (message.disabled_at) {
      await this.db.updateTable('inspection.webhook_messages').set({ state: 'failed' }).where('id', '=', messageId).execute();
      return;
    }
    const attempt = message.attempts + 1;
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const secret = this.box.open(message.secret_sealed);
      const headers = { ...signedHeaders(secret, message.uid, new Date(), message.body), 'user-agent': 'open-inspection-webhooks/1' };
      const response = await postSafely(message.url, message.body, headers, { allowPrivate: this.options.allowPrivate, timeoutMs: this.options.timeoutMs });
      statusCode = response.status;
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      error = err.message;
    }
    const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
    const retryIn = ok ? undefined : nextRetrySeconds(this.options.retry, attempt, (Date.now() - new Date(message.created_at).getTime()) / 1000);
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('inspection.webhook_attempts').values({ message_id: message.id, webhook_id: message.webhook_id, attempt, status_code: statusCode, error }).execute();
      const state = ok ? 'delivered' : retryIn === undefined ? 'failed' : 'pending';
      await trx.updateTable('inspection.webhook_messages').set({ attempts: attempt, state }).where('id', '=', message.id).execute();
      if (ok) {
        await trx.updateTable('inspection.webhooks').set({ failed_events: 0 }).where('id', '=', message.webhook_id).execute();
      } else if (retryIn !== undefined) {
        await this.jobs.send<InspectionJobs, 'inspection.deliver-webhook'>('inspection.deliver-webhook', { messageId: message.id }, { trx, startAfterSeconds: retryIn });
      } else {
        await this.eventFailed(trx, message.webhook_id);
      }
    });
    if (!ok) this.logger.info({ webhookId: message.webhook_id, messageId: message.uid, attempt, statusCode, error, retryIn }, 'webhook delivery failed');
  }

  /** Every attempt of one message failed: counts towards disabling the subscription. */
  private async eventFailed(trx: Transaction<InspectionTables>, webhookId: number): Promise<void> {
    const row = await trx
      .updateTable('inspection.webhooks')
      .set((eb) => ({ failed_events: eb('failed_events', '+', 1) }))
      .where('id', '=', webhookId)
      .returning(['failed_events', 'disabled_at', 'url', 'user_id'])
      .executeTakeFirstOrThrow();
    if (row.disabled_at || row.failed_events < DISABLE_AFTER_FAILED_EVENTS) return;
    const reason = `The last ${row.failed_events} events could not be delivered (every attempt failed).`;
    await trx.updateTable('inspection.webhooks').set({ disabled_at: new Date(), disabled_reason: reason }).where('id', '=', webhookId).execute();
    const user = await trx.selectFrom('inspection.users').select('email').where('id', '=', row.user_id).executeTakeFirst();
    if (!user?.email) return;
    const text = [
      `Webhook ${webhookId} (${row.url}) has been disabled.`,
      '',
      reason,
      '',
      `Its delivery log: GET /v1/webhooks/${webhookId}/deliveries/. No more events are sent to it; create a new webhook once the receiver answers again.`,
    ].join('\n');
    await this.jobs.send<InspectionJobs, 'inspection.send-email'>('inspection.send-email', { to: user.email, subject: `Webhook ${webhookId} disabled after failed deliveries`, text }, { trx });
  }
}

function toRecord(row: { id: number; url: string; events: string[]; created_at: Date; disabled_at: Date | null; disabled_reason: string | null }): WebhookRecord {
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
