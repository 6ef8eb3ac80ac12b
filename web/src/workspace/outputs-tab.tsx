// Outputs and report: the files processing made (presigned downloads), the inputs ZIP (asked for,
// then ready), and the report: the spec's options, generate, follow `report_status`, download.
import { useEffect, useState, type FormEvent } from 'react';
import { api, authorizedFetch, unwrap } from '../api/client';
import { useLoad } from '../app/use-load';
import { Empty, ErrorState, Loading } from '../components/states';
import { problemFrom, type ApiProblem } from '../lib/api-problem';
import { asPage } from '../lib/paging';
import type { TabProps } from '../pages/workspace';
import { formatBytes, outputName } from '../lib/processing-words';
import { useReadOnly } from '../share/read-only';
import { SharingPanel } from './sharing-panel';

const REPORT_OPTIONS = [
  ['include_email', 'Include e-mail', true],
  ['include_annotations', 'Include annotations', true],
  ['include_polygon_measurements', 'Include polygon measurements', true],
  ['include_line_measurements', 'Include line measurements', true],
  ['include_inventory_items', 'Include inventory items', true],
  ['include_only_visible', 'Only visible items', false],
  ['include_sharetoken', 'Include share link', true],
  ['include_2d_plans', 'Include 2D plans', false],
] as const;

/** `report_status` of the spec in words. */
const REPORT_STATES: Record<string, string> = {
  'not available': 'not generated yet',
  processing: 'being generated…',
  available: 'ready',
  error: 'generation failed',
};

/**
 * Saves a file from the S3 endpoint under a name. A link's `download` attribute is ignored for
 * another origin (the browser then shows the PDF instead of saving it), so the file is fetched
 * (the endpoint answers CORS) and saved from a same-origin blob URL.
 */
async function saveAs(url: string, filename: string): Promise<void> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`The download failed (${response.status}).`);
  const blob = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = blob;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(blob), 60_000);
}

