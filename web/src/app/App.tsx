// The console's shell: settings and session first, then the page the hash route names. Pages that
// carry heavy libraries are loaded on demand (React.lazy), so the first bundle stays small.
import { lazy, Suspense, useEffect, useState } from 'react';
import { loadSettings } from '../api/client';
import { currentSession, onSessionChange, saveSession, type Session } from '../api/session';
import { ErrorState, Loading } from '../components/states';
import { navigate, useRoute } from './navigation';
import { routeHref, type Route } from './routes';
import { useLoad } from './use-load';
import { usePageTitle } from './page-title';
import { SignInPage } from '../pages/sign-in';
import { AssetsPage } from '../pages/assets';

const AssetPage = lazy(() => import('../pages/asset').then((m) => ({ default: m.AssetPage })));
const UploadPage = lazy(() => import('../pages/upload').then((m) => ({ default: m.UploadPage })));
const ProcessingPage = lazy(() => import('../pages/processing').then((m) => ({ default: m.ProcessingPage })));
const WorkspacePage = lazy(() => import('../pages/workspace').then((m) => ({ default: m.WorkspacePage })));
const AllowancePage = lazy(() => import('../pages/allowance').then((m) => ({ default: m.AllowancePage })));

export function App() {
  const settings = useLoad(loadSettings, []);
  const [session, setSession] = useState<Session | null>(currentSession);
  const route = useRoute();
  useEffect(() => onSessionChange(setSession), []);

  useEffect(() => {
    if (settings.data && !session && route.name !== 'signin') navigate({ name: 'signin', next: routeHref(route) }, { replace: true });
  }, [settings.data, session, route]);

  if (settings.error) return <ErrorState error={settings.error} onRetry={settings.reload} />;
  if (!settings.data) return <Loading label="Starting…" />;
  if (!session || route.name === 'signin') {
    const next = route.name === 'signin' && route.next?.startsWith('#/') ? route.next : '#/assets';
    return <SignInPage onSignedIn={() => window.location.replace(next)} />;
  }
  return (
    <div className="shell">
      <Header session={session} route={route} />
      {/* tabIndex -1: the skip link moves focus here (a <main> is not focusable by itself). */}
      <main id="main" className="page" tabIndex={-1}>
        <Suspense fallback={<Loading />}>
          <Page route={route} />
        </Suspense>
      </main>
    </div>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.name) {
    case 'assets':
      return <AssetsPage search={route.search} page={route.page} />;
    case 'asset':
      return <AssetPage id={route.id} />;
    case 'upload':
      return <UploadPage id={route.id} />;
    case 'processing':
      return <ProcessingPage id={route.id} />;
    case 'workspace':
      return <WorkspacePage route={route} />;
    case 'allowance':
      return <AllowancePage />;
    case 'signin':
      return null;
    case 'not-found':
      return <NotFound path={route.path} />;
  }
}

function NotFound({ path }: { path: string }) {
  usePageTitle('Page not found');
  return (
        <section>
          <h1>Page not found</h1>
          <p>
            Nothing lives at <code>{path}</code>. <a href="#/assets">Go to the assets</a>.
          </p>
        </section>
  );
}

function Header({ session, route }: { session: Session; route: Route }) {
  const organization = session.organizations.find((o) => o.uuid === session.organizationUuid);
  return (
    <header className="topbar">
      <a className="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <a className="brand" href="#/assets">
        Open Inspection
      </a>
      <nav aria-label="Main">
        <a href="#/assets" aria-current={route.name === 'assets' ? 'page' : undefined}>
          Assets
        </a>
        <a href="#/allowance" aria-current={route.name === 'allowance' ? 'page' : undefined}>
          Allowance
        </a>
      </nav>
      <div className="account">
        <span title={organization ? `Acting for ${organization.name}` : 'Acting for your own account'}>
          {session.username}
          {organization ? ` · ${organization.name}` : ''}
        </span>
        <button type="button" onClick={() => saveSession(null)}>
          Sign out
        </button>
      </div>
    </header>
  );
}
