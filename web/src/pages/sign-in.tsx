// Sign in: username and password give a token (POST /v1/auth/token/ with the console's API key);
// GET /v1/me/ then says which organizations the user may act for. With several, the user picks one.
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { saveSession, type Session } from '../api/session';
import { Field, FormErrors } from '../components/field';
import { ApiProblem } from '../lib/api-problem';
import { lockoutMessage } from '../lib/plain-words';
import { usePageTitle } from '../app/page-title';

export function SignInPage({ onSignedIn }: { onSignedIn: () => void }) {
  usePageTitle('Sign in');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<ApiProblem>();
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState<Session>();
  const [organization, setOrganization] = useState('');

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setProblem(undefined);
    try {
      const token = await unwrap(api.POST('/v1/auth/token/', { body: { username, password } }));
      const draft: Session = { token: token.api_token, expiresAt: Date.now() + token.expires_in * 1000, username, organizationUuid: null, organizations: [] };
      saveSession(draft); // the profile call below needs the token
      const me = await unwrap(api.GET('/v1/me/'));
      const session = { ...draft, username: me.username, organizations: me.organizations, organizationUuid: me.organizations.length === 1 ? me.organizations[0].uuid : null };
      if (me.organizations.length > 1) {
        saveSession(null);
        setPending(session);
        setOrganization(me.organizations[0].uuid);
      } else {
        saveSession(session);
        onSignedIn();
      }
    } catch (err) {
      saveSession(null);
      const problem = err as ApiProblem;
      // A lock-out: say until when, and that the right password is refused too meanwhile.
      const lockout = problem.status === 429 ? lockoutMessage(problem.message, new Date()) : undefined;
      setProblem(lockout ? new ApiProblem(429, {}, problem.code, lockout) : problem);
    } finally {
      setBusy(false);
    }
  }

  function choose(event: FormEvent) {
    event.preventDefault();
    if (!pending) return;
    saveSession({ ...pending, organizationUuid: organization || null });
    onSignedIn();
  }

  return (
    <main className="signin">
      <h1>Open Inspection</h1>
      {!pending ? (
        <form onSubmit={submit} className="card" aria-label="Sign in">
          <h2>Sign in</h2>
          <Field label="Username" name="username" problem={problem}>
            <input autoComplete="username" value={username} onChange={(e) => setUsername(e.target.value)} required maxLength={255} autoFocus />
          </Field>
          <Field label="Password" name="password" problem={problem}>
            <input type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
          </Field>
          <FormErrors problem={problem} fields={['username', 'password']} />
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      ) : (
        <form onSubmit={choose} className="card" aria-label="Choose an organization">
          <h2>Act for</h2>
          <p>You are a member of several organizations. Choose the one to work for; you can change it later.</p>
          <Field label="Organization" name="organization">
            <select value={organization} onChange={(e) => setOrganization(e.target.value)}>
              {pending.organizations.map((o) => (
                <option key={o.uuid} value={o.uuid}>
                  {o.name}
                </option>
              ))}
              <option value="">My own account</option>
            </select>
          </Field>
          <button type="submit" className="primary">
            Continue
          </button>
        </form>
      )}
    </main>
  );
}
