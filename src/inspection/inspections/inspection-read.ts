// The read behind GET /v1/inspections/{id}/, the API's hottest call (bench/README.md, "API"): one
// prepared statement per kind of visibility (organization, user, share token) selecting the
// columns the record is made of and its bundle's retries, parsed and planned once per database
// connection (infra/database/prepared-statement.ts) instead of built by Kysely, parsed and
// planned on every request.
//
// The statements are compiled by Kysely from the same pieces as every other read (the live rows
// of `visibleTo`, access.ts), once, with marker values standing for the two parameters: the
// access rule stays in one place, and the markers tell which parameter is which.
import { sql, type Kysely } from 'kysely';
import type { InspectionTables } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { visibleTo } from '../auth/access.ts';
import { PreparedStatement } from '../../infra/database/prepared-statement.ts';
import { mapInspection, RECORD_COLUMNS, type InspectionRecord, type RecordRow, type RetryInfo } from './inspection.mapper.ts';

type Visibility = 'organization' | 'user' | 'share';
type Row = RecordRow & { bundle_retries: string };

/**
 * Selected beside the columns of `"inspection"."inspections"` (not aliased): the retries of the row's
 * bundle, as toRecords reads them (live retries of its main inspection, by id), as one JSON text.
 * A main inspection that never had a retry (has_retries false: most of them) has none, and the
 * search is skipped (CASE evaluates the subquery only on its branch): on PGlite the subquery was
 * ~35 µs of the ~200 µs the statement takes (bench/README.md, "API").
 */
const bundleRetriesColumn = sql<string>`case when "inspection"."inspections"."retry_of" is null and not "inspection"."inspections"."has_retries" then '[]' else (
  select coalesce(json_agg(json_build_object('id', r.id, 'status', r.status, 'created_at', r.created_at) order by r.id), '[]')::text
  from inspection.inspections as r
  where r.retry_of = coalesce("inspection"."inspections"."retry_of", "inspection"."inspections"."id") and r.deleted_at is null
) end`.as('bundle_retries');

// Never real values (ids are positive): they only mark where each parameter lands.
const OWNER = -1_000_001;
const ID = -1_000_002;

const MARKER_AUTH: Record<Visibility, AuthContext> = {
  organization: { userId: 0, apiKeyId: null, organization: { id: OWNER, uuid: '' }, scopes: [], share: null },
  user: { userId: OWNER, apiKeyId: null, organization: null, scopes: [], share: null },
  share: { userId: 0, apiKeyId: null, organization: null, scopes: [], share: { tokenId: 0, inspectionId: OWNER } },
};

interface Statement {
  prepared: PreparedStatement<Row>;
  /** Which value goes to $1, $2, ... */
  order: ('owner' | 'id')[];
}

const statements = new Map<Visibility, Statement>();

function statementOf(db: Kysely<InspectionTables>, visibility: Visibility): Statement {
  let statement = statements.get(visibility);
  if (statement) return statement;
  const compiled = db
    .selectFrom('inspection.inspections')
    .select(RECORD_COLUMNS)
    .select(bundleRetriesColumn)
    .where('deleted_at', 'is', null)
    .where(visibleTo(MARKER_AUTH[visibility]))
    .where('id', '=', ID)
    .compile();
  const order = compiled.parameters.map((p) => {
    if (p === OWNER) return 'owner' as const;
    if (p === ID) return 'id' as const;
    throw new Error(`unexpected parameter ${String(p)} in the inspection read`);
  });
  statement = { prepared: new PreparedStatement<Row>(`inspection_record_${visibility}`, order.map(() => 'integer'), compiled.sql), order };
  statements.set(visibility, statement);
  return statement;
}

/** The record of inspection `id` if the request may see it (access.ts), else undefined. */
export async function readRecord(db: Kysely<InspectionTables>, auth: AuthContext, id: number): Promise<InspectionRecord | undefined> {
  const [visibility, owner]: [Visibility, number] = auth.share
    ? ['share', auth.share.inspectionId]
    : auth.organization
      ? ['organization', auth.organization.id]
      : ['user', auth.userId];
  const { prepared, order } = statementOf(db, visibility);
  const [row] = await prepared.execute(
    db,
    order.map((p) => (p === 'owner' ? owner : id)),
  );
  return row && recordOf(row);
}

/** The record of a row read with its bundle's retries: the same record toRecord makes. */
function recordOf(row: Row): InspectionRecord {
  // created_at arrives as ISO 8601 with microseconds and offset; Date keeps the milliseconds
  // (truncated), as both database drivers do with a timestamptz column.
  const bundleRetries: RetryInfo[] = (JSON.parse(row.bundle_retries) as { id: number; status: number; created_at: string }[]).map((r) => ({
    id: r.id,
    status: r.status,
    created_at: new Date(r.created_at),
  }));
  return mapInspection(row, { retries: row.retry_of === null ? bundleRetries : [], bundleRetries });
}
