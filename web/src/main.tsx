import { lazy, StrictMode, Suspense } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { shareToken } from './api/session';
import './styles.css';

// At a share link's address (/share/<token>) the console is the read-only viewer, loaded on demand.
const ShareApp = lazy(() => import('./share/share-app'));

createRoot(document.getElementById('root')!).render(
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
