// Processing of one inspection, live: the spec's steps as a stepper, the additional statuses, the
// cloud project's state in words with the time it has run and an estimate of the time left, what
// a finished processing made (components/processing-summary.tsx), errors in words, and Retry when
// the spec allows it (`can_retry`), confirmed first. Polls every 2 s while work is under way.
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
import { cloudStateWords, formatDuration, remainingSeconds } from '../lib/processing-words';
import { engineName } from '../lib/plain-words';
import { ProcessingSummaryCard } from '../components/processing-summary';
import { usePageTitle } from '../app/page-title';

const POLL_MS = 2000;

export function ProcessingPage({ id }: { id: number }) {
  const [tick, setTick] = useState(0);
  const inspection = useLoad(() => unwrap(api.GET('/v1/inspections/{id}/', { params: { path: { id } } })), [id, tick]);
  const state = useLoad(() => unwrap(api.GET('/v1/inspections/{id}/processing/', { params: { path: { id } } })), [id, tick]);
  const additional = useLoad(() => unwrap(api.GET('/v1/inspections/additional_statuses/')), []);
  usePageTitle('Processing', inspection.data?.name);
  const [retryProblem, setRetryProblem] = useState<ApiProblem>();
  const [retrying, setRetrying] = useState(false);
  // A retry is a new inspection: asked for in two steps, with what it means (issue 29).
  const [confirmRetry, setConfirmRetry] = useState(false);
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
          <strong>{statusName(record.status)}</strong>
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
            <p data-testid="cloud-state">
              Photogrammetry: <strong>{cloudStateWords(cloud.public_status)}</strong>
              {cloud.public_status === 'PROCESSING' && cloud.detailed_status ? ` — ${cloud.detailed_status}` : ''} · {cloud.image_count} photos
              {cloud.engine ? ` · ${engineName(cloud.engine)}` : ''}
            </p>
            <ElapsedLine started={cloud.processing_started} ended={cloud.processing_ended} progress={cloud.public_status === 'PROCESSING' ? cloud.progress : null} />
            {showProgress && (
              <div className="processing-progress">
                <progress max={100} value={cloud.progress ?? 0} aria-label="Cloud processing progress" />
                <span data-testid="cloud-progress">{Math.round(cloud.progress ?? 0)} %</span>
              </div>
            )}
            {cloud.error_code !== null && (
              <p className="form-errors" role="alert">
                {cloud.error_reason ?? 'Photogrammetry failed.'} <span className="hint">(code {cloud.error_code})</span>
              </p>
            )}
          </>
        )}
        {state.data?.summary && <ProcessingSummaryCard summary={state.data.summary} />}
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
          {record.can_retry && !confirmRetry && (
            <button type="button" onClick={() => setConfirmRetry(true)}>
              Retry processing…
            </button>
          )}
          {!isStable(record.status) && (
            <span className="hint">
              <span className="spinner" aria-hidden="true" /> Updated every {POLL_MS / 1000} s
            </span>
          )}
        </div>
        {record.can_retry && confirmRetry && (
          <div className="confirm" role="group" aria-labelledby="retry-confirm-text">
            <p id="retry-confirm-text">
              A retry makes a <strong>new inspection</strong> with the same photos and processes it again from the start
              {record.status === 7 ? ', although this one completed' : ''}. It spends no units of your allowance; this inspection stays as it is. An inspection can be retried
              twice at most.
            </p>
            <div className="actions">
              <button type="button" className="primary" onClick={retry} disabled={retrying}>
                {retrying ? 'Starting the retry…' : 'Start the retry'}
              </button>
              <button type="button" onClick={() => setConfirmRetry(false)} disabled={retrying}>
                Cancel
              </button>
            </div>
          </div>
        )}
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

/** Time since the photogrammetry started (or how long it took), and the time left at its pace. */
function ElapsedLine({ started, ended, progress }: { started: string | null; ended: string | null; progress: number | null }) {
  if (!started) return null;
  const elapsed = ((ended ? Date.parse(ended) : Date.now()) - Date.parse(started)) / 1000;
  if (!Number.isFinite(elapsed)) return null;
  const left = remainingSeconds(elapsed, progress);
  return (
    <p className="hint" data-testid="cloud-elapsed">
      {ended ? `Took ${formatDuration(elapsed)}` : `Running for ${formatDuration(elapsed)}`}
      {left !== null ? ` · about ${formatDuration(left)} left` : ''}
    </p>
  );
}
