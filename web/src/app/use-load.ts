// Loading state of one request for a page: data, error, loading, and reload(). A newer load wins
// over an older one still in flight (fast paging never shows a stale page).
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiProblem, problemFrom } from '../lib/api-problem';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiProblem | undefined;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiProblem; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (err: unknown) => mine === generation.current && setState({ error: err instanceof ApiProblem ? err : problemFrom(0, null), loading: false }),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(() => {
    run();
    return () => {
      generation.current++;
    };
  }, [run]);
  return { data: state.data, error: state.error, loading: state.loading, reload: run };
}
