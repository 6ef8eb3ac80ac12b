// The storage quota of an account (STORAGE_ORGANIZATION_QUOTA_BYTES): what the clients of one
// organization (or of one user acting without one, the allowance's account) may keep in the
// object store, summed over its live inspections. The embedded store's per-prefix quota
// (infra/storage/upload-limits.ts) bounds one inspection only, inspections are free to create, and
// an external S3 store has no quota of ours at all; so the account's total is held here, in the
// inspection service, the same way with either store:
//   - usage is the bytes of the files the account's live inspections registered, each file's
//     size read from the store (HEAD) when it is registered and kept with it;
//   - a registration that would take the account beyond its quota is refused whole, before the
//     cloud project sees its keys: 403 `storage_quota_exceeded`, with the figures;
//   - storage credentials are refused once the account has reached its quota: no new upload
//     session starts until inspections are deleted.
// Why registered files and not a listing of the prefixes: listing the embedded store costs about
// a millisecond per object (100,000 photos: over a minute per check), where the registration
// already reads each file's size. What it does not count: files uploaded and never registered,
// which are never processed either; the per-prefix quota bounds them on the embedded store, the
// credentials' lifetime (STORAGE_CREDENTIALS_TTL) everywhere. Registrations of one account that
// run at the same time are each checked against what was registered before them, so together
// they can pass the quota by at most what they register (500 keys per call).
import type { Kysely } from 'kysely';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { HeadedObject } from '../../shared/images/image-reader.ts';
import { ApiError } from '../../infra/http/errors.ts';

type Account = Pick<InspectionRow, 'organization_id' | 'user_id'>;

export class StorageQuota {
  /** @param quotaBytes bytes per account; 0: no quota. */
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly quotaBytes: number,
  ) {}

  /** Before storage credentials: refused once the inspection's account has reached its quota. */
  async requireRoomToUpload(inspection: InspectionRow): Promise<void> {
    if (!this.quotaBytes) return;
    const used = await this.registeredBytes(inspection);
    if (used >= this.quotaBytes) throw this.exceeded(inspection, used, 'no storage credentials are issued until inspections are deleted');
  }

  /** Before registering `objects` (HEAD's answers) to the inspection: refused when they would take its account beyond the quota. */
  async requireRoomFor(inspection: InspectionRow, objects: readonly HeadedObject[]): Promise<void> {
    if (!this.quotaBytes) return;
    const known = new Set(
      objects.length === 0
        ? []
        : (
            await this.db
              .selectFrom('inspection.inspection_images')
              .select('key')
              .where('inspection_id', '=', inspection.id)
              .where('key', 'in', objects.map((o) => o.key))
              .execute()
          ).map((r) => r.key),
    );
    const adding = objects.reduce((sum, o) => sum + (known.has(o.key) ? 0 : (o.info?.size ?? 0)), 0);
    const used = await this.registeredBytes(inspection);
    if (used + adding > this.quotaBytes) {
      throw this.exceeded(inspection, used, `these files (${describeBytes(adding)}) would take it beyond; nothing was registered`);
    }
  }

  /** Bytes of the uploads registered to the account's live inspections. */
  async registeredBytes(account: Account): Promise<number> {
    const { bytes } = await this.db
      .selectFrom('inspection.inspection_images as f')
      .innerJoin('inspection.inspections as i', 'i.id', 'f.inspection_id')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('f.size'), eb.lit(0)).as('bytes'))
      .where('i.deleted_at', 'is', null)
      .where('i.purged_at', 'is', null) // retention deleted those uploads (retention/retention.service.ts)
      .where('f.source', '=', 'upload')
      .where((eb) =>
        account.organization_id !== null ? eb('i.organization_id', '=', account.organization_id) : eb.and([eb('i.organization_id', 'is', null), eb('i.user_id', '=', account.user_id)]),
      )
      .executeTakeFirstOrThrow();
    return Number(bytes);
  }

  private exceeded(account: Account, used: number, consequence: string): ApiError {
    const owner = account.organization_id !== null ? 'The organization' : 'Your account';
    return new ApiError(
      403,
      'storage_quota_exceeded',
      `${owner} stores ${describeBytes(used)} of registered uploads; its storage quota is ${describeBytes(this.quotaBytes)} (STORAGE_ORGANIZATION_QUOTA_BYTES): ${consequence}.`,
    );
  }
}

function describeBytes(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = '';
  for (const next of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  return unit ? `${bytes} bytes (${value.toFixed(1)} ${unit})` : `${bytes} bytes`;
}
