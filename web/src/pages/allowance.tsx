// Allowance: the balance per allowance type, and the history of grants (ingress) and spends
// (egress), newest first, paged. The API lists the history oldest first, so page 1 here is the
// API's last page, reversed (one extra request to learn the count when it is not page 1).
import { allowanceWords, formatDateTime } from '../lib/plain-words';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { useLoad } from '../app/use-load';
import { Pager } from '../components/pager';
import { Empty, ErrorState, Loading } from '../components/states';
import { asPage, pageCount } from '../lib/paging';
import { usePageTitle } from '../app/page-title';

const PAGE_SIZE = 25;

export function AllowancePage() {
  usePageTitle('Allowance');
  const [page, setPage] = useState(1);
  const types = useLoad(async () => asPage(await unwrap(api.GET('/v1/allowance/types/'))).results, []);
  const balance = useLoad(async () => asPage(await unwrap(api.GET('/v1/allowance/'))).results, []);
  const history = useLoad(async () => {
    const fetchPage = async (p: number) => asPage(await unwrap(api.GET('/v1/allowance/history/', { params: { query: { page: p, page_size: PAGE_SIZE } } })));
    const first = await fetchPage(1);
    const total = pageCount(first.count, PAGE_SIZE);
    const apiPage = Math.max(1, total - page + 1);
    const shown = apiPage === 1 ? first : await fetchPage(apiPage);
    return { count: first.count, total, results: [...shown.results].reverse() };
  }, [page]);
  const names = new Map((types.data ?? []).map((t) => [t.code, t.name]));

  return (
    <section className="allowance-page">
      <h1>Allowance</h1>
      <h2>Balance</h2>
      {balance.error ? (
        <ErrorState error={balance.error} onRetry={balance.reload} />
      ) : !balance.data ? (
        <Loading />
      ) : (
        <table className="list balance">
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Granted</th>
              <th scope="col">Consumed</th>
              <th scope="col">Balance</th>
            </tr>
          </thead>
          <tbody>
            {balance.data.map((b) => (
              <tr key={b.allowance_type}>
                <td>
                  {allowanceWords(b.allowance_type, names.get(b.allowance_type)).name}
                  <br />
                  <small className="hint">{allowanceWords(b.allowance_type).explanation}</small>
                </td>
                <td>{b.granted}</td>
                <td>{b.consumed}</td>
                <td>
                  <strong>{b.balance}</strong>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>History</h2>
      {history.error ? (
        <ErrorState error={history.error} onRetry={history.reload} />
      ) : !history.data ? (
        <Loading />
      ) : history.data.results.length === 0 ? (
        <Empty>
          <p>No transactions yet.</p>
        </Empty>
      ) : (
        <>
          <table className="list">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Type</th>
                <th scope="col">Direction</th>
                <th scope="col">Amount</th>
                <th scope="col">Reason</th>
                <th scope="col">Inspection</th>
              </tr>
            </thead>
            <tbody>
              {history.data.results.map((h) => (
                <tr key={h.id}>
                  <td>{formatDateTime(h.created_at)}</td>
                  <td>{allowanceWords(h.allowance_type, names.get(h.allowance_type)).name}</td>
                  <td>
                    <span className={`badge ${h.direction === 'ingress' ? 'ok' : 'busy'}`}>{h.direction === 'ingress' ? 'granted' : 'spent'}</span>
                  </td>
                  <td>{h.amount}</td>
                  <td>{h.reason}</td>
                  <td>{h.inspection !== null ? <a href={`#/inspections/${h.inspection}`}>#{h.inspection}</a> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} total={history.data.total} onPage={setPage} />
        </>
      )}
    </section>
  );
}
