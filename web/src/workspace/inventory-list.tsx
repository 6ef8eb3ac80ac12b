// The inspection's inventory items (GET /v1/inspections/{id}/inventory/: what automatic detection
// found on the tower — antennas, mounts, boxes) under the annotation list, by kind with a count
// each, a filter by kind, each item opening its photo. Shown only when there are items: most
// inspections have none (detection is an option), and an empty section would only be noise.
import { useMemo, useState } from 'react';
import { api, unwrap, type Item } from '../api/client';
import { routeHref } from '../app/routes';
import { useLoad } from '../app/use-load';
import { ErrorState } from '../components/states';
import { allPages } from './photos/all-pages';

type InventoryItem = Item<'/v1/inspections/{id}/inventory/'>;

/** The spec's model_type values in words. */
const KIND_NAMES: Record<string, string> = {
  panel_antenna: 'Panel antenna',
  microwave_antenna: 'Microwave dish',
  ancillary_box: 'Equipment box',
  collinear_antenna: 'Collinear antenna',
  yagi_antenna: 'Yagi antenna',
  mount: 'Mount',
};

export const kindName = (modelType: string) => KIND_NAMES[modelType] ?? (modelType ? modelType.replace(/_/g, ' ') : 'Other');

export function InventoryList({ inspectionId }: { inspectionId: number }) {
  const load = useLoad(() => allPages((page, page_size) => unwrap(api.GET('/v1/inspections/{id}/inventory/', { params: { path: { id: inspectionId }, query: { page, page_size } } })) as Promise<InventoryItem[]>), [inspectionId]);
  const [kind, setKind] = useState('');
  const items = useMemo(() => load.data ?? [], [load.data]);
  const kinds = useMemo(() => {
    const counts = new Map<string, number>();
    for (const item of items) counts.set(item.model_type, (counts.get(item.model_type) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1]);
  }, [items]);
  if (load.error) return <ErrorState error={load.error} onRetry={load.reload} />;
  if (items.length === 0) return null;
  const shown = items.filter((item) => !kind || item.model_type === kind).sort((a, b) => a.number - b.number);
  return (
    <section className="inventory-list" aria-labelledby="inventory-heading">
      <h2 id="inventory-heading">Equipment found on the asset ({items.length})</h2>
      <p className="hint">What automatic detection recognised in the photos (the inventory): each item opens the photo it was seen in.</p>
      <label>
        Kind{' '}
        <select value={kind} onChange={(e) => setKind(e.target.value)}>
          <option value="">All kinds ({items.length})</option>
          {kinds.map(([k, count]) => (
            <option key={k} value={k}>
              {kindName(k)} ({count})
            </option>
          ))}
        </select>
      </label>
      <ul className="inventory-items">
        {shown.map((item) => (
          <li key={item.id}>
            {item.photo_id ? (
              <a href={routeHref({ name: 'workspace', id: inspectionId, tab: 'photos', photo: item.photo_id })}>
                #{item.number} {item.name || kindName(item.model_type)}
              </a>
            ) : (
              <span>
                #{item.number} {item.name || kindName(item.model_type)} (no photo)
              </span>
            )}{' '}
            <span className="hint">
              {kindName(item.model_type)}
              {item.model_name ? ` · ${item.model_name}` : ''}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
