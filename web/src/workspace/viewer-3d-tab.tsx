// The 3D view: the (clipped) dense point cloud and the mesh (each alone or both), the calibrated
// cameras, each annotation's coords_3d as a marker (a button: click or Enter opens its photo at
// the annotation), and measuring: pick points on the surface for a point, a line or a polygon
// (the pointer snaps to the mesh under it or to the nearest cloud point within a few pixels,
// viewer3d/snap.ts, with a ring where a click would measure), see its length or area, save it.
// Data: the outputs `point_cloud_ply`, `3d_mesh_web_ply` (the mesh's web copy, coordinates minus
// offset_3d_xyz, which its header names) and `calibrated_camera_parameters_json` (positions and
// rotations in the output coordinate system), the cameras list (photo ids), the annotations.
// The PLY files download and decode in Web Workers (viewer3d/load-ply.ts): the page stays live
// while a cloud of millions of points arrives. A cloud larger than the budget (POINT_BUDGET) is
// thinned by taking every k-th point (lib/ply.ts says why that is even enough).
// Detected inventory items (the antenna detection) are drawn as boxes (viewer3d/item-boxes.ts) with
// a label that opens the item on its photo; the address's `item` selects one and looks at it.
import { useEffect, useRef, useState } from 'react';
import { api, unwrap, type Annotation, type Camera } from '../api/client';
import { navigate } from '../app/navigation';
import { Empty, ErrorState, Loading } from '../components/states';
import { ApiProblem } from '../lib/api-problem';
import { closeRing, describe, type Point3 } from '../lib/measure-geometry';
import { asPage } from '../lib/paging';
import { offsetFromComments, type PlyCloud, type PlyMesh } from '../lib/ply';
import type { TabProps } from '../pages/workspace';
import { useReadOnly } from '../share/read-only';
import { loadPlyCloud, loadPlyMesh } from './viewer3d/load-ply';
import { itemBoxes } from './viewer3d/item-boxes';
import { allPages } from './photos/all-pages';
import type { InventoryItem } from './inventory-list';
import { boxCentre, boxEdges } from '../lib/inventory-shapes';
import { InspectionScene, type SceneCamera, type Show, type Vec3 } from './viewer3d/scene';

type Mode = 'view' | 'Point' | 'LineString' | 'Polygon';

/**
 * Points drawn at most: three million stay fluid on a laptop's integrated GPU (36 MB of positions,
 * 9 MB of colours); a phone gets one million. A device slower than that (Chromium's software
 * renderer took 4.3 s a frame for 3M points, bench/README "The 3D tab with millions of points")
 * is not served by a smaller budget here: the scene thins the cloud while the view moves
 * (viewer3d/scene.ts, adaptDetail) and draws it whole at rest.
 */
function pointBudget(): number {
  return window.matchMedia('(max-width: 700px)').matches ? 1_000_000 : 3_000_000;
}

interface Loaded {
  cloud: PlyCloud | null;
  mesh: PlyMesh | null;
  /** offset_3d_xyz: what the mesh's coordinates are relative to. */
  offset: Vec3;
  /** Why the mesh is not shown though the outputs list it. */
  meshProblem?: string;
  cameras: SceneCamera[];
  annotations: (Annotation & { coords_3d: { x: number; y: number; z: number } })[];
  /** Inventory items with a box (detected ones). */
  items: { id: number; label: string; short: string; edges: [Vec3, Vec3][]; centre: Vec3; size: number; photo: number | null }[];
  photoIds: Map<string, number>;
}

interface Marker {
  kind: 'annotation' | 'item';
  id: number;
  label: string;
  /** What the marker shows when it is not selected (the label is its accessible name). */
  short?: string;
  x: number;
  y: number;
  photo: number | null;
}

interface CalibratedCamera {
  image_name: string;
  width: number;
  height: number;
  position_output_crs: { x: number; y: number; z: number };
  rotation_matrix_output_crs: number[][];
}

const SHOW_LABELS: [Show, string][] = [
  ['cloud', 'Cloud'],
  ['mesh', 'Mesh'],
  ['both', 'Both'],
];

