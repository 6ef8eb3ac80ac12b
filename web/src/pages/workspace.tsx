// The inspection workspace: one inspection, its tabs (photos, map, 3D, measurements, outputs and
// report). Each tab is its own module loaded on demand: three.js and Leaflet stay out of the
// first bundle and out of the tabs that do not draw them.
import { lazy, Suspense, type KeyboardEvent as ReactKeyboardEvent } from 'react';
import { api, unwrap, type Inspection } from '../api/client';
import { navigate } from '../app/navigation';
import type { Route, WorkspaceTab } from '../app/routes';
import { useLoad } from '../app/use-load';
import { ErrorState, Loading } from '../components/states';
import { InspectionCrumbs } from '../components/inspection-crumbs';
import { StatusBadge } from '../components/status-badge';
import { usePageTitle } from '../app/page-title';
import { useReadOnly } from '../share/read-only';

export type WorkspaceRoute = Extract<Route, { name: 'workspace' }>;

export interface TabProps {
  inspection: Inspection;
  route: WorkspaceRoute;
  /** Reload the inspection record (after a change that moves its status or report_status). */
  reload: () => void;
}

const TABS: { id: WorkspaceTab; label: string }[] = [
  { id: 'photos', label: 'Photos' },
  { id: 'annotations', label: 'Annotations' },
  { id: 'map', label: 'Map' },
  { id: '3d', label: '3D' },
  { id: 'measurements', label: 'Measurements' },
  { id: 'outputs', label: 'Outputs & report' },
];

const PhotosTab = lazy(() => import('../workspace/photos-tab').then((m) => ({ default: m.PhotosTab })));
const AnnotationsList = lazy(() => import('../workspace/annotations-list').then((m) => ({ default: m.AnnotationsList })));
const MapTab = lazy(() => import('../workspace/map-tab').then((m) => ({ default: m.MapTab })));
const Viewer3dTab = lazy(() => import('../workspace/viewer-3d-tab').then((m) => ({ default: m.Viewer3dTab })));
const MeasurementsTab = lazy(() => import('../workspace/measurements-tab').then((m) => ({ default: m.MeasurementsTab })));
const OutputsTab = lazy(() => import('../workspace/outputs-tab').then((m) => ({ default: m.OutputsTab })));

/**
 * The WAI-ARIA tabs pattern: one tab in the Tab order (the selected one); ←/→ move to the previous
 * or next tab (wrapping), Home/End to the first or last, and select it at once (the panels are
 * cheap to show). The event stops here, so the photos tab's own ←/→ (next photo) does not also fire.
 */
function onTabKey(event: ReactKeyboardEvent, route: WorkspaceRoute) {
  const index = TABS.findIndex((t) => t.id === route.tab);
  const target = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: TABS.length - 1 }[event.key];
  if (target === undefined || event.altKey || event.ctrlKey || event.metaKey) return;
  event.preventDefault();
  event.stopPropagation();
  const tab = TABS[(target + TABS.length) % TABS.length];
  navigate({ name: 'workspace', id: route.id, tab: tab.id });
  document.getElementById(`tab-${tab.id}`)?.focus();
}

export function WorkspacePage({ route }: { route: WorkspaceRoute }) {
  const inspection = useLoad(() => unwrap(api.GET('/v1/inspections/{id}/', { params: { path: { id: route.id } } })), [route.id]);
  usePageTitle(TABS.find((t) => t.id === route.tab)?.label, inspection.data?.name || `Inspection ${route.id}`);
  // A share link's viewer (share-app.tsx): no asset (a share token does not read it), no processing or upload.
  const readOnly = useReadOnly();
  if (inspection.error) return <ErrorState error={inspection.error} onRetry={inspection.reload} />;
  if (!inspection.data) return <Loading />;
  const record = inspection.data;
  const props: TabProps = { inspection: record, route, reload: inspection.reload };
  return (
    <section className="workspace">
      {readOnly ? (
        <p className="share-meta">Inspection of {new Date(record.inspection_date ?? record.created_at).toLocaleDateString()}</p>
      ) : (
        <InspectionCrumbs inspection={record} />
      )}
      <div className="page-head">
        <h1>{record.name || `Inspection ${record.id}`}</h1>
        <div className="actions">
          <StatusBadge status={record.status} />
          {!readOnly && <a href={`#/inspections/${record.id}/processing`}>Processing</a>}
          {!readOnly && [1, 2, 20].includes(record.status) && <a href={`#/inspections/${record.id}/upload`}>Upload photos</a>}
        </div>
      </div>
      <div role="tablist" aria-label="Workspace" className="tabs" onKeyDown={(event) => onTabKey(event, route)}>
        {TABS.map((tab) => (
          <button
            key={tab.id}
            type="button"
            role="tab"
            id={`tab-${tab.id}`}
            aria-selected={route.tab === tab.id}
            aria-controls="workspace-panel"
            tabIndex={route.tab === tab.id ? 0 : -1}
            onClick={() => navigate({ name: 'workspace', id: route.id, tab: tab.id })}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="workspace-panel" aria-labelledby={`tab-${route.tab}`} className="tab-panel">
        <Suspense fallback={<Loading />}>
          {route.tab === 'photos' && <PhotosTab {...props} />}
          {route.tab === 'annotations' && <AnnotationsList {...props} />}
          {route.tab === 'map' && <MapTab {...props} />}
          {route.tab === '3d' && <Viewer3dTab {...props} />}
          {route.tab === 'measurements' && <MeasurementsTab {...props} />}
          {route.tab === 'outputs' && <OutputsTab {...props} />}
        </Suspense>
      </div>
    </section>
  );
}
