// The fields of an annotation: type (with the user's and default types as suggestions), severity
// 0..5 (named by lib/severity.ts, as in the PDF; new ones start at the spec's default 0, "Not
// assessed"), name, description, ticket links (`data.links`: [{link, description}]). Creates
// (POST /v1/annotations/?coords_3d=true, photo_id from the camera) or updates (PATCH). The API's
// errors are shown under the field they name (data.links.1.link under the second link).
import { useId, useState, type FormEvent } from 'react';
import { api, unwrap, type Annotation } from '../../api/client';
import { useLoad } from '../../app/use-load';
import { Field, FormErrors } from '../../components/field';
import type { ApiProblem } from '../../lib/api-problem';
import type { Coords2d } from '../../lib/rect-coords';
import { SEVERITY_NAMES, severityOption } from '../../lib/severity';

const FIELDS = ['type', 'severity_level', 'name', 'description', 'data.links'];

interface Link {
  link: string;
  description: string;
}

export function AnnotationForm({ inspectionId, photoId, coords, annotation, onSaved, onCancel }: { inspectionId: number; photoId: number; coords: Coords2d; annotation?: Annotation; onSaved: (a: Annotation) => void; onCancel: () => void }) {
  const types = useLoad(() => unwrap(api.GET('/v1/annotations/types/')), []);
  const [type, setType] = useState(annotation?.type ?? '');
  const [severity, setSeverity] = useState(String(annotation?.severity_level ?? 0));
  const [name, setName] = useState(annotation?.name ?? '');
  const [description, setDescription] = useState(annotation?.description ?? '');
  const existing = (annotation?.data as { links?: { link: string; description?: string }[] } | undefined)?.links ?? [];
  const [links, setLinks] = useState<Link[]>(existing.length ? existing.map((l) => ({ link: l.link, description: l.description ?? '' })) : [{ link: '', description: '' }]);
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);
  const listId = useId();
  const typeList = Array.isArray(types.data) ? types.data : (types.data?.results ?? []);

  const setLink = (index: number, change: Partial<Link>) => setLinks((all) => all.map((l, i) => (i === index ? { ...l, ...change } : l)));

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setProblem(undefined);
    // Empty rows are dropped; a description left blank says what the link is.
    const filled = links.filter((l) => l.link.trim()).map((l) => ({ link: l.link.trim(), description: l.description.trim() || 'Ticket' }));
    const data = { coords_2d: coords, ...(filled.length ? { links: filled } : {}) };
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
      <h2>{annotation ? `Annotation #${annotation.number}` : 'New annotation'}</h2>
      <Field label="Type" name="type" problem={problem} hint="e.g. crack, corrosion">
        <input value={type} onChange={(e) => setType(e.target.value)} list={listId} maxLength={255} required autoFocus={!annotation} autoComplete="off" />
      </Field>
      <datalist id={listId}>
        {typeList.map((t) => (
          <option key={t.type} value={t.type} />
        ))}
      </datalist>
      <Field label="Severity" name="severity_level" problem={problem} hint="“Not assessed” until you grade it: the Annotations tab finds the ones left">
        <select value={severity} onChange={(e) => setSeverity(e.target.value)}>
          {SEVERITY_NAMES.map((_, level) => (
            <option key={level} value={level}>
              {severityOption(level)}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Name" name="name" problem={problem}>
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
      </Field>
      <Field label="Description" name="description" problem={problem}>
        <textarea value={description} onChange={(e) => setDescription(e.target.value)} maxLength={10000} rows={3} />
      </Field>
      <fieldset className="annotation-links">
        <legend>Ticket links</legend>
        {links.map((l, i) => (
          <div className="annotation-link" key={i}>
            <Field label={links.length > 1 ? `Ticket link ${i + 1}` : 'Ticket link'} name={`data.links.${i}.link`} problem={problem}>
              <input type="url" value={l.link} onChange={(e) => setLink(i, { link: e.target.value })} maxLength={2048} placeholder="https://…" />
            </Field>
            <Field label={links.length > 1 ? `Link ${i + 1} title` : 'Link title'} name={`data.links.${i}.description`} problem={problem}>
              <input value={l.description} onChange={(e) => setLink(i, { description: e.target.value })} maxLength={255} placeholder="Ticket" />
            </Field>
            {links.length > 1 && (
              <button type="button" className="link" onClick={() => setLinks((all) => all.filter((_, j) => j !== i))} aria-label={`Remove ticket link ${i + 1}`}>
                Remove
              </button>
            )}
          </div>
        ))}
        <button type="button" onClick={() => setLinks((all) => [...all, { link: '', description: '' }])}>
          Add a link
        </button>
      </fieldset>
      <FormErrors problem={problem} fields={[...FIELDS, 'data.coords_2d']} />
      {problem?.forField('data.coords_2d').length ? (
        <p className="form-errors" role="alert">
          Rectangle: {problem.forField('data.coords_2d').join(' ')}
        </p>
      ) : null}
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
