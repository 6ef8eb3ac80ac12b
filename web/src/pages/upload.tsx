// Upload: photos (or a folder of them) dropped or picked go straight to the S3 endpoint with the
// inspection's temporary credentials, then are registered; then Process, with the allowance it
// will spend shown first. Upload state lives in upload/use-upload-session.ts; the rules
// (which files, keys, parts, retries, progress, cost) in lib/upload-plan.ts.
import { allowanceAmount, allowanceWords } from '../lib/plain-words';
import { useEffect, useId, useRef, useState, type DragEvent } from 'react';
import { api, unwrap, type Inspection } from '../api/client';
import { navigate } from '../app/navigation';
import { useLoad } from '../app/use-load';
import { ErrorState, Loading } from '../components/states';
import { InspectionCrumbs } from '../components/inspection-crumbs';
import { StatusBadge } from '../components/status-badge';
import { ApiProblem } from '../lib/api-problem';
import { asPage } from '../lib/paging';
import { formatBytes, formatDuration, formatSpeed, processingCost } from '../lib/upload-plan';
import { filesFromDrop, filesFromInput } from '../upload/file-drop';
import { useUploadSession, type UploadItem, type UploadSession } from '../upload/use-upload-session';
import { usePageTitle } from '../app/page-title';

/** Statuses in which photos may be uploaded and processing started (spec: 1, 2 or 20). */
const OPEN_STATUSES = [1, 2, 20];

export function UploadPage({ id }: { id: number }) {
  const inspection = useLoad(() => unwrap(api.GET('/v1/inspections/{id}/', { params: { path: { id } } })), [id]);
  usePageTitle('Upload photos', inspection.data?.name);
  if (inspection.error) return <ErrorState error={inspection.error} onRetry={inspection.reload} />;
  if (!inspection.data) return <Loading label="Loading the inspection…" />;
  const record = inspection.data;
  return (
    <section className="upload-page" aria-labelledby="upload-title">
      <InspectionCrumbs inspection={record} linkInspection />
      <div className="page-head">
        <h1 id="upload-title">Upload photos</h1>
        <StatusBadge status={record.status} />
      </div>
      {OPEN_STATUSES.includes(record.status) ? (
        <OpenUpload inspection={record} />
      ) : (
        <div className="card" role="status">
          <p>
            Uploads are closed for this inspection: processing has started or the inspection is in a state that takes no more photos.
          </p>
          <p>
            <a href={`#/inspections/${record.id}`}>Open the inspection workspace</a> · <a href={`#/inspections/${record.id}/processing`}>See its processing</a>
          </p>
        </div>
      )}
    </section>
  );
}

