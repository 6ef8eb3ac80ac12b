// The share-link viewer: the console at `/share/<token>` (the service serves its page there), for
// people without an account. It asks GET /v1/share/ which inspection the token opens, then shows
// the inspection's workspace read-only (ReadOnlyContext): photos with their annotations, map, 3D,
// measurements, outputs and report downloads. No session, no sign-in prompt: the API client sends
// the token as X-Share-Token (api/client.ts). A malformed token is refused here without a call; an
// expired or revoked one (a 401, at start or later) shows one page saying the link is no longer valid.
import { lazy, Suspense, useEffect, useState } from 'react';
import { api, loadSettings, SHARE_REFUSED_EVENT, unwrap } from '../api/client';
import { shareToken } from '../api/session';
import { navigate, useRoute } from '../app/navigation';
import { usePageTitle } from '../app/page-title';
import { useLoad } from '../app/use-load';
import { ErrorState, Loading } from '../components/states';
import { ApiProblem } from '../lib/api-problem';
import { ReadOnlyContext } from './read-only';
import './share.css';

const WorkspacePage = lazy(() => import('../pages/workspace').then((m) => ({ default: m.WorkspacePage })));

/** The service's token format (src/inspection/auth/share-tokens.ts): anything else is not a link it made. */
const TOKEN = /^ist_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/;

async function openShare(token: string | null) {
  if (!token || !TOKEN.test(token)) return { valid: false as const, malformed: true };
  await loadSettings();
  try {
    return { valid: true as const, ...(await unwrap(api.GET('/v1/share/'))) };
  } catch (err) {
    if (err instanceof ApiProblem && err.status === 401) return { valid: false as const, malformed: false };
    throw err;
  }
}

export default function ShareApp() {
  const share = useLoad(() => openShare(shareToken()), []);
  const [refused, setRefused] = useState(false);
  const route = useRoute();
  const inspectionId = share.data?.valid ? share.data.inspection : undefined;

  useEffect(() => {
    const onRefused = () => setRefused(true);
    window.addEventListener(SHARE_REFUSED_EVENT, onRefused);
    return () => window.removeEventListener(SHARE_REFUSED_EVENT, onRefused);
  }, []);
  // The viewer shows one inspection: any other address (none, a bookmark of the console) goes to it.
  useEffect(() => {
    if (inspectionId !== undefined && (route.name !== 'workspace' || route.id !== inspectionId)) navigate({ name: 'workspace', id: inspectionId, tab: 'photos' }, { replace: true });
  }, [inspectionId, route]);

  let body;
  if (refused || (share.data && !share.data.valid)) body = <InvalidLink malformed={!refused && !!share.data && !share.data.valid && share.data.malformed} />;
  else if (share.error) body = <ErrorState error={share.error} onRetry={share.reload} />;
  else if (!share.data?.valid || route.name !== 'workspace' || route.id !== inspectionId) body = <Loading label="Opening the shared inspection…" />;
  else
    body = (
      <ReadOnlyContext.Provider value={true}>
        <p className="share-notice">
          Shared with you, read-only. This link works until {new Date(share.data.expires_at).toLocaleString()} unless it is revoked sooner.
        </p>
        <Suspense fallback={<Loading />}>
          <WorkspacePage route={route} />
        </Suspense>
      </ReadOnlyContext.Provider>
    );
  return (
    <div className="shell share-shell">
      <header className="topbar">
        <a className="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
          Skip to content
        </a>
        <span className="brand">Open Inspection</span>
        <span className="share-badge">Shared inspection · read-only</span>
      </header>
      <main id="main" className="page" tabIndex={-1}>
        {body}
      </main>
    </div>
  );
}

function InvalidLink({ malformed }: { malformed: boolean }) {
  usePageTitle('Link no longer valid');
  return (
    <section className="share-invalid" data-testid="share-invalid">
      <h1>This link is no longer valid</h1>
      <p>{malformed ? 'The address is not a complete share link: check that it was copied whole.' : 'It has expired or was revoked by the person who shared it.'}</p>
      <p>Ask them for a new link.</p>
    </section>
  );
}
