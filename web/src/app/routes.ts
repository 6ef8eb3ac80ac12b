// The console's pages and their addresses. Hash routing (#/assets/3): the server serves one
// index.html at `/` and never has to know the console's paths. Framework-free, unit-tested.

export type Route =
  | { name: 'signin'; next?: string }
  | { name: 'assets'; search: string; page: number }
  | { name: 'asset'; id: number }
  | { name: 'upload'; id: number }
  | { name: 'processing'; id: number }
  // type and severity: the annotation list's filter (lib/annotation-filters.ts reads them); item:
  // an inventory item shown (its outline on the photo, its box in the 3D view).
  | { name: 'workspace'; id: number; tab: WorkspaceTab; photo?: number; annotation?: number; item?: number; type?: string; severity?: string }
  | { name: 'allowance' }
  | { name: 'not-found'; path: string };

export const WORKSPACE_TABS = ['photos', 'annotations', 'map', '3d', 'measurements', 'outputs'] as const;
export type WorkspaceTab = (typeof WORKSPACE_TABS)[number];

const ID = '([1-9][0-9]{0,9})';

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/assets';
  const [pathPart, queryPart = ''] = raw.split('?', 2);
  const query = new URLSearchParams(queryPart);
  const path = pathPart.replace(/\/+$/, '') || '/assets';
  const id = (pattern: string) => new RegExp(`^${pattern.replace(':id', ID)}$`).exec(path);
  const int = (value: string | null) => (value && /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : undefined);
  let m: RegExpExecArray | null;
  if (path === '/signin') return { name: 'signin', next: query.get('next') ?? undefined };
  if (path === '/assets') return { name: 'assets', search: query.get('search') ?? '', page: int(query.get('page')) ?? 1 };
  if ((m = id('/assets/:id'))) return { name: 'asset', id: Number(m[1]) };
  if ((m = id('/inspections/:id/upload'))) return { name: 'upload', id: Number(m[1]) };
  if ((m = id('/inspections/:id/processing'))) return { name: 'processing', id: Number(m[1]) };
  if ((m = id('/inspections/:id'))) {
    const tab = query.get('tab');
    return {
      name: 'workspace',
      id: Number(m[1]),
      tab: (WORKSPACE_TABS as readonly string[]).includes(tab ?? '') ? (tab as WorkspaceTab) : 'photos',
      photo: int(query.get('photo')),
      annotation: int(query.get('annotation')),
      ...(int(query.get('item')) ? { item: int(query.get('item')) } : {}),
      ...(query.get('type') ? { type: query.get('type')! } : {}),
      ...(query.get('severity') ? { severity: query.get('severity')! } : {}),
    };
  }
  if (path === '/allowance') return { name: 'allowance' };
  return { name: 'not-found', path };
}

export function routeHref(route: Route): string {
  const q = (params: Record<string, string | number | undefined>) => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(key, String(value));
    const text = search.toString();
    return text ? `?${text}` : '';
  };
  switch (route.name) {
    case 'signin':
      return `#/signin${q({ next: route.next })}`;
    case 'assets':
      return `#/assets${q({ search: route.search, page: route.page > 1 ? route.page : undefined })}`;
    case 'asset':
      return `#/assets/${route.id}`;
    case 'upload':
      return `#/inspections/${route.id}/upload`;
    case 'processing':
      return `#/inspections/${route.id}/processing`;
    case 'workspace':
      return `#/inspections/${route.id}${q({ tab: route.tab === 'photos' ? undefined : route.tab, photo: route.photo, annotation: route.annotation, item: route.item, type: route.type, severity: route.severity })}`;
    case 'allowance':
      return '#/allowance';
    case 'not-found':
      return `#${route.path}`;
  }
}
