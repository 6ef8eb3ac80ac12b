// Paging of the API's lists: with `page`/`page_size` the API answers the envelope
// {count, next, previous, results} (CONTRACT.md §1); without, a plain array.

export interface Envelope<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** The envelope of a paged answer; a plain array (an API that ignored the paging) becomes one page. */
export function asPage<T>(body: T[] | Envelope<T>): Envelope<T> {
  if (Array.isArray(body)) return { count: body.length, next: null, previous: null, results: body };
  return body;
}

export function pageCount(count: number, pageSize: number): number {
  return Math.max(1, Math.ceil(count / pageSize));
}

/**
 * The page numbers a pager shows: always the first and last, the current one with `radius`
 * neighbours, and `null` where pages are skipped. [1, null, 4, 5, 6, null, 10]
 */
export function pageWindow(current: number, total: number, radius = 1): (number | null)[] {
  const pages: (number | null)[] = [];
  for (let page = 1; page <= total; page++) {
    const near = Math.abs(page - current) <= radius;
    if (page === 1 || page === total || near) pages.push(page);
    else if (pages[pages.length - 1] !== null) pages.push(null);
  }
  return pages;
}

/** A page number read from a URL: an integer within 1..total, else 1. */
export function clampPage(raw: string | null | undefined, total = Infinity): number {
  const page = Number(raw);
  if (!Number.isInteger(page) || page < 1) return 1;
  return Math.min(page, Math.max(1, total));
}
