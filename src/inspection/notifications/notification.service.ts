// The e-mails of the spec ("Events"): a status set through update to a started, finished or
// error value (unless skip_email=true), and the inputs ZIP being ready. Messages go to the
// inspection's creator, through a durable job queued in the caller's transaction: the e-mail
// exists only if the change that causes it is committed, and a failed delivery is retried.
import type { Kysely, Transaction } from 'kysely';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { JobQueue } from '../../infra/jobs/job-queue.ts';
import type { InspectionJobs } from '../inspection.jobs.ts';
import { statusCategory, statusDescription } from '../inspections/statuses.ts';

type Db = Kysely<InspectionTables> | Transaction<InspectionTables>;

export class NotificationService {
  constructor(private readonly jobs: JobQueue) {}

  /** Queues the status e-mail when the new status is a started, finished or error value. */
  async statusChanged(trx: Db, inspection: InspectionRow, status: number): Promise<boolean> {
    const category = statusCategory(status);
    if (!category) return false;
    const label = inspectionLabel(inspection);
    const subject = {
      started: `${label}: processing started`,
      finished: `${label}: processing completed`,
      error: `${label}: processing failed`,
    }[category];
    const text = [
      `The status of ${label} is now ${status} (${statusDescription(status)}).`,
      '',
      `Inspection id: ${inspection.id}`,
      `Asset id: ${inspection.asset_id}`,
    ].join('\n');
    return this.toCreator(trx, inspection, subject, text);
  }

  async inputsReady(trx: Db, inspection: InspectionRow, url: string, validHours: number): Promise<boolean> {
    const label = inspectionLabel(inspection);
    const text = [
      `The ZIP of the original inputs of ${label} is ready.`,
      '',
      `Download it (link valid ${validHours} hours): ${url}`,
      '',
      `A fresh link is always available from GET /v1/inspections/${inspection.id}/inputs/.`,
    ].join('\n');
    return this.toCreator(trx, inspection, `${label}: inputs ready for download`, text);
  }

  private async toCreator(trx: Db, inspection: InspectionRow, subject: string, text: string): Promise<boolean> {
    const user = await trx.selectFrom('inspection.users').select('email').where('id', '=', inspection.user_id).executeTakeFirst();
    if (!user?.email) return false;
    await this.jobs.send<InspectionJobs, 'inspection.send-email'>('inspection.send-email', { to: user.email, subject, text }, { trx });
    return true;
  }
}

function inspectionLabel(inspection: InspectionRow): string {
  return inspection.name ? `Inspection ${inspection.id} "${inspection.name}"` : `Inspection ${inspection.id}`;
}
