// The storage credentials GET s3_credentials hands each user, kept until they expire, so that the
// embedded store can ask what became of them (infra/storage/revoked-credentials.ts):
//   - a member removed from the organization: theirs are revoked (membership-removal.ts);
//   - an inspection whose processing has started: its credentials only read from then on (spec
//     rule 4: image files are uploaded only before processing starts), including those handed
//     out before, which the cloud project alone would still let write until the cloud's own
//     processing starts (after the inspection's analysis).
import type { Kysely } from 'kysely';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { CredentialState } from '../../infra/storage/revoked-credentials.ts';
import { PROCESSABLE_STATUSES } from '../inspections/statuses.ts';

export class StorageGrants {
  constructor(private readonly db: Kysely<InspectionTables>) {}

  /** Remembers credentials handed to `userId` for an inspection (of `organizationId`, or personal: null). */
  async record(grant: { accessKey: string; userId: number; organizationId: number | null; inspectionId: number; expiresAt: string }): Promise<void> {
    await this.db
      .insertInto('inspection.storage_credential_grants')
      .values({ access_key: grant.accessKey, user_id: grant.userId, organization_id: grant.organizationId, inspection_id: grant.inspectionId, expires_at: grant.expiresAt })
      .onConflict((oc) => oc.column('access_key').doNothing())
      .execute();
    // Expired grants are of no more use: this user's go now (one indexed delete, no sweep job).
    await this.db
      .deleteFrom('inspection.storage_credential_grants')
      .where('user_id', '=', grant.userId)
      .where((eb) => (grant.organizationId === null ? eb('organization_id', 'is', null) : eb('organization_id', '=', grant.organizationId)))
      .where('expires_at', '<', new Date())
      .execute();
  }

  /** What became of the credentials with this access key (unknown ones: valid, the cloud's checks apply). */
  async stateOf(accessKey: string): Promise<CredentialState> {
    const row = await this.db
      .selectFrom('inspection.storage_credential_grants as g')
      .leftJoin('inspection.inspections as i', 'i.id', 'g.inspection_id')
      .select(['g.revoked_at', 'i.id', 'i.status', 'i.processing_started_at', 'i.retry_of'])
      .where('g.access_key', '=', accessKey)
      .executeTakeFirst();
    if (!row) return 'valid';
    if (row.revoked_at !== null) return 'revoked';
    return row.id !== null && row.status !== null && takesUploads({ ...row, status: row.status }) ? 'valid' : 'read-only';
  }
}

/** Whether image files may still be uploaded to the inspection (the rule register_images applies). */
function takesUploads(inspection: Pick<InspectionRow, 'status' | 'processing_started_at' | 'retry_of'>): boolean {
  return inspection.retry_of === null && inspection.processing_started_at === null && PROCESSABLE_STATUSES.includes(inspection.status as 1 | 2 | 20);
}