function OpenUpload({ inspection }: { inspection: Inspection }) {
  const session = useUploadSession(inspection.id);
  // Leaving mid-upload loses the files not yet sent: ask first.
  useEffect(() => {
    if (!session.busy) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [session.busy]);
  return (
    <>
      <DropZone onFiles={session.addFiles} compact={session.items.length > 0} />
      {session.error && (
        <div className="state-error upload-error" role="alert">
          <p>{session.error}</p>
        </div>
      )}
      <UploadProgress session={session} />
      <ProcessSection inspection={inspection} session={session} />
    </>
  );
}

function DropZone({ onFiles, compact }: { onFiles: UploadSession['addFiles']; compact: boolean }) {
  const [over, setOver] = useState(false);
  const filesInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const hint = useId();
  // webkitdirectory is not in React's attribute list: set it on the element.
  useEffect(() => {
    folderInput.current?.setAttribute('webkitdirectory', '');
  }, []);
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    void filesFromDrop(e.dataTransfer).then(onFiles);
  };
  return (
    <div
      className={`drop-zone${over ? ' drop-zone-over' : ''}${compact ? ' drop-zone-compact' : ''}`}
      onDragOver={(e) => {
        e.preventDefault();
        e.dataTransfer.dropEffect = 'copy';
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
    >
      <button type="button" className="drop-target" aria-describedby={hint} onClick={() => filesInput.current?.click()}>
        <strong>Drop photos or a folder here</strong>
        <span>or press to choose photos</span>
      </button>
      <p id={hint} className="hint">
        JPEG, PNG, TIFF and DNG photos. Other files are skipped. Uploads start at once, four at a time.
      </p>
      <div className="actions">
        <label className="file-button">
          Choose photos
          <input
            ref={filesInput}
            type="file"
            multiple
            accept=".jpg,.jpeg,.png,.tif,.tiff,.dng,image/jpeg,image/png,image/tiff"
            onChange={(e) => {
              onFiles(filesFromInput(e.currentTarget.files));
              e.currentTarget.value = '';
            }}
          />
        </label>
        <label className="file-button">
          Choose a folder
          <input
            ref={folderInput}
            type="file"
            multiple
            onChange={(e) => {
              onFiles(filesFromInput(e.currentTarget.files));
              e.currentTarget.value = '';
            }}
          />
        </label>
      </div>
    </div>
  );
}

const STATUS_TEXT: Record<UploadItem['status'], string> = {
  waiting: 'Waiting',
  uploading: 'Uploading',
  uploaded: 'Uploaded',
  registered: 'Registered',
  failed: 'Failed',
};

function UploadProgress({ session }: { session: UploadSession }) {
  const { items, progress } = session;
  const failed = items.filter((i) => i.status === 'failed');
  const done = items.filter((i) => i.status === 'uploaded' || i.status === 'registered').length;
  const percent = Math.floor(progress.fraction * 100);
  if (items.length === 0 && session.skipped.length === 0) {
    return <p className="state state-empty upload-empty">{session.preparing ? 'Preparing the upload…' : 'No photos added yet.'}</p>;
  }
  return (
    <section className="card upload-progress" aria-labelledby="upload-progress-title">
      <h2 id="upload-progress-title">Photos</h2>
      {items.length > 0 && (
        <div className="upload-total">
          <label htmlFor="upload-total-bar">
            Total: {done} of {items.length} photos uploaded, {formatBytes(progress.doneBytes)} of {formatBytes(progress.totalBytes)}
          </label>
          <progress id="upload-total-bar" aria-label="Total upload progress" max={100} value={percent}>
            {percent} %
          </progress>
          <p className="upload-stats" aria-live="polite">
            <span data-testid="upload-percent">{percent} %</span>
            {progress.fraction < 1 ? (
              <>
                <span>Speed {formatSpeed(progress.bytesPerSecond ?? progress.averageBytesPerSecond)}</span>
                <span>Time left {formatDuration(progress.secondsLeft)}</span>
              </>
            ) : (
              <span data-testid="upload-average-speed">Average speed {formatSpeed(progress.averageBytesPerSecond)}</span>
            )}
            <span data-testid="registered-count" role="status">
              {session.registering ? 'Registering…' : `${session.registered} registered`}
            </span>
          </p>
        </div>
      )}
      {failed.length > 0 && (
        <div className="actions">
          <button type="button" className="primary" onClick={session.retryFailed}>
            Retry failed ({failed.length})
          </button>
        </div>
      )}
      {failed.length === 0 && session.error && !session.busy && items.some((i) => i.status === 'uploaded') && (
        <div className="actions">
          <button type="button" className="primary" onClick={session.retryFailed}>
            Retry registration
          </button>
        </div>
      )}
      <ul className="upload-files" aria-label="Files">
        {items.map((item) => (
          <li key={item.id} className={`upload-file upload-${item.status}`}>
            <span className="upload-name" title={item.key}>
              {item.name}
            </span>
            <span className="upload-size">{formatBytes(item.size)}</span>
            <progress aria-label={`Upload of ${item.name}`} max={100} value={Math.floor(item.fraction * 100)} />
            <span className="upload-state">
              {STATUS_TEXT[item.status]}
              {item.status === 'uploading' ? ` ${Math.floor(item.fraction * 100)} %` : ''}
            </span>
            {(item.error || item.note) && <span className={item.error ? 'upload-why error' : 'upload-why'}>{item.error ?? item.note}</span>}
          </li>
        ))}
      </ul>
      {session.skipped.length > 0 && (
        <details className="upload-skipped">
          <summary>{session.skipped.length} skipped (not photos)</summary>
          <ul>
            {session.skipped.map((s, n) => (
              <li key={n}>
                <code>{s.name}</code>: {s.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

function ProcessSection({ inspection, session }: { inspection: Inspection; session: UploadSession }) {
  const allowance = useLoad(() => unwrap(api.GET('/v1/allowance/')), []);
  const [starting, setStarting] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | undefined>();
  const reason = useId();
  if (allowance.error) return <ErrorState error={allowance.error} onRetry={allowance.reload} />;
  if (!allowance.data) return <Loading label="Loading the allowance…" />;
  const cost = processingCost(inspection.processing_parameters as Record<string, unknown>, asPage(allowance.data).results);
  const hasImages = session.registered > 0 || inspection.status === 2 || inspection.status === 20;
  const blockedBy = session.busy
    ? 'Wait until every photo is uploaded and registered.'
    : cost.blockedBy ?? (hasImages ? undefined : 'Upload photos first: processing needs registered photos.');
  const start = async () => {
    setStarting(true);
    setProblem(undefined);
    try {
      await unwrap(api.POST('/v1/inspections/{id}/process/', { params: { path: { id: inspection.id } }, body: {} }));
      navigate({ name: 'processing', id: inspection.id });
    } catch (err) {
      setProblem(err instanceof ApiProblem ? err : new ApiProblem(0, {}, undefined, String(err)));
      setStarting(false);
    }
  };
  return (
    <section className="card process-section" aria-labelledby="process-title">
      <h2 id="process-title">Process</h2>
      <ul className="process-cost" aria-label="What processing will spend">
        {cost.spends.map((s) => (
          <li key={s.code}>
            Processing uses {allowanceAmount(s.code, s.amount)} of your allowance ({s.balance} left). <span className="hint">{allowanceWords(s.code).explanation}</span>
          </li>
        ))}
      </ul>
      <div className="actions">
        <button type="button" className="primary" disabled={Boolean(blockedBy) || starting} aria-describedby={blockedBy ? reason : undefined} onClick={() => void start()}>
          {starting ? 'Starting…' : 'Process'}
        </button>
        {blockedBy && (
          <span id={reason} className="hint">
            {blockedBy}
          </span>
        )}
      </div>
      {problem && (
        <p className="state-error" role="alert">
          {problem.message}
        </p>
      )}
    </section>
  );
}
