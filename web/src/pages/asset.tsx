// One asset: its details (edit, delete), its inspections with status and date, and a form to
// create an inspection, which then opens the upload page.
import { formatLatLon } from '../lib/map-geometry';
import { formatDateTime } from '../lib/plain-words';
import { useState } from 'react';
import { api, unwrap, type Asset } from '../api/client';
import { navigate } from '../app/navigation';
import { useLoad } from '../app/use-load';
import { AssetForm } from '../assets/asset-form';
import { InspectionForm } from '../assets/inspection-form';
import { StatusBadge } from '../components/status-badge';
import { Empty, ErrorState, Loading } from '../components/states';
import type { ApiProblem } from '../lib/api-problem';
import { asPage } from '../lib/paging';
import { usePageTitle } from '../app/page-title';

export function AssetPage({ id }: { id: number }) {
  const asset = useLoad(() => unwrap(api.GET('/v1/assets/{id}/', { params: { path: { id } } })), [id]);
  usePageTitle((asset.data as Asset | undefined)?.name, 'Asset');
  const inspections = useLoad(async () => asPage(await unwrap(api.GET('/v1/assets/{id}/inspections/', { params: { path: { id } } }))).results, [id]);
  const types = useLoad(async () => asPage(await unwrap(api.GET('/v1/assets/types/'))).results, []);
  const [mode, setMode] = useState<'view' | 'edit' | 'new-inspection'>('view');
  const [deleteProblem, setDeleteProblem] = useState<ApiProblem>();

  if (asset.error) return <ErrorState error={asset.error} onRetry={asset.reload} />;
  if (!asset.data) return <Loading />;
  const record = asset.data as Asset;

  async function remove() {
    if (!window.confirm(`Delete the asset “${record.name}” and all its inspections? This cannot be undone.`)) return;
    try {
      await unwrap(api.DELETE('/v1/assets/{id}/', { params: { path: { id } } }));
      navigate({ name: 'assets', search: '', page: 1 });
    } catch (err) {
      setDeleteProblem(err as ApiProblem);
    }
  }

  return (
    <section>
      <div className="breadcrumbs">
        <a href="#/assets">Assets</a> ›
      </div>
      <div className="page-head">
        <h1>{record.name}</h1>
        <div className="actions">
          <button type="button" onClick={() => setMode('edit')}>
            Edit asset
          </button>
          <button type="button" className="danger" onClick={remove}>
            Delete asset
          </button>
        </div>
      </div>
      {deleteProblem && (
        <div className="form-errors" role="alert">
          <p>{deleteProblem.message}</p>
        </div>
      )}
      {mode === 'edit' ? (
        <AssetForm asset={record} onSaved={() => (setMode('view'), asset.reload())} onCancel={() => setMode('view')} />
      ) : (
        <dl className="details">
          <dt>Type</dt>
          <dd>{typeLabel(types.data?.find((t) => t.id === record.type)) ?? `Type ${record.type}`}</dd>
          <dt>Position</dt>
          <dd>{record.latitude !== null && record.longitude !== null ? formatLatLon(record.latitude, record.longitude) : 'Not set'}</dd>
          <dt>Description</dt>
          <dd>{record.description || '—'}</dd>
          <dt>Created</dt>
          <dd>{formatDateTime(record.created_at)}</dd>
        </dl>
      )}

      <div className="page-head">
        <h2>Inspections</h2>
        {mode !== 'new-inspection' && (
          <button type="button" className="primary" onClick={() => setMode('new-inspection')}>
            New inspection
          </button>
        )}
      </div>
      {mode === 'new-inspection' && <InspectionForm assetId={id} onCreated={(i) => navigate({ name: 'upload', id: i.id })} onCancel={() => setMode('view')} />}
      {inspections.error ? (
        <ErrorState error={inspections.error} onRetry={inspections.reload} />
      ) : !inspections.data ? (
        <Loading />
      ) : inspections.data.length === 0 ? (
        <Empty>
          <p>No inspections yet. Create one, then upload the flight's photos.</p>
        </Empty>
      ) : (
        <table className="list">
          <thead>
            <tr>
              <th scope="col">Inspection</th>
              <th scope="col">Status</th>
              <th scope="col">Inspection date</th>
              <th scope="col">Created</th>
              <th scope="col">Next step</th>
            </tr>
          </thead>
          <tbody>
            {inspections.data.map((inspection) => (
              <tr key={inspection.id}>
                <td>
                  <a href={`#/inspections/${inspection.id}`}>{inspection.name || `Inspection ${inspection.id}`}</a>
                  {inspection.retry_of !== null && <small className="hint"> · retry of #{inspection.retry_of}</small>}
                </td>
                <td>
                  <StatusBadge status={inspection.status} />
                </td>
                <td>{formatDateTime(inspection.inspection_date)}</td>
                <td>{formatDateTime(inspection.created_at)}</td>
                <td>
                  {[1, 2, 20].includes(inspection.status) ? <a href={`#/inspections/${inspection.id}/upload`}>Upload photos</a> : <a href={`#/inspections/${inspection.id}/processing`}>Processing</a>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function typeLabel(type: { description: string; family: string } | undefined): string | undefined {
  return type ? `${type.description} (${type.family})` : undefined;
}
