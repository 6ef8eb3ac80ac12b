// The cameras and the asset on a map (plain background unless a basemap is configured); click a
// camera to open its photo.
import { lazy, Suspense } from 'react';
import { api, unwrap, type Camera } from '../api/client';
import { navigate } from '../app/navigation';
import { useLoad } from '../app/use-load';
import type { MapPoint } from '../components/positions-map';
import { Empty, ErrorState, Loading } from '../components/states';
import { asPage } from '../lib/paging';
import type { TabProps } from '../pages/workspace';

const PositionsMap = lazy(() => import('../components/positions-map').then((m) => ({ default: m.PositionsMap })));
const ASSET_POINT = -1;

export function MapTab({ inspection }: TabProps) {
  const cameras = useLoad(async () => asPage(await unwrap(api.GET('/v1/inspections/{id}/cameras/', { params: { path: { id: inspection.id } } }))).results as Camera[], [inspection.id]);
  const asset = useLoad(() => unwrap(api.GET('/v1/assets/{id}/', { params: { path: { id: inspection.asset } } })), [inspection.asset]);
  if (cameras.error) return <ErrorState error={cameras.error} onRetry={cameras.reload} />;
  if (!cameras.data) return <Loading />;
  const points: MapPoint[] = cameras.data
    .filter((c) => c.location && c.location.latitude !== null && c.location.longitude !== null)
    .map((c) => ({ id: c.photo_id, lat: Number(c.location.latitude), lon: Number(c.location.longitude), label: c.filename, kind: 'camera' }));
  if (asset.data?.latitude != null && asset.data?.longitude != null) points.push({ id: ASSET_POINT, lat: Number(asset.data.latitude), lon: Number(asset.data.longitude), label: `Asset: ${asset.data.name}`, kind: 'asset' });
  if (cameras.data.length === 0)
    return (
      <Empty>
        <p>No cameras yet: they appear once the photos have been analysed.</p>
      </Empty>
    );
  return (
    <Suspense fallback={<Loading label="Loading the map…" />}>
      <p className="hint">Blue: the {cameras.data.length} camera positions; red: the asset. Click a camera to open its photo.</p>
      <PositionsMap height={560} label="Cameras and asset on a map" points={points} onSelect={(id) => id !== ASSET_POINT && navigate({ name: 'workspace', id: inspection.id, tab: 'photos', photo: id })} />
    </Suspense>
  );
}
