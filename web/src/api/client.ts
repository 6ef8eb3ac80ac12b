// The console's one way to call the inspection API: openapi-fetch over the types generated from
// the service's own OpenAPI document (schema.d.ts), with the headers every call needs added here
// (X-Api-Key, Authorization, vendor-organization-uuid; at a share link's address X-Share-Token
// instead of Authorization: session.ts shareToken). `unwrap` turns an error answer into an
// ApiProblem the pages show next to the fields it names.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';
import { currentSession, saveSession, shareToken } from './session';
import { ApiProblem, problemFrom } from '../lib/api-problem';

export type { paths, components };

export interface ConsoleSettings {
  api_key: string;
  storage_url: string;
  basemap_url: string | null;
  /** Processing parameters this installation cannot act on, with the reason (the form disables them). */
  unavailable_options?: Record<string, string>;
}

let settings: ConsoleSettings | null = null;

/** GET /v1/console/settings/ once per page load: the console's API key and where storage is. */
export async function loadSettings(): Promise<ConsoleSettings> {
  if (settings) return settings;
  const response = await fetch('/v1/console/settings/', { headers: { Accept: 'application/json' } }).catch(() => null);
  if (!response) throw problemFrom(0, null);
  if (!response.ok) throw problemFrom(response.status, await response.json().catch(() => null));
  settings = (await response.json()) as ConsoleSettings;
  return settings;
}

export function consoleSettings(): ConsoleSettings {
  if (!settings) throw new Error('loadSettings() has not completed');
  return settings;
}

/** Raised on window when the API refuses the viewer's share token (revoked or expired meanwhile). */
export const SHARE_REFUSED_EVENT = 'share-token-refused';

const authHeaders: Middleware = {
  onRequest({ request }) {
    if (settings) request.headers.set('X-Api-Key', settings.api_key);
    const share = shareToken();
    if (share !== null) {
      request.headers.set('X-Share-Token', share);
      return request;
    }
    const session = currentSession();
    if (session && !request.url.endsWith('/v1/auth/token/')) {
      request.headers.set('Authorization', `Bearer ${session.token}`);
      if (session.organizationUuid) request.headers.set('vendor-organization-uuid', session.organizationUuid);
    }
    return request;
  },
  onResponse({ request, response }) {
    // The viewer's token ended: the viewer shows that the link is no longer valid (share-app.tsx).
    if (response.status === 401 && shareToken() !== null) window.dispatchEvent(new Event(SHARE_REFUSED_EVENT));
    // An expired or revoked token: back to the sign-in page (App listens to the session).
    else if (response.status === 401 && !request.url.endsWith('/v1/auth/token/') && currentSession()) saveSession(null);
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: '' });
api.use(authHeaders);

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's body, or an ApiProblem; a network failure is an ApiProblem with status 0. */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await call;
  } catch (err) {
    if (err instanceof ApiProblem) throw err;
    throw problemFrom(0, null);
  }
  if (result.error !== undefined || !result.response.ok) throw problemFrom(result.response.status, result.error);
  return result.data as T;
}

/** Plain authenticated GET of a URL the API returned (e.g. a `next` link). */
export async function authorizedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (settings) headers.set('X-Api-Key', settings.api_key);
  const share = shareToken();
  const session = share === null ? currentSession() : null;
  if (share !== null) headers.set('X-Share-Token', share);
  else if (session) {
    headers.set('Authorization', `Bearer ${session.token}`);
    if (session.organizationUuid) headers.set('vendor-organization-uuid', session.organizationUuid);
  }
  return fetch(url, { ...init, headers });
}

/** The JSON body of a path's GET 200 answer, e.g. Ok<'/v1/assets/{id}/'> is an asset record. */
export type Ok<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer T } } } } } ? T : never;
/** One element of a list answer (plain array or paged envelope). */
export type Item<P extends keyof paths> = Ok<P> extends (infer T)[] | { results: (infer T)[] } ? T : never;

export type Asset = Ok<'/v1/assets/{id}/'>;
export type Inspection = Ok<'/v1/inspections/{id}/'>;
export type Camera = Item<'/v1/inspections/{id}/cameras/'>;
export type Annotation = Ok<'/v1/annotations/{id}/'>;
