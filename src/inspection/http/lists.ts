// Lists (CONTRACT section 1): a plain JSON array, or, when the client sends `page` and/or
// `page_size` (at most 1000), the envelope `{count, next, previous, results}` of Django REST
// Framework's page-number pagination. One helper for every list of the inspection API:
// a route passes its query and a source, either an array or a counted, windowed query.
// The measurements list, which the spec answers as `{results: [...]}`, pages the same way
// (respondResults): unpaged it is that object, paged the envelope, which has `results` too.
import { Type, type TSchema } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../infra/http/errors.ts';
import { requestPublicUrl } from '../../infra/http/http-edge.ts';
import { Int } from '../../shared/schemas/limits.ts';

export const MAX_PAGE_SIZE = 1000;
export const DEFAULT_PAGE_SIZE = 100;

export const PageQuery = Type.Object({
  page: Type.Optional(Int({ minimum: 1, maximum: 1_000_000 })),
  page_size: Type.Optional(Int({ minimum: 1, maximum: MAX_PAGE_SIZE })),
});

export interface PageParams {
  page?: number;
  page_size?: number;
}

/** Response schema of a list: the array, or the page envelope. */
export function ListOf<T extends TSchema>(item: T) {
  return Type.Union([
    Type.Array(item),
    Type.Object({
      count: Type.Integer(),
      next: Type.Union([Type.String(), Type.Null()]),
      previous: Type.Union([Type.String(), Type.Null()]),
      results: Type.Array(item),
    }),
  ]);
}

/**
 * Response schema of a list the spec answers as `{results: [...]}` (measurements): the same
 * object, with the envelope's `count`, `next` and `previous` when paged.
 */
export function ResultsOf<T extends TSchema>(item: T) {
  return Type.Object({
    count: Type.Optional(Type.Integer()),
    next: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    previous: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    results: Type.Array(item),
  });
}

/** A list that can be counted and read by windows (SQL limit/offset). */
export interface WindowedSource<T> {
  count(): Promise<number>;
  fetch(window?: { limit: number; offset: number }): Promise<T[]>;
}

export type ListSource<T> = T[] | WindowedSource<T>;

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export async function respondList<T>(request: FastifyRequest, query: PageParams, source: ListSource<T>): Promise<T[] | Page<T>> {
  const paged = query.page !== undefined || query.page_size !== undefined;
  if (!paged) return Array.isArray(source) ? source : source.fetch();
  const page = query.page ?? 1;
  const size = query.page_size ?? DEFAULT_PAGE_SIZE;
  const offset = (page - 1) * size;
  const count = Array.isArray(source) ? source.length : await source.count();
  // Django REST Framework answers 404 "Invalid page." past the last page (page 1 always exists).
  if (page > 1 && offset >= count) throw new ApiError(404, 'not_found', 'Invalid page.');
  const results = Array.isArray(source) ? source.slice(offset, offset + size) : await source.fetch({ limit: size, offset });
  return {
    count,
    next: offset + size < count ? pageUrl(request, page + 1) : null,
    previous: page > 1 ? pageUrl(request, page - 1) : null,
    results,
  };
}

/** respondList for a `{results}` list (ResultsOf): unpaged, every item under `results`; paged, the envelope. */
export async function respondResults<T>(request: FastifyRequest, query: PageParams, source: ListSource<T>): Promise<{ results: T[] } | Page<T>> {
  const list = await respondList(request, query, source);
  return Array.isArray(list) ? { results: list } : list;
}

// Links are built on the configured public URL (INSPECTION_PUBLIC_URL or the listening address),
// never on the Host header a client sent.
function pageUrl(request: FastifyRequest, page: number): string {
  const url = new URL(requestPublicUrl(request));
  url.searchParams.set('page', String(page));
  return url.toString();
}
