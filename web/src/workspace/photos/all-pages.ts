// Every item of a paged API list (CONTRACT §1: `page`/`page_size` → {count, next, previous,
// results}), page after page: an inspection can have hundreds of cameras and annotations, and the
// filmstrip and the rectangles need them all.
import { asPage, type Envelope } from '../../lib/paging';

export const PAGE_SIZE = 500;

export async function allPages<T>(fetchPage: (page: number, pageSize: number) => Promise<T[] | Envelope<T>>): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const envelope = asPage(await fetchPage(page, PAGE_SIZE));
    items.push(...envelope.results);
    if (!envelope.next || envelope.results.length === 0) return items;
  }
}