export function Viewer3dTab({ inspection, route }: TabProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const sceneRef = useRef<InspectionScene>(null);
  const [data, setData] = useState<Loaded | null>();
  const [error, setError] = useState<ApiProblem>();
  const [show, setShow] = useState<Show>('both');
  const [snapped, setSnapped] = useState<'mesh' | 'cloud' | 'none'>('none');
  const hover = useRef<{ x: number; y: number } | null>(null);
  const hoverFrame = useRef(0);
  const [markers, setMarkers] = useState<Marker[]>([]);
  const [mode, setMode] = useState<Mode>('view');
  const [draft, setDraft] = useState<Point3[]>([]);
  const [name, setName] = useState('');
  const [saveProblem, setSaveProblem] = useState<ApiProblem>();
  const [saved, setSaved] = useState(0);
  const down = useRef<{ x: number; y: number } | null>(null);
  // A share link's viewer looks and does not measure (saving one is a write).
  const readOnly = useReadOnly();

  // Load what the view shows.
  useEffect(() => {
    let cancelled = false;
    (async () => {
      const outputs = asPage(await unwrap(api.GET('/v1/inspections/{id}/outputs/', { params: { path: { id: inspection.id } } }))).results;
      const plyUrl = outputs.find((o) => o.output_type === 'point_cloud_ply')?.url;
      const meshUrl = outputs.find((o) => o.output_type === '3d_mesh_web_ply')?.url;
      if (!plyUrl && !meshUrl) return null;
      const calibratedUrl = outputs.find((o) => o.output_type === 'calibrated_camera_parameters_json')?.url;
      let meshProblem: string | undefined;
      const [cloud, mesh, calibrated, cameras, annotations, inventory] = await Promise.all([
        plyUrl ? loadPlyCloud(plyUrl, pointBudget()) : null,
        // The view stands without the mesh: its failure is said, not thrown.
        meshUrl ? loadPlyMesh(meshUrl).catch((err: ApiProblem) => ((meshProblem = err.message), null)) : null,
        calibratedUrl ? fetch(calibratedUrl).then((r) => (r.ok ? r.json() : null)) : null,
        unwrap(api.GET('/v1/inspections/{id}/cameras/', { params: { path: { id: inspection.id } } })),
        unwrap(api.GET('/v1/inspections/{id}/annotations/', { params: { path: { id: inspection.id } } })),
        // A share token does not read the inventory.
        readOnly ? [] : allPages((page, page_size) => unwrap(api.GET('/v1/inspections/{id}/inventory/', { params: { path: { id: inspection.id }, query: { page, page_size } } })) as Promise<InventoryItem[]>),
      ]);
      if (!cloud && !mesh) throw new ApiProblem(0, {}, 'unreadable', meshProblem ?? 'The mesh cannot be read.');
      const photoIds = new Map((asPage(cameras).results as Camera[]).map((c) => [c.filename, c.photo_id]));
      const sceneCameras: SceneCamera[] = ((calibrated?.cameras ?? []) as CalibratedCamera[])
        .filter((c) => c.position_output_crs && c.rotation_matrix_output_crs)
        .map((c) => ({ position: [c.position_output_crs.x, c.position_output_crs.y, c.position_output_crs.z], rotation: c.rotation_matrix_output_crs, aspect: c.width / c.height }));
      const calibratedOffset = Array.isArray(calibrated?.offset_3d_xyz) && calibrated.offset_3d_xyz.length === 3 ? (calibrated.offset_3d_xyz as Vec3) : null;
      return {
        cloud,
        mesh,
        offset: (mesh && offsetFromComments(mesh.comments)) ?? calibratedOffset ?? [0, 0, 0],
        meshProblem,
        cameras: sceneCameras,
        annotations: (asPage(annotations).results as Annotation[]).filter((a): a is Loaded['annotations'][number] => !!a.coords_3d),
        items: inventory.flatMap((item) => {
          const edges = boxEdges(item);
          const centre = boxCentre(item);
          if (!edges || !centre) return [];
          const size = Math.max(...edges.map(([a, b]) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2])));
          return [{ id: item.id, label: `#${item.number} ${item.name || item.model_type}`, short: `#${item.number}`, edges, centre, size, photo: item.photo_id }];
        }),
        photoIds,
      } satisfies Loaded;
    })().then(
      (loaded) => !cancelled && setData(loaded),
      (err) => !cancelled && setError(err instanceof Error && 'status' in err ? (err as ApiProblem) : new ApiProblem(0, {}, 'unreadable', err instanceof Error ? err.message : String(err))),
    );
    return () => {
      cancelled = true;
    };
  }, [inspection.id, readOnly]);

  // Build the scene once the data is there.
  useEffect(() => {
    if (!data || !canvas.current) return;
    const { cloud, mesh, offset } = data;
    const centre: Vec3 = cloud ? cloud.centre : [offset[0] + mesh!.centre[0], offset[1] + mesh!.centre[1], offset[2] + mesh!.centre[2]];
    const scene = new InspectionScene(canvas.current, centre);
    sceneRef.current = scene;
    if (cloud) scene.setCloud(cloud);
    if (mesh) scene.setMesh(mesh, offset);
    scene.setCameras(data.cameras);
    const positions = data.annotations.map((a) => [a.coords_3d.x, a.coords_3d.y, a.coords_3d.z] as Vec3);
    scene.setMarkers(positions);
    scene.onRender = () => {
      setMarkers([
        ...data.annotations.flatMap((a, i) => {
          const p = scene.project(positions[i]);
          return p ? [{ kind: 'annotation' as const, id: a.id, label: `#${a.number} ${a.type}`, x: p.x, y: p.y, photo: a.photo_id }] : [];
        }),
        ...data.items.flatMap((item) => {
          const p = scene.project(item.centre);
          return p ? [{ kind: 'item' as const, id: item.id, label: item.label, short: item.short, x: p.x, y: p.y, photo: item.photo }] : [];
        }),
      ]);
    };
    const onResize = () => scene.resize();
    const observer = new ResizeObserver(onResize);
    observer.observe(canvas.current);
    scene.requestRender();
    return () => {
      observer.disconnect();
      cancelAnimationFrame(hoverFrame.current);
      scene.dispose();
      sceneRef.current = null;
    };
  }, [data]);

  // The detected items' boxes, the selected one (the address's `item`) looked at.
  useEffect(() => {
    const scene = sceneRef.current;
    if (!data || !scene || data.items.length === 0) return;
    const remove = scene.addOverlay(itemBoxes(data.items.map((item) => ({ edges: item.edges, selected: item.id === route.item })), (p) => scene.local(p)));
    const selected = data.items.find((item) => item.id === route.item);
    if (selected) scene.focus(selected.centre, Math.max(6, selected.size * 5));
    return remove;
  }, [data, route.item]);

  useEffect(() => sceneRef.current?.setMeasurements([], mode === 'Polygon' && draft.length > 2 ? closeRing(draft) : draft), [draft, mode]);
  useEffect(() => sceneRef.current?.show(show), [show, data]);
  // Out of measuring, no snap marker.
  useEffect(() => {
    if (mode !== 'view') return;
    sceneRef.current?.showSnap(null);
    setSnapped('none');
  }, [mode]);

  /** Snaps under the pointer, at most once a frame (a search takes a few milliseconds). */
  function onPointerMove(event: React.PointerEvent) {
    if (mode === 'view' || event.buttons !== 0) return;
    hover.current = { x: event.clientX, y: event.clientY };
    if (hoverFrame.current) return;
    hoverFrame.current = requestAnimationFrame(() => {
      hoverFrame.current = 0;
      const at = hover.current;
      if (at) setSnapped(sceneRef.current?.snap(at.x, at.y)?.kind ?? 'none');
    });
  }

  function onPointerDown(event: React.PointerEvent) {
    down.current = { x: event.clientX, y: event.clientY };
  }
  function onPointerUp(event: React.PointerEvent) {
    const start = down.current;
    down.current = null;
    // A click (not a drag of the orbit controls) in a measuring mode picks a point.
    if (mode === 'view' || !start || Math.hypot(event.clientX - start.x, event.clientY - start.y) > 4) return;
    const found = sceneRef.current?.snap(event.clientX, event.clientY);
    setSnapped(found?.kind ?? 'none');
    if (!found) return;
    const point = found.point;
    setDraft((d) => (mode === 'Point' ? [point] : [...d, point]));
  }

  const geometry =
    mode === 'Point' && draft.length === 1
      ? { type: 'Point', coordinates: draft[0] }
      : mode === 'LineString' && draft.length >= 2
        ? { type: 'LineString', coordinates: draft }
        : mode === 'Polygon' && draft.length >= 3
          ? { type: 'Polygon', coordinates: [closeRing(draft)] }
          : null;

  async function save() {
    if (!geometry) return;
    setSaveProblem(undefined);
    try {
      await unwrap(
        api.POST('/v1/inspections/{id}/measurements/', {
          params: { path: { id: inspection.id } },
          body: { annotations: [{ properties: { name: name.trim() || `${mode} ${saved + 1}`, visible: true }, tags: [], geometry }] } as never,
        }),
      );
      setSaved((n) => n + 1);
      setDraft([]);
      setName('');
    } catch (err) {
      setSaveProblem(err as ApiProblem);
    }
  }

  if (error) return <ErrorState error={error} />;
  if (data === undefined) return <Loading label="Loading the point cloud and the mesh…" />;
  if (data === null)
    return (
      <Empty>
        <p>No point cloud for this inspection{inspection.status !== 7 ? ' yet: processing has not completed' : ''}.</p>
        {inspection.status === 7 && <p>The engine that processed it reconstructs nothing (the exif engine); processing with COLMAP (ENGINE=colmap) produces a point cloud.</p>}
      </Empty>
    );

  return (
    <div className="viewer-3d">
      <div className="viewer-tools" role="toolbar" aria-label="3D tools">
        <span>
          {data.cloud && <>{counted(data.cloud.count, 'point')}{data.cloud.count < data.cloud.fileCount && ` of ${data.cloud.fileCount.toLocaleString()}`} · </>}
          {data.mesh && <>{counted(data.mesh.faceCount, 'face')} · </>}
          {counted(data.cameras.length, 'camera')} · {counted(data.annotations.length, 'annotation')}
          {data.items.length > 0 && <> · {counted(data.items.length, 'detected item')}</>} in 3D
        </span>
        {data.cloud && data.mesh && (
          <span role="group" aria-label="Show">
            {SHOW_LABELS.map(([value, label]) => (
              <button key={value} type="button" aria-pressed={show === value} onClick={() => setShow(value)}>
                {label}
              </button>
            ))}
          </span>
        )}
        <button type="button" onClick={() => sceneRef.current?.fit()}>
          Fit view
        </button>
        {!readOnly && (
          <label>
            Measure{' '}
            <select value={mode} onChange={(e) => (setMode(e.target.value as Mode), setDraft([]))} aria-label="Measure">
              <option value="view">Off (orbit)</option>
              <option value="Point">Point</option>
              <option value="LineString">Line</option>
              <option value="Polygon">Polygon</option>
            </select>
          </label>
        )}
        <span className="hint">
          {/* OrbitControls takes touch as well: one finger orbits, two pinch to zoom and move to pan. */}
          {matchMedia('(pointer: coarse)').matches ? 'Drag a finger to orbit; pinch with two to zoom, move them to pan.' : 'Drag to orbit, right-drag or Shift+drag to pan, wheel to zoom; arrow keys pan when the view has focus.'}
        </span>
      </div>
      <div className="viewer-3d-frame">
        <canvas
          ref={canvas}
          className="viewer-3d-canvas"
          tabIndex={0}
          aria-label="Point cloud in 3D"
          data-points-loaded={data.cloud?.count ?? 0}
          data-faces-loaded={data.mesh?.faceCount ?? 0}
          data-show={data.cloud && data.mesh ? show : data.mesh ? 'mesh' : 'cloud'}
          data-snap={snapped}
          data-markers={data.annotations.length}
          data-item-boxes={data.items.length}
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={onPointerUp}
        />
        {markers.map((m) =>
          m.kind === 'annotation' ? (
            <button
              key={`a${m.id}`}
              type="button"
              className="marker-3d"
              style={{ left: m.x, top: m.y }}
              data-annotation-id={m.id}
              aria-label={`Annotation ${m.label}: open its photo`}
              onClick={() => navigate({ name: 'workspace', id: inspection.id, tab: 'photos', photo: m.photo ?? undefined, annotation: m.id })}
            >
              {m.label}
            </button>
          ) : (
            <button
              key={`i${m.id}`}
              type="button"
              className={`marker-3d item-marker${m.id === route.item ? ' selected' : ''}`}
              style={{ left: m.x, top: m.y }}
              data-item-id={m.id}
              aria-label={`Inventory item ${m.label}: ${m.photo ? 'open it on its photo' : 'no photo shows it whole'}`}
              disabled={!m.photo}
              onClick={() => m.photo && navigate({ name: 'workspace', id: inspection.id, tab: 'photos', photo: m.photo, item: m.id })}
            >
              {m.id === route.item ? m.label : m.short}
            </button>
          ),
        )}
      </div>
      {data.meshProblem && (
        <p className="form-errors" role="alert">
          The mesh is not shown: {data.meshProblem}
        </p>
      )}
      {mode !== 'view' && (
        <div className="measure-panel card" aria-live="polite">
          <p>
            {mode === 'Point' ? 'Click a point of the surface.' : `Click points of the surface (${draft.length} picked).`} {SNAP_WORDS[snapped]} {geometry && <strong>{describe(geometry)}</strong>}
          </p>
          <div className="actions">
            <label>
              Name <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
            </label>
            <button type="button" className="primary" disabled={!geometry} onClick={save}>
              Save measurement
            </button>
            <button type="button" disabled={draft.length === 0} onClick={() => setDraft((d) => d.slice(0, -1))}>
              Undo point
            </button>
            <button type="button" disabled={draft.length === 0} onClick={() => setDraft([])}>
              Clear
            </button>
          </div>
          {saveProblem && (
            <p className="form-errors" role="alert">
              {saveProblem.message}
            </p>
          )}
          {saved > 0 && <p>{saved} saved: see the Measurements tab.</p>}
        </div>
      )}
    </div>
  );
}

const SNAP_WORDS = { mesh: 'Snapped to the mesh.', cloud: 'Snapped to a cloud point.', none: 'Nothing under the pointer.' } as const;

/** "1 camera", "12 cameras", "1,024 points". */
function counted(n: number, noun: string): string {
  return `${n.toLocaleString()} ${noun}${n === 1 ? '' : 's'}`;
}
