// Phones show the console's tables (table.list) as stacked rows, one card per row (styles.css,
// max-width 640px): each cell then needs its column's name beside it. Rather than every page
// repeating its headers in each cell, this copies each column header's text into the cells'
// data-label (shown by CSS `td::before`), for every table.list the console renders, now or later.
// Screen readers keep the table's own headers; the labels are for the eye only (CSS content).

function labelTable(table: HTMLTableElement) {
  const headers = Array.from(table.tHead?.rows[0]?.cells ?? [], (cell) => cell.textContent?.trim() ?? '');
  if (!headers.length) return;
  for (const body of Array.from(table.tBodies))
    for (const row of Array.from(body.rows))
      Array.from(row.cells).forEach((cell, i) => {
        const label = headers[i] ?? '';
        if (cell.dataset.label !== label) cell.dataset.label = label;
      });
}

/** Labels the cells of every table.list under `root` and keeps doing so as the page changes. */
export function labelTableCells(root: HTMLElement): () => void {
  let queued = false;
  const run = () => {
    queued = false;
    root.querySelectorAll<HTMLTableElement>('table.list').forEach(labelTable);
  };
  const observer = new MutationObserver(() => {
    if (!queued) {
      queued = true;
      requestAnimationFrame(run);
    }
  });
  observer.observe(root, { childList: true, subtree: true, characterData: true });
  run();
  return () => observer.disconnect();
}
