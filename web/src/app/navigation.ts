// React's view of the hash route: useRoute() re-renders on navigation; navigate() changes it.
import { useSyncExternalStore } from 'react';
import { parseRoute, routeHref, type Route } from './routes';

function subscribe(callback: () => void): () => void {
  window.addEventListener('hashchange', callback);
  return () => window.removeEventListener('hashchange', callback);
}

export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseRoute(hash);
}

export function navigate(route: Route, options: { replace?: boolean } = {}): void {
  const href = routeHref(route);
  if (options.replace) window.location.replace(href);
  else window.location.hash = href.slice(1);
}
