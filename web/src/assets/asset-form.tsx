// Create or edit an asset: the spec's rules checked where cheap (name 1..255, at most 8 decimals),
// and always the API's own errors shown next to the field they name.
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Asset } from '../api/client';
import { useLoad } from '../app/use-load';
import { Field, FormErrors } from '../components/field';
import { ApiProblem } from '../lib/api-problem';
import { checkAsset } from '../lib/asset-rules';

const FIELDS = ['name', 'type', 'latitude', 'longitude', 'description'];
/** The cheap rules of the spec (lib/asset-rules.ts) as a problem shown like the API's own. */
function localProblem(values: { name: string; latitude: string; longitude: string }): ApiProblem | undefined {
  const errors = checkAsset(values);
  return Object.keys(errors).length ? new ApiProblem(400, errors, undefined, 'Some fields need attention.') : undefined;
}

export function AssetForm({ asset, onSaved, onCancel }: { asset?: Asset; onSaved: (asset: Asset) => void; onCancel?: () => void }) {
  const types = useLoad(() => unwrap(api.GET('/v1/assets/types/')), []);
  const [name, setName] = useState(asset?.name ?? '');
  const [type, setType] = useState(String(asset?.type ?? 2));
  const [latitude, setLatitude] = useState(asset?.latitude ?? '');
  const [longitude, setLongitude] = useState(asset?.longitude ?? '');
  const [description, setDescription] = useState(asset?.description ?? '');
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);
  const typeList = Array.isArray(types.data) ? types.data : (types.data?.results ?? []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const local = localProblem({ name, latitude, longitude });
    setProblem(local);
    if (local) return;
    setBusy(true);
    const body = {
      name: name.trim(),
      type: Number(type),
      latitude: latitude.trim() || null,
      longitude: longitude.trim() || null,
      description: description.trim() || null,
    };
    try {
      const saved = asset
        ? await unwrap(api.PUT('/v1/assets/{id}/', { params: { path: { id: asset.id } }, body }))
        : await unwrap(api.POST('/v1/assets/', { body }));
      onSaved(saved as Asset);
    } catch (err) {
      setProblem(err as ApiProblem);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card" onSubmit={submit} aria-label={asset ? 'Edit asset' : 'New asset'} noValidate>
      <h2>{asset ? 'Edit asset' : 'New asset'}</h2>
      <div className="form-grid">
        <Field label="Name" name="name" problem={problem}>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} required autoFocus />
        </Field>
        <Field label="Type" name="type" problem={problem}>
          <select value={type} onChange={(e) => setType(e.target.value)} disabled={!!asset}>
            {typeList.length === 0 && <option value={type}>{types.error ? 'Types unavailable' : 'Loading…'}</option>}
            {typeList.map((t) => (
              <option key={t.id} value={t.id}>
                {t.description} ({t.family})
              </option>
            ))}
          </select>
        </Field>
        <Field label="Latitude" name="latitude" problem={problem} hint="Decimal degrees, up to 8 decimals">
          <input inputMode="decimal" value={latitude} onChange={(e) => setLatitude(e.target.value)} />
        </Field>
        <Field label="Longitude" name="longitude" problem={problem} hint="Decimal degrees, up to 8 decimals">
          <input inputMode="decimal" value={longitude} onChange={(e) => setLongitude(e.target.value)} />
        </Field>
      </div>
      <Field label="Description" name="description" problem={problem}>
        <textarea value={description} onChange={(e) => setDescription(e.target.value)} maxLength={10000} />
      </Field>
      <FormErrors problem={problem} fields={FIELDS} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : asset ? 'Save asset' : 'Create asset'}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
