// The inspection's share links (issue 29 §3): who made each, when, until when, whether revoked; a
// new one (label, lifetime) whose link is shown once, with a copy button (the service keeps only
// its hash: GET …/share_tokens/ never lists it again); Revoke, confirmed, which ends a link at once.
// A link opens the console's read-only viewer (share/share-app.tsx) for anyone who holds it.
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Inspection, type Item } from '../api/client';
import { useLoad } from '../app/use-load';
import { ErrorState, Loading } from '../components/states';
import type { ApiProblem } from '../lib/api-problem';
import { allPages } from './photos/all-pages';
import '../share/share.css';

type ShareLink = Item<'/v1/inspections/{id}/share_tokens/'>;

/** Lifetimes offered, in seconds (the service's maximum, SHARE_TOKEN_MAX_TTL_SECONDS, is 90 days by default). */
const LIFETIMES = [
  [24 * 3600, '1 day'],
  [7 * 24 * 3600, '7 days'],
  [30 * 24 * 3600, '30 days'],
  [90 * 24 * 3600, '90 days'],
] as const;

export function SharingPanel({ inspection }: { inspection: Inspection }) {
  const links = useLoad(
    () => allPages((page, page_size) => unwrap(api.GET('/v1/inspections/{id}/share_tokens/', { params: { path: { id: inspection.id }, query: { page, page_size } } })) as Promise<ShareLink[]>),
    // A report that asks for its link makes one: listed once the report is done.
    [inspection.id, inspection.report_status],
  );
  // Who made a link: the API names users by id; the signed-in user's own links say so by name.
  const me = useLoad(() => unwrap(api.GET('/v1/me/')), []);
  const [label, setLabel] = useState('');
  const [lifetime, setLifetime] = useState<number>(LIFETIMES[1][0]);
  const [made, setMade] = useState<{ url: string; label: string }>();
  const [copied, setCopied] = useState(false);
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);

  async function create(event: FormEvent) {
    event.preventDefault();
    setProblem(undefined);
    setBusy(true);
    try {
      const created = await unwrap(api.POST('/v1/inspections/{id}/share_tokens/', { params: { path: { id: inspection.id } }, body: { label: label.trim(), expires_in: lifetime } }));
      setMade({ url: created.url, label: created.label });
      setCopied(false);
      setLabel('');
      links.reload();
    } catch (err) {
      setProblem(err as ApiProblem);
    } finally {
      setBusy(false);
    }
  }

  async function revoke(link: ShareLink) {
    if (!window.confirm(`Revoke the link${link.label ? ` “${link.label}”` : ''}? Whoever holds it can no longer open the inspection.`)) return;
    setProblem(undefined);
    try {
      await unwrap(api.DELETE('/v1/inspections/{id}/share_tokens/{token_id}/', { params: { path: { id: inspection.id, token_id: link.id } } }));
      links.reload();
    } catch (err) {
      setProblem(err as ApiProblem);
    }
  }

  async function copy(url: string) {
    try {
      await navigator.clipboard.writeText(url);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin, or refused): the field is selected for Ctrl+C instead.
      (document.getElementById('new-share-link') as HTMLInputElement | null)?.select();
    }
  }

  const now = Date.now();
  return (
    <section className="sharing-panel" aria-labelledby="sharing-heading">
      <h2 id="sharing-heading">Sharing</h2>
      <p className="hint">A link opens this inspection read-only, without an account: photos with their annotations, map, 3D, measurements and the report. Anyone who holds it can open it until it expires or you revoke it.</p>
      <form onSubmit={create} aria-label="New share link" className="card">
        <div className="field">
          <label htmlFor="share-label">Label</label>
          <input id="share-label" value={label} onChange={(e) => setLabel(e.target.value)} maxLength={255} placeholder="Who it is for" />
        </div>
        <div className="field">
          <label htmlFor="share-lifetime">Valid for</label>
          <select id="share-lifetime" value={lifetime} onChange={(e) => setLifetime(Number(e.target.value))}>
            {LIFETIMES.map(([seconds, words]) => (
              <option key={seconds} value={seconds}>
                {words}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="primary" disabled={busy}>
          Make a link
        </button>
      </form>
      {made && (
        <div className="new-link" role="status">
          <label htmlFor="new-share-link">New link{made.label ? ` (${made.label})` : ''}, shown this once:</label>
          <input id="new-share-link" readOnly value={made.url} onFocus={(e) => e.target.select()} />
          <button type="button" onClick={() => copy(made.url)}>
            {copied ? 'Copied' : 'Copy link'}
          </button>
        </div>
      )}
      {problem && (
        <p className="form-errors" role="alert">
          {problem.message}
        </p>
      )}
      {links.error ? (
        <ErrorState error={links.error} onRetry={links.reload} />
      ) : !links.data ? (
        <Loading />
      ) : links.data.length === 0 ? (
        <p className="hint">No links yet.</p>
      ) : (
        <div className="table-scroll">
          <table aria-label="Share links">
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Made by</th>
                <th scope="col">Made</th>
                <th scope="col">Expires</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {[...links.data].reverse().map((link) => {
                const ended = link.revoked_at !== null || Date.parse(link.expires_at) <= now;
                return (
                  <tr key={link.id} className={ended ? 'revoked' : undefined}>
                    <td>{link.label || '—'}</td>
                    <td>{link.created_by === me.data?.id ? `You (${me.data.username})` : `User ${link.created_by}`}</td>
                    <td>{new Date(link.created_at).toLocaleString()}</td>
                    <td>{new Date(link.expires_at).toLocaleString()}</td>
                    <td>{link.revoked_at !== null ? `Revoked ${new Date(link.revoked_at).toLocaleString()}` : ended ? 'Expired' : 'Active'}</td>
                    <td>
                      {!ended && (
                        <button type="button" className="danger" onClick={() => revoke(link)} aria-label={`Revoke ${link.label || `link ${link.id}`}`}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
