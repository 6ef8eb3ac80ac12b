// Positions on a map (Leaflet), with no request leaving the machine unless a basemap is configured
// (CONSOLE_BASEMAP_URL): by default the points are drawn on a plain background with a scale bar.
// Loaded on demand (import() from the pages that draw a map), so Leaflet is not in the first bundle.
// Circle markers, not Leaflet's default icons (image files that would need extra assets).
// Labels are names users chose: Leaflet renders a string tooltip as HTML, so it gets a text element.
// An optional raster layer (the inspection's orthomosaic) is drawn under the markers (Leaflet's
// tile pane is below its overlay pane) and the view fits it and the points. Cameras that overlap
// on screen are drawn as one marker with their count (lib/map-geometry.ts groups them).
import { useEffect, useRef } from 'react';
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { authorizedFetch, consoleSettings } from '../api/client';
import { textElement } from './text-element';
import { formatCoordinate, groupOverlapping } from '../lib/map-geometry';
import './map-groups.css';

export interface MapPoint {
  id: number;
  lat: number;
  lon: number;
  label: string;
  /** Drawing style: an asset, a camera, or anything else. */
  kind?: 'asset' | 'camera' | 'other';
}

const STYLE: Record<NonNullable<MapPoint['kind']>, L.CircleMarkerOptions> = {
  asset: { radius: 9, color: '#b42318', fillColor: '#f04438', fillOpacity: 0.9, weight: 2 },
  camera: { radius: 5, color: '#0b63ce', fillColor: '#53a1ff', fillOpacity: 0.85, weight: 1 },
  other: { radius: 6, color: '#344054', fillColor: '#98a2b3', fillOpacity: 0.9, weight: 1 },
};

/** Camera markers nearer than this on screen are drawn as one, with a count. */
const GROUP_RADIUS_PX = 14;

/**
 * Overlapping cameras as one marker showing their count: a button (focusable, named "12 cameras
 * here: zoom in") that zooms to them on click, Enter or Space, until they stand apart.
 */
function groupMarker(m: L.Map, members: MapPoint[]): L.Marker {
  const bounds = L.latLngBounds(members.map((p) => [p.lat, p.lon] as [number, number]));
  const name = `${members.length} cameras here: zoom in`;
  const icon = L.divIcon({ className: 'map-group', html: textElement(String(members.length)), iconSize: [26, 26] });
  const marker = L.marker(bounds.getCenter(), { icon, keyboard: true, title: name });
  const zoomIn = () => m.fitBounds(bounds, { padding: [40, 40], maxZoom: 21 });
  marker.on('click', zoomIn);
  marker.on('add', () => {
    const element = marker.getElement();
    if (!element) return;
    element.setAttribute('role', 'button');
    element.setAttribute('aria-label', name);
    element.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' && event.key !== ' ') return;
      event.preventDefault();
      zoomIn();
    });
  });
  return marker;
}

/** Tiles of this service (XYZ template, a path of the API: fetched with the session's credentials). */
export interface MapRaster {
  tileUrl: string;
  /** [latitude, longitude] of the south-west and north-east corners. */
  bounds: { sw: [number, number]; ne: [number, number] };
  minZoom: number;
  maxZoom: number;
  label: string;
}

