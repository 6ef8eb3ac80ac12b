// The fields of an annotation: type (with the user's and default types as suggestions), severity
// 0..5, name, description, a ticket link. Creates (POST …?coords_3d=true) or updates (PATCH).
import { useId, useState, type FormEvent } from 'react';
import { api, unwrap, type Annotation } from '../../api/client';
import { useLoad } from '../../app/use-load';
import { Field, FormErrors } from '../../components/field';
import type { ApiProblem } from '../../lib/api-problem';
import type { Coords2d } from '../../lib/rect-coords';

const FIELDS = ['type', 'severity_level', 'name', 'description', 'data'];

export function AnnotationForm({ inspectionId, photoId, coords, annotation, onSaved, onCancel }: { inspectionId: number; photoId: number; coords: Coords2d; annotation?: Annotation; onSaved: (a: Annotation) => void; onCancel: () => void }) {
  const types = useLoad(() => unwrap(api.GET('/v1/annotations/types/')), []);
  const [type, setType] = useState(annotation?.type ?? '');
  const [severity, setSeverity] = useState(String(annotation?.severity_level ?? 0));
  const [name, setName] = useState(annotation?.name ?? '');
  const [description, setDescription] = useState(annotation?.description ?? '');
  const existingLink = (annotation?.data as { links?: { link: string; description?: string }[] } | undefined)?.links?.[0];
  const [link, setLink] = useState(existingLink?.link ?? '');
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);
  const listId = useId();
  const typeList = Array.isArray(types.data) ? types.data : (types.data?.results ?? []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setProblem(undefined);
    const data = { coords_2d: coords, ...(link.trim() ? { links: [{ link: link.trim(), description: 'Ticket' }] } : {}) };
    const fields = { type: type.trim(), severity_level: Number(severity), name: name.trim() || null, description: description.trim() || null, data };
    try {
      const saved = annotation
        ? await unwrap(api.PATCH('/v1/annotations/{id}/', { params: { path: { id: annotation.id } }, body: fields as never }))
        : await unwrap(api.POST('/v1/annotations/', { params: { query: { coords_3d: true } }, body: { ...fields, inspection: inspectionId, photo_id: photoId } as never }));
      onSaved(saved as Annotation);
    } catch (err) {
      setProblem(err as ApiProblem);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="annotation-form" onSubmit={submit} aria-label={annotation ? 'Edit annotation' : 'New annotation'} noValidate>
      <h3>{annotation ? `Annotation #${annotation.number}` : 'New annotation'}</h3>
      <Field label="Type" name="type" problem={problem}>
        <input value={type} onChange={(e) => setType(e.target.value)} list={listId} maxLength={255} required autoFocus={!annotation} />
      </Field>
      <datalist id={listId}>
        {typeList.map((t) => (
          <option key={t.type} value={t.type} />
        ))}
      </datalist>
      <Field label="Severity" name="severity_level" problem={problem} hint="0 none … 5 critical">
        <select value={severity} onChange={(e) => setSeverity(e.target.value)}>
          {[0, 1, 2, 3, 4, 5].map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Name" name="name" problem={problem}>
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
      </Field>
      <Field label="Description" name="description" problem={problem}>
        <textarea value={description} onChange={(e) => setDescription(e.target.value)} maxLength={10000} />
      </Field>
      <Field label="Ticket link" name="data.links" problem={problem} hint="https://…">
        <input type="url" value={link} onChange={(e) => setLink(e.target.value)} maxLength={2048} />
      </Field>
      <FormErrors problem={problem} fields={FIELDS} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save annotation'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
