// A JSON answer `{"<field>": [...]}` written page by page: for lists of up to 100,000 records
// (~10 MB), one JSON.stringify or one response-schema serialisation holds the event loop for
// hundreds of milliseconds, and with the embedded database (which runs inside this process) one
// query over all of them does too. Each page is read, serialised and written on its own, with a
// turn of the event loop between pages, so other requests are answered in between (issue 40 §5).
// The route's response schema still documents the shape; a stream bypasses its serialiser, so
// the pages must hold exactly the records the schema describes.
import { Readable } from 'node:stream';

/** Yields to the event loop: the requests waiting for it run before the next page. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `{"<field>": [...pages]}` as a readable stream, each page serialised when the reader wants more. */
export function jsonListStream(field: string, pages: AsyncIterable<readonly unknown[]>): Readable {
  async function* chunks(): AsyncGenerator<string> {
    yield `{${JSON.stringify(field)}:[`;
    let first = true;
    for await (const page of pages) {
      if (page.length === 0) continue;
      const items = page.map((item) => JSON.stringify(item)).join(',');
      yield first ? items : `,${items}`;
      first = false;
      await nextTurn();
    }
    yield ']}';
  }
  return Readable.from(chunks(), { objectMode: false });
}

/** An array's pages of `size` items. */
export async function* pagesOf<T>(items: readonly T[], size: number): AsyncGenerator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
