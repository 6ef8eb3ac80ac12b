import { pageWindow } from '../lib/paging';

export function Pager({ page, total, onPage }: { page: number; total: number; onPage: (page: number) => void }) {
  if (total <= 1) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)} aria-label="Previous page">
        ‹
      </button>
      {pageWindow(page, total).map((p, i) =>
        p === null ? (
          <span key={`gap-${i}`} aria-hidden="true">
            …
          </span>
        ) : (
          <button type="button" key={p} aria-current={p === page ? 'page' : undefined} onClick={() => onPage(p)} aria-label={`Page ${p}`}>
            {p}
          </button>
        ),
      )}
      <button type="button" disabled={page >= total} onClick={() => onPage(page + 1)} aria-label="Next page">
        ›
      </button>
    </nav>
  );
}
