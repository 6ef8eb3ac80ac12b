// Photos of an inspection: a filmstrip of thumbnails, the selected photo with its annotations, and
// the annotation form (draw a rectangle → fill → save; select one → edit or delete). The address
// carries the photo and the annotation (#/inspections/7?photo=12&annotation=3), so the 3D view can
// open a photo at an annotation; an address with only the annotation opens that annotation's photo.
// Inventory items projected on the photo are outlined (photos/item-outlines.tsx) and listed beside
// it (photos/equipment-on-photo.tsx); the address's `item` selects one (and opens its photo).
// Keys (not while typing in a field): ←/→, j/k, PageUp/PageDown other photos; D draw; Esc stop.
import { formatPosition } from '../lib/map-geometry';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, unwrap, type Annotation, type Camera } from '../api/client';
import { navigate } from '../app/navigation';
import { useLoad } from '../app/use-load';
import { Empty, ErrorState, Loading } from '../components/states';
import type { ApiProblem } from '../lib/api-problem';
import { severityName } from '../lib/severity';
import { coords2dToRect, rectToCoords2d, type Point, type Rect } from '../lib/rect-coords';
import type { TabProps } from '../pages/workspace';
import { useReadOnly } from '../share/read-only';
import { AnnotationForm } from './photos/annotation-form';
import { InventoryItemForm } from './photos/inventory-item-form';
import { EquipmentOnPhoto } from './photos/equipment-on-photo';
import type { InventoryItem } from './inventory-list';
import { photoOutline } from '../lib/inventory-shapes';
import { PhotoViewer } from './photos/photo-viewer';
import { allPages } from './photos/all-pages';
import { preview, previewUrl, type Preview } from './photos/previews';
import { Thumbnail } from './photos/thumbnail';

