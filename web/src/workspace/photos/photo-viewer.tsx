// A photo with its annotations as labelled rectangles: zoom (wheel, +/− buttons and keys, 0 to
// fit), pan (drag; in draw mode drag with Shift or the middle button; arrow keys when zoomed in,
// Shift+arrows always), and a draw mode (button or D) in which dragging draws a new rectangle.
// Touch: one finger pans (or draws, in draw mode: the button stands in for the D key), two fingers
// pinch to zoom about their middle and pan as it moves; a second finger cancels a rectangle begun.
// The stage has the large preview's size (from the API); rectangles live in photo fractions
// (lib/rect-coords.ts) in an SVG over the image, so they follow zoom and pan without maths here.
// Zoomed in past the large preview's pixels, the original is loaded in its place.
// A corner mode (`corners`, the inventory's "Add inventory item"): each click places the next of
// a face's four corners (top-left, top-right, bottom-right, bottom-left), drawn as a polygon;
// Shift+drag still pans. Inventory items projected on the photo are outlined (item-outlines.tsx).
import { severityName } from '../../lib/severity';
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent as ReactKeyboardEvent, type PointerEvent as ReactPointerEvent } from 'react';
import { clientToPhoto, coords2dToRect, isUsableRect, rectFromCorners, zoomAbout, type Point, type Rect } from '../../lib/rect-coords';
import type { Preview } from './previews';
import { useReadOnly } from '../../share/read-only';
import { OutlineLabels, OutlinePolygons, type ItemOutline } from './item-outlines';

/** Corners placed on this photo (0 to 4, in photo fractions) and where the next click goes. */
export interface CornerMarking {
  points: Point[];
  onPoint: (point: Point) => void;
}

export const CORNER_NAMES = ['top-left', 'top-right', 'bottom-right', 'bottom-left'] as const;

export interface DrawnAnnotation {
  id: number;
  number: number;
  type: string;
  severity: number;
  coords: unknown;
}

interface View {
  scale: number;
  x: number;
  y: number;
}

const PAN_STEP = 60;

/** A screen worked with fingers (phone, tablet): the hints name pinching rather than the wheel and keys. */
const TOUCH = typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches;

