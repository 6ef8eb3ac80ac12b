// Processing of one inspection, live: the spec's steps as a stepper, the additional statuses, the
// cloud project's detail (GET /v1/inspections/{id}/processing/), errors in words, and Retry when
// the spec allows it (`can_retry`). Polls every 2 s while work is under way.
import { useEffect, useState } from 'react';
import { api, unwrap } from '../api/client';
import { navigate } from '../app/navigation';
import { useLoad } from '../app/use-load';
import { InspectionCrumbs } from '../components/inspection-crumbs';
import { StatusBadge } from '../components/status-badge';
import { ErrorState, Loading } from '../components/states';
import type { ApiProblem } from '../lib/api-problem';
import { retryBlockedReason } from '../lib/retry-rules';
import { isStable, processingSteps, statusKind, statusName } from '../lib/statuses';

const POLL_MS = 2000;

export function ProcessingPage({ id }: { id: number }) {
  const [tick, setTick] = useState(0);
  const inspection = useLoad(() => unwrap(api.GET('/v1/inspections/{id}/', { params: { path: { id } } })), [id, tick]);
  const state = useLoad(() => unwrap(api.GET('/v1/inspections/{id}/processing/', { params: { path: { id } } })), [id, tick]);
  const additional = useLoad(() => unwrap(api.GET('/v1/inspections/additional_statuses/')), []);
  const [retryProblem, setRetryProblem] = useState<ApiProblem>();
  const [retrying, setRetrying] = useState(false);
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

  const failed = statusKind(record.status) === 'error';
  const blocked = retryBlockedReason(record);
  // The cloud's progress bar only while its project works or once it is done; a failed project's
  // bar would sit empty and read as "waiting".
  const showProgress = cloud !== null && cloud.progress !== null && !failed && cloud.public_status !== 'ERROR' && cloud.public_status !== 'CANCELED';

  async function retry() {
    setRetryProblem(undefined);
    setRetrying(true);
    try {
      const created = await unwrap(api.POST('/v1/inspections/retry/', { body: { inspection: record.id } as never }));
      navigate({ name: 'processing', id: (created as { id: number }).id });
    } catch (err) {
      setRetryProblem(err as ApiProblem);
    } finally {
      setRetrying(false);
    }
  }

  return (
    <section>
      <InspectionCrumbs inspection={record} linkInspection />
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
      <div className="card processing-card" aria-live="polite">
        <p data-testid="inspection-status">
          Status: <strong>{statusName(record.status)}</strong> ({record.status})
        </p>
        {failed && (
          <div className="form-errors" role="alert">
            <p>
              <strong>{statusName(record.status)}.</strong> {state.data?.error_reason ?? ''}
            </p>
          </div>
        )}
        {cloud && (
          <>
            <p>
              Cloud project: <strong>{cloud.public_status}</strong> — {cloud.detailed_status}
              {cloud.engine ? ` · engine ${cloud.engine}` : ''} · {cloud.image_count} images
            </p>
            {showProgress && (
              <div className="processing-progress">
                <progress max={100} value={cloud.progress ?? 0} aria-label="Cloud processing progress" />
                <span data-testid="cloud-progress">{Math.round(cloud.progress ?? 0)} %</span>
              </div>
            )}
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
            <button type="button" onClick={retry} disabled={retrying}>
              {retrying ? 'Starting the retry…' : 'Retry processing'}
            </button>
          )}
          {!isStable(record.status) && (
            <span className="hint">
              <span className="spinner" aria-hidden="true" /> Updated every {POLL_MS / 1000} s
            </span>
          )}
        </div>
        {blocked && <p className="hint">{blocked}</p>}
        {retryProblem && (
          <p className="form-errors" role="alert">
            {retryProblem.message}
          </p>
        )}
        {record.retry_of !== null && (
          <p>
            A retry of <a href={`#/inspections/${record.retry_of}/processing`}>inspection #{record.retry_of}</a>, with its photos.
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
