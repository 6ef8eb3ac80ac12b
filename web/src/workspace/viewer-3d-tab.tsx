// The 3D view: the (clipped) point cloud, the calibrated cameras, each annotation's coords_3d as
// a marker (a button: click or Enter opens its photo at the annotation), and measuring: pick
// points on the cloud for a point, a line or a polygon, see its length or area, save it.
// Data: the outputs `point_cloud_ply` and `calibrated_camera_parameters_json` (positions and
// rotations in the output coordinate system), the cameras list (photo ids), the annotations.
import { useEffect, useRef, useState } from 'react';
import { api, unwrap, type Annotation, type Camera } from '../api/client';
import { navigate } from '../app/navigation';
import { Empty, ErrorState, Loading } from '../components/states';
import { problemFrom, type ApiProblem } from '../lib/api-problem';
import { closeRing, describe, type Point3 } from '../lib/measure-geometry';
import { asPage } from '../lib/paging';
import { parsePly } from '../lib/ply';
import type { TabProps } from '../pages/workspace';
import { InspectionScene, type SceneCamera, type Vec3 } from './viewer3d/scene';

const MAX_POINTS = 3_000_000;
type Mode = 'view' | 'Point' | 'LineString' | 'Polygon';

interface Loaded {
  ply: ArrayBuffer;
  cameras: SceneCamera[];
  annotations: (Annotation & { coords_3d: { x: number; y: number; z: number } })[];
  photoIds: Map<string, number>;
}

interface CalibratedCamera {
  image_name: string;
  width: number;
  height: number;
  position_output_crs: { x: number; y: number; z: number };
  rotation_matrix_output_crs: number[][];
}

