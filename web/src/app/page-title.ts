// Each page names itself in the browser's title (issue 29 §5): screen readers announce it, and a
// tab, a bookmark or the history list tells the pages apart ("Facade survey · 3D · Open Inspection"
// rather than "Open Inspection" everywhere).
import { useEffect } from 'react';

export const PRODUCT_NAME = 'Open Inspection';

/** The page's title from its parts, most specific first; empty parts are left out. */
export function pageTitle(...parts: (string | null | undefined)[]): string {
  return [...parts.filter((p): p is string => !!p && p.trim() !== ''), PRODUCT_NAME].join(' · ');
}

/** Sets document.title while the page is shown. */
export function usePageTitle(...parts: (string | null | undefined)[]): void {
  const title = pageTitle(...parts);
  useEffect(() => {
    document.title = title;
  }, [title]);
}
