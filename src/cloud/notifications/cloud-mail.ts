// E-mails of the cloud service to its clients (issue 30 §2, §5). As the real product mails the one
// who processed a project (a first e-mail when processing begins, a second when it has finished,
// the error when it failed), a project's creator client is told at its notification address
// (cloud.clients.email, set by the admin CLI) when processing starts (public_status PROCESSING),
// completes (DONE) and fails (ERROR: the code and what it means, the reason, what to do). The
// client that subscribed a webhook is told when the subscription is disabled after repeated failure.
//
// Each e-mail is a durable job (cloud.send-email) queued in the transaction of the change that
// causes it: it exists only if the change was committed, processing never waits for a mail server,
// and a failed sending is logged and retried by the job queue, never failing the project.
// Service clients (the inspection service's, acting for organizations) get no processing e-mails:
// the inspection service mails its own users about their inspections (inspection/notifications).
import type { Transaction } from 'kysely';
import type { CloudTables, ProjectRow } from '../cloud.tables.ts';
import type { CloudJobs } from '../cloud.jobs.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { WebhookRow } from '../../infra/webhooks/webhook-core.ts';
import { errorCodeMeaning } from '../processing/error-codes.ts';

type Mail = CloudJobs['cloud.send-email'];
type ProcessingOutcome = 'started' | 'completed' | 'failed';

/** The public statuses that are told, and how. */
const OUTCOME_OF: Partial<Record<ProjectRow['public_status'], ProcessingOutcome>> = { PROCESSING: 'started', DONE: 'completed', ERROR: 'failed' };

export class CloudMailService {
  constructor(
    private readonly jobs: JobQueue,
    private readonly publicUrl: () => string,
  ) {}

  /** ProjectRepository's status listener: the processing e-mail of the new status, if it has one. */
  readonly projectStatusChanged = async (trx: Transaction<CloudTables>, before: ProjectRow, after: ProjectRow): Promise<void> => {
    const outcome = OUTCOME_OF[after.public_status];
    if (!outcome || before.public_status === after.public_status || after.client_id === null) return;
    const client = await trx.selectFrom('cloud.clients').select(['email', 'acts_for_organizations']).where('id', '=', after.client_id).executeTakeFirst();
    if (!client?.email || client.acts_for_organizations) return;
    await this.send(trx, { to: client.email, ...processingMail(outcome, after, this.publicUrl()) });
  };

  /** WebhookCore's `disabled`: tells the client that subscribed (if it still exists and has an address). */
  readonly webhookDisabled = async (trx: Transaction<unknown>, webhook: WebhookRow, reason: string): Promise<void> => {
    const clientId = webhook.client_id as number | null;
    if (clientId === null) return;
    const db = trx as unknown as Transaction<CloudTables>;
    const client = await db.selectFrom('cloud.clients').select('email').where('id', '=', clientId).executeTakeFirst();
    if (!client?.email) return;
    const route = `${this.publicUrl()}/project/api/v3/webhooks/${webhook.id}/`;
    const text = [
      `Webhook ${webhook.id} (${webhook.url}) has been disabled.`,
      '',
      reason,
      '',
      `Its delivery log: GET ${route}deliveries/. No more events are sent to it. Once the receiver answers again, enable it: PATCH ${route} with {"enabled": true}.`,
    ].join('\n');
    await this.send(db, { to: client.email, subject: `Webhook ${webhook.id} disabled after failed deliveries`, text });
  };

  private send(trx: Transaction<CloudTables>, mail: Mail): Promise<void> {
    return this.jobs.send<CloudJobs, 'cloud.send-email'>('cloud.send-email', mail, { trx });
  }
}

/** Subject and text of a processing e-mail. */
export function processingMail(outcome: ProcessingOutcome, project: ProjectRow, baseUrl: string): { subject: string; text: string } {
  const label = `Project "${project.name}" (${project.id})`;
  const url = `${baseUrl}/project/api/v3/projects/${project.id}/`;
  const facts = [`Project id: ${project.id}`, `Project uuid: ${project.uuid}`, `Images: ${project.image_count}`];
  const at = (date: Date | string | null) => (date ? new Date(date).toISOString() : 'unknown');
  switch (outcome) {
    case 'started':
      return {
        subject: `${label}: processing started`,
        text: [
          `Processing of your project "${project.name}" has started.`,
          '',
          ...facts,
          `Started: ${at(project.processing_started_at)}`,
          '',
          'You will get another e-mail when processing has finished.',
          `Its progress: GET ${url}`,
        ].join('\n'),
      };
    case 'completed':
      return {
        subject: `${label}: processing completed`,
        text: [
          `Processing of your project "${project.name}" has completed: its outputs are ready.`,
          '',
          ...facts,
          `Started: ${at(project.processing_started_at)}`,
          `Completed: ${at(project.processing_ended_at)}`,
          '',
          `Its outputs: GET ${url}outputs/`,
        ].join('\n'),
      };
    case 'failed': {
      const code = project.error_code ?? 10001;
      const { meaning, mitigation } = errorCodeMeaning(code);
      return {
        subject: `${label}: processing failed (error ${code})`,
        text: [
          `Processing of your project "${project.name}" has failed.`,
          '',
          `Error ${code}: ${meaning}.`,
          `Reason: ${project.error_reason || meaning}`,
          ...(mitigation ? [`What to do: ${mitigation}.`] : []),
          '',
          ...facts,
          `Started: ${at(project.processing_started_at)}`,
          `Failed: ${at(project.processing_ended_at)}`,
          '',
          `The project: GET ${url}`,
        ].join('\n'),
      };
    }
  }
}
