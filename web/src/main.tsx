import { lazy, StrictMode, Suspense } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { shareToken } from './api/session';
import { labelTableCells } from './lib/table-cell-labels';
import './styles.css';

// At a share link's address (/share/<token>) the console is the read-only viewer, loaded on demand.
const ShareApp = lazy(() => import('./share/share-app'));

const root = document.getElementById('root')!;
// Phones show tables as stacked rows: each cell is given its column's name (lib/table-cell-labels.ts).
labelTableCells(root);

createRoot(root).render(
  <StrictMode>
    {shareToken() === null ? (
      <App />
    ) : (
      <Suspense fallback={null}>
        <ShareApp />
      </Suspense>
    )}
  </StrictMode>,
);
