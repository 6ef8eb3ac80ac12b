// Whether the workspace is shown read-only: the share-link viewer (share-app.tsx) sets it, and the
// workspace's pages and tabs leave out every control that would change something (draw, edit,
// delete, measure, generate a report) and every call a share token may not make (the asset, the
// inputs ZIP, the share links). One flag in React context rather than a copy of each tab.
import { createContext, useContext } from 'react';

export const ReadOnlyContext = createContext(false);

/** True inside the share-link viewer. */
export function useReadOnly(): boolean {
  return useContext(ReadOnlyContext);
}
