// Processing of one inspection, live: the spec's steps as a stepper, the additional statuses, the
// cloud project's detail (GET /v1/inspections/{id}/processing/), errors in words, and Retry when
// the spec allows it (`can_retry`). Polls every 2 s while work is under way.
import { useEffect, useState } from 'react';
import { api, unwrap } from '../api/client';
import { navigate } from '../app/navigation';
import { useLoad } from '../app/use-load';
import { StatusBadge } from '../components/status-badge';
import { ErrorState, Loading } from '../components/states';
import type { ApiProblem } from '../lib/api-problem';
import { isStable, processingSteps, statusName } from '../lib/statuses';

const POLL_MS = 2000;

export function ProcessingPage({ id }: { id: number }) {
  const [tick, setTick] = useState(0);
  const inspection = useLoad(() => unwrap(api.GET('/v1/inspections/{id}/', { params: { path: { id } } })), [id, tick]);
  const state = useLoad(() => unwrap(api.GET('/v1/inspections/{id}/processing/', { params: { path: { id } } })), [id, tick]);
  const additional = useLoad(() => unwrap(api.GET('/v1/inspections/additional_statuses/')), []);
  const [retryProblem, setRetryProblem] = useState<ApiProblem>();
  const status = inspection.data?.status;

  useEffect(() => {
    if (status === undefined || isStable(status)) return;
    const timer = setTimeout(() => setTick((t) => t + 1), POLL_MS);
    return () => clearTimeout(timer);
  }, [status, tick]);

  if (inspection.error && !inspection.data) return <ErrorState error={inspection.error} onRetry={inspection.reload} />;
  if (!inspection.data) return <Loading />;
  const record = inspection.data;
  const cloud = state.data?.cloud ?? null;
  const additionalNames = new Map((Array.isArray(additional.data) ? additional.data : (additional.data?.results ?? [])).map((s) => [s.id, s.description]));
  const steps = processingSteps(record.status, !!record.processing_parameters.is_video, !!record.processing_parameters.clip_point_cloud);

  async function retry() {
    setRetryProblem(undefined);
    try {
      const created = await unwrap(api.POST('/v1/inspections/retry/', { body: { inspection: record.id } as never }));
      navigate({ name: 'processing', id: (created as { id: number }).id });
    } catch (err) {
      setRetryProblem(err as ApiProblem);
    }
  }

  return (
    <section>
      <div className="breadcrumbs">
        <a href="#/assets">Assets</a> › <a href={`#/assets/${record.asset}`}>Asset {record.asset}</a> › <a href={`#/inspections/${record.id}`}>{record.name || `Inspection ${record.id}`}</a> ›
      </div>
      <div className="page-head">
        <h1>Processing</h1>
        <StatusBadge status={record.status} />
      </div>
      <ol className="stepper" aria-label="Processing steps">
        {steps.map((step) => (
          <li key={step.status} className={`step step-${step.state}`} aria-current={step.state === 'current' ? 'step' : undefined}>
            <span className="step-name">{statusName(step.status)}</span>
            <span className="visually-hidden"> ({step.state})</span>
          </li>
        ))}
      </ol>
      <div className="card" aria-live="polite">
        <p data-testid="inspection-status">
          Status: <strong>{statusName(record.status)}</strong> ({record.status})
        </p>
        {state.data?.error_reason && (
          <p className="form-errors" role="alert">
            {state.data.error_reason}
          </p>
        )}
        {cloud && (
          <>
            <p>
              Cloud project: <strong>{cloud.public_status}</strong> — {cloud.detailed_status}
              {cloud.engine ? ` · engine ${cloud.engine}` : ''} · {cloud.image_count} images
            </p>
            {cloud.progress !== null && <progress max={100} value={cloud.progress} aria-label="Cloud processing progress" />}
            {cloud.error_code !== null && (
              <p className="form-errors" role="alert">
                Cloud error {cloud.error_code}: {cloud.error_reason}
              </p>
            )}
          </>
        )}
        <dl className="details">
          <dt>Inventory</dt>
          <dd>{record.additional_statuses.inventory !== null ? (additionalNames.get(record.additional_statuses.inventory) ?? record.additional_statuses.inventory) : 'Not requested'}</dd>
          <dt>Rust analysis</dt>
          <dd>{record.additional_statuses.rust !== null ? (additionalNames.get(record.additional_statuses.rust) ?? record.additional_statuses.rust) : 'Not requested'}</dd>
        </dl>
        <div className="actions">
          {record.status === 7 && (
            <a className="button primary" href={`#/inspections/${record.id}`}>
              Open the workspace
            </a>
          )}
          {[1, 2, 20].includes(record.status) && <a href={`#/inspections/${record.id}/upload`}>Upload photos</a>}
          {record.can_retry && (
            <button type="button" onClick={retry}>
              Retry processing
            </button>
          )}
        </div>
        {retryProblem && (
          <p className="form-errors" role="alert">
            {retryProblem.message}
          </p>
        )}
        {record.retries.length > 0 && (
          <p>
            Retries:{' '}
            {record.retries.map((r) => (
              <a key={r.id} href={`#/inspections/${r.id}/processing`}>
                #{r.id} ({statusName(r.status)}){' '}
              </a>
            ))}
          </p>
        )}
      </div>
    </section>
  );
}
