// What a finished processing made, in words (GET /v1/inspections/{id}/processing/ `summary`):
// photos placed, points, reprojection error, ground sampling distance, time per stage, the outputs
// made with their sizes and the ones not made with the engine's reason.
import type { Ok } from '../api/client';
import { formatBytes, formatDuration, outputName } from '../lib/processing-words';

export type ProcessingSummary = NonNullable<Ok<'/v1/inspections/{id}/processing/'>['summary']>;

export function ProcessingSummaryCard({ summary }: { summary: ProcessingSummary }) {
  const total = summary.stage_seconds.reduce((sum, s) => sum + s.seconds, 0);
  return (
    <section className="processing-summary" aria-labelledby="processing-summary-title" data-testid="processing-summary">
      <h2 id="processing-summary-title">What processing made</h2>
      <dl className="details">
        <dt>Photos placed</dt>
        <dd>{summary.photos_placed !== null ? `${summary.photos_placed} of ${summary.photos_total}` : `${summary.photos_total} photos, positions from their metadata (this engine reconstructs nothing)`}</dd>
        {summary.points !== null && (
          <>
            <dt>Points</dt>
            <dd>
              {summary.points.toLocaleString()} {summary.dense ? '(dense cloud)' : summary.dense === false ? '(sparse cloud)' : ''}
            </dd>
          </>
        )}
        {summary.mean_reprojection_error_px !== null && (
          <>
            <dt>Reprojection error</dt>
            <dd>{summary.mean_reprojection_error_px.toFixed(2)} px on average</dd>
          </>
        )}
        {summary.gsd_cm !== null && (
          <>
            <dt>Ground sampling distance</dt>
            <dd>{summary.gsd_cm.toFixed(1)} cm per pixel</dd>
          </>
        )}
      </dl>
      {summary.stage_seconds.length > 0 && (
        <details>
          <summary>Time per stage ({formatDuration(total)} in all)</summary>
          <ul className="stage-times">
            {summary.stage_seconds.map((s) => (
              <li key={s.stage}>
                {s.title}: {formatDuration(s.seconds)}
              </li>
            ))}
          </ul>
        </details>
      )}
      <h3>Made</h3>
      <ul className="output-list" data-testid="outputs-made">
        {summary.outputs_made.map((o) => (
          <li key={o.output_type}>
            {outputName(o.output_type)}
            {o.size_bytes !== null ? <span className="hint"> · {formatBytes(o.size_bytes)}</span> : null}
          </li>
        ))}
      </ul>
      {summary.outputs_not_made.length > 0 && (
        <>
          <h3>Not made</h3>
          <ul className="output-list" data-testid="outputs-not-made">
            {summary.outputs_not_made.map((o) => (
              <li key={o.output_type}>
                {outputName(o.output_type)}: <span className="hint">{o.reason}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