export function PhotoViewer({
  photo,
  original,
  loadOriginal,
  alt,
  annotations,
  selectedId,
  draft,
  drawing,
  onDrawingChange,
  onDrawn,
  onSelect,
  corners,
  outlines = [],
  onSelectOutline = () => undefined,
}: {
  /** The large preview: its URL and size in pixels. */
  photo: Preview | undefined;
  /** The original's size in pixels (the camera's), for the zoom figure and the swap to full resolution. */
  original: { width: number; height: number };
  loadOriginal: () => Promise<string>;
  alt: string;
  annotations: DrawnAnnotation[];
  selectedId?: number;
  draft?: Rect;
  drawing: boolean;
  onDrawingChange: (drawing: boolean) => void;
  onDrawn: (rect: Rect) => void;
  onSelect: (id: number) => void;
  corners?: CornerMarking;
  outlines?: ItemOutline[];
  onSelectOutline?: (itemId: number) => void;
}) {
  const frame = useRef<HTMLDivElement>(null);
  const image = useRef<HTMLImageElement>(null);
  const readOnly = useReadOnly();
  const [view, setView] = useState<View>({ scale: 1, x: 0, y: 0 });
  const [fitScale, setFitScale] = useState(1);
  const [sketch, setSketch] = useState<{ start: Point; end: Point }>();
  const [fullSrc, setFullSrc] = useState<string>();
  const drag = useRef<{ x: number; y: number; view: View } | null>(null);
  /** The pointers down on the frame (fingers, or the mouse), by id: two make a pinch. */
  const pointers = useRef(new Map<number, Point>());
  const pinch = useRef<{ distance: number; middle: Point; view: View } | null>(null);
  const userMoved = useRef(false);

  const fit = useCallback(() => {
    const box = frame.current?.getBoundingClientRect();
    if (!box || !photo || !box.width || !box.height) return;
    const scale = Math.min(box.width / photo.width, box.height / photo.height);
    userMoved.current = false;
    setFitScale(scale);
    setView({ scale, x: (box.width - photo.width * scale) / 2, y: (box.height - photo.height * scale) / 2 });
  }, [photo?.width, photo?.height]);

  // A new photo: fitted, at its preview resolution.
  useLayoutEffect(() => {
    setFullSrc(undefined);
    fit();
  }, [photo?.url, fit]);

  // The frame resized (window, panel): fitted again unless the user has zoomed or panned.
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const observer = new ResizeObserver(() => {
      if (!userMoved.current) fit();
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [fit]);

  // An annotation selected (from the list, or the address when another tab opens the photo at
  // it) that lies outside the zoomed view: back to the whole photo so it can be seen.
  const viewRef = useRef(view);
  viewRef.current = view;
  useEffect(() => {
    const selected = annotations.find((a) => a.id === selectedId);
    const r = selected && coords2dToRect(selected.coords);
    const box = frame.current?.getBoundingClientRect();
    if (!r || !box || !photo) return;
    const v = viewRef.current;
    const [left, top] = [v.x + r.x0 * photo.width * v.scale, v.y + r.y0 * photo.height * v.scale];
    const [right, bottom] = [v.x + r.x1 * photo.width * v.scale, v.y + r.y1 * photo.height * v.scale];
    if (left < 0 || top < 0 || right > box.width || bottom > box.height) fit();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only when the selection or the photo changes
  }, [selectedId, photo?.url]);

  // Past the preview's own pixels, and the original has more: show the original.
  const wantsOriginal = !!photo && view.scale > 1.05 && original.width > photo.width;
  const loadOriginalRef = useRef(loadOriginal);
  loadOriginalRef.current = loadOriginal;
  useEffect(() => {
    if (!wantsOriginal || fullSrc) return;
    let cancelled = false;
    loadOriginalRef
      .current()
      .then((url) => {
        const img = new Image();
        img.onload = () => !cancelled && setFullSrc(url);
        img.src = url;
      })
      .catch(() => undefined); // the preview stays; zooming still works
    return () => {
      cancelled = true;
    };
  }, [wantsOriginal, fullSrc, photo?.url]);

  const zoom = (factor: number, anchor?: Point) => {
    const box = frame.current?.getBoundingClientRect();
    if (!box) return;
    userMoved.current = true;
    setView((v) => zoomAbout(v, factor, anchor ?? { x: box.width / 2, y: box.height / 2 }, { min: fitScale / 4, max: Math.max(8, fitScale * 40) }));
  };
  const zoomRef = useRef(zoom);
  zoomRef.current = zoom;

  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      const box = element.getBoundingClientRect();
      zoomRef.current(event.deltaY < 0 ? 1.2 : 1 / 1.2, { x: event.clientX - box.left, y: event.clientY - box.top });
    };
    element.addEventListener('wheel', onWheel, { passive: false });
    return () => element.removeEventListener('wheel', onWheel);
  }, []);

  /** The two first pointers' distance and middle (relative to the frame). */
  const twoPointers = () => {
    const [a, b] = [...pointers.current.values()];
    const box = frame.current!.getBoundingClientRect();
    return { distance: Math.hypot(a.x - b.x, a.y - b.y), middle: { x: (a.x + b.x) / 2 - box.left, y: (a.y + b.y) / 2 - box.top } };
  };

  const photoPoint = (event: ReactPointerEvent) => clientToPhoto({ x: event.clientX, y: event.clientY }, image.current!.getBoundingClientRect());

  // Every pointer is counted on its way down (capture phase), also one that lands on an annotation
  // (whose own handler stops the event): a second finger then makes a pinch wherever the first is.
  function onPointerDownCapture(event: ReactPointerEvent<HTMLDivElement>) {
    if (!photo || (event.button !== 0 && event.button !== 1)) return;
    pointers.current.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.current.size < 2) return;
    event.stopPropagation();
    if (pointers.current.size > 2) return;
    // A second finger: a pinch, instead of the rectangle or the pan the first one began.
    frame.current?.setPointerCapture(event.pointerId);
    setSketch(undefined);
    drag.current = null;
    pinch.current = { ...twoPointers(), view };
  }
  function onPointerDown(event: ReactPointerEvent<HTMLDivElement>) {
    if (!photo || (event.button !== 0 && event.button !== 1)) return;
    frame.current?.setPointerCapture(event.pointerId);
    frame.current?.focus({ preventScroll: true });
    if (corners && event.button === 0 && !event.shiftKey) {
      if (corners.points.length < 4) corners.onPoint(photoPoint(event));
    } else if (drawing && event.button === 0 && !event.shiftKey) {
      const point = photoPoint(event);
      setSketch({ start: point, end: point });
    } else {
      event.preventDefault();
      drag.current = { x: event.clientX, y: event.clientY, view };
    }
  }
  function onPointerMove(event: ReactPointerEvent<HTMLDivElement>) {
    if (pointers.current.has(event.pointerId)) pointers.current.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pinch.current && pointers.current.size >= 2) {
      const start = pinch.current;
      const now = twoPointers();
      if (!start.distance) return;
      userMoved.current = true;
      // Zoomed about where the fingers began, then moved as far as their middle has.
      const zoomed = zoomAbout(start.view, now.distance / start.distance, start.middle, { min: fitScale / 4, max: Math.max(8, fitScale * 40) });
      setView({ ...zoomed, x: zoomed.x + now.middle.x - start.middle.x, y: zoomed.y + now.middle.y - start.middle.y });
    } else if (sketch) setSketch({ ...sketch, end: photoPoint(event) });
    else if (drag.current) {
      const d = drag.current;
      userMoved.current = true;
      setView({ ...d.view, x: d.view.x + event.clientX - d.x, y: d.view.y + event.clientY - d.y });
    }
  }
  function onPointerUp(event: ReactPointerEvent<HTMLDivElement>) {
    pointers.current.delete(event.pointerId);
    if (pinch.current) {
      // The pinch ends with its first finger lifted; the other one does nothing more until lifted.
      if (pointers.current.size === 0) pinch.current = null;
      else if (pointers.current.size === 1) drag.current = null;
      if (pointers.current.size < 2) return;
    }
    drag.current = null;
    if (!sketch) return;
    const rect = rectFromCorners(sketch.start, photoPoint(event));
    setSketch(undefined);
    if (isUsableRect(rect)) {
      onDrawingChange(false);
      onDrawn(rect);
    }
  }

  const zoomedIn = view.scale > fitScale * 1.001;
  function onKeyDown(event: ReactKeyboardEvent) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === '+' || event.key === '=') zoom(1.25);
    else if (event.key === '-' || event.key === '_') zoom(0.8);
    else if (event.key === '0') fit();
    else if (event.key.startsWith('Arrow') && (event.shiftKey || zoomedIn)) {
      // Zoomed in, the arrows move the photo; at fit they go on to the tab (other photos).
      const dx = event.key === 'ArrowLeft' ? PAN_STEP : event.key === 'ArrowRight' ? -PAN_STEP : 0;
      const dy = event.key === 'ArrowUp' ? PAN_STEP : event.key === 'ArrowDown' ? -PAN_STEP : 0;
      userMoved.current = true;
      setView((v) => ({ ...v, x: v.x + dx, y: v.y + dy }));
    } else return;
    event.preventDefault();
    event.stopPropagation();
  }

  const live = sketch ? rectFromCorners(sketch.start, sketch.end) : undefined;
  const shown = live ?? draft;
  const percent = photo ? Math.round(((view.scale * photo.width) / original.width) * 100) : 0;
  return (
    <div className="photo-viewer">
      <div className="viewer-tools" role="toolbar" aria-label="Photo tools">
        {!readOnly && (
          <button type="button" aria-pressed={drawing} onClick={() => onDrawingChange(!drawing)} title="Draw a rectangle on the photo (D)" aria-keyshortcuts="D">
            Draw annotation
          </button>
        )}
        <button type="button" onClick={() => zoom(1.25)} aria-label="Zoom in" title="Zoom in (+)" aria-keyshortcuts="+">
          +
        </button>
        <button type="button" onClick={() => zoom(0.8)} aria-label="Zoom out" title="Zoom out (−)" aria-keyshortcuts="-">
          −
        </button>
        <button type="button" onClick={fit} aria-label="Fit the photo" title="Fit the photo (0)" aria-keyshortcuts="0">
          Fit
        </button>
        <span className="zoom-level" aria-label="Zoom level">
          {percent} %
        </span>
        {corners ? (
          <span className="hint" aria-live="polite">
            {corners.points.length < 4 ? `Click the item's ${CORNER_NAMES[corners.points.length]} corner (Shift+drag pans)` : 'Item marked on this photo: open another photo that shows it'}
          </span>
        ) : (
        <span className="hint" aria-live="polite" title="Wheel or +/− zoom · drag to pan (Shift+drag in draw mode; arrows when zoomed) · ←/→, j/k, PageUp/PageDown other photos · D draw · 0 fit">
          {TOUCH
            ? drawing
              ? 'Drag a finger on the photo to draw a rectangle'
              : readOnly
                ? 'Pinch to zoom · drag to pan'
                : 'Pinch to zoom · drag to pan · “Draw annotation”, then drag a finger'
            : drawing
              ? 'Drag on the photo to draw a rectangle (Esc to stop)'
              : 'Wheel or +/− zoom · drag to pan (arrows when zoomed) · ←/→ or j/k other photos'}
        </span>
        )}
      </div>
      <div
        ref={frame}
        className={drawing || corners ? 'viewer-frame drawing' : 'viewer-frame'}
        tabIndex={0}
        role="application"
        aria-label={`Photo ${alt}${corners ? ", corner mode: click the item's corners" : drawing ? ', draw mode: drag to draw a rectangle' : ''}`}
        aria-roledescription="photo viewer"
        data-testid="photo-frame"
        onPointerDownCapture={onPointerDownCapture}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={(event) => {
          pointers.current.delete(event.pointerId);
          if (pointers.current.size < 2) pinch.current = null;
          drag.current = null;
          setSketch(undefined);
        }}
        onKeyDown={onKeyDown}
      >
        {photo && (
          <div className="viewer-stage" style={{ transform: `translate(${view.x}px, ${view.y}px) scale(${view.scale})`, width: photo.width, height: photo.height }}>
            <img ref={image} src={fullSrc ?? photo.url} alt={alt} width={photo.width} height={photo.height} draggable={false} data-testid="photo-image" />
            <svg className="viewer-overlay" viewBox="0 0 1 1" preserveAspectRatio="none" width={photo.width} height={photo.height}>
              {annotations.map((a) => {
                const r = coords2dToRect(a.coords);
                if (!r) return null;
                return (
                  <rect
                    key={a.id}
                    x={r.x0}
                    y={r.y0}
                    width={r.x1 - r.x0}
                    height={r.y1 - r.y0}
                    className={`annotation-rect severity-${a.severity}${a.id === selectedId ? ' selected' : ''}`}
                    data-annotation-id={a.id}
                    onPointerDown={(e) => {
                      if (drawing || e.button !== 0) return;
                      e.stopPropagation();
                      onSelect(a.id);
                    }}
                  >
                    <title>{`#${a.number} ${a.type} (${severityName(a.severity)})`}</title>
                  </rect>
                );
              })}
              <OutlinePolygons outlines={outlines} onSelect={onSelectOutline} disabled={drawing || !!corners} />
              {corners && corners.points.length > 0 && (
                <g className="inventory-corners" data-testid="inventory-corners">
                  <polygon points={corners.points.map((p) => `${p.x},${p.y}`).join(' ')} className="annotation-rect draft" />
                  {corners.points.map((p, i) => (
                    <circle key={i} cx={p.x} cy={p.y} r={0.006} className="inventory-corner" />
                  ))}
                </g>
              )}
              {shown && <rect x={shown.x0} y={shown.y0} width={shown.x1 - shown.x0} height={shown.y1 - shown.y0} className="annotation-rect draft" />}
            </svg>
            <OutlineLabels outlines={outlines} scale={view.scale} />
            {annotations.map((a) => {
              const r = coords2dToRect(a.coords);
              if (!r) return null;
              // Labels keep their size on screen whatever the zoom (counter-scaled).
              return (
                <span
                  key={a.id}
                  className={`annotation-label severity-${a.severity}${a.id === selectedId ? ' selected' : ''}`}
                  style={{ left: `${r.x0 * 100}%`, top: `${r.y0 * 100}%`, transform: `scale(${1 / view.scale})` }}
                  aria-hidden="true"
                >
                  #{a.number} {a.type}
                </span>
              );
            })}
          </div>
        )}
      </div>
    </div>
  );
}
