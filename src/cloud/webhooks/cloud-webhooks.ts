// Webhooks of an organization's projects (issue 30 §2): subscriptions made by its OAuth clients
// (any client of the organization sees and deletes them, as it sees its projects), the event
// project.status_changed queued with each change of a project's public_status
// (ProjectRepository's listener), delivered by the shared core (infra/webhooks/webhook-core.ts).
// A subscription disabled after repeated failure says so in its record (active false,
// disabled_reason) and its delivery log, and the client that subscribed is told at its
// notification address (`disabled`: notifications/cloud-mail.ts).
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { CloudTables, ProjectRow } from '../cloud.tables.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { CloudJobs } from '../cloud.jobs.ts';
import type { CloudPrincipal } from '../auth/oauth.service.ts';
import type { SecretBox } from '../../infra/webhooks/signing.ts';
import { WebhookCore, type DeliveryRecord, type WebhookCoreDeps, type Scope, type WebhookOptions, type WebhookRecord } from '../../infra/webhooks/webhook-core.ts';

export const CLOUD_WEBHOOK_EVENTS = ['project.status_changed'] as const;

const organizationScope =
  (organizationId: number): Scope =>
  (q) =>
    q.where('organization_id', '=', organizationId) as typeof q;

export class CloudWebhookService {
  private readonly core: WebhookCore;

  constructor(db: Kysely<CloudTables>, jobs: JobQueue, box: SecretBox, options: WebhookOptions, logger: Logger, disabled?: WebhookCoreDeps['disabled']) {
    this.core = new WebhookCore({
      db,
      schema: 'cloud',
      box,
      options,
      logger,
      sendJob: (trx, messageId, { tenant, delaySeconds }) => jobs.send<CloudJobs, 'cloud.deliver-webhook'>('cloud.deliver-webhook', { messageId }, { trx, startAfterSeconds: delaySeconds, group: tenant }),
      tenantOf: (webhook) => `organization-${webhook.organization_id}`,
      disabled,
    });
  }

  create(principal: CloudPrincipal, url: string, events: string[]): Promise<WebhookRecord & { secret: string }> {
    return this.core.create(organizationScope(principal.organizationId), { organization_id: principal.organizationId, client_id: principal.clientRowId }, url, events);
  }

  list(principal: CloudPrincipal): Promise<WebhookRecord[]> {
    return this.core.list(organizationScope(principal.organizationId));
  }

  get(principal: CloudPrincipal, id: number): Promise<WebhookRecord> {
    return this.core.get(organizationScope(principal.organizationId), id);
  }

  /** PATCH {"enabled": …}: a disabled subscription enabled again, or one disabled by hand. */
  setEnabled(principal: CloudPrincipal, id: number, enabled: boolean): Promise<WebhookRecord> {
    return this.core.setEnabled(organizationScope(principal.organizationId), id, enabled);
  }

  remove(principal: CloudPrincipal, id: number): Promise<void> {
    return this.core.remove(organizationScope(principal.organizationId), id);
  }

  deliveries(principal: CloudPrincipal, id: number): Promise<DeliveryRecord[]> {
    return this.core.deliveries(organizationScope(principal.organizationId), id);
  }

  /** Job cloud.deliver-webhook. */
  deliver(messageId: number): Promise<void> {
    return this.core.deliver(messageId);
  }

  /** ProjectRepository's listener. */
  readonly projectStatusChanged = (trx: Transaction<CloudTables>, before: ProjectRow, after: ProjectRow): Promise<void> =>
    this.core.emit(trx, organizationScope(after.organization_id), [
      {
        type: 'project.status_changed',
        data: {
          project_id: after.id,
          project_uuid: after.uuid,
          old_status: before.public_status,
          new_status: after.public_status,
          detailed_status: after.detailed_status ?? null,
        },
      },
    ]);
}
