// Every annotation of the inspection in one list (issue 29 §4), to find the defects without paging
// through photos: filters by type and severity (kept in the address, so Back from a photo comes
// back to the same filtered list), a count per severity, most severe first; each row opens the
// photo at its annotation. Below it, when automatic detection made an inventory, its items by
// kind, each opening its photo. Read-only by nature (it only links), so the share-link viewer
// shows it as is; the inventory is left out there (a share token does not read it).
import { useMemo } from 'react';
import { api, unwrap, type Annotation, type Camera } from '../api/client';
import { navigate } from '../app/navigation';
import { routeHref } from '../app/routes';
import { useLoad } from '../app/use-load';
import { Empty, ErrorState, Loading } from '../components/states';
import { countBySeverity, filterAnnotations, filterParams, parseFilter, sortForReview, typesPresent, type AnnotationFilter } from '../lib/annotation-filters';
import { SEVERITY_LEVELS_BY_URGENCY, severityName } from '../lib/severity';
import type { TabProps } from '../pages/workspace';
import { useReadOnly } from '../share/read-only';
import { allPages } from './photos/all-pages';
import { InventoryList } from './inventory-list';
import './annotations.css';

export function AnnotationsList({ inspection, route }: TabProps) {
  const readOnly = useReadOnly();
  const load = useLoad(
    () => allPages((page, page_size) => unwrap(api.GET('/v1/inspections/{id}/annotations/', { params: { path: { id: inspection.id }, query: { page, page_size } } })) as Promise<Annotation[]>),
    [inspection.id],
  );
  // The photos' file names for the rows (a name the inspector knows from the drone, not an id).
  const cameras = useLoad(
    async () => new Map((await allPages((page, page_size) => unwrap(api.GET('/v1/inspections/{id}/cameras/', { params: { path: { id: inspection.id }, query: { page, page_size } } })) as Promise<Camera[]>)).map((c) => [c.photo_id, c.filename])),
    [inspection.id],
  );
  const filenames = cameras.data ?? new Map<number, string>();
  const filter = parseFilter(route);
  const all = useMemo(() => load.data ?? [], [load.data]);
  const types = useMemo(() => typesPresent(all), [all]);
  const counts = useMemo(() => countBySeverity(all, filter.type), [all, filter.type]);
  const shown = useMemo(() => sortForReview(filterAnnotations(all, filter)), [all, filter.type, filter.severities.join()]); // eslint-disable-line react-hooks/exhaustive-deps

  // replace: changing a filter is not a page of its own (Back leaves the list, not the last tick).
  const setFilter = (next: AnnotationFilter) => navigate({ name: 'workspace', id: inspection.id, tab: 'annotations', ...filterParams(next) }, { replace: true });
  const toggleSeverity = (level: number) =>
    setFilter({ ...filter, severities: filter.severities.includes(level) ? filter.severities.filter((s) => s !== level) : [...filter.severities, level] });

  if (load.error) return <ErrorState error={load.error} onRetry={load.reload} />;
  if (!load.data) return <Loading label="Loading the annotations…" />;
  return (
    <div className="annotations-list">
      {all.length === 0 ? (
        <Empty>
          <p>No annotations yet.{readOnly ? '' : ' Open a photo in the Photos tab and draw one around a defect.'}</p>
        </Empty>
      ) : (
        <>
          <div className="annotation-filters">
            <label>
              Type{' '}
              <select value={types.find((t) => t.type.toLocaleLowerCase() === filter.type.toLocaleLowerCase())?.type ?? ''} onChange={(e) => setFilter({ ...filter, type: e.target.value })}>
                <option value="">All types ({all.length})</option>
                {types.map((t) => (
                  <option key={t.type} value={t.type}>
                    {t.type} ({t.count})
                  </option>
                ))}
              </select>
            </label>
            <fieldset className="severity-filter">
              <legend>Severity (none ticked: all)</legend>
              {SEVERITY_LEVELS_BY_URGENCY.map((level) => (
                <label key={level} className={`severity-choice severity-${level}`}>
                  <input type="checkbox" checked={filter.severities.includes(level)} onChange={() => toggleSeverity(level)} /> {severityName(level)}{' '}
                  <span className="severity-count" data-severity={level}>
                    {counts.get(level) ?? 0}
                  </span>
                </label>
              ))}
            </fieldset>
            {(filter.type || filter.severities.length > 0) && (
              <button type="button" className="link" onClick={() => setFilter({ type: '', severities: [] })}>
                Show all
              </button>
            )}
          </div>
          <p className="hint" role="status">
            {shown.length === all.length ? `${all.length} annotation${all.length === 1 ? '' : 's'}, most severe first.` : `${shown.length} of ${all.length} annotations match, most severe first.`}
          </p>
          {shown.length === 0 ? (
            <p className="hint">No annotation matches this filter.</p>
          ) : (
            <table className="annotation-table">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Type</th>
                  <th scope="col">Severity</th>
                  <th scope="col">Name</th>
                  <th scope="col">Photo</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((a) => {
                  const target = { name: 'workspace', id: inspection.id, tab: 'photos', photo: a.photo_id, annotation: a.id } as const;
                  return (
                    <tr key={a.id}>
                      <td>{a.number}</td>
                      <td>
                        <a href={routeHref(target)}>
                          #{a.number} {a.type}
                        </a>
                      </td>
                      <td>
                        <span className={`badge severity-${a.severity_level}`}>{severityName(a.severity_level)}</span>
                      </td>
                      <td>{a.name || '—'}</td>
                      <td>{filenames.get(a.photo_id) ?? `photo ${a.photo_id}`}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </>
      )}
      {!readOnly && <InventoryList inspectionId={inspection.id} />}
    </div>
  );
}
