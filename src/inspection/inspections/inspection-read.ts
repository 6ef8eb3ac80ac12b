// The read behind GET /v1/inspections/{id}/, the API's hottest call (bench/README.md, "API"): one
// prepared statement per kind of visibility (organization, user, share token) selecting the
// columns the record is made of, parsed and planned once per database connection
// (infra/database/prepared-statement.ts) instead of built by Kysely, parsed and planned on every
// request. The retries a record shows are read by a second statement (toRecord, the path of every
// other read) only for an inspection in a bundle: a retry, or a main inspection that ever had one
// (has_retries, one of RECORD_COLUMNS). Most have none, and their read is that one statement.
// (Before: the bundle's retries as a correlated subquery of the same statement, which PostgreSQL
// initialises on every execution even behind a CASE: on PGlite ~80 µs of a ~350 µs statement.)
//
// The statements are compiled by Kysely from the same pieces as every other read (the live rows
// of `visibleTo`, access.ts), once, with marker values standing for the two parameters: the
// access rule stays in one place, and the markers tell which parameter is which.
import type { Kysely } from 'kysely';
import type { InspectionTables } from '../inspection.tables.ts';
import type { AuthContext } from '../auth/auth.service.ts';
import { visibleTo } from '../auth/access.ts';
import { PreparedStatement } from '../../infra/database/prepared-statement.ts';
import { RECORD_COLUMNS, type InspectionRecord, type RecordRow } from './inspection.mapper.ts';
import { toRecord } from './inspection-records.ts';

type Visibility = 'organization' | 'user' | 'share';

// Never real values (ids are positive): they only mark where each parameter lands.
const OWNER = -1_000_001;
const ID = -1_000_002;

const MARKER_AUTH: Record<Visibility, AuthContext> = {
  organization: { userId: 0, apiKeyId: null, organization: { id: OWNER, uuid: '' }, scopes: [], share: null },
  user: { userId: OWNER, apiKeyId: null, organization: null, scopes: [], share: null },
  share: { userId: 0, apiKeyId: null, organization: null, scopes: [], share: { tokenId: 0, inspectionId: OWNER, urlSeconds: 0, expiresAt: '' } },
};

interface Statement {
  prepared: PreparedStatement<RecordRow>;
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
    .where('deleted_at', 'is', null)
    .where(visibleTo(MARKER_AUTH[visibility]))
    .where('id', '=', ID)
    .compile();
  const order = compiled.parameters.map((p) => {
    if (p === OWNER) return 'owner' as const;
    if (p === ID) return 'id' as const;
    throw new Error(`unexpected parameter ${String(p)} in the inspection read`);
  });
  statement = { prepared: new PreparedStatement<RecordRow>(`inspection_record_${visibility}`, order.map(() => 'integer'), compiled.sql), order };
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
  return row && toRecord(db, row);
}