export function PositionsMap({ points, onSelect, selectedId, height = 400, label, raster }: { points: MapPoint[]; onSelect?: (id: number) => void; selectedId?: number; height?: number; label: string; raster?: MapRaster }) {
  const container = useRef<HTMLDivElement>(null);
  const map = useRef<L.Map>(null);
  const layer = useRef<L.LayerGroup>(null);

  useEffect(() => {
    if (!container.current) return;
    const m = L.map(container.current, { zoomControl: true, attributionControl: false, keyboard: true, worldCopyJump: false });
    const basemap = consoleSettings().basemap_url;
    if (basemap) {
      L.tileLayer(basemap, { maxZoom: 22 }).addTo(m);
      L.control.attribution({ prefix: false }).addAttribution('Basemap: configured tile server').addTo(m);
    }
    L.control.scale({ imperial: false }).addTo(m);
    layer.current = L.layerGroup().addTo(m);
    map.current = m;
    return () => {
      m.remove();
      map.current = null;
    };
  }, []);

  useEffect(() => {
    const m = map.current;
    if (!m || !raster) return;
    // Deeper than its max zoom the tiles are magnified in the browser (maxNativeZoom); far out, none are asked for.
    const tiles = authorizedTileLayer(raster.tileUrl, { maxNativeZoom: raster.maxZoom, maxZoom: 22, minZoom: Math.max(0, raster.minZoom - 4), bounds: L.latLngBounds(raster.bounds.sw, raster.bounds.ne), className: 'map-raster' }).addTo(m);
    return () => {
      tiles.remove();
    };
  }, [raster]);

  useEffect(() => {
    const m = map.current;
    const group = layer.current;
    if (!m || !group) return;
    const valid = points.filter((p) => Number.isFinite(p.lat) && Number.isFinite(p.lon) && Math.abs(p.lat) <= 90 && Math.abs(p.lon) <= 180);
    // Cameras that overlap at this zoom are one marker with their count (drawn again at each zoom);
    // the asset and other points are always their own marker.
    const draw = () => {
      group.clearLayers();
      const cameras = valid.filter((p) => p.kind === 'camera');
      const byId = new Map(valid.map((p) => [p.id, p]));
      const groups = groupOverlapping(
        cameras.map((p) => ({ id: p.id, ...m.latLngToContainerPoint([p.lat, p.lon]) })),
        GROUP_RADIUS_PX,
      ).map((g) => g.map((s) => byId.get(s.id)!));
      for (const point of [...valid.filter((p) => p.kind !== 'camera'), ...groups.filter((g) => g.length === 1).map((g) => g[0])]) {
        const style = STYLE[point.kind ?? 'other'];
        const marker = L.circleMarker([point.lat, point.lon], { ...style, weight: point.id === selectedId ? 4 : style.weight }).bindTooltip(textElement(point.label));
        if (onSelect) marker.on('click', () => onSelect(point.id));
        marker.addTo(group);
      }
      for (const members of groups.filter((g) => g.length > 1)) groupMarker(m, members).addTo(group);
    };
    const extent = L.latLngBounds(valid.map((p) => [p.lat, p.lon] as [number, number]));
    if (raster) extent.extend(L.latLngBounds(raster.bounds.sw, raster.bounds.ne));
    if (valid.length === 1 && !raster) m.setView([valid[0].lat, valid[0].lon], 17);
    else if (extent.isValid()) m.fitBounds(extent, { padding: [24, 24], maxZoom: 19 });
    else m.setView([20, 0], 1);
    draw();
    m.on('zoomend', draw);
    return () => {
      m.off('zoomend', draw);
    };
  }, [points, onSelect, selectedId, raster]);

  const missing = points.length === 0;
  return (
    <div className="positions-map">
      <div ref={container} className="map-canvas" style={{ height }} role="region" aria-label={label} data-points={points.length} data-raster={raster ? raster.label : undefined} />
      {missing && <p className="hint">No positions to show.</p>}
      {onSelect && points.length > 0 && (
        <details className="map-list">
          <summary>Positions as a list</summary>
          <ul>
            {points.map((p) => (
              <li key={p.id}>
                <button type="button" onClick={() => onSelect(p.id)}>
                  {p.label}
                </button>{' '}
                <small>
                  {formatCoordinate(p.lat)}, {formatCoordinate(p.lon)}
                </small>
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

/**
 * A tile layer whose tiles are fetched with the session's credentials (an <img src> cannot send
 * Authorization and X-Api-Key headers) and shown as blob: URLs (the console's CSP allows them in
 * img-src). The browser's HTTP cache still applies: the tiles are `private, immutable` per file.
 */
function authorizedTileLayer(template: string, options: L.TileLayerOptions): L.TileLayer {
  const Layer = L.TileLayer.extend({
    createTile(this: L.TileLayer, coords: L.Coords, done: L.DoneCallback) {
      const img = document.createElement('img');
      img.alt = '';
      img.setAttribute('role', 'presentation');
      const url = this.getTileUrl(coords);
      authorizedFetch(url, { headers: { Accept: 'image/png' } })
        .then(async (response) => {
          if (!response.ok) throw new Error(`tile ${coords.z}/${coords.x}/${coords.y}: ${response.status}`);
          const blob = URL.createObjectURL(await response.blob());
          img.onload = () => {
            URL.revokeObjectURL(blob);
            done(undefined, img);
          };
          img.onerror = () => {
            URL.revokeObjectURL(blob);
            done(new Error(`tile ${coords.z}/${coords.x}/${coords.y} is not an image`), img);
          };
          img.dataset.tile = url;
          img.src = blob;
        })
        .catch((err: unknown) => done(err instanceof Error ? err : new Error(String(err)), img));
      return img;
    },
  }) as unknown as new (template: string, options: L.TileLayerOptions) => L.TileLayer;
  return new Layer(template, options);
}
