// Photos of an inspection: a filmstrip of thumbnails, the selected photo with its annotations, and
// the annotation form (draw a rectangle → fill → save; select one → edit or delete). The address
// carries the photo and the annotation, so the 3D view can open a photo at an annotation.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, unwrap, type Annotation, type Camera } from '../api/client';
import { navigate } from '../app/navigation';
import { useLoad } from '../app/use-load';
import { Empty, ErrorState, Loading } from '../components/states';
import type { ApiProblem } from '../lib/api-problem';
import { asPage } from '../lib/paging';
import { coords2dToRect, rectToCoords2d, type Rect } from '../lib/rect-coords';
import type { TabProps } from '../pages/workspace';
import { AnnotationForm } from './photos/annotation-form';
import { PhotoViewer } from './photos/photo-viewer';
import { previewUrl } from './photos/previews';
import { Thumbnail } from './photos/thumbnail';

export function PhotosTab({ inspection, route }: TabProps) {
  const cameras = useLoad(async () => asPage(await unwrap(api.GET('/v1/inspections/{id}/cameras/', { params: { path: { id: inspection.id } } }))).results as Camera[], [inspection.id]);
  const annotations = useLoad(async () => asPage(await unwrap(api.GET('/v1/inspections/{id}/annotations/', { params: { path: { id: inspection.id } } }))).results as Annotation[], [inspection.id]);
  const list = cameras.data ?? [];
  const current = list.find((c) => c.photo_id === route.photo) ?? list[0];
  const index = current ? list.indexOf(current) : -1;
  const [drawing, setDrawing] = useState(false);
  const [draft, setDraft] = useState<Rect>();
  const [editing, setEditing] = useState(false);
  const [deleteProblem, setDeleteProblem] = useState<ApiProblem>();
  const [src, setSrc] = useState<string>();

  const show = useCallback(
    (photo: number | undefined, annotation?: number) => navigate({ name: 'workspace', id: inspection.id, tab: 'photos', photo, annotation }, { replace: true }),
    [inspection.id],
  );

  useEffect(() => {
    setSrc(undefined);
    setDraft(undefined);
    setEditing(false);
    setDrawing(false);
    if (current) previewUrl(inspection.id, current.photo_id, 'large').then(setSrc, () => setSrc(undefined));
  }, [inspection.id, current?.photo_id]);

  // ←/→ and PageUp/PageDown move between photos, D toggles drawing, Escape cancels; not while typing.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (target.closest('input, textarea, select, [contenteditable]') || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      const step = event.key === 'ArrowRight' || event.key === 'PageDown' ? 1 : event.key === 'ArrowLeft' || event.key === 'PageUp' ? -1 : 0;
      if (step && list.length) {
        const next = list[Math.min(list.length - 1, Math.max(0, index + step))];
        show(next.photo_id);
        event.preventDefault();
      } else if (event.key === 'd' || event.key === 'D') {
        setDrawing((d) => !d);
        setDraft(undefined);
      } else if (event.key === 'Escape') {
        setDrawing(false);
        setDraft(undefined);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [list, index, show]);

  const onPhoto = useMemo(() => (annotations.data ?? []).filter((a) => current && a.photo_id === current.photo_id), [annotations.data, current]);
  const selected = onPhoto.find((a) => a.id === route.annotation);
  const countByPhoto = useMemo(() => {
    const counts = new Map<number, number>();
    for (const a of annotations.data ?? []) counts.set(a.photo_id, (counts.get(a.photo_id) ?? 0) + 1);
    return counts;
  }, [annotations.data]);

  if (cameras.error) return <ErrorState error={cameras.error} onRetry={cameras.reload} />;
  if (!cameras.data) return <Loading label="Loading photos…" />;
  if (list.length === 0)
    return (
      <Empty>
        <p>No photos yet: cameras appear once the photos have been analysed.</p>
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
          {current && (
            <a href="#" onClick={(e) => (e.preventDefault(), previewUrl(inspection.id, current.photo_id, 'original').then((url) => window.open(url, '_blank', 'noopener')))}>
              Full resolution
            </a>
          )}
        </div>
        {current && (
          <PhotoViewer
            src={src}
            alt={current.filename}
            annotations={onPhoto.map((a) => ({ id: a.id, number: a.number, type: a.type, severity: a.severity_level, coords: (a.data as { coords_2d?: unknown }).coords_2d }))}
            selectedId={selected?.id}
            draft={draft}
            drawing={drawing}
            onDrawingChange={setDrawing}
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
      </div>
      <aside className="annotation-panel" aria-label="Annotations of this photo">
        {current && draft ? (
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
            <h3>Annotations ({onPhoto.length})</h3>
            {annotations.error && <ErrorState error={annotations.error} onRetry={annotations.reload} />}
            {onPhoto.length === 0 && <p className="hint">None on this photo. Press “Draw annotation” (or D) and drag a rectangle on the photo.</p>}
            <ul className="annotation-list">
              {onPhoto.map((a) => (
                <li key={a.id} className={a.id === selected?.id ? 'selected' : undefined}>
                  <button type="button" className="link" aria-pressed={a.id === selected?.id} onClick={() => show(current?.photo_id, a.id)}>
                    #{a.number} {a.type}
                  </button>{' '}
                  <span className={`badge severity-${a.severity_level}`}>severity {a.severity_level}</span>
                  {a.id === selected?.id && (
                    <div className="annotation-detail">
                      {a.name && <p>{a.name}</p>}
                      {a.description && <p>{a.description}</p>}
                      <p className="hint">{a.coords_3d ? `3D: ${a.coords_3d.x.toFixed(2)}, ${a.coords_3d.y.toFixed(2)}, ${a.coords_3d.z.toFixed(2)} m` : 'No 3D position'}</p>
                      <div className="actions">
                        <button type="button" onClick={() => setEditing(true)}>
                          Edit
                        </button>
                        <button type="button" className="danger" onClick={() => remove(a)}>
                          Delete
                        </button>
                      </div>
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
          </>
        )}
      </aside>
    </div>
  );
}
