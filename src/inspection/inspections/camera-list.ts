// The cameras of an inspection (GET /v1/inspections/{id}/cameras/).
//
// Performance (bench/README.md, "Scale"): the unpaged list is streamed. It is read in keyset pages
// of CAMERA_PAGE_ROWS cameras (by id, the list's order; index cameras_inspection_id_id), each page
// built by the database as one JSON text (PGlite decodes a text field at once, but every field of
// every row one by one in JavaScript), and each camera is written to the reply by the compiled
// serializer of the route's own camera schema as soon as its page arrives. The body is the same,
// byte for byte, as the whole array serialized at once was; the server never holds more than two
// pages (the one being written and the next one, read meanwhile). Before, 100,000 cameras were one
// 26 MB JSON text, parsed whole, validated whole against the response schema's union, serialized
// whole: 1.4–1.7 s and ~550 MB of RSS at the peak.
//
// Each page is read on its own: a camera updated while the list is being written shows its new
// values if its page had not been read yet. The list is ordered by id and has no repeat; cameras
// that existed throughout are all in it (the analysis writes cameras in batches too, so readers
// could already see part of a write).
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { TSchema } from 'typebox';
import type { InspectionTables } from '../inspection.tables.ts';
import type { WindowedSource } from '../http/lists.ts';

export const CAMERA_PAGE_ROWS = 2000;

/** Cameras written at once from which the table's planner statistics are refreshed at once. */
export const CAMERA_STATISTICS_ROWS = 1000;

/**
 * Refreshes the planner's statistics of inspection.cameras after a large write. Without them the
 * keyset page above is planned for the few rows the stale statistics promise: a bitmap scan of the
 * whole inspection and a sort, 37–70 ms per page of a 100k-camera inspection on PostgreSQL against
 * 8–10 ms by the index once analysed (bench/README.md, "Scale"). PostgreSQL's autovacuum analyses
 * only a minute or so later; PGlite has no autovacuum at all. ANALYZE samples a bounded number of
 * rows (~30k), so it costs tens of milliseconds whatever the table's size.
 */
export async function refreshCameraStatistics(db: Kysely<InspectionTables>): Promise<void> {
  await sql`analyze inspection.cameras`.execute(db);
}

export interface CameraRecord {
  id: number;
  photo_id: number;
  filename: string;
  location: { latitude: number | null; longitude: number | null; elevation: number | null };
  mission: string;
  dimensions: { x: number; y: number };
  quaternions: [number, number, number, number];
  is_master: boolean;
  is_reviewed: boolean;
  is_visible: boolean;
}

// One camera record as JSON text, built by the database by concatenation: half the time of
// json_build_object, which looks up every argument's type on every row (100k cameras: 0.71 s
// against 1.45 s on PostgreSQL, measured). The text is parsed by JSON.parse and written again by
// the route's serializer, so only the values matter: float8 prints shortest-exact (JSON.parse reads
// back the same double), to_json quotes and escapes text, bool casts to true/false. Quaternions
// default to [1, 0, 0, 0].
const record = sql`'{"id":' || id || ',"photo_id":' || id || ',"filename":' || to_json(filename)::text
  || ',"location":{"latitude":' || coalesce(latitude::text, 'null') || ',"longitude":' || coalesce(longitude::text, 'null')
  || ',"elevation":' || coalesce(elevation::text, 'null') || '},"mission":' || to_json(mission)::text
  || ',"dimensions":{"x":' || width || ',"y":' || height || '},"quaternions":'
  || case when quaternion is null or jsonb_typeof(quaternion) = 'null' then '[1, 0, 0, 0]' else quaternion::text end
  || ',"is_master":' || is_master || ',"is_reviewed":' || is_reviewed || ',"is_visible":' || is_visible || '}'`;

export class CameraList implements WindowedSource<CameraRecord> {
  constructor(
    private readonly db: Kysely<InspectionTables>,
    readonly inspectionId: number,
  ) {}

  async count(): Promise<number> {
    const { rows } = await sql<{ count: number }>`select count(*)::int as count from inspection.cameras where inspection_id = ${this.inspectionId}`.execute(this.db);
    return rows[0].count;
  }

  /** A window of the list (the paged answer), or the whole list. */
  async fetch(window?: { limit: number; offset: number }): Promise<CameraRecord[]> {
    const limit = window ? sql`limit ${window.limit} offset ${window.offset}` : sql``;
    return (await this.page(sql`inspection_id = ${this.inspectionId}`, limit)).records;
  }

  /** The whole list, page by page; the next page is read while the caller handles the current one. */
  async *pages(): AsyncGenerator<CameraRecord[]> {
    const read = (after: number) => this.page(sql`inspection_id = ${this.inspectionId} and id > ${after}`, sql`limit ${CAMERA_PAGE_ROWS}`);
    // A page read ahead and never awaited (the client went away) must not be an unhandled rejection.
    const ahead = (after: number) => {
      const p = read(after);
      p.catch(() => undefined);
      return p;
    };
    let next = ahead(0);
    for (;;) {
      const page = await next;
      if (page.last === null) return;
      if (page.records.length === CAMERA_PAGE_ROWS) next = ahead(page.last);
      yield page.records;
      if (page.records.length < CAMERA_PAGE_ROWS) return;
    }
  }

  private async page(where: RawBuilder<unknown>, limit: RawBuilder<unknown>): Promise<{ records: CameraRecord[]; last: number | null }> {
    const { rows } = await sql<{ body: string; last: number | null }>`
      select '[' || coalesce(string_agg(${record}, ',' order by id), '') || ']' as body, max(id) as last
      from (
        select id, filename, latitude, longitude, elevation, mission, width, height, quaternion, is_master, is_reviewed, is_visible
        from inspection.cameras where ${where} order by id ${limit}
      ) as page`.execute(this.db);
    return { records: JSON.parse(rows[0].body) as CameraRecord[], last: rows[0].last };
  }
}

/**
 * Answers 200 with the JSON array of every item of `pages`, streamed one chunk per page, each item
 * written by the compiled serializer of `itemSchema` (Fastify's, cached per route: the very text
 * the serializer of an array of that schema writes for it). An error after the first chunk cuts
 * the reply: it is never completed into a valid but partial list.
 */
export function sendJsonArray<T>(reply: FastifyReply, itemSchema: TSchema, pages: AsyncIterable<T[]>): FastifyReply {
  const serialize = reply.compileSerializationSchema(itemSchema as unknown as Record<string, unknown>, '200') as unknown as (item: T) => string;
  const body = Readable.from(
    (async function* () {
      let first = true;
      for await (const items of pages) {
        if (items.length === 0) continue;
        let chunk = first ? '[' : ',';
        first = false;
        for (let i = 0; i < items.length; i++) chunk += (i === 0 ? '' : ',') + serialize(items[i]);
        yield chunk;
      }
      yield first ? '[]' : ']';
    })(),
    { objectMode: false },
  );
  return reply.type('application/json; charset=utf-8').send(body);
}