export function Viewer3dTab({ inspection }: TabProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const sceneRef = useRef<InspectionScene>(null);
  const [data, setData] = useState<Loaded | null>();
  const [error, setError] = useState<ApiProblem>();
  const [pointCount, setPointCount] = useState(0);
  const [markers, setMarkers] = useState<{ id: number; label: string; x: number; y: number; photo: number }[]>([]);
  const [mode, setMode] = useState<Mode>('view');
  const [draft, setDraft] = useState<Point3[]>([]);
  const [name, setName] = useState('');
  const [saveProblem, setSaveProblem] = useState<ApiProblem>();
  const [saved, setSaved] = useState(0);
  const down = useRef<{ x: number; y: number } | null>(null);

  // Load what the view shows.
  useEffect(() => {
    let cancelled = false;
    (async () => {
      const outputs = asPage(await unwrap(api.GET('/v1/inspections/{id}/outputs/', { params: { path: { id: inspection.id } } }))).results;
      const plyUrl = outputs.find((o) => o.output_type === 'point_cloud_ply')?.url;
      if (!plyUrl) return null;
      const calibratedUrl = outputs.find((o) => o.output_type === 'calibrated_camera_parameters_json')?.url;
      const [plyResponse, calibrated, cameras, annotations] = await Promise.all([
        fetch(plyUrl),
        calibratedUrl ? fetch(calibratedUrl).then((r) => (r.ok ? r.json() : null)) : null,
        unwrap(api.GET('/v1/inspections/{id}/cameras/', { params: { path: { id: inspection.id } } })),
        unwrap(api.GET('/v1/inspections/{id}/annotations/', { params: { path: { id: inspection.id } } })),
      ]);
      if (!plyResponse.ok) throw problemFrom(plyResponse.status, await plyResponse.text());
      const photoIds = new Map((asPage(cameras).results as Camera[]).map((c) => [c.filename, c.photo_id]));
      const sceneCameras: SceneCamera[] = ((calibrated?.cameras ?? []) as CalibratedCamera[])
        .filter((c) => c.position_output_crs && c.rotation_matrix_output_crs)
        .map((c) => ({ position: [c.position_output_crs.x, c.position_output_crs.y, c.position_output_crs.z], rotation: c.rotation_matrix_output_crs, aspect: c.width / c.height }));
      return {
        ply: await plyResponse.arrayBuffer(),
        cameras: sceneCameras,
        annotations: (asPage(annotations).results as Annotation[]).filter((a): a is Loaded['annotations'][number] => !!a.coords_3d),
        photoIds,
      };
    })().then(
      (loaded) => !cancelled && setData(loaded),
      (err) => !cancelled && setError(err instanceof Error && 'status' in err ? (err as ApiProblem) : problemFrom(0, null)),
    );
    return () => {
      cancelled = true;
    };
  }, [inspection.id]);

  // Build the scene once the data is there.
  useEffect(() => {
    if (!data || !canvas.current) return;
    const scene = new InspectionScene(canvas.current);
    sceneRef.current = scene;
    try {
      const cloud = parsePly(data.ply, MAX_POINTS);
      scene.setCloud(cloud);
      setPointCount(cloud.count);
    } catch (err) {
      setError(problemFrom(0, `The point cloud cannot be read: ${(err as Error).message}`));
      return;
    }
    scene.setCameras(data.cameras);
    const positions = data.annotations.map((a) => [a.coords_3d.x, a.coords_3d.y, a.coords_3d.z] as Vec3);
    scene.setMarkers(positions);
    scene.onRender = () => {
      setMarkers(
        data.annotations.flatMap((a, i) => {
          const p = scene.project(positions[i]);
          return p ? [{ id: a.id, label: `#${a.number} ${a.type}`, x: p.x, y: p.y, photo: a.photo_id }] : [];
        }),
      );
    };
    const onResize = () => scene.resize();
    const observer = new ResizeObserver(onResize);
    observer.observe(canvas.current);
    scene.requestRender();
    return () => {
      observer.disconnect();
      scene.dispose();
      sceneRef.current = null;
    };
  }, [data]);

  useEffect(() => sceneRef.current?.setMeasurements([], mode === 'Polygon' && draft.length > 2 ? closeRing(draft) : draft), [draft, mode]);

  function onPointerDown(event: React.PointerEvent) {
    down.current = { x: event.clientX, y: event.clientY };
  }
  function onPointerUp(event: React.PointerEvent) {
    const start = down.current;
    down.current = null;
    // A click (not a drag of the orbit controls) in a measuring mode picks a point.
    if (mode === 'view' || !start || Math.hypot(event.clientX - start.x, event.clientY - start.y) > 4) return;
    const point = sceneRef.current?.pick(event.clientX, event.clientY);
    if (!point) return;
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
  if (data === undefined) return <Loading label="Loading the point cloud…" />;
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
        <span>{counted(pointCount, 'point')} · {counted(data.cameras.length, 'camera')} · {counted(data.annotations.length, 'annotation')} in 3D</span>
        <button type="button" onClick={() => sceneRef.current?.fit()}>
          Fit view
        </button>
        <label>
          Measure{' '}
          <select value={mode} onChange={(e) => (setMode(e.target.value as Mode), setDraft([]))} aria-label="Measure">
            <option value="view">Off (orbit)</option>
            <option value="Point">Point</option>
            <option value="LineString">Line</option>
            <option value="Polygon">Polygon</option>
          </select>
        </label>
        <span className="hint">Drag to orbit, right-drag or Shift+drag to pan, wheel to zoom; arrow keys pan when the view has focus.</span>
      </div>
      <div className="viewer-3d-frame">
        <canvas
          ref={canvas}
          className="viewer-3d-canvas"
          tabIndex={0}
          aria-label="Point cloud in 3D"
          data-points-loaded={pointCount}
          data-markers={data.annotations.length}
          onPointerDown={onPointerDown}
          onPointerUp={onPointerUp}
        />
        {markers.map((m) => (
          <button
            key={m.id}
            type="button"
            className="marker-3d"
            style={{ left: m.x, top: m.y }}
            data-annotation-id={m.id}
            aria-label={`Annotation ${m.label}: open its photo`}
            onClick={() => navigate({ name: 'workspace', id: inspection.id, tab: 'photos', photo: m.photo, annotation: m.id })}
          >
            {m.label}
          </button>
        ))}
      </div>
      {mode !== 'view' && (
        <div className="measure-panel card" aria-live="polite">
          <p>
            {mode === 'Point' ? 'Click a point of the cloud.' : `Click points of the cloud (${draft.length} picked).`} {geometry && <strong>{describe(geometry)}</strong>}
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

/** "1 camera", "12 cameras", "1,024 points". */
function counted(n: number, noun: string): string {
  return `${n.toLocaleString()} ${noun}${n === 1 ? '' : 's'}`;
}
