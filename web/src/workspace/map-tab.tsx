// The cameras and the asset on a map (plain background unless a basemap is configured), over the
// inspection's orthomosaic when processing made one (tiles of GET /v1/inspections/{id}/ortho/);
// a line says what the map shows, or why there is no orthomosaic; a warning when the asset stands
// far from the cameras (lib/map-geometry.ts). Click a camera to open its photo.
import { lazy, Suspense, useMemo } from 'react';
import { api, unwrap, type Camera } from '../api/client';
import { navigate } from '../app/navigation';
import { useLoad } from '../app/use-load';
import type { MapPoint, MapRaster } from '../components/positions-map';
import { problemFrom } from '../lib/api-problem';
import { Empty, ErrorState, Loading } from '../components/states';
import { asPage } from '../lib/paging';
import { assetDistanceWarning } from '../lib/map-geometry';
import '../components/map-groups.css';
import type { TabProps } from '../pages/workspace';
import { useReadOnly } from '../share/read-only';

const PositionsMap = lazy(() => import('../components/positions-map').then((m) => ({ default: m.PositionsMap })));
const ASSET_POINT = -1;

type Ortho = { kind: 'ready'; raster: MapRaster } | { kind: 'missing'; reason: string | null };

/** The orthomosaic's record, or why there is none (`available: false` carries the cloud's reason: a 200, no failed load in the browser's console). */
async function loadOrtho(id: number): Promise<Ortho> {
  const { data, error, response } = await api.GET('/v1/inspections/{id}/ortho/', { params: { path: { id } } });
  if (!response.ok || !data) throw problemFrom(response.status, error);
  if (!data.available) return { kind: 'missing', reason: data.reason || null };
  const resolution = data.resolution_m === null ? '' : data.resolution_m < 1 ? `, ${(data.resolution_m * 100).toFixed(1)} cm/px` : `, ${data.resolution_m.toFixed(2)} m/px`;
  const photos = data.photos === null ? '' : ` from ${data.photos} photo${data.photos === 1 ? '' : 's'}`;
  return { kind: 'ready', raster: { tileUrl: data.tile_url, bounds: { sw: [data.bounds.sw[0], data.bounds.sw[1]], ne: [data.bounds.ne[0], data.bounds.ne[1]] }, minZoom: data.min_zoom, maxZoom: data.max_zoom, label: `Orthomosaic${photos}${resolution}` } };
}

export function MapTab({ inspection }: TabProps) {
  const cameras = useLoad(async () => asPage(await unwrap(api.GET('/v1/inspections/{id}/cameras/', { params: { path: { id: inspection.id } } }))).results as Camera[], [inspection.id]);
  // A share link's holder does not read the asset (SHAREABLE_READS): the map shows the cameras only.
  const readOnly = useReadOnly();
  const asset = useLoad(async () => (readOnly ? null : unwrap(api.GET('/v1/assets/{id}/', { params: { path: { id: inspection.asset } } }))), [inspection.asset, readOnly]);
  const ortho = useLoad(() => loadOrtho(inspection.id), [inspection.id]);
  const raster = ortho.data?.kind === 'ready' ? ortho.data.raster : undefined;
  const orthoLine = useMemo(() => {
    if (ortho.error) return `Orthomosaic not shown: ${ortho.error.message}`;
    if (!ortho.data) return 'Looking for an orthomosaic…';
    if (ortho.data.kind === 'ready') return `${ortho.data.raster.label}, under the cameras and the asset.`;
    return `No orthomosaic: ${ortho.data.reason ?? 'processing did not make one for this inspection.'}`;
  }, [ortho.data, ortho.error]);
  if (cameras.error) return <ErrorState error={cameras.error} onRetry={cameras.reload} />;
  if (!cameras.data) return <Loading />;
  const points: MapPoint[] = cameras.data
    .filter((c) => c.location && c.location.latitude !== null && c.location.longitude !== null)
    .map((c) => ({ id: c.photo_id, lat: Number(c.location.latitude), lon: Number(c.location.longitude), label: c.filename, kind: 'camera' }));
  if (asset.data?.latitude != null && asset.data?.longitude != null) points.push({ id: ASSET_POINT, lat: Number(asset.data.latitude), lon: Number(asset.data.longitude), label: `Asset: ${asset.data.name}`, kind: 'asset' });
  const assetPoint = points.find((p) => p.id === ASSET_POINT);
  const farWarning = assetDistanceWarning(
    points.filter((p) => p.kind === 'camera'),
    assetPoint,
  );
  if (cameras.data.length === 0)
    return (
      <Empty>
        <p>No cameras yet: they appear once the photos have been analysed.</p>
      </Empty>
    );
  return (
    <Suspense fallback={<Loading label="Loading the map…" />}>
      <p className="hint">Blue: the {cameras.data.length} camera positions{readOnly ? '' : '; red: the asset'}. Click a camera to open its photo.</p>
      <p className="hint" data-testid="ortho-line">{orthoLine}</p>
      {farWarning && (
        <p className="map-warning" role="status" data-testid="asset-far">
          {farWarning} <a href={`#/assets/${inspection.asset}`}>Open the asset</a>
        </p>
      )}
      <PositionsMap height={560} label="Cameras and asset on a map" points={points} raster={raster} onSelect={(id) => id !== ASSET_POINT && navigate({ name: 'workspace', id: inspection.id, tab: 'photos', photo: id })} />
    </Suspense>
  );
}
