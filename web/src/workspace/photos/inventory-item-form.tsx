// "Add inventory item" (issue 30 §4): the four corners of the item's front face clicked on two or
// more photos (the Photos tab keeps them per photo while this form is open: photo-viewer.tsx's
// corner mode), its kind, name and model, saved with POST /v1/inspections/{id}/inventory/. The
// service triangulates the corners from the calibrated cameras and answers with the item's
// position, azimuth, downtilt, plumb and height and how it found them; the form shows that before
// closing. Corners rather than a rectangle: a rectangle around a face seen at an angle is its
// bounding box, and on a 0.3 m wide panel that turned the azimuth by up to 22° in the tests.
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { Field, FormErrors } from '../../components/field';
import type { ApiProblem } from '../../lib/api-problem';
import type { Point } from '../../lib/rect-coords';
import { KIND_NAMES, type InventoryItem, geometryText, howComputed } from '../inventory-list';

export function InventoryItemForm({
  inspectionId,
  marks,
  photoName,
  onRemoveMark,
  onSaved,
  onCancel,
}: {
  inspectionId: number;
  /** photo_id -> the corners clicked on it (up to four). */
  marks: Map<number, Point[]>;
  photoName: (photoId: number) => string;
  onRemoveMark: (photoId: number) => void;
  onSaved: (item: InventoryItem) => void;
  onCancel: () => void;
}) {
  const [kind, setKind] = useState('panel_antenna');
  const [name, setName] = useState('');
  const [model, setModel] = useState('');
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<InventoryItem>();

  const complete = [...marks].filter(([, points]) => points.length === 4);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setProblem(undefined);
    const coords_2d = Object.fromEntries(complete.map(([photoId, points]) => [String(photoId), points.map((p) => [round6(p.x), round6(p.y)])]));
    try {
      const item = (await unwrap(
        api.POST('/v1/inspections/{id}/inventory/', { params: { path: { id: inspectionId } }, body: { model_type: kind, name: name.trim(), model_name: model.trim(), coords_2d } as never }),
      )) as InventoryItem;
      setSaved(item);
    } catch (err) {
      setProblem(err as ApiProblem);
    } finally {
      setBusy(false);
    }
  }

  if (saved)
    return (
      <section className="annotation-form" aria-labelledby="inventory-saved-heading">
        <h2 id="inventory-saved-heading">Inventory item #{saved.number} saved</h2>
        <p>{geometryText(saved)}</p>
        <p className="hint">{howComputed(saved)}</p>
        <div className="actions">
          <button type="button" className="primary" onClick={() => onSaved(saved)} autoFocus>
            Done
          </button>
        </div>
      </section>
    );

  const coordsErrors = problem?.forField('coords_2d') ?? [];
  return (
    <form className="annotation-form" onSubmit={submit} aria-label="New inventory item" noValidate>
      <h2>New inventory item</h2>
      <p className="hint">Click the four corners of the item's front face on this photo (top-left, top-right, bottom-right, bottom-left), then open another photo that shows it from a different angle and click them there too. From two photos or more its position and orientation are computed.</p>
      <h3 className="panel-subtitle">Marked on {complete.length === 1 ? '1 photo' : `${complete.length} photos`}</h3>
      <ul className="inventory-marks">
        {[...marks].map(([photoId, points]) => (
          <li key={photoId}>
            {photoName(photoId)}
            {points.length < 4 ? ` (${points.length} of 4 corners)` : ''}{' '}
            <button type="button" className="link" onClick={() => onRemoveMark(photoId)} aria-label={`Remove the mark on ${photoName(photoId)}`}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <Field label="Kind" name="model_type" problem={problem}>
        <select value={kind} onChange={(e) => setKind(e.target.value)}>
          {Object.entries(KIND_NAMES).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Name" name="name" problem={problem} hint="e.g. Sector A1">
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
      </Field>
      <Field label="Model" name="model_name" problem={problem}>
        <input value={model} onChange={(e) => setModel(e.target.value)} maxLength={255} />
      </Field>
      <FormErrors problem={problem} fields={['model_type', 'name', 'model_name', 'coords_2d']} />
      {coordsErrors.length > 0 && (
        <p className="form-errors" role="alert">
          Marks: {coordsErrors.join(' ')}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || complete.length < 2}>
          {busy ? 'Saving…' : 'Save inventory item'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {complete.length < 2 && <p className="hint">Mark it on {complete.length === 0 ? 'two photos' : 'one more photo'} to save.</p>}
    </form>
  );
}

const round6 = (v: number) => Math.round(Math.min(1, Math.max(0, v)) * 1e6) / 1e6;
