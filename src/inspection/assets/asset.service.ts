// Assets: the physical structures inspected. Creating one creates a project group in the cloud.
import type { Kysely } from 'kysely';
import type { InspectionTables } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { ownerOf } from '../auth/access.ts';
import type { AssetView, InspectionAccess } from '../auth/inspection-access.ts';
import type { CloudClient } from '../cloud-client/cloud-client.ts';
import { notFound, ValidationError, type FieldErrors } from '../../infra/http/errors.ts';
import { ASSET_TYPES } from './asset-types.ts';
import { mapAsset } from './asset.mapper.ts';
import type { WindowedSource } from '../http/lists.ts';

export type AssetRecord = ReturnType<typeof mapAsset>;

export type { AssetView } from '../auth/inspection-access.ts';

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
    private readonly access: InspectionAccess,
    private readonly cloud: CloudClient,
  ) {}

  types(): { id: number; description: string; family: string }[] {
    return [...ASSET_TYPES];
  }

  async create(auth: AuthContext, input: AssetInput): Promise<AssetView> {
    checkCoordinates(input);
    // The project group first: if the cloud is down, nothing is half-created here.
    const group = await this.cloud.as(ownerOf(auth)).createProjectGroup(input.name);
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

  /**
   * PUT (`partial` false): every field of the body is overwritten, and the optional ones missing
   * from it are cleared (latitude, longitude, description; `type` is kept when absent, it cannot
   * be empty). PATCH: only the fields given.
   */
  async update(auth: AuthContext, id: number, input: Partial<AssetInput>, partial: boolean): Promise<AssetView> {
    const asset = await this.require(auth, id);
    checkCoordinates(input);
    const changes: Record<string, unknown> = { updated_at: new Date() };
    for (const field of ['name', 'type'] as const) {
      if (input[field] !== undefined) changes[field] = input[field];
    }
    for (const field of ['latitude', 'longitude', 'description'] as const) {
      if (input[field] !== undefined) changes[field] = input[field];
      else if (!partial) changes[field] = null;
    }
    const row = await this.db
      .updateTable('inspection.assets')
      .set(changes)
      .where('id', '=', asset.id)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound('Asset');
    return { ...row, organization_uuid: asset.organization_uuid };
  }

  require(auth: AuthContext, id: number): Promise<AssetView> {
    return this.access.requireAsset(auth, id);
  }

  /** The request's assets (deleted ones excluded), optionally those whose name contains `search`. */
  list(auth: AuthContext, search?: string): WindowedSource<AssetRecord> {
    const filtered = () => this.access.assets(auth).$if(Boolean(search), (q) => q.where('a.name', 'ilike', `%${escapeLike(search!)}%`));
    return {
      count: async () => {
        const { count } = await filtered()
          .clearSelect()
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow();
        return Number(count);
      },
      fetch: async (window) => {
        const rows = await filtered()
          .orderBy('a.id')
          .$if(window !== undefined, (q) => q.limit(window!.limit).offset(window!.offset))
          .execute();
        return this.records(rows);
      },
    };
  }

  async records(rows: AssetView[]): Promise<AssetRecord[]> {
    const inspections = await this.inspectionIds(rows.map((a) => a.id));
    return rows.map((a) => mapAsset(a, inspections.get(a.id) ?? []));
  }

  async record(row: AssetView): Promise<AssetRecord> {
    return (await this.records([row]))[0];
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

/**
 * Limits of the spec: latitude within ±90 and longitude within ±180 decimal degrees, at most 8
 * decimals (the schema checks the form; strings are range-checked here).
 */
function checkCoordinates(input: Partial<AssetInput>): void {
  const errors: FieldErrors = {};
  for (const [field, max] of [
    ['latitude', 90],
    ['longitude', 180],
  ] as const) {
    const value = input[field];
    if (value === undefined || value === null) continue;
    const text = String(value);
    const n = Number(value);
    if (!Number.isFinite(n) || Math.abs(n) > max) errors[field] = [`Ensure this value is between -${max} and ${max}.`];
    else if (typeof value === 'string' && !/^-?\d{1,3}(\.\d{1,8})?$/.test(text)) errors[field] = ['Ensure that there are no more than 8 decimal places.'];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
