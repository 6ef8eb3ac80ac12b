// The signed-in session: the API token, who it acts for, and the organization chosen at sign-in.
// Kept in sessionStorage (this tab only, gone when it closes), never in a cookie, so no other site
// can send it and a reload keeps the user signed in (docs/web-console.md). Or, at a share link's
// address (/share/<token>), no session: the token of the path is the only credential (shareToken).

export interface Session {
  token: string;
  /** Epoch milliseconds at which the token expires (`expires_in` from the token call). */
  expiresAt: number;
  username: string;
  /** The organization acted for (`vendor-organization-uuid`), null for the user's own account. */
  organizationUuid: string | null;
  organizations: { uuid: string; name: string }[];
}

const KEY = 'open-inspection.session';
type Listener = (session: Session | null) => void;
const listeners = new Set<Listener>();

export function currentSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const session = JSON.parse(raw) as Session;
    if (typeof session.token !== 'string' || session.expiresAt <= Date.now()) {
      sessionStorage.removeItem(KEY);
      return null;
    }
    return session;
  } catch {
    return null;
  }
}

export function saveSession(session: Session | null): void {
  if (session) sessionStorage.setItem(KEY, JSON.stringify(session));
  else sessionStorage.removeItem(KEY);
  for (const listener of listeners) listener(session);
}

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * The share token of a share link's address (`/share/<token>`, the service's linkFor), or null.
 * Set, the console is the read-only viewer: the API client sends this token (X-Share-Token) and
 * never a signed-in session's.
 */
export function shareToken(): string | null {
  const match = /^\/share\/([^/]+)\/?$/.exec(window.location.pathname);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return match[1];
  }
}
