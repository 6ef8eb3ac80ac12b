// Positions on a map (Leaflet), with no request leaving the machine unless a basemap is configured
// (CONSOLE_BASEMAP_URL): by default the points are drawn on a plain background with a scale bar.
// Loaded on demand (import() from the pages that draw a map), so Leaflet is not in the first bundle.
// Circle markers, not Leaflet's default icons (image files that would need extra assets).
// Labels are names users chose: Leaflet renders a string tooltip as HTML, so it gets a text element.
import { useEffect, useRef } from 'react';
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { consoleSettings } from '../api/client';
import { textElement } from './text-element';

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

export function PositionsMap({ points, onSelect, selectedId, height = 400, label }: { points: MapPoint[]; onSelect?: (id: number) => void; selectedId?: number; height?: number; label: string }) {
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
    const group = layer.current;
    if (!m || !group) return;
    group.clearLayers();
    const valid = points.filter((p) => Number.isFinite(p.lat) && Number.isFinite(p.lon) && Math.abs(p.lat) <= 90 && Math.abs(p.lon) <= 180);
    for (const point of valid) {
      const style = STYLE[point.kind ?? 'other'];
      const marker = L.circleMarker([point.lat, point.lon], { ...style, weight: point.id === selectedId ? 4 : style.weight }).bindTooltip(textElement(point.label));
      if (onSelect) marker.on('click', () => onSelect(point.id));
      marker.addTo(group);
    }
    if (valid.length === 1) m.setView([valid[0].lat, valid[0].lon], 17);
    else if (valid.length > 1) m.fitBounds(L.latLngBounds(valid.map((p) => [p.lat, p.lon] as [number, number])), { padding: [24, 24], maxZoom: 19 });
    else m.setView([20, 0], 1);
  }, [points, onSelect, selectedId]);

  const missing = points.length === 0;
  return (
    <div className="positions-map">
      <div ref={container} className="map-canvas" style={{ height }} role="region" aria-label={label} data-points={points.length} />
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
                  {p.lat.toFixed(6)}, {p.lon.toFixed(6)}
                </small>
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
