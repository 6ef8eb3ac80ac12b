// The inspection's inventory items (GET /v1/inspections/{id}/inventory/: the antennas, mounts and
// boxes on the tower, entered by hand in the Photos tab, "Add inventory item", or found by the
// automatic antenna detection, `detect_antennas`) under the annotation list, by kind with a count
// each, a filter by kind, each item opening its photo with its outline (and a detected one its box
// in the 3D view), with its computed geometry and how it was computed. Shown only when there are items: most
// inspections have none, and an empty section would only be noise. Each item can be deleted, and
// the review marked done (POST …/inventory/review_done/: additional status 5, docs/inspection-service.md).
import { useMemo, useState } from 'react';
import { api, unwrap, type Item } from '../api/client';
import { routeHref } from '../app/routes';
import { boxEdges } from '../lib/inventory-shapes';
import { useLoad } from '../app/use-load';
import { ErrorState } from '../components/states';
import type { ApiProblem } from '../lib/api-problem';
import { allPages } from './photos/all-pages';

export type InventoryItem = Item<'/v1/inspections/{id}/inventory/'>;

/** The spec's model_type values in words. */
export const KIND_NAMES: Record<string, string> = {
  panel_antenna: 'Panel antenna',
  microwave_antenna: 'Microwave dish',
  ancillary_box: 'Equipment box',
  collinear_antenna: 'Collinear antenna',
  yagi_antenna: 'Yagi antenna',
  mount: 'Mount',
};

export const kindName = (modelType: string) => KIND_NAMES[modelType] ?? (modelType ? modelType.replace(/_/g, ' ') : 'Other');

const deg = (v: number | null) => (v === null ? null : `${v.toFixed(1)}°`);

/** "Azimuth 120.0° · downtilt 6.0° · plumb 2.0° · height 31.50 m · width 0.30 m", or that there is none. */
export function geometryText(item: InventoryItem): string {
  const parts = [
    deg(item.azimuth) && `Azimuth ${deg(item.azimuth)}`,
    deg(item.downtilt) && `downtilt ${deg(item.downtilt)}`,
    deg(item.plumb) && `plumb ${deg(item.plumb)}`,
    item.height !== null && `height ${item.height.toFixed(2)} m`,
    item.width !== null && `width ${item.width.toFixed(2)} m`,
  ].filter(Boolean);
  return parts.length ? parts.join(' · ') : 'No position or orientation';
}

/** How the geometry was found, in words (the item's `computation`). */
export function howComputed(item: InventoryItem): string {
  const c = item.computation;
  if (!c) return item.source === 'manual' ? 'Entered by hand' : '';
  if (c.method === 'detection') {
    const base = c.height_reference === 'base_plate_location' ? "height above the asset's base plate" : 'height above the foot of the tower found in the cloud';
    const found = [c.points !== undefined && `${c.points.toLocaleString()} points`, c.confidence !== undefined && `confidence ${Math.round(c.confidence * 100)} %`].filter(Boolean).join(', ');
    return `Found by the automatic antenna detection in the point cloud${found ? ` (${found})` : ''}; ${base}; azimuth from true north. Check it on its photo.`;
  }
  if (c.method !== 'triangulation') return item.azimuth !== null || item.height !== null ? 'Entered by hand' : 'Not marked on photos';
  const residual = c.residual_m === null ? '' : c.residual_m < 0.001 ? ', the photos agree within 1 mm' : `, the photos agree within ${Math.round(c.residual_m * 1000)} mm`;
  const reference =
    c.height_reference === 'base_plate_location'
      ? "height above the asset's base plate"
      : c.height_reference === 'ground_reference_altitude'
        ? 'height above the ground at the asset'
        : 'no height: set the base plate location or let processing find the ground';
  return `Computed from ${c.photos} photos${residual}; ${reference}; azimuth from ${c.azimuth_reference.startsWith('true') ? 'true' : 'grid'} north.`;
}

export function InventoryList({ inspectionId }: { inspectionId: number }) {
  const load = useLoad(() => allPages((page, page_size) => unwrap(api.GET('/v1/inspections/{id}/inventory/', { params: { path: { id: inspectionId }, query: { page, page_size } } })) as Promise<InventoryItem[]>), [inspectionId]);
  const [kind, setKind] = useState('');
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string }>();
  const act = async (work: () => Promise<string>) => {
    try {
      setOutcome({ ok: true, text: await work() });
    } catch (err) {
      setOutcome({ ok: false, text: (err as ApiProblem).message });
    }
  };
  const reviewDone = () =>
    act(async () => {
      const { inventory } = await unwrap(api.POST('/v1/inspections/{id}/inventory/review_done/', { params: { path: { id: inspectionId } } }));
      return inventory === 5 ? 'Inventory review completed.' : 'Inventory review completed without compatible inventory.';
    });
  const remove = (item: InventoryItem) => {
    if (!window.confirm(`Delete inventory item #${item.number}?`)) return;
    void act(async () => {
      await unwrap(api.DELETE('/v1/inspections/{id}/inventory/{item_id}/', { params: { path: { id: inspectionId, item_id: item.id } } }));
      load.reload();
      return `Inventory item #${item.number} deleted: the review is ongoing again.`;
    });
  };
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
      <p className="hint">The equipment on the asset (the inventory), marked in the photos or found in the 3D model: each item opens the photo that shows it best, with its outline.</p>
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
              <a href={routeHref({ name: 'workspace', id: inspectionId, tab: 'photos', photo: item.photo_id, item: item.id })}>
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
            <div className="inventory-geometry">{geometryText(item)}</div>
            {howComputed(item) && <div className="hint">How computed: {howComputed(item)}</div>}
            {boxEdges(item) && (
              <a className="inventory-3d-link" href={routeHref({ name: 'workspace', id: inspectionId, tab: '3d', item: item.id })} aria-label={`Show inventory item #${item.number} in 3D`}>
                Show in 3D
              </a>
            )}{' '}
            <button type="button" className="link danger" onClick={() => remove(item)} aria-label={`Delete inventory item #${item.number}`}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      <p>
        <button type="button" onClick={reviewDone}>
          Inventory review done
        </button>
      </p>
      {outcome && (
        <p className={outcome.ok ? 'hint' : 'form-errors'} role={outcome.ok ? 'status' : 'alert'}>
          {outcome.text}
        </p>
      )}
    </section>
  );
}
