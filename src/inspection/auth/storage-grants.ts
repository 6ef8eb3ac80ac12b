// The storage credentials GET s3_credentials hands each user, kept until they expire, so that the
// embedded store can ask what became of them (infra/storage/revoked-credentials.ts):
//   - a member removed from the organization: theirs are revoked (membership-removal.ts);
//   - an inspection whose processing has started: its credentials only read from then on (spec
//     rule 4: image files are uploaded only before processing starts), including those handed
//     out before, which the cloud project alone would still let write until the cloud's own
//     processing starts (after the inspection's analysis).
// On an external store with per-prefix roles, where single credentials cannot be revoked, the
// roles of the prefixes a removed member was handed credentials for refuse instead every session
// issued before the removal (per-prefix-roles.ts); on a store that cannot (a shared role, the
// `storage` command) they last until they expire, and so do, on every external store, the
// credentials obtained before processing started.
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { InspectionTables } from '../inspection.tables.ts';
import type { CredentialState } from '../../infra/storage/revoked-credentials.ts';
import { takesUploads } from '../inspections/statuses.ts';

/** What the object store can end (system.ts wires it to the embedded endpoint and the credential issuer). */
export interface StorageRevocation {
  /** Single credentials revoked: the embedded store refuses them from their next request. */
  revoked(accessKeys: string[]): void;
  /** Every credential of `prefix` issued before `before` refused, where the store can (per-prefix roles). */
  revokeIssuedBefore(prefix: string, before: Date): Promise<void>;
}

/** Credentials revoked in a removal's transaction, to be ended on the store once it committed. */
export interface RevokedGrants {
  accessKeys: string[];
  prefixes: string[];
  at: Date;
}

export class StorageGrants {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly revocation: StorageRevocation | undefined,
    private readonly logger: Logger,
  ) {}

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

  /** Revokes (in `trx`) the unexpired credentials handed to `userId` for the organization's inspections. */
  async revokeMember(trx: Transaction<InspectionTables>, organizationId: number, userId: number, at: Date): Promise<RevokedGrants> {
    const rows = await trx
      .updateTable('inspection.storage_credential_grants as g')
      .set({ revoked_at: at })
      .from('inspection.inspections as i')
      .whereRef('i.id', '=', 'g.inspection_id')
      .where('g.organization_id', '=', organizationId)
      .where('g.user_id', '=', userId)
      .where('g.revoked_at', 'is', null)
      .where('g.expires_at', '>', at)
      .returning(['g.access_key', 'i.storage_prefix'])
      .execute();
    const prefixes = [...new Set(rows.flatMap((r) => (r.storage_prefix ? [r.storage_prefix] : [])))];
    return { accessKeys: rows.map((r) => r.access_key), prefixes, at };
  }

  /** Ends on the store the credentials a committed removal revoked (a store refusing is logged: they then last until they expire). */
  async endRevoked(revoked: RevokedGrants): Promise<void> {
    if (!this.revocation) return;
    this.revocation.revoked(revoked.accessKeys);
    for (const prefix of revoked.prefixes) {
      await this.revocation.revokeIssuedBefore(prefix, revoked.at).catch((err) => this.logger.error({ err, prefix }, 'storage: could not refuse the sessions of a removed member; they last until they expire'));
    }
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
