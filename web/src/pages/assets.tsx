// Assets: search by name, paged list (page_size 20), the page's assets on a map (loaded on
// demand), and a form to create one. Editing and deleting are on the asset's own page.
import { formatLatLon } from '../lib/map-geometry';
import { formatDateTime } from '../lib/plain-words';
import { lazy, Suspense, useEffect, useState } from 'react';
import { AssetForm } from '../assets/asset-form';
import { api, unwrap } from '../api/client';
import { navigate } from '../app/navigation';
import { useLoad } from '../app/use-load';
import { Pager } from '../components/pager';
import { Empty, ErrorState, Loading } from '../components/states';
import { asPage, pageCount } from '../lib/paging';
import { usePageTitle } from '../app/page-title';

const PAGE_SIZE = 20;
const PositionsMap = lazy(() => import('../components/positions-map').then((m) => ({ default: m.PositionsMap })));

export function AssetsPage({ search, page }: { search: string; page: number }) {
  usePageTitle(search ? `Assets matching “${search}”` : 'Assets');
  const [query, setQuery] = useState(search);
  const [creating, setCreating] = useState(false);
  useEffect(() => setQuery(search), [search]);
  const list = useLoad(
    async () => asPage(await unwrap(api.GET('/v1/assets/', { params: { query: { search: search || undefined, page, page_size: PAGE_SIZE } } }))),
    [search, page],
  );
  const types = useLoad(async () => asPage(await unwrap(api.GET('/v1/assets/types/'))).results, []);
  const typeNames = new Map((types.data ?? []).map((t) => [t.id, `${t.description} (${t.family})`]));
  const total = list.data ? pageCount(list.data.count, PAGE_SIZE) : 1;

  return (
    <section className="assets-page">
      <div className="page-head">
        <h1>Assets</h1>
        {!creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New asset
          </button>
        )}
      </div>
      {creating && <AssetForm onSaved={(asset) => navigate({ name: 'asset', id: asset.id })} onCancel={() => setCreating(false)} />}
      <form
        role="search"
        className="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate({ name: 'assets', search: query.trim(), page: 1 });
        }}
      >
        <label htmlFor="asset-search">Search by name</label>
        <input id="asset-search" type="search" value={query} onChange={(e) => setQuery(e.target.value)} maxLength={255} />
        <button type="submit">Search</button>
      </form>
      {list.error ? (
        <ErrorState error={list.error} onRetry={list.reload} />
      ) : !list.data ? (
        <Loading />
      ) : list.data.results.length === 0 ? (
        <Empty>{search ? <p>No asset matches “{search}”.</p> : <p>No assets yet.</p>}</Empty>
      ) : (
        <>
          <table className="list">
            <caption className="visually-hidden">Assets, page {page} of {total}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Position</th>
                <th scope="col">Inspections</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.data.results.map((asset) => (
                <tr key={asset.id}>
                  <td>
                    <a href={`#/assets/${asset.id}`}>{asset.name}</a>
                  </td>
                  <td>{typeNames.get(asset.type) ?? asset.type}</td>
                  <td>{asset.latitude !== null && asset.longitude !== null ? formatLatLon(asset.latitude, asset.longitude) : '—'}</td>
                  <td>{asset.inspections.length}</td>
                  <td>{formatDateTime(asset.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={page} total={total} onPage={(p) => navigate({ name: 'assets', search, page: p })} />
          <h2>On the map</h2>
          <Suspense fallback={<p>Loading the map…</p>}>
            <PositionsMap
              height={360}
              label="Assets of this page on a map"
              points={list.data.results
                .filter((a) => a.latitude !== null && a.longitude !== null)
                .map((a) => ({ id: a.id, lat: Number(a.latitude), lon: Number(a.longitude), label: a.name }))}
              onSelect={(id) => navigate({ name: 'asset', id })}
            />
          </Suspense>
        </>
      )}
    </section>
  );
}
