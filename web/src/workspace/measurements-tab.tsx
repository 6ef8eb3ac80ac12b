// Measurements of the inspection with their lengths and areas (metres, as the report prints
// them); delete. New ones are picked on the point cloud in the 3D tab.
import { formatDateTime } from '../lib/plain-words';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { useLoad } from '../app/use-load';
import { Empty, ErrorState, Loading } from '../components/states';
import type { ApiProblem } from '../lib/api-problem';
import { describe } from '../lib/measure-geometry';
import type { TabProps } from '../pages/workspace';
import { useReadOnly } from '../share/read-only';

const KIND: Record<string, string> = { Point: 'Point', LineString: 'Distance', Polygon: 'Area' };

export function MeasurementsTab({ inspection }: TabProps) {
  const list = useLoad(() => unwrap(api.GET('/v1/inspections/{id}/measurements/', { params: { path: { id: inspection.id } } })), [inspection.id]);
  const [problem, setProblem] = useState<ApiProblem>();
  const readOnly = useReadOnly();

  async function remove(id: string, label: string) {
    if (!window.confirm(`Delete the measurement “${label}”?`)) return;
    try {
      await unwrap(api.DELETE('/v1/inspections/{id}/measurements/{annotation_id}/', { params: { path: { id: inspection.id, annotation_id: id } } }));
      setProblem(undefined);
      list.reload();
    } catch (err) {
      setProblem(err as ApiProblem);
    }
  }

  if (list.error) return <ErrorState error={list.error} onRetry={list.reload} />;
  if (!list.data) return <Loading />;
  const results = list.data.results;
  return (
    <section>
      {!readOnly && (
        <p>
          Pick points, lines and polygons on the point cloud in the <a href={`#/inspections/${inspection.id}?tab=3d`}>3D tab</a> (Measure).
        </p>
      )}
      {problem && (
        <p className="form-errors" role="alert">
          {problem.message}
        </p>
      )}
      {results.length === 0 ? (
        <Empty>
          <p>No measurements yet.</p>
        </Empty>
      ) : (
        <table className="list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Measure</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {results.map((m) => {
              const label = String((m.properties as { name?: unknown }).name ?? m.id);
              return (
                <tr key={m.id}>
                  <td>{label}</td>
                  <td>{KIND[m.geometry.type] ?? m.geometry.type}</td>
                  <td>{describe(m.geometry)}</td>
                  <td>{formatDateTime(m.created)}</td>
                  <td>
                    {!readOnly && (
                      <button type="button" className="danger" onClick={() => remove(m.id, label)} aria-label={`Delete ${label}`}>
                        Delete
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