export function OutputsTab({ inspection, reload }: TabProps) {
  const [tick, setTick] = useState(0);
  const outputs = useLoad(async () => asPage(await unwrap(api.GET('/v1/inspections/{id}/outputs/', { params: { path: { id: inspection.id } } }))).results, [inspection.id, tick, inspection.report_status]);
  const [options, setOptions] = useState<Record<string, boolean>>(() => Object.fromEntries(REPORT_OPTIONS.map(([key, , value]) => [key, value])));
  const [remarks, setRemarks] = useState('');
  const [reportProblem, setReportProblem] = useState<ApiProblem>();
  const [inputs, setInputs] = useState<{ state: 'idle' | 'preparing' | 'ready' | 'error'; url?: string; message?: string }>({ state: 'idle' });
  // A share link's viewer: the downloads only (no inputs ZIP, no report to generate, no share links).
  const readOnly = useReadOnly();
  // Sizes of what processing made, from the processing summary (the spec's outputs carry none; a
  // share link cannot read the processing route, so its viewer lists the outputs without sizes).
  const summary = useLoad(async () => (readOnly ? null : ((await unwrap(api.GET('/v1/inspections/{id}/processing/', { params: { path: { id: inspection.id } } }))).summary ?? null)), [inspection.id, readOnly, inspection.status]);
  const sizes = new Map((summary.data?.outputs_made ?? []).map((o) => [o.output_type, o.size_bytes]));

  // Follow report generation until it is no longer `processing`: every 1.5 s for as long as it
  // lasts. (A timer set per change of the record stopped after a reload that found the record
  // unchanged, and the page said "being generated" until reloaded: issue 37 §1.)
  useEffect(() => {
    if (inspection.report_status !== 'processing') return;
    const timer = setInterval(reload, 1500);
    return () => clearInterval(timer);
  }, [inspection.report_status, reload]);

  // Ask for the inputs ZIP again while it is being prepared.
  useEffect(() => {
    if (inputs.state !== 'preparing') return;
    const timer = setTimeout(requestInputs, 3000);
    return () => clearTimeout(timer);
  });

  async function requestInputs() {
    const response = await authorizedFetch(`/v1/inspections/${inspection.id}/inputs/`).catch(() => null);
    if (!response) return setInputs({ state: 'error', message: problemFrom(0, null).message });
    const body = await response.json().catch(() => null);
    if (response.status === 200) {
      setInputs({ state: 'ready', url: body.url });
      setTick((t) => t + 1);
    } else if (response.status === 202) setInputs({ state: 'preparing' });
    else setInputs({ state: 'error', message: problemFrom(response.status, body).message });
  }

  async function generate(event: FormEvent) {
    event.preventDefault();
    setReportProblem(undefined);
    try {
      await unwrap(api.POST('/v1/inspections/{id}/report/', { params: { path: { id: inspection.id } }, body: { ...options, extra_remarks: remarks.trim() || null } as never }));
      reload();
    } catch (err) {
      setReportProblem(err as ApiProblem);
    }
  }

  const list = outputs.data ?? [];
  const pdf = list.find((o) => o.output_type === 'report_pdf');
  // A ZIP prepared earlier is already among the outputs: offer it without asking again.
  const zipUrl = inputs.state === 'ready' ? inputs.url : inputs.state === 'idle' ? list.find((o) => o.output_type === 'input_zip')?.url : undefined;
  return (
    <div className="outputs-tab">
      <section aria-labelledby="outputs-heading">
        <h2 id="outputs-heading">Outputs</h2>
        {outputs.error ? (
          <ErrorState error={outputs.error} onRetry={outputs.reload} />
        ) : !outputs.data ? (
          <Loading />
        ) : list.length === 0 ? (
          <Empty>
            <p>No outputs yet{inspection.status !== 7 ? ': processing has not completed' : ''}.</p>
          </Empty>
        ) : (
          <ul className="output-list">
            {list.map((o) => (
              <li key={o.output_type}>
                <a href={o.url} download target="_blank" rel="noopener">
                  {outputName(o.output_type)}
                </a>
                {sizes.get(o.output_type) != null ? <span className="hint"> · {formatBytes(sizes.get(o.output_type)!)}</span> : null} <code>{o.output_type}</code>
              </li>
            ))}
          </ul>
        )}
        {!readOnly && <h3>Original photos</h3>}
        {!readOnly && (
          <div className="actions">
            {zipUrl ? (
              <a className="button" href={zipUrl} download>
                Download the photos (ZIP)
              </a>
            ) : (
              <button type="button" onClick={requestInputs} disabled={inputs.state === 'preparing'}>
                {inputs.state === 'preparing' ? 'Preparing the ZIP…' : 'Prepare the photos ZIP'}
              </button>
            )}
            {inputs.state === 'preparing' && <span className="hint">You will also get an e-mail when it is ready.</span>}
            {inputs.state === 'error' && (
              <span className="form-errors" role="alert">
                {inputs.message}
              </span>
            )}
          </div>
        )}
      </section>
      <section aria-labelledby="report-heading">
        <h2 id="report-heading">Report</h2>
        <p data-testid="report-status" data-report-status={inspection.report_status} aria-live="polite">
          Report: <strong>{REPORT_STATES[inspection.report_status] ?? inspection.report_status}</strong>
          {inspection.report_status === 'processing' && <span className="spinner report-spinner" aria-hidden="true" />}
        </p>
        {inspection.report_status === 'error' && (
          <p className="form-errors" role="alert">
            The report could not be generated. Check the options and generate it again.
          </p>
        )}
        {pdf && inspection.report_status === 'available' && (
          <p>
            <button type="button" className="primary" onClick={() => saveAs(pdf.url, `report-${inspection.id}.pdf`).catch((err) => setReportProblem(problemFrom(0, String(err))))}>
              Download the report (PDF)
            </button>{' '}
            <a href={pdf.url} target="_blank" rel="noopener">
              Open in a new tab
            </a>
          </p>
        )}
        {!readOnly && (
          <form onSubmit={generate} aria-label="Report options" className="card">
            <fieldset className="options">
              <legend>Include</legend>
              {REPORT_OPTIONS.map(([key, label]) => (
                <label key={key} className="check">
                  <input type="checkbox" checked={options[key]} onChange={(e) => setOptions({ ...options, [key]: e.target.checked })} /> {label}
                </label>
              ))}
            </fieldset>
            <div className="field">
              <label htmlFor="extra-remarks">Extra remarks</label>
              <textarea id="extra-remarks" value={remarks} onChange={(e) => setRemarks(e.target.value)} maxLength={10000} />
            </div>
            {reportProblem && (
              <p className="form-errors" role="alert">
                {reportProblem.message}
              </p>
            )}
            <div className="actions">
              <button type="submit" className="primary" disabled={inspection.report_status === 'processing'}>
                {inspection.report_status === 'processing' ? 'Generating…' : 'Generate report'}
              </button>
            </div>
          </form>
        )}
      </section>
      {!readOnly && <SharingPanel inspection={inspection} />}
    </div>
  );
}
