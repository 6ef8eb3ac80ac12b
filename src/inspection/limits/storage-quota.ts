// The storage quota of an account (STORAGE_ORGANIZATION_QUOTA_BYTES): what the clients of one
// organization (or of one user acting without one) may keep in the object store, summed over the
// upload prefixes of its live inspections. The embedded store's per-prefix quota
// (infra/storage/upload-limits.ts) bounds one inspection only, and inspections are free to create;
// an external S3 store has no quota of ours at all. So the account's total is checked here, in the
// inspection service, where uploads begin and end, the same way with either store:
//   - storage credentials are refused (403 `storage_quota_exceeded`) once the account has reached
//     its quota: no new upload session starts;
//   - registration is refused when the account is beyond it: photos uploaded past the quota (with
//     credentials issued before) are never processed.
// Usage is measured by listing the prefixes (ObjectStore.listObjects), so it counts every object,
// registered or not, whatever wrote it. A prefix's figure is reused for `reuseMs` (listing costs
// a call per 1,000 objects), except the prefix of the inspection being checked, always measured
// again. What it does not stop: credentials issued before the quota was reached keep working until
// they expire (STORAGE_CREDENTIALS_TTL); on the embedded store the per-prefix quota still bounds them.
import type { Kysely } from 'kysely';
import type { InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { ObjectStore } from '../../infra/storage/object-store.ts';
import { ApiError } from '../../infra/http/errors.ts';
import { mapConcurrently } from '../../shared/concurrency.ts';

export interface StorageQuotaOptions {
  /** Bytes per account; 0: no quota (nothing is measured). */
  quotaBytes: number;
  /** How long a measured prefix is trusted, ms (default 60 s). */
  reuseMs?: number;
  now?: () => number;
}

type Account = Pick<InspectionRow, 'organization_id' | 'user_id'>;

const PREFIXES_AT_ONCE = 8;
const MAX_REMEMBERED = 10_000;

export class StorageQuota {
  private readonly quota: number;
  private readonly reuseMs: number;
  private readonly now: () => number;
  /** prefix -> bytes measured, and when. */
  private readonly measured = new Map<string, { bytes: number; at: number }>();

  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly store: ObjectStore,
    private readonly bucket: string,
    options: StorageQuotaOptions,
  ) {
    this.quota = options.quotaBytes;
    this.reuseMs = options.reuseMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Before storage credentials: refused once the inspection's account has reached its quota. */
  async requireRoomToUpload(inspection: InspectionRow): Promise<void> {
    if (!this.quota) return;
    const used = await this.usage(inspection, inspection.storage_prefix);
    if (used >= this.quota) throw quotaExceeded(inspection, used, this.quota, 'no storage credentials are issued until inspections are deleted');
  }

  /** Before registration: refused while the account stores more than its quota, this inspection's uploads included. */
  async requireWithinQuota(inspection: InspectionRow): Promise<void> {
    if (!this.quota) return;
    const used = await this.usage(inspection, inspection.storage_prefix);
    if (used > this.quota) throw quotaExceeded(inspection, used, this.quota, 'images cannot be registered until inspections are deleted');
  }

  /** Bytes under the upload prefixes of the account's live inspections; `fresh` is measured now. */
  async usage(account: Account, fresh: string | null): Promise<number> {
    const rows = await this.db
      .selectFrom('inspection.inspections')
      .select('storage_prefix')
      .where('deleted_at', 'is', null)
      .where('storage_prefix', 'is not', null)
      .where((eb) => (account.organization_id !== null ? eb('organization_id', '=', account.organization_id) : eb.and([eb('organization_id', 'is', null), eb('user_id', '=', account.user_id)])))
      .execute();
    const prefixes = [...new Set(rows.map((r) => r.storage_prefix!).filter(Boolean))];
    const sizes = await mapConcurrently(prefixes, PREFIXES_AT_ONCE, (prefix) => this.bytesUnder(prefix, prefix === fresh));
    return sizes.reduce((sum, n) => sum + n, 0);
  }

  private async bytesUnder(prefix: string, fresh: boolean): Promise<number> {
    const known = this.measured.get(prefix);
    if (!fresh && known && this.now() - known.at < this.reuseMs) return known.bytes;
    let bytes = 0;
    let continuationToken: string | undefined;
    do {
      const page = await this.store.listObjects(this.bucket, { prefix, maxKeys: 1000, continuationToken });
      for (const object of page.objects) bytes += object.size;
      continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (continuationToken);
    this.measured.delete(prefix); // re-inserted last: the oldest go first when the map is full
    this.measured.set(prefix, { bytes, at: this.now() });
    if (this.measured.size > MAX_REMEMBERED) this.measured.delete(this.measured.keys().next().value!);
    return bytes;
  }
}

function quotaExceeded(account: Account, used: number, quota: number, consequence: string): ApiError {
  const owner = account.organization_id !== null ? 'The organization' : 'Your account';
  return new ApiError(
    403,
    'storage_quota_exceeded',
    `${owner} stores ${describeBytes(used)} of uploads, and its storage quota is ${describeBytes(quota)} (STORAGE_ORGANIZATION_QUOTA_BYTES): ${consequence}.`,
  );
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
