// CONTRACT §1 "Lists": a plain JSON array, unless the client sends `page` and/or `page_size`
// (at most 1000; default 100), in which case the envelope {count, next, previous, results}.
import { Type } from 'typebox';
import { Int } from '../../shared/schemas/limits.ts';

export const PageQuery = Type.Object({
  page: Type.Optional(Int({ minimum: 1, maximum: 1_000_000 })),
  page_size: Type.Optional(Int({ minimum: 1, maximum: 1000 })),
});

export interface PageRequest {
  page?: number;
  page_size?: number;
}

export const DEFAULT_PAGE_SIZE = 100;

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export function isPaged(query: PageRequest): boolean {
  return query.page !== undefined || query.page_size !== undefined;
}

export function pageWindow(query: PageRequest): { limit: number; offset: number; page: number; size: number } {
  const size = query.page_size ?? DEFAULT_PAGE_SIZE;
  const page = query.page ?? 1;
  return { limit: size, offset: (page - 1) * size, page, size };
}

/** The envelope for one page of `count` items; `url` is the absolute URL of the request. */
export function envelope<T>(results: T[], count: number, query: PageRequest, url: string): Page<T> {
  const { page, size } = pageWindow(query);
  const link = (n: number) => {
    const u = new URL(url);
    u.searchParams.set('page', String(n));
    u.searchParams.set('page_size', String(size));
    return u.toString();
  };
  return {
    count,
    next: page * size < count ? link(page + 1) : null,
    previous: page > 1 ? link(Math.min(page - 1, Math.max(1, Math.ceil(count / size)))) : null,
    results,
  };
}

/** Pages an in-memory list. */
export function paginate<T>(items: T[], query: PageRequest, url: string): T[] | Page<T> {
  if (!isPaged(query)) return items;
  const { limit, offset } = pageWindow(query);
  return envelope(items.slice(offset, offset + limit), items.length, query, url);
}