export function PhotosTab({ inspection, route }: TabProps) {
  // Lists tagged with their inspection: useLoad keeps the previous data while reloading, and
  // another inspection's photo ids must never be asked for under this one.
  const cameraLoad = useLoad(
    async () => ({
      of: inspection.id,
      items: await allPages((page, page_size) => unwrap(api.GET('/v1/inspections/{id}/cameras/', { params: { path: { id: inspection.id }, query: { page, page_size } } })) as Promise<Camera[]>),
    }),
    [inspection.id],
  );
  const annotationLoad = useLoad(
    async () => ({
      of: inspection.id,
      items: await allPages((page, page_size) => unwrap(api.GET('/v1/inspections/{id}/annotations/', { params: { path: { id: inspection.id }, query: { page, page_size } } })) as Promise<Annotation[]>),
    }),
    [inspection.id],
  );
  // A share link's viewer: the photos and their annotations, nothing to draw, edit or delete, and
  // no inventory (a share token does not read it).
  const readOnly = useReadOnly();
  const inventoryLoad = useLoad(
    async () => ({
      of: inspection.id,
      items: readOnly ? [] : await allPages((page, page_size) => unwrap(api.GET('/v1/inspections/{id}/inventory/', { params: { path: { id: inspection.id }, query: { page, page_size } } })) as Promise<InventoryItem[]>),
    }),
    [inspection.id, readOnly],
  );
  const cameras = { ...cameraLoad, data: cameraLoad.data?.of === inspection.id ? cameraLoad.data.items : undefined };
  const annotations = { ...annotationLoad, data: annotationLoad.data?.of === inspection.id ? annotationLoad.data.items : undefined };
  const inventory = useMemo(() => (inventoryLoad.data?.of === inspection.id ? inventoryLoad.data.items : []), [inventoryLoad.data, inspection.id]);
  const list = cameras.data ?? [];
  const routed = route.annotation !== undefined ? annotations.data?.find((a) => a.id === route.annotation) : undefined;
  const routedItem = route.item !== undefined ? inventory.find((i) => i.id === route.item) : undefined;
  const current = list.find((c) => c.photo_id === (route.photo ?? routed?.photo_id ?? routedItem?.photo_id ?? undefined)) ?? list[0];
  const index = current ? list.indexOf(current) : -1;
  const [drawing, setDrawing] = useState(false);
  const [draft, setDraft] = useState<Rect>();
  const [editing, setEditing] = useState(false);
  const [deleteProblem, setDeleteProblem] = useState<ApiProblem>();
  const [large, setLarge] = useState<Preview>();
  const [largeFailed, setLargeFailed] = useState(false);
  const [originalHref, setOriginalHref] = useState<string>();
  // "Add inventory item": the corners of the item's front face clicked on each photo (photo_id ->
  // up to four points) while the inventory form is open; undefined when it is closed.
  const [inventoryMarks, setInventoryMarks] = useState<Map<number, Point[]>>();
  const [inventorySaved, setInventorySaved] = useState<string>();

  const show = useCallback(
    (photo: number | undefined, annotation?: number) => navigate({ name: 'workspace', id: inspection.id, tab: 'photos', photo, annotation }, { replace: true }),
    [inspection.id],
  );

  useEffect(() => {
    setLarge(undefined);
    setLargeFailed(false);
    setDraft(undefined);
    setEditing(false);
    setDrawing(false);
    if (!current) return;
    let stale = false;
    preview(inspection.id, current.photo_id, 'large').then(
      (p) => !stale && setLarge(p),
      () => !stale && setLargeFailed(true),
    );
    // Only presigned here (no download): the link opens the full-resolution file.
    setOriginalHref(undefined);
    previewUrl(inspection.id, current.photo_id, 'original').then(
      (url) => !stale && setOriginalHref(url),
      () => undefined,
    );
    return () => {
      stale = true;
    };
  }, [inspection.id, current?.photo_id]);

  // ←/→, k/j and PageUp/PageDown move between photos, D toggles drawing, Escape cancels; not while
  // typing in a field (nor with a modifier: the browser's own shortcuts stay).
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (target.closest('input, textarea, select, [contenteditable], [role=tablist]') || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      const step = ['ArrowRight', 'PageDown', 'j'].includes(event.key) ? 1 : ['ArrowLeft', 'PageUp', 'k'].includes(event.key) ? -1 : 0;
      if (step && list.length) {
        const next = list[Math.min(list.length - 1, Math.max(0, index + step))];
        show(next.photo_id);
        event.preventDefault();
      } else if (!readOnly && (event.key === 'd' || event.key === 'D')) {
        setDrawing((d) => !d);
        setDraft(undefined);
      } else if (event.key === 'Escape') {
        setDrawing(false);
        setDraft(undefined);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [list, index, show, readOnly]);

  const outlined = useMemo(
    () =>
      current
        ? inventory.flatMap((item) => {
            const points = photoOutline(item, current.photo_id);
            return points ? [{ item, points }] : [];
          })
        : [],
    [inventory, current],
  );
  const showItem = (itemId: number) => navigate({ name: 'workspace', id: inspection.id, tab: 'photos', photo: current?.photo_id, item: itemId }, { replace: true });
  const onPhoto = useMemo(() => (annotations.data ?? []).filter((a) => current && a.photo_id === current.photo_id), [annotations.data, current]);
  const selected = onPhoto.find((a) => a.id === route.annotation);
  const countByPhoto = useMemo(() => {
    const counts = new Map<number, number>();
    for (const a of annotations.data ?? []) counts.set(a.photo_id, (counts.get(a.photo_id) ?? 0) + 1);
    return counts;
  }, [annotations.data]);

  if (cameras.error && !cameras.loading) return <ErrorState error={cameras.error} onRetry={cameras.reload} />;
  if (!cameras.data) return <Loading label="Loading photos…" />;
  if (list.length === 0)
    return (
      <Empty>
        <p>No photos to show yet: the photos appear here once the inspection has been processed (its cameras are made then).</p>
        <p>
          <a href={`#/inspections/${inspection.id}/processing`}>See the processing</a>
        </p>
      </Empty>
    );

  async function remove(annotation: Annotation) {
    if (!window.confirm(`Delete annotation #${annotation.number} (${annotation.type})?`)) return;
    try {
      await unwrap(api.DELETE('/v1/annotations/{id}/', { params: { path: { id: annotation.id } } }));
      setDeleteProblem(undefined);
      annotations.reload();
      show(current?.photo_id);
    } catch (err) {
      setDeleteProblem(err as ApiProblem);
    }
  }

  const selectedRect = selected ? coords2dToRect((selected.data as { coords_2d?: unknown }).coords_2d) : null;
  return (
    <div className="photos-tab">
      <nav className="filmstrip" aria-label={`Photos (${list.length})`}>
        {list.map((camera) => (
          <Thumbnail
            key={camera.photo_id}
            inspectionId={inspection.id}
            photoId={camera.photo_id}
            filename={camera.filename}
            selected={camera.photo_id === current?.photo_id}
            annotations={countByPhoto.get(camera.photo_id) ?? 0}
            onSelect={() => show(camera.photo_id)}
          />
        ))}
      </nav>
      <div className="photo-main">
        <div className="photo-title">
          <strong>{current?.filename}</strong> · photo {index + 1} of {list.length} · {current?.dimensions.x}×{current?.dimensions.y} px{' '}
          {originalHref && (
            <a href={originalHref} target="_blank" rel="noopener noreferrer">
              Open the original
            </a>
          )}
        </div>
        {current && (
          <PhotoViewer
            photo={large}
            original={{ width: current.dimensions.x, height: current.dimensions.y }}
            loadOriginal={() => previewUrl(inspection.id, current.photo_id, 'original')}
            alt={current.filename}
            annotations={onPhoto.map((a) => ({ id: a.id, number: a.number, type: a.type, severity: a.severity_level, coords: (a.data as { coords_2d?: unknown }).coords_2d }))}
            selectedId={selected?.id}
            draft={inventoryMarks ? undefined : draft}
            drawing={drawing && !inventoryMarks}
            onDrawingChange={setDrawing}
            corners={
              inventoryMarks
                ? { points: inventoryMarks.get(current.photo_id) ?? [], onPoint: (p) => setInventoryMarks(new Map(inventoryMarks).set(current.photo_id, [...(inventoryMarks.get(current.photo_id) ?? []), p])) }
                : undefined
            }
            // The selected item's outline says its name; the others their number (side by side, names overlap).
            outlines={outlined.map(({ item, points }) => ({ id: item.id, label: item.id === route.item ? `#${item.number} ${item.name || item.model_type}` : `#${item.number}`, points, selected: item.id === route.item }))}
            onSelectOutline={showItem}
            onDrawn={(rect) => {
              setDraft(rect);
              show(current.photo_id);
            }}
            onSelect={(id) => {
              setDraft(undefined);
              setEditing(false);
              show(current.photo_id, id);
            }}
          />
        )}
        {largeFailed && (
          <p className="form-errors" role="alert">
            The preview of this photo could not be loaded.
          </p>
        )}
      </div>
      <aside className="annotation-panel" aria-label="Annotations of this photo">
        {current && inventoryMarks ? (
          <InventoryItemForm
            inspectionId={inspection.id}
            marks={inventoryMarks}
            photoName={(photoId) => list.find((c) => c.photo_id === photoId)?.filename ?? `photo ${photoId}`}
            onRemoveMark={(photoId) => {
              const next = new Map(inventoryMarks);
              next.delete(photoId);
              setInventoryMarks(next);
            }}
            onSaved={(item) => {
              setInventoryMarks(undefined);
              setDrawing(false);
              inventoryLoad.reload();
              setInventorySaved(`Inventory item #${item.number} saved: the Annotations tab lists it with its geometry.`);
            }}
            onCancel={() => {
              setInventoryMarks(undefined);
              setDrawing(false);
            }}
          />
        ) : current && draft ? (
          <AnnotationForm
            key={`new-${current.photo_id}`}
            inspectionId={inspection.id}
            photoId={current.photo_id}
            coords={rectToCoords2d(draft)}
            onSaved={(a) => {
              setDraft(undefined);
              annotations.reload();
              show(current.photo_id, a.id);
            }}
            onCancel={() => setDraft(undefined)}
          />
        ) : current && selected && editing && selectedRect ? (
          <AnnotationForm
            key={`edit-${selected.id}`}
            inspectionId={inspection.id}
            photoId={current.photo_id}
            coords={rectToCoords2d(selectedRect)}
            annotation={selected}
            onSaved={() => {
              setEditing(false);
              annotations.reload();
            }}
            onCancel={() => setEditing(false)}
          />
        ) : (
          <>
            <h2 className="panel-title">Annotations ({onPhoto.length})</h2>
            {!readOnly && (
              <p>
                <button
                  type="button"
                  onClick={() => {
                    setDraft(undefined);
                    setDrawing(false);
                    setInventorySaved(undefined);
                    setInventoryMarks(new Map());
                  }}
                >
                  Add inventory item
                </button>
              </p>
            )}
            {inventorySaved && (
              <p className="hint" role="status">
                {inventorySaved}
              </p>
            )}
            {annotations.error && <ErrorState error={annotations.error} onRetry={annotations.reload} />}
            {onPhoto.length === 0 && <p className="hint">None on this photo.{readOnly ? '' : ' Press “Draw annotation” (or D) and drag a rectangle on the photo.'}</p>}
            <ul className="annotation-list">
              {onPhoto.map((a) => (
                <li key={a.id} className={a.id === selected?.id ? 'selected' : undefined}>
                  <button type="button" className="link" aria-pressed={a.id === selected?.id} onClick={() => show(current?.photo_id, a.id)}>
                    #{a.number} {a.type}
                  </button>{' '}
                  <span className={`badge severity-${a.severity_level}`}>{severityName(a.severity_level)}</span>
                  {a.id === selected?.id && (
                    <div className="annotation-detail">
                      {a.name && <p>{a.name}</p>}
                      {a.description && <p>{a.description}</p>}
                      <p className="hint">{a.coords_3d ? `3D: ${formatPosition(a.coords_3d.x, a.coords_3d.y, a.coords_3d.z)}` : 'No 3D position'}</p>
                      {!readOnly && (
                        <div className="actions">
                          <button type="button" onClick={() => setEditing(true)}>
                            Edit
                          </button>
                          <button type="button" className="danger" onClick={() => remove(a)}>
                            Delete
                          </button>
                        </div>
                      )}
                    </div>
                  )}
                </li>
              ))}
            </ul>
            {deleteProblem && (
              <p className="form-errors" role="alert">
                {deleteProblem.message}
              </p>
            )}
            <EquipmentOnPhoto inspectionId={inspection.id} items={outlined.map((o) => o.item)} selectedId={route.item} onSelect={showItem} />
          </>
        )}
      </aside>
    </div>
  );
}
