// Assets: the physical structures inspected. Creating one creates a project group in the cloud.
import type { Kysely } from 'kysely';
import type { AssetRow, InspectionTables } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { ownerOf, visibleTo } from '../auth/access.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import { notFound } from '../../infra/http/errors.ts';
import { ASSET_TYPES } from './asset-types.ts';

export type AssetView = AssetRow & { organization_uuid: string | null };

export interface AssetInput {
  name: string;
  type: number;
  latitude?: string | number | null;
  longitude?: string | number | null;
  description?: string | null;
}

export class AssetService {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    private readonly cloud: CloudClient,
  ) {}

  types(): { id: number; description: string; family: string }[] {
    return [...ASSET_TYPES];
  }

  async create(auth: AuthContext, input: AssetInput): Promise<AssetView> {
    // The project group first: if the cloud is down, nothing is half-created here.
    const group = await this.cloud.createProjectGroup(input.name);
    const row = await this.db
      .insertInto('inspection.assets')
      .values({
        ...ownerOf(auth),
        name: input.name,
        type: input.type,
        latitude: input.latitude ?? null,
        longitude: input.longitude ?? null,
        description: input.description ?? null,
        project_group_id: group.id,
        project_group_uuid: group.uuid,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...row, organization_uuid: auth.organization?.uuid ?? null };
  }

  async require(auth: AuthContext, id: number): Promise<AssetView> {
    const asset = await this.visible(auth).where('a.id', '=', id).executeTakeFirst();
    if (!asset) throw notFound('Asset');
    return asset;
  }

  list(auth: AuthContext, search?: string): Promise<AssetView[]> {
    return this.visible(auth)
      .$if(Boolean(search), (q) => q.where('a.name', 'ilike', `%${escapeLike(search!)}%`))
      .orderBy('a.id')
      .execute();
  }

  /** Assets the request may see, with their organization's uuid. */
  private visible(auth: AuthContext) {
    return this.db
      .selectFrom('inspection.assets as a')
      .leftJoin('inspection.organizations as o', 'o.id', 'a.organization_id')
      .selectAll('a')
      .select('o.uuid as organization_uuid')
      .where('a.deleted_at', 'is', null)
      .where(visibleTo(auth, 'a'));
  }

  async inspectionIds(assetIds: number[]): Promise<Map<number, number[]>> {
    const map = new Map<number, number[]>(assetIds.map((id) => [id, []]));
    if (assetIds.length === 0) return map;
    const rows = await this.db
      .selectFrom('inspection.inspections')
      .select(['id', 'asset_id'])
      .where('asset_id', 'in', assetIds)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute();
    for (const row of rows) map.get(row.asset_id)?.push(row.id);
    return map;
  }
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
