// Webhook subscriptions of an account (an organization, or a user without one) and the delivery
// of their events: the shared core (infra/webhooks/webhook-core.ts) over this service's tables,
// the events of an inspection's changes (webhook-events.ts), and the e-mail to the subscription's
// creator when it is disabled after repeated failure.
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { ownerOf } from '../auth/access.ts';
import { permissionDenied } from '../../infra/http/errors.ts';
import type { SecretBox } from '../../infra/webhooks/signing.ts';
import { WebhookCore, type DeliveryRecord, type Scope, type WebhookOptions, type WebhookRecord, type WebhookRow } from '../../infra/webhooks/webhook-core.ts';
import { eventsOfChange } from './webhook-events.ts';

export type { WebhookOptions } from '../../infra/webhooks/webhook-core.ts';

/** The user who made a subscription. */
export interface WebhookCreator {
  id: number;
  username: string;
}

export type InspectionWebhookRecord = WebhookRecord & { created_by: WebhookCreator };

/** The subscriptions of an account: an organization's, or a user's own without one. */
function accountScope(account: { organization_id: number | null; user_id: number }): Scope {
  return (q) => (account.organization_id !== null ? q.where('organization_id', '=', account.organization_id) : q.where('organization_id', 'is', null).where('user_id', '=', account.user_id)) as typeof q;
}

export class WebhookService {
  private readonly core: WebhookCore;

  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly jobs: JobQueue,
    box: SecretBox,
    options: WebhookOptions,
    logger: Logger,
  ) {
    this.core = new WebhookCore({
      db,
      schema: 'inspection',
      box,
      options,
      logger,
      sendJob: (trx, messageId, { tenant, delaySeconds }) =>
        jobs.send<InspectionJobs, 'inspection.deliver-webhook'>('inspection.deliver-webhook', { messageId }, { trx, startAfterSeconds: delaySeconds, group: tenant }),
      // The account: its organization, or the user without one.
      tenantOf: (webhook) => (webhook.organization_id !== null ? `organization-${webhook.organization_id}` : `user-${webhook.user_id}`),
      disabled: (trx, webhook, reason) => this.tellCreator(trx, webhook, reason),
    });
  }

  async create(auth: AuthContext, url: string, events: string[]): Promise<InspectionWebhookRecord & { secret: string }> {
    return this.withCreator(await this.core.create(this.scope(auth), ownerOf(auth), url, events));
  }

  async list(auth: AuthContext): Promise<InspectionWebhookRecord[]> {
    return this.withCreators(await this.core.list(this.scope(auth)));
  }

  async get(auth: AuthContext, id: number): Promise<InspectionWebhookRecord> {
    return this.withCreator(await this.core.get(this.scope(auth), id));
  }

  /** PATCH {"enabled": …}: a disabled subscription enabled again, or one disabled by hand. */
  async setEnabled(auth: AuthContext, id: number, enabled: boolean): Promise<InspectionWebhookRecord> {
    return this.withCreator(await this.core.setEnabled(this.scope(auth), id, enabled));
  }

  remove(auth: AuthContext, id: number): Promise<void> {
    return this.core.remove(this.scope(auth), id);
  }

  deliveries(auth: AuthContext, id: number): Promise<DeliveryRecord[]> {
    return this.core.deliveries(this.scope(auth), id);
  }

  /** Job inspection.deliver-webhook. */
  deliver(messageId: number): Promise<void> {
    return this.core.deliver(messageId);
  }

  /** InspectionRepository's change listener: queues the change's events in its transaction. */
  readonly inspectionChanged = (trx: Transaction<InspectionTables>, before: InspectionRow, after: InspectionRow): Promise<void> =>
    this.core.emit(trx, accountScope(after), eventsOfChange(before, after));

  private async withCreator<R extends WebhookRecord>(record: R): Promise<R & { created_by: WebhookCreator }> {
    return (await this.withCreators([record]))[0];
  }

  /**
   * Who made each subscription (issue 40 §1, F2: an organization's webhook made by a member went
   * on receiving its events after they left; removing a member now deletes theirs, and every
   * member sees whose each one is).
   */
  private async withCreators<R extends WebhookRecord>(records: R[]): Promise<(R & { created_by: WebhookCreator })[]> {
    if (records.length === 0) return [];
    const rows = await this.db
      .selectFrom('inspection.webhooks as w')
      .innerJoin('inspection.users as u', 'u.id', 'w.user_id')
      .select(['w.id', 'u.id as user_id', 'u.username'])
      .where('w.id', 'in', records.map((r) => r.id))
      .execute();
    const creators = new Map(rows.map((r) => [r.id, { id: r.user_id, username: r.username }]));
    return records.map((r) => ({ ...r, created_by: creators.get(r.id) ?? { id: 0, username: '' } }));
  }

  private scope(auth: AuthContext): Scope {
    // A share token reads one inspection; it manages nothing.
    if (auth.share) throw permissionDenied();
    return accountScope(ownerOf(auth));
  }

  private async tellCreator(trx: Transaction<unknown>, webhook: WebhookRow, reason: string): Promise<void> {
    const user = await (trx as unknown as Transaction<InspectionTables>).selectFrom('inspection.users').select('email').where('id', '=', webhook.user_id as number).executeTakeFirst();
    if (!user?.email) return;
    const text = [
      `Webhook ${webhook.id} (${webhook.url}) has been disabled.`,
      '',
      reason,
      '',
      `Its delivery log: GET /v1/webhooks/${webhook.id}/deliveries/. No more events are sent to it. Once the receiver answers again, enable it: PATCH /v1/webhooks/${webhook.id}/ with {"enabled": true}.`,
    ].join('\n');
    await this.jobs.send<InspectionJobs, 'inspection.send-email'>('inspection.send-email', { to: user.email, subject: `Webhook ${webhook.id} disabled after failed deliveries`, text }, { trx: trx as never });
  }
}
