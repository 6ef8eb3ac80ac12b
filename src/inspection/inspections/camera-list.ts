// The cameras of an inspection (GET /v1/inspections/{id}/cameras/).
//
// Performance (bench/README.md, "Scale"): the unpaged list is streamed. It is read in keyset pages
// of CAMERA_PAGE_ROWS cameras (by id, the list's order; index cameras_inspection_id_id), each page
// one string_agg of the records the cameras keep as JSON text (list_json, written by a trigger:
// camera-list-json.ts), and each page's text is written to the reply as it arrives, neither parsed
// nor serialized again. The body is the same, byte for byte, as Fastify's serializer of the route's
// schema writes for the whole list; the server never holds more than two pages (the one being
// written and the next one, read meanwhile). Before: 100,000 cameras as one 26 MB JSON text built
// at read time, parsed, validated and serialized whole, 1.4–1.7 s and ~550 MB of RSS at the peak;
// then streamed pages built at read time and serialized again, 1.2–1.5 s.
//
// Each page is read on its own: a camera updated while the list is being written shows its new
// values if its page had not been read yet. The list is ordered by id and has no repeat; cameras
// that existed throughout are all in it (the analysis writes cameras in batches too, so readers
// could already see part of a write).
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { sql, type Kysely, type RawBuilder } from 'kysely';
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
    const page = await this.page(sql`inspection_id = ${this.inspectionId}`, limit);
    return page.count === 0 ? [] : (JSON.parse(`[${page.json}]`) as CameraRecord[]);
  }

  /**
   * The whole list, page by page, each page its records' JSON texts joined by commas; the next
   * page is read while the caller handles the current one.
   */
  async *pages(): AsyncGenerator<string> {
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
      if (page.count === 0) return;
      if (page.count === CAMERA_PAGE_ROWS) next = ahead(page.last);
      yield page.json;
      if (page.count < CAMERA_PAGE_ROWS) return;
    }
  }

  private async page(where: RawBuilder<unknown>, limit: RawBuilder<unknown>): Promise<{ json: string; count: number; last: number }> {
    const { rows } = await sql<{ json: string | null; count: number; last: number | null }>`
      select string_agg(list_json, ',' order by id) as json, count(*)::int as count, max(id) as last
      from (select id, list_json from inspection.cameras where ${where} order by id ${limit}) as page`.execute(this.db);
    return { json: rows[0].json ?? '', count: rows[0].count, last: rows[0].last ?? 0 };
  }
}

/**
 * Answers 200 with a JSON array streamed one chunk per page, each page the texts of its items
 * already joined by commas (an empty page is skipped). An error after the first chunk cuts the
 * reply: it is never completed into a valid but partial list.
 */
export function sendJsonArrayPages(reply: FastifyReply, pages: AsyncIterable<string>): FastifyReply {
  const body = Readable.from(
    (async function* () {
      let first = true;
      for await (const items of pages) {
        if (items.length === 0) continue;
        yield (first ? '[' : ',') + items;
        first = false;
      }
      yield first ? '[]' : ']';
    })(),
    { objectMode: false },
  );
  return reply.type('application/json; charset=utf-8').send(body);
}
