// Access checks of the records other records hang on: the inspection or asset a request names,
// if the request may see it (access.ts: its organization's, or the user's own), else "not found"
// (never "forbidden": another account's records are not revealed). Services check access through
// this, not through InspectionService or AssetService.
import type { Kysely } from 'kysely';
import type { AssetRow, InspectionRow, InspectionTables } from '../inspection.tables.ts';
import type { AuthContext } from './auth.service.ts';
import { assetsVisibleTo } from './access.ts';
import type { InspectionRepository } from '../inspections/inspection.repository.ts';
import { notFound, ValidationError } from '../../infra/http/errors.ts';
import { refusePurged } from '../retention/purged.ts';

export type AssetView = AssetRow & { organization_uuid: string | null };

export interface RequireOptions {
  /** Named by this body field: an unknown id is a 400 on the field instead of a 404. */
  field?: string;
}

export class InspectionAccess {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly inspections: InspectionRepository,
  ) {}

  async requireInspection(auth: AuthContext, id: number, options: RequireOptions = {}): Promise<InspectionRow> {
    const row = await this.inspections.visible(auth).where('id', '=', id).executeTakeFirst();
    if (!row) throw missing('Inspection', id, options);
    return row;
  }

  /**
   * As requireInspection, for a route that serves or changes the inspection's photos, cameras,
   * outputs or inputs: 410 `purged` once retention gave them up (retention/purged.ts).
   */
  async requireInspectionData(auth: AuthContext, id: number): Promise<InspectionRow> {
    const row = await this.requireInspection(auth, id);
    refusePurged(row);
    return row;
  }

  async requireAsset(auth: AuthContext, id: number, options: RequireOptions = {}): Promise<AssetView> {
    const asset = await this.assets(auth).where('a.id', '=', id).executeTakeFirst();
    if (!asset) throw missing('Asset', id, options);
    return asset;
  }

  /** Live assets the request may see, with their organization's uuid. */
  assets(auth: AuthContext) {
    return this.db
      .selectFrom('inspection.assets as a')
      .leftJoin('inspection.organizations as o', 'o.id', 'a.organization_id')
      .selectAll('a')
      .select('o.uuid as organization_uuid')
      .where('a.deleted_at', 'is', null)
      .where(assetsVisibleTo(auth, 'a'));
  }
}

function missing(what: string, id: number, options: RequireOptions): Error {
  return options.field ? ValidationError.field(options.field, `Invalid pk "${id}" - object does not exist.`) : notFound(what);
}
