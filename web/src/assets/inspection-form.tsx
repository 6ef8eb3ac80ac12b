// Create an inspection of an asset: name, date, description, engine (processing_backend, in plain
// words by lib/plain-words.ts) and processing parameters
// (the spec's keys; `generate_point_cloud` on by default, as the spec's default body).
import { useState, type FormEvent } from 'react';
import { api, consoleSettings, unwrap, type Inspection } from '../api/client';
import { Field, FormErrors } from '../components/field';
import { ApiProblem } from '../lib/api-problem';
import { PROCESSING_BACKENDS, type ProcessingBackend } from '../lib/plain-words';
import { defaultProcessingOptions, fromDateTimeLocal, processingParameters, toDateTimeLocal, type ProcessingOption } from '../lib/asset-rules';

const OPTIONS: readonly (readonly [ProcessingOption, string])[] = [
  ['generate_point_cloud', 'Generate point cloud'],
  ['clip_point_cloud', 'Clip point cloud around the asset'],
  ['generate_mesh', 'Generate mesh'],
  ['generate_dsm', 'Generate DSM'],
  ['generate_ortho', 'Generate orthophoto'],
  ['detect_rust', 'Detect rust'],
  ['detect_antennas', 'Detect antennas on the tower (1 equipment inventory)'],
  ['roof_segmentation', 'Roof segmentation'],
  ['is_video', 'Input is a video'],
];

export function InspectionForm({ assetId, onCreated, onCancel }: { assetId: number; onCreated: (inspection: Inspection) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [date, setDate] = useState(() => toDateTimeLocal(new Date()));
  const [description, setDescription] = useState('');
  const [backend, setBackend] = useState<ProcessingBackend>('mapper');
  const [options, setOptions] = useState(defaultProcessingOptions);
  const [radius, setRadius] = useState('');
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);
  // Options the installation cannot act on (GET /v1/console/settings/): off, disabled, and why.
  const unavailableOptions = consoleSettings().unavailable_options ?? {};

  async function submit(event: FormEvent) {
    event.preventDefault();
    const inspection_date = fromDateTimeLocal(date);
    if (inspection_date === undefined) return setProblem(new ApiProblem(400, { inspection_date: ['Enter a date and time, or leave it empty.'] }, undefined, 'Some fields need attention.'));
    setBusy(true);
    setProblem(undefined);
    const processing_parameters = processingParameters(options, radius, unavailableOptions);
    try {
      const created = await unwrap(
        api.POST('/v1/inspections', {
          body: {
            asset: assetId,
            name: name.trim() || null,
            description: description.trim() || null,
            inspection_date,
            processing_backend: backend,
            processing_parameters,
          } as never,
        }),
      );
      onCreated(created as Inspection);
    } catch (err) {
      setProblem(err as ApiProblem);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card" onSubmit={submit} aria-label="New inspection" noValidate>
      <h2>New inspection</h2>
      <div className="form-grid">
        <Field label="Inspection name" name="name" problem={problem}>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} autoFocus />
        </Field>
        <Field label="Inspection date" name="inspection_date" problem={problem} hint="Your local time">
          <input type="datetime-local" value={date} onChange={(e) => setDate(e.target.value)} />
        </Field>
        <Field label="Processing engine" name="processing_backend" problem={problem} hint={PROCESSING_BACKENDS.find((b) => b.value === backend)?.explanation}>
          <select value={backend} onChange={(e) => setBackend(e.target.value as ProcessingBackend)}>
            {PROCESSING_BACKENDS.map((b) => (
              <option key={b.value} value={b.value}>
                {b.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <Field label="Description" name="description" problem={problem}>
        <textarea value={description} onChange={(e) => setDescription(e.target.value)} maxLength={10000} />
      </Field>
      <fieldset className="options">
        <legend>Processing parameters</legend>
        {OPTIONS.map(([key, label]) => {
          const unavailable = unavailableOptions[key];
          return (
            <label key={key} className="check">
              <input type="checkbox" checked={!unavailable && options[key]} disabled={Boolean(unavailable)} aria-describedby={unavailable ? `option-${key}-why` : undefined} onChange={(e) => setOptions({ ...options, [key]: e.target.checked })} /> {label}
              {unavailable && (
                <small id={`option-${key}-why`} className="hint">
                  {unavailable}
                </small>
              )}
            </label>
          );
        })}
        {options.clip_point_cloud && !unavailableOptions.clip_point_cloud && (
          <div className="option-wide">
            <Field label="Clipping radius (metres)" name="processing_parameters.clipping_radius" problem={problem} hint="Empty: the service's default">
              <input type="number" min={1} step={1} value={radius} onChange={(e) => setRadius(e.target.value)} />
            </Field>
          </div>
        )}
      </fieldset>
      <FormErrors problem={problem} fields={['name', 'inspection_date', 'processing_backend', 'description', 'processing_parameters']} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create inspection'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
